#!/usr/bin/env bash
# Rebuild the web app of a commit in a clean clone and print its build digest (issue 27 §1), the
# digest `GET /api/deployment` names and `orthomask audit --app URL --expect DIGEST` checks.
#
#   bash scripts/reproduce.sh COMMIT [--compare DIR]
#
# The clone is made from this repository into a fresh temporary directory (another path than
# this checkout's: the build must not depend on where it runs), built by the clone's own
# scripts/build-web.sh with the tools scripts/setup.sh installed here (wasm-bindgen at the
# Cargo.lock version, wasm-opt from npm's binaryen), and digested by `orthomask audit`'s rule
# (`orthomask_survey::app_build`: sha256sum of every file the service worker names, sorted by
# path, hashed again). With --compare DIR the clone's build is compared with DIR file by file
# (e.g. this checkout's dist/): "same build", or the first file that differs and exit status 1.
#
# Compiled dependencies are shared with this checkout's target/ directory (they are the same
# crates from the same registry); the workspace's own crates are compiled afresh for the clone's
# path. Not a test: a clean build takes minutes (scripts/bench.sh runs it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
commit=${1:?usage: reproduce.sh COMMIT [--compare DIR]}
compare=
if [ "${2:-}" = "--compare" ]; then
    compare=$(realpath "${3:?--compare needs a directory}")
fi
log() { printf '\033[1;35m[reproduce]\033[0m %s\n' "$*" >&2; }

git rev-parse --verify --quiet "$commit^{commit}" >/dev/null || {
    echo "reproduce: $commit is not a commit of this repository" >&2
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
    ln -s "$root/target/web-tools" target/web-tools
    CARGO_TARGET_DIR="$root/target/reproduce" WEB_DIST="$work/dist" \
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
if [ -n "$compare" ]; then
    "$orthomask" audit --app "$url" --build "$compare"
else
    "$orthomask" audit --app "$url" --build "$work/dist" --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["digest"])'
fi
