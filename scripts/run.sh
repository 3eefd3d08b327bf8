#!/usr/bin/env bash
# Build Orthomask and run a demonstration of the command-line tool on the paper's data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked --bin orthomask
bin=target/release/orthomask
out=${OUT:-target/demo}
"$bin" mask right --input data/paper/leaps_table2.csv --key 535 --rng matlab --kind uniform-entries \
    --decimals 2 --out "$out/table3.csv"
"$bin" pipeline --input data/paper/leaps_table2.csv --out-dir "$out/pipeline" --teaching-key 535
echo
echo "The orthomask tool is at $bin; demonstration output is in $out/. Try: $bin --help"
