#!/usr/bin/env bash
# Test the web app (the root crate, orthomask-web): one release build (scripts/build-web.sh), the
# native tests of the crate, the wasm-bindgen tests in headless Chromium, and the Playwright suite
# (e2e/) against the built dist/ with a mock of the provider's upload API (its exported Python and
# R scripts are run with statsmodels and Rscript). Screenshots and the printed audit go to
# target/e2e-artifacts/. Exits non-zero on any failure.
#
# scripts/test.sh runs the unit tests and the build in its own stages, once for the whole run, and
# tells this script so (issue 28: compile each target once):
#   WEB_DIST=DIR              use the app already built in DIR instead of building it;
#   ORTHOMASK_UNIT_TESTED=1   the crate's native and wasm-bindgen tests already ran;
#   ORTHOMASK_BIN=PATH        make the fixtures with that `orthomask` instead of a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

log() { printf '\033[1;32m[test-web]\033[0m %s\n' "$*"; }
root=$PWD
export PATH="$root/target/web-tools/bin:$root/target/web-tools/node_modules/.bin:$PATH"
target_dir=${CARGO_TARGET_DIR:-$root/target}
fixtures="$root/target/e2e-fixtures"
export ORTHOMASK_FIXTURES="$fixtures" ORTHOMASK_ARTIFACTS="$root/target/e2e-artifacts"

if [ -z "${WEB_DIST:-}" ]; then
    bash scripts/build-web.sh
    WEB_DIST="$root/dist"
fi
export ORTHOMASK_DIST="$WEB_DIST"
# The WebAssembly modules' budgets (scripts/web-budgets.json): every participant downloads the
# participant's module, so what only the other views need stays out of it (src/app.rs), and what
# only the survey team needs stays out of both where it can (an XLSForm is read by the collector,
# not the page: calamine would add 0.6 MB). The bytes on the wire and the time to the consent
# screen are measured by scripts/bench-page-load.sh.
python3 - "$WEB_DIST" scripts/web-budgets.json <<'PY'
import json, pathlib, re, sys
dist, budgets = pathlib.Path(sys.argv[1]), json.loads(pathlib.Path(sys.argv[2]).read_text())["modules"]
over = []
for module, budget in budgets.items():
    stem = module.removesuffix("_bg.wasm")
    built = [p for p in dist.iterdir() if re.fullmatch(re.escape(stem) + r"-[0-9a-f]{16}_bg\.wasm", p.name)]
    if len(built) != 1:
        sys.exit(f"{dist}: expected one {module} (content-hashed), found {[p.name for p in built]}")
    size = built[0].stat().st_size
    print(f"[test-web] {built[0].name}: {size} bytes (budget {budget})")
    if size > budget:
        over.append(f"{built[0].name} is {size} bytes, over its {budget}-byte budget")
if over:
    sys.exit("; ".join(over))
PY

if [ -z "${ORTHOMASK_UNIT_TESTED:-}" ]; then
    log "native tests of orthomask-web"
    cargo test --locked -p orthomask-web
    log "wasm-bindgen tests in headless Chromium"
    WASM_BINDGEN_TEST_TIMEOUT=120 \
        cargo test --locked -p orthomask-web --target wasm32-unknown-unknown --test browser
fi

log "fixtures: a release, its manifest and the CLI's regression of it"
if [ -n "${ORTHOMASK_BIN:-}" ]; then
    cli=$ORTHOMASK_BIN
else
    cargo build --release --locked --bin orthomask
    cli="$target_dir/release/orthomask"
fi
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
# A survey's release with its data package (issue 29 §2): the answers of e2e/fixtures coded by
# the definition and released by `pipeline --survey`, so datapackage.json carries the labels.
"$cli" survey code --survey www/surveys/habits-branching.json --answers e2e/fixtures/habits-answers.csv \
    --out "$fixtures/habits-coded.csv" >/dev/null
"$cli" pipeline --input "$fixtures/habits-coded.csv" --survey www/surveys/habits-branching.json \
    --out-dir "$fixtures/habits" --teaching-key 29 >/dev/null 2>&1
cp e2e/fixtures/habits-answers.csv "$fixtures/"

log "Python with pandas and statsmodels, to run the analyst view's exported script"
bash scripts/setup-python.sh
export ORTHOMASK_PYTHON="$target_dir/py-test-venv/bin/python"
ORTHOMASK_RSCRIPT=$(command -v Rscript) || { echo "Rscript not found: run scripts/setup.sh" >&2; exit 1; }
export ORTHOMASK_RSCRIPT

log "Playwright end-to-end tests (Debian chromium, node's test runner)"
ln -sfn "$root/target/web-tools/node_modules" e2e/node_modules
rm -rf "$ORTHOMASK_ARTIFACTS"
(cd e2e && node --test --test-concurrency=1 --test-reporter=spec tests/)
log "web tests passed; screenshots in target/e2e-artifacts/"
