#!/usr/bin/env bash
# Load benchmark of the services (not a test): `orthomask serve all` on loopback, 200 participants
# whose masked records (p = 1000) are uploaded all at once; prints the latency percentiles of the
# acknowledgements and the time from closing the survey to its release.
#
#   bash scripts/load.sh [PARTICIPANTS] [P]      (default 200 and 1000)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
participants=${1:-200}
p=${2:-1000}
log() { printf '\033[1;32m[load]\033[0m %s\n' "$*"; }

log "building the orthomask binary and the load client (release)"
cargo build --release --locked --bin orthomask
cargo bench --locked -p orthomask-server --bench load --no-run
target_dir=${CARGO_TARGET_DIR:-$root/target}

data=$(mktemp -d)
"$target_dir/release/orthomask" serve all --data-dir "$data" --port 0 --right-services 0 --no-web \
    --rate-per-second 100000 --rate-burst 100000 > "$data.log" 2>&1 &
server=$!
cleanup() {
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    rm -rf "$data" "$data.log"
}
trap cleanup EXIT
for _ in $(seq 100); do [ -f "$data/services.json" ] && break; sleep 0.1; done
[ -f "$data/services.json" ] || { cat "$data.log" >&2; echo "load: the services did not start" >&2; exit 1; }
log "services: $(tr -d '\n ' < "$data/services.json")"
cargo bench --locked -p orthomask-server --bench load -- --services "$data" --participants "$participants" --p "$p"
