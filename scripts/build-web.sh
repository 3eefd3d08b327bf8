#!/usr/bin/env bash
# Build the web app into dist/ (or $WEB_DIST): the one WebAssembly release build of a run.
#
#   1. cargo builds the `orthomask-web` binary for wasm32 with the `web` profile (Cargo.toml:
#      fat LTO, one codegen unit — the smallest module for participants);
#   2. wasm-bindgen (exactly the version in Cargo.lock, scripts/setup.sh) writes the JS glue;
#   3. wasm-opt -Oz (npm binaryen@132: Debian's 108 cannot read Rust 1.95's output);
#   4. the app's static files are copied from www/;
#   5. the `{{sri FILE}}` marks of www/index.html and www/worker.js become FILE's Subresource
#      Integrity digest (SHA-384), so the browser runs only the exact files this build wrote, in
#      the page and in the Web Worker (issue 27 §2).
#
# Why not trunk, which did the same: installing it compiled ~400 crates (12-20 minutes on two
# cores), more than a third of a fresh machine's set-up (issue 28), for five steps we can state.
# The result is staged in target/ and moved into place at the end: a failed build leaves the
# previous dist/ whole.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/target/web-tools/node_modules/.bin:$PATH"
out=${WEB_DIST:-dist}
log() { printf '\033[1;34m[build-web]\033[0m %s\n' "$*"; }

log "cargo build --profile web --target wasm32-unknown-unknown --bin orthomask-web"
cargo build --locked --profile web --target wasm32-unknown-unknown --bin orthomask-web
# Where cargo put it: CARGO_TARGET_DIR when set (scripts/reproduce.sh builds a clone so).
wasm=${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/web/orthomask-web.wasm

stage=target/web-stage
rm -rf "$stage"
mkdir -p "$stage"
wasm-bindgen --target web --no-typescript --out-dir "$stage" --out-name orthomask-web "$wasm"
log "wasm-opt -Oz"
wasm-opt --output="$stage/orthomask-web_bg.wasm" -Oz "$stage/orthomask-web_bg.wasm"
cp www/style.css www/worker.js www/sw.js www/manifest.webmanifest www/icon.svg "$stage/"
cp -r www/surveys "$stage/"
python3 - "$stage" <<'PY'
import base64, hashlib, pathlib, re, sys

stage = pathlib.Path(sys.argv[1])

def sri(match):
    data = (stage / match.group(1)).read_bytes()
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()

# The page and the Web Worker both fetch the glue and the module with their digests
# (issue 27 §2): each {{sri FILE}} mark becomes FILE's SHA-384.
for name, source in (("index.html", "www/index.html"), ("worker.js", "www/worker.js")):
    text = re.sub(r"\{\{sri ([^}]+)\}\}", sri, pathlib.Path(source).read_text(encoding="utf-8"))
    if "{{" in text:
        sys.exit(f"{source}: a mark this build does not know is left")
    (stage / name).write_text(text, encoding="utf-8")
PY
rm -rf "$out"
mv "$stage" "$out"
log "$out/: $(stat -c %s "$out/orthomask-web_bg.wasm") bytes of WebAssembly"
