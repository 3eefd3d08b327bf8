#!/usr/bin/env bash
# The command-line tool on the papers' data: Table 3 of Wu et al. (2017) from Table 2 and key 535,
# and a modified-TM² pipeline run on the 20 LEAPS records (output in target/demo/).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --bin orthomask
bin=target/release/orthomask
out=${OUT:-target/demo}
"$bin" mask right --input data/paper/leaps_table2.csv --key 535 --rng matlab --kind uniform-entries \
    --decimals 2 --out "$out/table3.csv"
diff -q "$out/table3.csv" data/paper/leaps_table3_xb1.csv && echo "table3.csv is Table 3 of the paper, to every printed decimal"
# release.csv and manifest.json; add --write-exchanges for upload.csv and msp_to_collector.csv.
"$bin" pipeline --input data/paper/leaps_table2.csv --out-dir "$out/pipeline" --teaching-key 535
"$bin" regress --input "$out/pipeline/release.csv" --y ADL --x Age,BBS
echo
echo "The orthomask tool is at $bin; output in $out/. Try: $bin --help"
