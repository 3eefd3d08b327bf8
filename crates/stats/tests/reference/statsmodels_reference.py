"""Reference values for the orthomask-stats tests.

Run with statsmodels 0.15.0, scipy 1.17.1, numpy 2.4.6 (the versions the cited numbers came from):

    python3 -m venv /tmp/statsvenv && /tmp/statsvenv/bin/pip install statsmodels
    /tmp/statsvenv/bin/python crates/stats/tests/reference/statsmodels_reference.py

Every number cited in the Rust tests is printed here with `repr`, next to the call that made it.
Nothing here runs in CI; it documents where the numbers came from.
"""
import pathlib

import numpy as np
import pandas as pd
import scipy.stats
import statsmodels.api as sm
import statsmodels.formula.api as smf
from statsmodels.stats.contingency_tables import Table2x2

ROOT = pathlib.Path(__file__).resolve().parents[4]
leaps = pd.read_csv(ROOT / "data/paper/leaps_table2.csv")


def show(label, value):
    print(f"{label} = {value!r}")


def ols(formula):
    fit = smf.ols(formula, data=leaps).fit()
    print(f"\n## smf.ols({formula!r}, data=leaps_table2).fit()")
    ci = fit.conf_int(0.05)
    for name in fit.params.index:
        print(
            f"{name}: estimate={fit.params[name]!r} se={fit.bse[name]!r} "
            f"t={fit.tvalues[name]!r} p={fit.pvalues[name]!r} "
            f"ci=({ci.loc[name, 0]!r}, {ci.loc[name, 1]!r})"
        )
    for attr in ["rsquared", "rsquared_adj", "fvalue", "f_pvalue", "ssr", "ess",
                 "centered_tss", "uncentered_tss", "df_model", "df_resid", "mse_resid"]:
        show(attr, getattr(fit, attr))
    show("sigma = sqrt(scale)", float(np.sqrt(fit.scale)))


def logit(formula):
    fit = smf.logit(formula, data=leaps).fit(disp=0)
    print(f"\n## smf.logit({formula!r}, data=leaps_table2).fit(disp=0)")
    ci = fit.conf_int(0.05)
    for name in fit.params.index:
        print(
            f"{name}: estimate={fit.params[name]!r} se={fit.bse[name]!r} "
            f"z={fit.tvalues[name]!r} p={fit.pvalues[name]!r} "
            f"ci=({ci.loc[name, 0]!r}, {ci.loc[name, 1]!r})"
        )
    for attr in ["llf", "llnull", "llr", "llr_pvalue", "df_model"]:
        show(attr, getattr(fit, attr))
    show("deviance = -2 llf", -2 * fit.llf)
    show("null deviance = -2 llnull", -2 * fit.llnull)
    show("converged", fit.mle_retvals["converged"])


# Linear regression on the raw LEAPS Table 2.
ols("Delta ~ Group + Age + BBS + ADL")
ols("Delta ~ 0 + Age + BBS")

# Logistic regression on the raw LEAPS Table 2.
logit("MIF ~ Group + Age + BBS + ADL")
logit("MIF ~ Group")
# Separation: every Response = 0 has Group = 1 (quasi-complete), and Delta splits Response
# perfectly (complete). statsmodels stops at its iteration limit with converged = False and
# standard errors in the tens of thousands; orthomask-stats refuses both fits.
logit("Response ~ Group + Age + BBS")
logit("Response ~ Delta")

# Descriptive statistics of LEAPS Table 2 (numeric columns except the constant QA).
cols = ["Delta", "Age", "BBS", "ADL"]
print("\n## leaps_table2[cols].mean(), .cov() (ddof=1), .corr()")
print(repr(leaps[cols].mean().tolist()))
print(repr(leaps[cols].cov().values.tolist()))
print(repr(leaps[cols].corr().values.tolist()))

# Table 6 of seed 003 (Group × MIF, LTP and "Yes" first).
table6 = np.array([[6, 6], [3, 5]])
print("\n## Table 6 = [[6, 6], [3, 5]]")
for correction in (False, True):
    chi2, p, dof, _ = scipy.stats.chi2_contingency(table6, correction=correction)
    print(f"scipy.stats.chi2_contingency(table6, correction={correction}): "
          f"chi2={chi2!r} p={p!r} dof={dof!r}")
t = Table2x2(table6)
show("Table2x2(table6).oddsratio", t.oddsratio)
show("Table2x2(table6).oddsratio_confint(0.05)", t.oddsratio_confint(0.05))
show("Table2x2(table6).log_oddsratio_se", t.log_oddsratio_se)
show("Table2x2(table6).riskratio", t.riskratio)
show("Table2x2(table6).riskratio_confint(0.05)", t.riskratio_confint(0.05))
show("Table2x2(table6).log_riskratio_se", t.log_riskratio_se)

# A table with a zero cell. orthomask-stats applies the Haldane–Anscombe correction (add 0.5 to
# every cell when any cell is 0). statsmodels' Table2x2(shift_zeros=True) documents the same but
# its code (0.15.0, line 131) only replaces the zero cells by 0.5, so the reference is computed on
# the explicitly shifted table.
zero = np.array([[4, 0], [3, 5]])
t0 = Table2x2(zero + 0.5, shift_zeros=False)
print("\n## zero-cell table [[4, 0], [3, 5]], Haldane-Anscombe shifted")
show("Table2x2(zero + 0.5, shift_zeros=False).oddsratio", t0.oddsratio)
show("Table2x2(zero + 0.5, shift_zeros=False).oddsratio_confint(0.05)", t0.oddsratio_confint(0.05))
show("Table2x2(zero + 0.5, shift_zeros=False).riskratio", t0.riskratio)
show("Table2x2(zero + 0.5, shift_zeros=False).riskratio_confint(0.05)", t0.riskratio_confint(0.05))
for correction in (False, True):
    chi2, p, dof, _ = scipy.stats.chi2_contingency(zero, correction=correction)
    print(f"scipy.stats.chi2_contingency(zero, correction={correction}): "
          f"chi2={chi2!r} p={p!r} dof={dof!r}")

# An r×c table: Group (LTP first) × Age band (<55, 55–69, ≥70), from LEAPS Table 2.
band = np.where(leaps.Age < 55, 0, np.where(leaps.Age < 70, 1, 2))
rc = np.array([[np.sum((leaps.Group == g) & (band == b)) for b in range(3)] for g in (1, 0)])
print("\n## Group (1, 0) × Age band (<55, 55-69, >=70)")
show("table", rc.tolist())
chi2, p, dof, _ = scipy.stats.chi2_contingency(rc, correction=False)
print(f"scipy.stats.chi2_contingency(rc, correction=False): chi2={chi2!r} p={p!r} dof={dof!r}")
