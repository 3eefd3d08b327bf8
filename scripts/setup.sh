#!/usr/bin/env bash
# Install everything Orthomask's build and tests need on a Debian machine with rustup.
# Idempotent: every step checks first and skips what is already there. Offline-friendly: nothing
# downloads binaries at build time (see ../shared/TOOLCHAIN.md for why each choice was made).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1;34m[setup]\033[0m %s\n' "$*"; }

# Debian packages, installed only when missing.
apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "apt-get install ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}

command -v cargo >/dev/null || { echo "cargo not found: install Rust with rustup first" >&2; exit 1; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
fi

# Debian packages: node and npm (the web tools), python3-venv (Debian splits venv out), R
# (Debian's r-base-core runs the analyst view's exported R script in the web tests), Debian's
# chromium and its driver (the browser tests; never `npx playwright install`), faketime. Downloading them
# is mostly network: it runs while wasm-bindgen-cli compiles, and is waited for below.
debian=()
command -v node >/dev/null && command -v npm >/dev/null || debian+=(nodejs npm)
python3 -c "import venv, ensurepip" 2>/dev/null || debian+=(python3 python3-venv)
command -v Rscript >/dev/null || debian+=(r-base-core)
# jsonlite: R reads a release's datapackage.json with it (scripts/check_datapackage.R).
Rscript -e 'library(jsonlite)' >/dev/null 2>&1 || debian+=(r-cran-jsonlite)
debian+=(chromium chromium-driver)
# libfaketime: the fault test that sets a running service's clock back (crates/cli/tests/clock_jump.rs).
debian+=(faketime)
apt_install "${debian[@]}" &
apt_pid=$!

# wasm-bindgen-cli must match the wasm-bindgen version in Cargo.lock exactly.
wbg_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$wbg_version" ]; then
    log "cargo install wasm-bindgen-cli $wbg_version (a few minutes)"
    # Without --locked: its own lockfile pins a webpki-roots version the registry lacks.
    cargo install wasm-bindgen-cli --version "$wbg_version"
fi
wait "$apt_pid" || { echo "setup: apt-get install failed (above)" >&2; exit 1; }

# ── web: the rest of the Yew app's toolchain (issue 5; scripts/build-web.sh uses it) ───────────
# wasm-opt from npm binaryen@132 (Debian's 108 cannot parse Rust 1.95 output); playwright-core
# for the end-to-end tests, driving Debian's chromium. npm tools go to target/web-tools, which
# the build and test scripts put first on PATH. (trunk is no longer needed: build-web.sh.)
web_tools="$PWD/target/web-tools"
if [ ! -x "$web_tools/node_modules/.bin/wasm-opt" ] || [ ! -d "$web_tools/node_modules/playwright-core" ]; then
    log "npm install binaryen@132.0.0 playwright-core into $web_tools"
    mkdir -p "$web_tools"
    (cd "$web_tools" && npm install --no-audit --no-fund --silent binaryen@132.0.0 playwright-core@1.65.1)
fi
log "toolchain ready"
