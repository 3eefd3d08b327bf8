#!/usr/bin/env bash
# Orthomask at scale against a numpy peer (issue 4): builds the benchmark in release mode, creates
# the peer's Python venv with numpy (skipped when present), runs every workload side by side and
# prints the table that README.md's "Performance" section shows.
#
#   bash scripts/bench.sh                  # everything (the peer's p = 10 000 record takes minutes)
#   bash scripts/bench.sh --quick          # skip the peer's 10 000 × 10 000 QR
#   bash scripts/bench.sh --reps 5         # more repetitions of the small workloads
#   bash scripts/bench.sh --rounds 5       # more alternating rounds (each side keeps its fastest)
#   bash scripts/bench.sh --peer-threads 1 # pin the peer's BLAS threads
#   bash scripts/bench.sh --only 5.        # only the rows whose label starts with "5."
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1;35m[bench]\033[0m %s\n' "$*" >&2; }

target=${CARGO_TARGET_DIR:-target}
venv="$target/bench-venv"

if ! python3 -c "import venv, ensurepip" 2>/dev/null; then
    log "apt-get install python3-venv (Debian splits venv out of python3)"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-venv
fi
if [ ! -x "$venv/bin/python" ]; then
    log "python3 -m venv $venv"
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import numpy" 2>/dev/null; then
    log "pip install numpy (the peer)"
    "$venv/bin/pip" install -q numpy
fi

log "cargo build --release -p orthomask-bench --bin orthomask (row 5 runs the command-line tool)"
cargo build --release --locked -p orthomask-bench
cargo build --release --locked --bin orthomask
log "running (each workload in its own process; progress on stderr, the table on stdout)"
"$target/release/orthomask-bench" --python "$venv/bin/python" --data "$target/bench-data" "$@"
