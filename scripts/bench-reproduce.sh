#!/usr/bin/env bash
# Is the web build reproducible (issue 27 §1)? Rebuild a commit (default HEAD) in a clean clone
# with scripts/reproduce.sh and compare its build digest with this checkout's dist/ (built first
# when absent): prints both digests, "same" or "different" (with the first differing file), and
# how long the clean build took. A measurement, not a test: it fails only when the builds differ
# or something breaks.
#
#   bash scripts/bench-reproduce.sh [COMMIT]
#
# Why here and not in scripts/test.sh: a second full web build (fat LTO, wasm-opt -Oz) of a clean
# clone takes several minutes on two cores, on top of the one build the test run already makes;
# that does not fit the test suite's budget. The suite checks what is cheap — that the digest is
# a pure function of the files (`app_build::tests`) and that the served app is the built one
# (`cli/tests/app_audit.rs`, `e2e-services/field.mjs`) — and this script checks the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
commit=${1:-HEAD}
log() { printf '\033[1;35m[bench-reproduce]\033[0m %s\n' "$*" >&2; }
dist=${WEB_DIST:-$root/dist}
if ! git diff --quiet HEAD -- . ':!dist' 2>/dev/null && [ "$commit" = HEAD ]; then
    log "note: this checkout has uncommitted changes; its dist/ may differ from HEAD's build"
fi
if [ ! -f "$dist/sw.js" ]; then
    log "no $dist/: building it"
    bash scripts/build-web.sh >&2
fi
orthomask=${ORTHOMASK_BIN:-}
if [ -z "$orthomask" ]; then
    cargo build --quiet --locked --bin orthomask >&2
    orthomask=${CARGO_TARGET_DIR:-$root/target}/debug/orthomask
fi
export ORTHOMASK_BIN=$orthomask
start=$(date +%s)
set +e
verdict=$(bash scripts/reproduce.sh "$commit" --compare "$dist")
status=$?
set -e
seconds=$(( $(date +%s) - start ))
echo "commit:           $(git rev-parse --short "$commit")"
echo "local dist/:      $dist"
# "same build DIGEST", or both digests and the first file that differs (orthomask audit --app).
echo "clean clone vs local: ${verdict}"
echo "clean build took: ${seconds} s"
if [ "$status" -eq 0 ]; then
    echo "same"
else
    echo "different"
    exit 1
fi
