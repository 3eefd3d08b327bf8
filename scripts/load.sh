#!/usr/bin/env bash
# Load benchmark of the services (not a test): for each burst size, a fresh `orthomask serve all`
# on loopback and that many participants whose masked records (p values each) are uploaded all
# at once; a busy answer (503 over the connection cap, with Retry-After) is sent again after it,
# with jitter, as the participant client does. Prints each run, then one table: participants,
# wall time of the burst, uploads per second, how many were retried, the acknowledgement latency
# percentiles (first attempt to receipt) and the services' peak resident memory.
#
#   bash scripts/load.sh                    # bursts of 1 000, 5 000 and 10 000; p = 1000
#   bash scripts/load.sh "200 2000" [P]     # other burst sizes, records of P values
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sizes=${1:-1000 5000 10000}
p=${2:-1000}
log() { printf '\033[1;32m[load]\033[0m %s\n' "$*"; }

log "building the orthomask binary and the load client (release)"
cargo build --release --locked --bin orthomask
cargo bench --locked -p orthomask-server --bench load --no-run
target_dir=${CARGO_TARGET_DIR:-$root/target}
results=$(mktemp)

server=
data=
cleanup() {
    if [ -n "$server" ]; then
        kill -TERM "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    [ -z "$data" ] || rm -rf "$data" "$data.log" "$data.out"
    server=
    data=
}
trap 'cleanup; rm -f "$results"' EXIT

for n in $sizes; do
    data=$(mktemp -d)
    "$target_dir/release/orthomask" serve all --data-dir "$data" --port 0 --right-services 0 --no-web \
        --rate-per-second 100000 --rate-burst 100000 > "$data.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do [ -f "$data/services.json" ] && break; sleep 0.1; done
    [ -f "$data/services.json" ] || { cat "$data.log" >&2; echo "load: the services did not start" >&2; exit 1; }
    log "$n participants, p = $p: services $(tr -d '\n ' < "$data/services.json")"
    cargo bench --locked -p orthomask-server --bench load -- --services "$data" --participants "$n" --p "$p" \
        | tee "$data.out"
    out=$(cat "$data.out")
    # Peak resident set of the process serving the collector and the provider (VmHWM).
    rss_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$server/status")
    echo "$(grep '^RESULT ' <<<"$out") rss_mb=$((rss_kb / 1024))" >> "$results"
    cleanup
done

echo
printf '%12s %8s %8s %8s %8s %8s %8s %8s %8s\n' participants "wall s" "per s" retried "p50 ms" "p90 ms" "p99 ms" "max ms" "RSS MB"
while read -r line; do
    declare -A r=()
    for field in ${line#RESULT }; do r[${field%%=*}]=${field#*=}; done
    printf '%12s %8s %8s %8s %8s %8s %8s %8s %8s\n' "${r[participants]}" "${r[wall_s]}" "${r[rate]}" \
        "${r[retried]}" "${r[p50_ms]}" "${r[p90_ms]}" "${r[p99_ms]}" "${r[max_ms]}" "${r[rss_mb]}"
done < "$results"
