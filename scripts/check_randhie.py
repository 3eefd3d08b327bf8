"""Issue 23 §1, on survey microdata nobody here prepared: `orthomask pipeline` with its DEFAULT
flags on the RAND Health Insurance Experiment (statsmodels' `randhie`, 20 190 records × 10
columns) finishes — the plan chooses cohorts, so the run is O(n) — and the release's OLS equals
the raw data's OLS to at least 9 significant digits in every coefficient and standard error.

The oracle is statsmodels on both files, independent of Orthomask's own regression code. The
release keeps the QA column (888 in every raw row; the masks keep the all-ones vector fixed), so
QA / 888 is the intercept column on both sides.

    python scripts/check_randhie.py ORTHOMASK_BIN OUT_DIR
"""
import math
import pathlib
import subprocess
import sys

import pandas as pd
import statsmodels.api as sm
from statsmodels.datasets import randhie

# At least nine significant digits (issue 23 §1).
SIGNIFICANT_DIGITS = 9


def fit(frame):
    design = frame.drop(columns=["mdvis", "QA"]).assign(intercept=frame["QA"] / 888.0)
    return sm.OLS(frame["mdvis"], design).fit()


def main(binary, out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw = randhie.load_pandas().data.astype(float)
    raw_csv = out / "randhie.csv"
    raw.to_csv(raw_csv, index=False, float_format="%.17g")
    run = subprocess.run(
        [binary, "pipeline", "--input", str(raw_csv), "--out-dir", str(out / "release")],
        capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"orthomask pipeline failed: {run.stderr.strip()}")
    chosen = [line for line in run.stdout.splitlines() if "the plan's choice" in line]
    if not chosen:
        sys.exit(f"the default run did not say which cohorts the plan chose:\n{run.stdout}")
    release = pd.read_csv(out / "release" / "release.csv")
    raw_fit = fit(raw.assign(QA=888.0))
    release_fit = fit(release)
    worst = 0.0
    for name in raw_fit.params.index:
        for what, a, b in (("coefficient", raw_fit.params[name], release_fit.params[name]),
                           ("standard error", raw_fit.bse[name], release_fit.bse[name])):
            error = abs(a - b) / abs(a)
            worst = max(worst, error)
            if error > 10.0 ** -SIGNIFICANT_DIGITS:
                sys.exit(f"{name} {what}: raw {a!r}, release {b!r} (relative error {error:.2e})")
    print(f"randhie, n = {len(raw)}: {chosen[0]}")
    print(f"OLS of mdvis on {len(raw_fit.params) - 1} columns: every coefficient and standard error "
          f"agrees to {-math.log10(max(worst, 1e-17)):.1f} significant digits (at least {SIGNIFICANT_DIGITS})")


if __name__ == "__main__":
    main(*sys.argv[1:])
