#!/usr/bin/env bash
# Test the web app (the root crate, orthomask-web): one release build with trunk, the native
# tests of the crate, the wasm-bindgen tests in headless Chromium, and the Playwright suite
# (e2e/) against the built dist/ with a mock of the provider's upload API (its exported Python and
# R scripts are run with statsmodels and Rscript). Screenshots and the
# printed audit go to target/e2e-artifacts/. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

log() { printf '\033[1;32m[test-web]\033[0m %s\n' "$*"; }
root=$PWD
export TRUNK_SKIP_VERSION_CHECK=true
export PATH="$root/target/web-tools/bin:$root/target/web-tools/node_modules/.bin:$PATH"
target_dir=${CARGO_TARGET_DIR:-$root/target}
fixtures="$root/target/e2e-fixtures"
export ORTHOMASK_FIXTURES="$fixtures" ORTHOMASK_ARTIFACTS="$root/target/e2e-artifacts"

log "trunk build --release (the one WebAssembly build of this run)"
trunk build --release
wasm_size=$(stat -c %s dist/orthomask-web_bg.wasm)
log "release .wasm: $wasm_size bytes"
if [ "$wasm_size" -ge $((3 * 1024 * 1024)) ]; then
    echo "the release .wasm is $wasm_size bytes, over the 3 MB budget" >&2
    exit 1
fi

log "native tests of orthomask-web"
cargo test --locked -p orthomask-web

log "wasm-bindgen tests in headless Chromium"
# Without debug info: the test build of every dependency is much smaller and faster.
CARGO_PROFILE_TEST_DEBUG=0 CARGO_PROFILE_DEV_DEBUG=0 WASM_BINDGEN_TEST_TIMEOUT=120 \
    cargo test --locked -p orthomask-web --target wasm32-unknown-unknown --test browser

log "fixtures: a release, its manifest and the CLI's regression of it"
cargo build --release --locked --bin orthomask
cli="$target_dir/release/orthomask"
rm -rf "$fixtures" && mkdir -p "$fixtures"
"$cli" pipeline --input data/paper/leaps_table2.csv --out-dir "$fixtures/run" --teaching-key 535 >/dev/null 2>&1
cp "$fixtures/run/release.csv" "$fixtures/run/manifest.json" "$fixtures/"
cp data/paper/leaps_table2.csv data/paper/leaps_table5_released.csv "$fixtures/"
"$cli" regress --input "$fixtures/release.csv" --y ADL --x BBS,Age --json > "$fixtures/cli-regress.json"
# A second-method release (XB₁B₂ keeps the 0/1 response MIF and the treatment Group, so both lm
# and glm apply) and the CLI's fits of it: the analyst view's R export is run on it with Rscript.
awk -F, -v OFS=, '{ print $7, $2, $4, $5, $8 }' data/paper/leaps_table2.csv > "$fixtures/leaps_subset.csv"
"$cli" pipeline --input "$fixtures/leaps_subset.csv" --out-dir "$fixtures/run-second" --teaching-key 11 \
    --method second --keep MIF,Group >/dev/null 2>&1
cp "$fixtures/run-second/release.csv" "$fixtures/release-second.csv"
"$cli" regress --input "$fixtures/release-second.csv" --y MIF --x Group,Age,BBS,ADL --json > "$fixtures/cli-regress-second.json"
"$cli" logit --input "$fixtures/release-second.csv" --y MIF --x Group,Age,BBS,ADL --json > "$fixtures/cli-logit-second.json"

log "Python with pandas and statsmodels, to run the analyst view's exported script"
venv="$root/target/py-test-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c "import pandas, statsmodels" 2>/dev/null || "$venv/bin/pip" install -q pandas statsmodels
export ORTHOMASK_PYTHON="$venv/bin/python"
ORTHOMASK_RSCRIPT=$(command -v Rscript) || { echo "Rscript not found: run scripts/setup.sh" >&2; exit 1; }
export ORTHOMASK_RSCRIPT

log "Playwright end-to-end tests (Debian chromium, node's test runner)"
ln -sfn "$root/target/web-tools/node_modules" e2e/node_modules
rm -rf "$ORTHOMASK_ARTIFACTS"
(cd e2e && node --test --test-concurrency=1 --test-reporter=spec tests/)
log "web tests passed; screenshots in target/e2e-artifacts/"
