#!/usr/bin/env bash
# Run every test of Orthomask. Sets up what it needs first (scripts/setup.sh, idempotent: a fresh
# Debian machine with rustup gets the wasm target, wasm-bindgen-cli, trunk, wasm-opt, Chromium and
# playwright-core; a prepared one skips all of it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

log() { printf '\033[1;32m[test]\033[0m %s\n' "$*"; }

log "native tests of every crate (core, stats, dp, secure, formats, cli, server, bench, web)"
cargo test --workspace --locked

log "wasm32: bit-identical masks and the SIMD ChaCha12 in WebAssembly (Node.js runner)"
cargo test --locked -p orthomask-core --target wasm32-unknown-unknown --lib --test cross_platform

log "wasm32: the I/O-free libraries (stats, dp, secure, formats) build for WebAssembly"
cargo build --locked --target wasm32-unknown-unknown -p orthomask-stats -p orthomask-dp -p orthomask-secure -p orthomask-formats

log "sample survey definitions satisfy docs/survey.schema.json"
venv=target/py-test-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c "import jsonschema" 2>/dev/null || "$venv/bin/pip" install -q jsonschema
"$venv/bin/python" scripts/check_schemas.py

log "the HTTP contract: docs/openapi.yaml validates and agrees with the running services (schemathesis)"
bash scripts/contract.sh

log "web app: trunk release build, browser tests in headless Chromium, Playwright end to end"
bash scripts/test-web.sh

log "services end to end: real form, real services, basic and share mode"
WEB_DIST="$PWD/dist" bash scripts/e2e.sh

log "all tests passed"
