#!/usr/bin/env bash
# Load benchmark of the services (not a test): for each endpoint and burst size, a fresh
# `orthomask serve all` on loopback and that many participants reaching it all at once, with
# records of p values each (a survey the collector's planner plans, one invitation per
# participant). A busy answer (503 over the connection cap, with Retry-After) is sent again after
# it, with jitter, as the participant client does. The endpoints:
#
#   definition  the collector's definition endpoint: every participant takes its place with its
#               invitation (POST /api/surveys/{id}/definition), the page's request for the signed
#               definition; every offer must be one the device accepts, and the collector must
#               count each place and each invitation once
#   provider    masked uploads to the masking service provider (the basic protocol)
#   right       a share-mode survey's uploads: each participant sends one share to each of the
#               right-masking services (RIGHT_SERVICES of them, 3 by default: the fewest share
#               mode runs with), in turn
#   health      the provider's GET /api/health, which does no work: the listener, the client
#               and the machine alone, the floor the other bursts are measured against (the
#               table gives each p99 as a multiple of the floor's at the same size)
#
# For the two upload endpoints every receipt must acknowledge its upload, and the survey is then
# released: the release must hold every participant's record exactly once and pass QA.
# Prints each run (with the services' open-file limit and connection cap), then one table:
# endpoint, participants, requests sent, wall time of the burst, requests answered per second,
# participants retried after a busy answer, the participants' latency percentiles (first attempt
# to the answer of their last request), the services' peak resident memory (all services of a
# run share the one process), the p99 as a multiple of the health burst's of the same size, and
# the CPU time the services' process and the load client used during the burst (all of it and a
# request): the client runs on the services' cores, and the services' CPU time bounds the burst's
# wall time on any number of such cores from below.
#
#   bash scripts/load.sh                           # health, definition, provider, right at 1 000, 5 000, 10 000; p = 1000
#   bash scripts/load.sh "200 2000" [P]            # other burst sizes, records of P values
#   bash scripts/load.sh --endpoints "provider right" [SIZES] [P]    # some endpoints only
#   RIGHT_SERVICES=4 bash scripts/load.sh --endpoints right          # share mode over 4 services
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
endpoints="health definition provider right"
positional=()
while [ $# -gt 0 ]; do
    case $1 in
        --endpoints) endpoints=${2:?--endpoints takes a list: health definition provider right}; shift 2 ;;
        --endpoints=*) endpoints=${1#--endpoints=}; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
        *) positional+=("$1"); shift ;;
    esac
done
sizes=${positional[0]:-1000 5000 10000}
p=${positional[1]:-1000}
right_services=${RIGHT_SERVICES:-3}
for endpoint in $endpoints; do
    case $endpoint in
        definition|provider|right|health) ;;
        *) echo "load: unknown endpoint $endpoint (definition, provider, right or health)" >&2; exit 2 ;;
    esac
done
log() { printf '\033[1;32m[load]\033[0m %s\n' "$*"; }

# The services hold a connection per participant of a burst, and the load client as many: where
# this shell may (as root), the hard open-file limit is raised to 65 536, as an operator's
# LimitNOFILE would, for both; the services raise their soft limit to it themselves.
want_files=65536
hard_files=$(ulimit -Hn)
if [ "$hard_files" != unlimited ] && [ "$hard_files" -lt "$want_files" ]; then
    ulimit -Hn "$want_files" 2>/dev/null || true
fi
ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true

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

for endpoint in $endpoints; do
    rights=0
    [ "$endpoint" != right ] || rights=$right_services
    for n in $sizes; do
        data=$(mktemp -d)
        "$target_dir/release/orthomask" serve all --data-dir "$data" --port 0 --right-services "$rights" \
            --no-web --no-demonstrations --rate-per-second 100000 --rate-burst 100000 > "$data.log" 2>&1 &
        server=$!
        for _ in $(seq 100); do [ -f "$data/services.json" ] && break; sleep 0.1; done
        [ -f "$data/services.json" ] || { cat "$data.log" >&2; echo "load: the services did not start" >&2; exit 1; }
        log "$endpoint, $n participants, p = $p: services $(tr -d '\n ' < "$data/services.json")"
        log "$(grep -m1 '^open files' "$data.log" || echo 'open files: not reported')"
        cargo bench --locked -p orthomask-server --bench load -- --services "$data" --endpoint "$endpoint" \
            --participants "$n" --p "$p" --services-pid "$server" | tee "$data.out"
        # Peak resident set of the process serving every service of the run (VmHWM).
        rss_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$server/status")
        echo "$(grep '^RESULT ' "$data.out") rss_mb=$((rss_kb / 1024))" >> "$results"
        cleanup
    done
done

echo
# result LINE: the fields of one RESULT line (name=value) into the associative array r.
declare -A r=()
result() {
    r=()
    local field
    for field in ${1#RESULT }; do r[${field%%=*}]=${field#*=}; done
}
# The floor: the health burst's p99 at each size, when it ran; every row's p99 is also given as
# a multiple of it ("-" without it).
declare -A floor_p99=()
while read -r line; do
    result "$line"
    [ "${r[endpoint]}" != health ] || floor_p99[${r[participants]}]=${r[p99_ms]}
done < "$results"
format='%-10s %12s %9s %8s %8s %8s %8s %8s %8s %8s %8s %9s %9s %9s %9s\n'
# shellcheck disable=SC2059
printf "$format" endpoint participants requests "wall s" "req/s" retried "p50 ms" "p90 ms" "p99 ms" "max ms" "RSS MB" \
    "p99/floor" "svc CPU s" "svc µs/rq" "cli µs/rq"
while read -r line; do
    result "$line"
    floor=${floor_p99[${r[participants]}]:-}
    ratio=-
    [ -z "$floor" ] || [ "$floor" -le 0 ] || ratio=$(awk -v a="${r[p99_ms]}" -v b="$floor" 'BEGIN { printf "%.1f", a / b }')
    # shellcheck disable=SC2059
    printf "$format" "${r[endpoint]}" "${r[participants]}" "${r[requests]}" "${r[wall_s]}" "${r[rate]}" \
        "${r[retried]}" "${r[p50_ms]}" "${r[p90_ms]}" "${r[p99_ms]}" "${r[max_ms]}" "${r[rss_mb]}" "$ratio" \
        "${r[services_cpu_s]:--}" "${r[services_us]:--}" "${r[client_us]:--}"
done < "$results"
echo "svc CPU s: the CPU time of the services' process during the burst, all its threads; no machine with"
echo "k such cores answers the burst in less than (svc CPU s) / k seconds. svc and cli µs/rq: the services'"
echo "and the load client's CPU time a request (on this machine the client's comes out of the same cores)."
