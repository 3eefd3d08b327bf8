#!/usr/bin/env bash
# Run every test of Orthomask. Sets up what it needs first (scripts/setup.sh, idempotent: a fresh
# Debian machine with rustup gets the wasm target, wasm-bindgen-cli, wasm-opt, Chromium, R and
# playwright-core; a prepared one skips all of it).
#
# Each target is compiled once (issue 28): one native build (the `test` profile) serves the
# native tests, the HTTP contract and every end-to-end script (the `orthomask` binary that
# `cargo test` builds for the CLI's tests); one wasm32 test build serves the core's Node tests,
# the web app's Chromium tests and the WebAssembly check of the I/O-free libraries; one wasm32
# release build (scripts/build-web.sh) is the app every browser test loads. Work that leaves a
# core idle runs beside other work: the Python environments install while cargo compiles, and
# the contract test runs while the web build's single-threaded link does. At the end (and on a
# failure) it prints each stage's wall time and the tests each stage ran.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target_dir=${CARGO_TARGET_DIR:-$root/target}
# A test run builds from scratch or nearly: incremental compilation only costs it time and disk.
export CARGO_INCREMENTAL=0
logs="$target_dir/test-logs"
rm -rf "$logs" && mkdir -p "$logs"

log() { printf '\033[1;32m[test]\033[0m %s\n' "$*"; }

stages=()
started=$SECONDS
# The tests one stage's log reports: cargo's and wasm-bindgen's "test result" lines, node's
# "ℹ pass/fail" lines.
counted() {
    awk '
        /^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1); if ($(i) ~ /^ignored;?$/) g += $(i-1) } }
        /^ℹ pass / { p += $3 } /^ℹ fail / { f += $3 } /^ℹ skipped / { g += $3 }
        END { if (p + f + g > 0) printf "%d passed, %d failed, %d ignored", p, f, g }' "$1"
}
summary() {
    local status=$?
    printf '\n%-58s %9s   %s\n' "stage" "wall" "tests"
    for row in "${stages[@]}"; do
        IFS='|' read -r name secs file <<<"$row"
        printf '%-58s %6d:%02d   %s\n' "$name" $((secs / 60)) $((secs % 60)) "$(counted "$file")"
    done
    local total=$((SECONDS - started))
    printf '%-58s %6d:%02d   %s\n' "the whole run" $((total / 60)) $((total % 60)) \
        "$(cat "$logs"/*.log 2>/dev/null | counted /dev/stdin)"
    [ "$status" -eq 0 ] && log "all tests passed" || log "FAILED (exit $status); logs in $logs"
}
trap summary EXIT

# stage NAME COMMAND...: run it with its output shown and kept in $logs, and time it.
stage() {
    local name=$1
    shift
    local file
    file="$logs/$(printf '%02d' ${#stages[@]})-$(echo "$name" | tr -c 'a-zA-Z0-9\n' '-' | cut -c1-40).log"
    log "$name"
    local t0=$SECONDS rc=0
    "$@" 2>&1 | tee "$file" || rc=$?
    stages+=("$name|$((SECONDS - t0))|$file")
    return "$rc"
}

stage "set-up (scripts/setup.sh)" bash scripts/setup.sh
export PATH="$root/target/web-tools/bin:$root/target/web-tools/node_modules/.bin:$PATH"

# The Python environments: network, mostly, so beside the native build.
t_python=$SECONDS
bash scripts/setup-python.sh >"$logs/python-setup.out" 2>&1 &
python_pid=$!

# Compiled beside the Python set-up; run once it is ready: orthomask-xlsform's tests import the
# XLSForms that openpyxl writes at every run (crates/xlsform/tests/forms/make_forms.py).
stage "native build of every crate's tests" cargo test --workspace --locked --no-run
wait "$python_pid" || { cat "$logs/python-setup.out" >&2; echo "test: the Python set-up failed" >&2; exit 1; }
stages+=("Python environments (beside the native build)|$((SECONDS - t_python))|$logs/python-setup.out")
export ORTHOMASK_PYTHON="$target_dir/py-test-venv/bin/python"

stage "native tests of every crate" cargo test --workspace --locked
# The CLI and the services as the native tests built them (cargo uplifts the binary the CLI's
# integration tests run): the contract and end-to-end stages run this one, not another build.
export ORTHOMASK_BIN="$target_dir/debug/orthomask"
[ -x "$ORTHOMASK_BIN" ] || { echo "test: $ORTHOMASK_BIN is missing after cargo test" >&2; exit 1; }

stage "survey definitions satisfy docs/survey.schema.json" \
    "$target_dir/py-test-venv/bin/python" scripts/check_schemas.py

stage "survey microdata: orthomask pipeline with default flags on statsmodels' randhie, OLS to 9 digits" \
    "$target_dir/py-test-venv/bin/python" scripts/check_randhie.py "$ORTHOMASK_BIN" "$target_dir/randhie"

# The collector's release that crates/server/tests/datapackage.rs left in the tests' temporary
# directory, and an `orthomask pipeline` release: frictionless validates both packages, pandas
# and R open them with their labels.
stage "data packages: frictionless validate, labelled tables in pandas and R" \
    "$target_dir/py-test-venv/bin/python" scripts/check_datapackage.py "$ORTHOMASK_BIN" \
    "$target_dir/tmp/datapackage-services" "$target_dir/datapackage"

# The HTTP contract: only the binary and Python; beside the wasm32 builds below, whose links
# leave a core idle. Its output is shown when it ends.
t_contract=$SECONDS
bash scripts/contract.sh >"$logs/contract.out" 2>&1 &
contract_pid=$!

# One wasm32 test build: the core's bit-identical masks and SIMD ChaCha12 in Node.js, the web
# app's wasm-bindgen tests in headless Chromium (each binary's runner is chosen by the binary),
# and the I/O-free libraries (stats, dp, secure, formats) compiled for WebAssembly.
stage "wasm32: core in Node.js, the web app in Chromium, I/O-free libraries" \
    env WASM_BINDGEN_TEST_TIMEOUT=120 cargo test --locked --target wasm32-unknown-unknown \
    -p orthomask-core -p orthomask-web -p orthomask-stats -p orthomask-dp -p orthomask-secure \
    -p orthomask-formats --lib --test cross_platform --test browser

stage "web app: the release build (scripts/build-web.sh)" bash scripts/build-web.sh
export WEB_DIST="$root/dist"

contract_status=0
wait "$contract_pid" || contract_status=$?
log "the HTTP contract (ran beside the wasm32 builds): docs/openapi.yaml against the running services"
cat "$logs/contract.out"
stages+=("HTTP contract, schemathesis (beside the wasm32 builds)|$((SECONDS - t_contract))|$logs/contract.out")
[ "$contract_status" -eq 0 ] || exit "$contract_status"

stage "web app: Playwright against the built app" env ORTHOMASK_UNIT_TESTED=1 bash scripts/test-web.sh
stage "services end to end: real form, real services, basic and share mode" bash scripts/e2e.sh
