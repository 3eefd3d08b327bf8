#!/usr/bin/env bash
# Peer flood benchmark (not a test, issue 43 §4): a pinned peer — the provider, or a thief of its
# key — sends the collector BODIES hand-overs at once, each as large as the survey's design allows
# (a full masked batch of a cohort of COHORT records), against a fresh `orthomask serve all` on
# loopback. The collector reads at most its peer body budget at once and answers the rest 503
# with Retry-After. Prints how many bodies were read and how many were answered busy, and the
# services' peak resident memory before and after, as a multiple of the budget and of what
# reading every body at once would take. Nothing is timed.
#
#   bash scripts/peer-flood.sh                 # 24 bodies, cohorts of 2000, 20 answers
#   bash scripts/peer-flood.sh 48 3000 30      # BODIES COHORT ANSWERS
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
case ${1:-} in -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;; esac
bodies=${1:-24}
cohort=${2:-2000}
answers=${3:-20}
log() { printf '\033[1;32m[peer-flood]\033[0m %s\n' "$*"; }
target_dir=${CARGO_TARGET_DIR:-$root/target}

log "cargo build --release --bin orthomask"
cargo build --release --locked --bin orthomask
data=$(mktemp -d)
server=
cleanup() {
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
        kill -TERM "$server"
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$data" "$data.log"
}
trap cleanup EXIT
"$target_dir/release/orthomask" serve all --data-dir "$data" --port 0 --right-services 0 \
    --no-web --no-demonstrations > "$data.log" 2>&1 &
server=$!
for _ in $(seq 100); do [ -f "$data/services.json" ] && break; sleep 0.1; done
[ -f "$data/services.json" ] || { cat "$data.log" >&2; echo "peer-flood: the services did not start" >&2; exit 1; }
log "$bodies hand-overs at once, cohorts of $cohort, $answers answers"
cargo bench --locked -p orthomask-server --bench peer_flood -- --services "$data" \
    --services-pid "$server" --bodies "$bodies" --cohort "$cohort" --answers "$answers"
