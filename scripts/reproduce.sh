#!/usr/bin/env bash
# Rebuild the web app of a commit in a clean clone and print its build digest (issue 27 §1), the
# digest `GET /api/deployment` names and `orthomask audit --app URL --expect DIGEST` checks.
#
#   bash scripts/reproduce.sh COMMIT [--compare DIR] [--record BUILDS_JSON]
#
# The clone is made from this repository into a fresh temporary directory (another path than
# this checkout's: the build must not depend on where it runs), built by the clone's own
# scripts/build-web.sh with the tools scripts/setup.sh installed here (wasm-bindgen at the
# Cargo.lock version, wasm-opt from npm's binaryen), and digested by `orthomask audit`'s rule
# (`orthomask_survey::app_build`: sha256sum of every file the service worker names, sorted by
# path, hashed again). With --compare DIR the clone's build is compared with DIR file by file
# (e.g. this checkout's dist/): "same build", or the first file that differs and exit status 1.
# With --record BUILDS_JSON the commit and its digest are appended to that list of public builds
# (`builds.json` beside a release, `orthomask_survey::public_builds`; created when absent, earlier
# entries kept as they are, a commit already recorded with another digest refused).
#
# Compiled dependencies are shared with this checkout's target/reproduce directory (they are the
# same crates from the same registry; REPRODUCE_TARGET_DIR names another); the workspace's own
# crates are compiled afresh for the clone's path. The web tools are this checkout's
# target/web-tools (WEB_TOOLS names another). Not a test: a clean build takes minutes
# (scripts/bench-reproduce.sh runs it and times it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
commit=${1:?usage: reproduce.sh COMMIT [--compare DIR] [--record BUILDS_JSON]}
shift
compare=
record=
while [ $# -gt 0 ]; do
    case "$1" in
        --compare) compare=$(realpath "${2:?--compare needs a directory}"); shift 2 ;;
        --record) record=$(realpath -m "${2:?--record needs a file}"); shift 2 ;;
        *) echo "reproduce: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { printf '\033[1;35m[reproduce]\033[0m %s\n' "$*" >&2; }

# Resolved here: a name such as HEAD would mean another commit in the clone.
given=$commit
commit=$(git rev-parse --verify --quiet "$given^{commit}") || {
    echo "reproduce: $given is not a commit of this repository" >&2
    exit 2
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log "cloning $commit into $work/orthomask"
git clone --quiet --no-checkout "$root" "$work/orthomask"
git -C "$work/orthomask" checkout --quiet "$commit"

log "building the web app of $(git -C "$work/orthomask" rev-parse --short HEAD)"
(
    cd "$work/orthomask"
    # The npm tools live in this checkout's target/web-tools (scripts/setup.sh).
    mkdir -p target
    ln -s "${WEB_TOOLS:-$root/target/web-tools}" target/web-tools
    CARGO_TARGET_DIR="${REPRODUCE_TARGET_DIR:-$root/target/reproduce}" WEB_DIST="$work/dist" \
        bash scripts/build-web.sh >&2
)

orthomask=${ORTHOMASK_BIN:-}
if [ -z "$orthomask" ]; then
    cargo build --quiet --locked --bin orthomask >&2
    orthomask=${CARGO_TARGET_DIR:-$root/target}/debug/orthomask
fi
# Serve the clone's build on loopback and digest it as an auditor would.
port_file="$work/port"
python3 - "$work/dist" "$port_file" <<'PY' &
import http.server, functools, socketserver, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
handler = functools.partial(Quiet, directory=sys.argv[1])
with socketserver.TCPServer(("127.0.0.1", 0), handler) as httpd:
    open(sys.argv[2], "w").write(str(httpd.server_address[1]))
    httpd.serve_forever()
PY
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$port_file" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$port_file")/"
if [ -n "$record" ]; then
    "$orthomask" audit --app "$url" --build "$work/dist" --builds "$record" \
        --record "$commit" >&2
fi
if [ -n "$compare" ]; then
    "$orthomask" audit --app "$url" --build "$compare"
else
    "$orthomask" audit --app "$url" --build "$work/dist" --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["digest"])'
fi
