#!/usr/bin/env bash
# End to end through the real services and the real participant form: `orthomask serve all` on
# loopback, a survey created through the admin API, headless Chromium participants filling in the
# web app's form with generated answers, the cohorts closed, the release downloaded and its
# regression compared with the regression on the raw answers (1e-9 relative) — once with the
# basic protocol and once in share mode with the default K1 = 3 right-masking services; then the survey team's
# page (#/admin) drives the same steps from the browser (e2e-services/admin.mjs), and a newcomer
# runs the demonstration loop of `scripts/run.sh` (e2e-services/newcomer.mjs); a participant
# answers in the field (e2e-services/field.mjs); and a survey declaring model terms (age², income ×
# smoker) is fitted on its release as R fits the raw answers (e2e-services/terms.mjs); and a team's
# XLSForm imported on the page becomes a live survey without retyping (e2e-services/xlsform.mjs).
#
#   bash scripts/e2e.sh              # files in target/e2e-services/{basic,shares}/
#   OUT=DIR bash scripts/e2e.sh      # raw.csv, release.csv, manifest.json, collector.sqlite3 and
#                                    # msp.sqlite3 (+ right-*.sqlite3 in share mode) in DIR/{basic,shares}/
#
# Needs: cargo, wasm-bindgen-cli + wasm-opt (scripts/setup.sh installs them), Debian's chromium,
# node and playwright-core (npm), R's Rscript (terms.mjs's oracle; scripts/setup.sh installs it).
# WEB_DIST=DIR uses an already built web app instead of running
# scripts/build-web.sh, ORTHOMASK_BIN=PATH an already built `orthomask` instead of a release
# build (scripts/test.sh passes both: each target is compiled once per run); PARTICIPANTS and
# COHORT_SIZE change the survey (default 20 and 10).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
log() { printf '\033[1;32m[e2e]\033[0m %s\n' "$*"; }

bash scripts/setup.sh
command -v chromium >/dev/null || { echo "e2e: Debian's chromium is missing (apt-get install chromium)" >&2; exit 1; }
export PATH="$root/target/web-tools/bin:$root/target/web-tools/node_modules/.bin:$PATH"

if [ -z "${ORTHOMASK_BIN:-}" ]; then
    log "cargo build --release --bin orthomask"
    cargo build --release --locked --bin orthomask
    export ORTHOMASK_BIN="${CARGO_TARGET_DIR:-$root/target}/release/orthomask"
fi
export ORTHOMASK_BIN

if [ -z "${WEB_DIST:-}" ]; then
    bash scripts/build-web.sh
    export WEB_DIST="$root/dist"
fi

# playwright-core: the copy scripts/setup.sh installed for the web tests, else a local one.
if [ -d "$root/target/web-tools/node_modules/playwright-core" ]; then
    ln -sfn "$root/target/web-tools/node_modules" e2e-services/node_modules
elif [ ! -d e2e-services/node_modules/playwright-core ]; then
    log "npm install playwright-core"
    (cd e2e-services && npm install --no-audit --no-fund --silent)
fi

out=${OUT:-$root/target/e2e-services}
mkdir -p "$out"
out=$(cd "$out" && pwd)
for mode in basic shares; do
    log "participants through the web app: $mode"
    node e2e-services/run.mjs --mode "$mode" --out "$out/$mode" \
        --participants "${PARTICIPANTS:-20}" --cohort-size "${COHORT_SIZE:-10}"
done
log "the survey team's page (#/admin): builder, invitations, participants, close, analyst view"
node e2e-services/admin.mjs --out "$out/admin"
log "a newcomer's demonstration loop: live demo, receipt, simulated participants, release, analyst and audit views"
node e2e-services/newcomer.mjs --out "$out/newcomer"
log "in the field: one participant offline, in Spanish, through a branch; the release equals the raw answers"
node e2e-services/field.mjs --out "$out/field"
log "model terms computed on the device: the release's fit of y ~ age + age² + income*smoker equals R's on the raw answers"
node e2e-services/terms.mjs --out "$out/terms"
log "a team's XLSForm imported on the survey team's page becomes a live survey without retyping"
node e2e-services/xlsform.mjs --out "$out/xlsform"
log "the participant's page: small, compressed, cached; no whole-app module; a new version under a waiting upload"
node e2e-services/page-load.mjs --out "$out/page-load"
log "end to end passed (basic and share mode, the survey team's page, the demonstration loop, the field form, model terms, XLSForm import, page load); files in $out/{basic,shares,admin,newcomer,field,terms,xlsform}"
