#!/usr/bin/env bash
# Browser benchmark: build the app (release), run #/bench in headless Chromium and the same
# operations natively (examples/bench_native.rs), and print both side by side with their ratio
# (targets: native no slower than the browser on every row, browser ≤ 2.5× native) and the main
# thread's long tasks (target: none over 100 ms). A measurement, not a test: it prints the figures
# and fails only when something breaks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
root=$PWD
export PATH="$root/target/web-tools/bin:$root/target/web-tools/node_modules/.bin:$PATH"
export ORTHOMASK_ARTIFACTS="$root/target/e2e-artifacts"
mkdir -p "$ORTHOMASK_ARTIFACTS"
bash scripts/build-web.sh
cargo build --release --locked -p orthomask-web --example bench_native
native="${CARGO_TARGET_DIR:-$root/target}/release/examples/bench_native"
"$native" > "$ORTHOMASK_ARTIFACTS/bench-native.json"
# The browser's worker is one thread; the core uses every core natively. Also time one core.
one_core=()
if command -v taskset >/dev/null; then
    taskset -c 0 "$native" > "$ORTHOMASK_ARTIFACTS/bench-native-1core.json"
    one_core=("$ORTHOMASK_ARTIFACTS/bench-native-1core.json")
fi
ln -sfn "$root/target/web-tools/node_modules" e2e/node_modules
node e2e/bench.mjs "$ORTHOMASK_ARTIFACTS/bench-native.json" "${one_core[@]}"
