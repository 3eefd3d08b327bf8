#!/usr/bin/env bash
# Build Orthomask and run it on localhost: the web app (participant form, survey team's page, analyst
# view, classroom, audit) served by the data collector, with the masking service provider and two
# right-masking services beside it in one process with separate stores and key files (`orthomask
# serve all`), which creates the live demonstration surveys on them. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/target/web-tools/node_modules/.bin:$PATH"
cargo build --release --locked --bin orthomask
bash scripts/build-web.sh
data=${DATA_DIR:-target/run-data}
port=${PORT:-8080}
echo
echo "Orthomask: http://127.0.0.1:$port/   (classroom: http://127.0.0.1:$port/#/classroom)"
echo "Take a live demonstration survey: http://127.0.0.1:$port/#/participate"
echo "The survey team's page: http://127.0.0.1:$port/#/admin   (admin token: cat $data/admin-token; API: docs/openapi.yaml)"
echo
exec target/release/orthomask serve all --data-dir "$data" --port "$port" --web-dir dist
