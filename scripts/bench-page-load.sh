#!/usr/bin/env bash
# The participant page's load on a slow phone network (issue 25), a benchmark, not a test:
# builds the product as scripts/run.sh does (release `orthomask`, the web app), serves it with
# `orthomask serve all` behind a throttled link (Fast 3G: 1.6 Mbit/s, 150 ms round trip) and opens
# a participant link in Chromium with its CPU 4× slower, twice: a first visit and a repeat visit.
# Prints the time to the usable consent screen, the bytes each way and the requests of each
# visit, and the WebAssembly modules' sizes against scripts/web-budgets.json.
#
#   bash scripts/bench-page-load.sh                 # this build
#   bash scripts/bench-page-load.sh --before DIR    # and an earlier build, measured in the same
#                                                   # run: DIR holds its `orthomask` and `dist/`
#
# An earlier build to compare with: `git worktree add /tmp/old REV`, then in it
# `CARGO_TARGET_DIR=/tmp/old-target cargo build --release --bin orthomask && bash
# scripts/build-web.sh`, and copy `orthomask` and `dist/` into DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
before=
while [ $# -gt 0 ]; do
    case $1 in
        --before) before=${2:?--before takes a directory with orthomask and dist/}; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "bench-page-load: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ -n "$before" ] && { [ ! -x "$before/orthomask" ] || [ ! -f "$before/dist/index.html" ]; }; then
    echo "bench-page-load: $before must hold an orthomask binary and dist/index.html" >&2
    exit 2
fi
bash scripts/setup.sh
export PATH="$root/target/web-tools/bin:$root/target/web-tools/node_modules/.bin:$PATH"
cargo build --release --locked --bin orthomask
bash scripts/build-web.sh
ln -sfn "$root/target/web-tools/node_modules" e2e-services/node_modules
extra=()
if [ -n "$before" ]; then
    extra=(--before-bin "$(realpath "$before/orthomask")" --before-dist "$(realpath "$before/dist")")
fi
ORTHOMASK_BIN="${CARGO_TARGET_DIR:-$root/target}/release/orthomask" WEB_DIST="$root/dist" \
    node e2e-services/page-load-bench.mjs "${extra[@]}" --out "$root/target/page-load-bench"
