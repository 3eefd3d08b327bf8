#!/usr/bin/env bash
# Build the web app into dist/ (or $WEB_DIST): the one WebAssembly release build of a run.
#
#   1. cargo builds the web app's two binaries for wasm32 with the `web` profile (Cargo.toml: fat
#      LTO, one codegen unit — the smallest modules for participants): `orthomask-participant`,
#      the survey form alone, and `orthomask-web`, every view (src/app.rs says why two);
#   2. wasm-bindgen (exactly the version in Cargo.lock, scripts/setup.sh) writes each one's JS glue;
#   3. wasm-opt -Oz (npm binaryen@132: Debian's 108 cannot read Rust 1.95's output);
#   4. the app's static files are copied from www/;
#   5. scripts/stage_web.py gives the modules and the style sheet content-hashed names (served
#      `immutable`) and fills the marks of www/worker.js, www/index.html and www/sw.js: those
#      names, each file's Subresource Integrity digest (SHA-384), so the browser runs only the
#      exact files this build wrote, in the page and in the Web Worker (issue 27 §2), and the
#      digests of the files a participant never loads (sw.js's LAZY_FILES, issue 25);
#   6. scripts/precompress.mjs writes each text and WebAssembly file's Brotli and gzip encodings
#      beside it, which the collector serves to browsers that accept them (issue 25).
#
# Why not trunk, which did the same: installing it compiled ~400 crates (12-20 minutes on two
# cores), more than a third of a fresh machine's set-up (issue 28), for steps we can state.
# The result is staged in target/ and moved into place at the end: a failed build leaves the
# previous dist/ whole.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/target/web-tools/node_modules/.bin:$PATH"
out=${WEB_DIST:-dist}
log() { printf '\033[1;34m[build-web]\033[0m %s\n' "$*"; }

modules="orthomask-participant orthomask-web"
log "cargo build --profile web --target wasm32-unknown-unknown ($modules)"
cargo build --locked --profile web --target wasm32-unknown-unknown -p orthomask-web \
    --bin orthomask-participant --bin orthomask-web
# Where cargo put them: CARGO_TARGET_DIR when set (scripts/reproduce.sh builds a clone so).
built=${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/web

stage=target/web-stage
rm -rf "$stage"
mkdir -p "$stage"
for module in $modules; do
    wasm-bindgen --target web --no-typescript --out-dir "$stage" --out-name "$module" "$built/$module.wasm"
    log "wasm-opt -Oz $module"
    wasm-opt --output="$stage/${module}_bg.wasm" -Oz "$stage/${module}_bg.wasm"
done
cp www/index.html www/style.css www/worker.js www/sw.js www/manifest.webmanifest www/icon.svg "$stage/"
cp -r www/surveys "$stage/"
python3 scripts/stage_web.py "$stage"
node scripts/precompress.mjs "$stage"
rm -rf "$out"
mv "$stage" "$out"
for module in $modules; do
    wasm=$(ls "$out/$module"-*_bg.wasm)
    log "$wasm: $(stat -c %s "$wasm") bytes of WebAssembly, $(stat -c %s "$wasm.br") with Brotli"
done
