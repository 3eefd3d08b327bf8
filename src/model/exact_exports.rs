//! The exact tests of the analyst view (issue 22 §2–3) in the R and Python exports: the same
//! statistics computed by R's and statsmodels' own functions on the release, named as the view
//! names them, so an analyst can check every number the view shows with a tool nobody here
//! wrote. The Chromium test of declared terms (`e2e-services/terms.mjs`) runs both scripts and
//! compares.
//!
//! Each script collects the values in `exact_tests` (an R list, a Python dict) with the view's
//! keys: `log_likelihood`, `aic`, `bic`, `drop_f` (F of dropping each predictor), `vif`,
//! `residual_correlations`, and one entry per declared-term test (`reset`, `chow:GROUP`) holding
//! `F` and `p`.
//!
//! One difference of convention is corrected, not copied: R's `AIC`/`BIC` count σ as a
//! parameter (`k = p + 1` with the intercept among the `p` coefficients), statsmodels'
//! `fit.aic`/`fit.bic` do not (they are 2 and `log n` lower). The view follows R, so the Python
//! script computes `−2ℓ + 2k` and `−2ℓ + k log n` with R's `k`.

use super::analysis::{AnalysisResult, DeclaredTest, DeclaredTestRow, ExactTests, LinearSummary};
use super::script_names::{py_name, r_name, r_string};

/// A Python string literal (JSON's escapes are Python's).
fn py_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_owned())
}

/// The view's key of a declared-term test.
fn test_key(row: &DeclaredTestRow) -> String {
    match &row.test {
        DeclaredTest::Reset => "reset".to_owned(),
        DeclaredTest::Chow { group } => format!("chow:{group}"),
    }
}

/// `response ~ terms` with the names written by `name` (`1` for no terms).
fn formula(response: &str, terms: &[&str], name: fn(&str) -> String) -> String {
    let rhs: Vec<String> = terms.iter().map(|t| name(t)).collect();
    let rhs = if rhs.is_empty() {
        "1".to_owned()
    } else {
        rhs.join(" + ")
    };
    format!("{} ~ {rhs}", name(response))
}

/// The predictors other than `one`.
fn others<'a>(predictors: &'a [String], one: &str) -> Vec<&'a str> {
    predictors
        .iter()
        .map(String::as_str)
        .filter(|p| *p != one)
        .collect()
}

fn strs(list: &[String]) -> Vec<&str> {
    list.iter().map(String::as_str).collect()
}

/// The values the view computed, as comments under the script's.
fn expected(prefix: &str, t: &ExactTests) -> String {
    let number = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{v:.10e}"));
    let mut out = format!(
        "{prefix} Expected (computed in the browser): log-likelihood {}, AIC {}, BIC {}\n",
        number(t.log_likelihood),
        number(t.aic),
        number(t.bic)
    );
    for row in t.declared_tests.iter().flatten() {
        out.push_str(&format!(
            "{prefix}   {} F {} on {} and {} df, p {}\n",
            test_key(row),
            number(row.f),
            row.df,
            row.df_resid,
            number(row.p)
        ));
    }
    out
}

/// The R lines computing the exact tests of `s` (fitted as `fit` on `d`).
pub fn r_exact_tests(r: &AnalysisResult, s: &LinearSummary) -> String {
    let Ok(t) = &r.exact_tests else {
        return String::new();
    };
    let mut out = String::from(
        "# What the release gives exactly (issue 22): functions of the columns' means and X'X,\n\
         # so the same numbers as the raw data's. R's AIC and BIC count sigma as a parameter.\n\
         exact_tests <- list(log_likelihood = as.numeric(logLik(fit)), aic = AIC(fit), bic = BIC(fit))\n\
         # The F test of dropping each predictor.\n\
         drop <- drop1(fit, test = \"F\")\nprint(drop)\n\
         exact_tests$drop_f <- drop$`F value`[-1]\n",
    );
    if t.vif.is_ok() && s.predictors.len() > 1 {
        out.push_str("# Variance inflation factors: 1 / (1 - R^2) of each predictor on the others.\nexact_tests$vif <- c(\n");
        let lines: Vec<String> = s
            .predictors
            .iter()
            .map(|p| {
                format!(
                    "  {} = 1 / (1 - summary(lm({}, data = d))$r.squared)",
                    r_string(p),
                    formula(p, &others(&s.predictors, p), r_name)
                )
            })
            .collect();
        out.push_str(&lines.join(",\n"));
        out.push_str("\n)\n");
    }
    let correlated: Vec<String> = t
        .residual_correlations
        .iter()
        .filter(|c| c.correlation.is_some())
        .map(|c| r_string(&c.column))
        .collect();
    if !correlated.is_empty() {
        out.push_str(&format!(
            "# The residuals' correlation with each column not in the model (seed 001 §3.2).\n\
             exact_tests$residual_correlations <- sapply(c({}), function(column) cor(resid(fit), d[[column]]))\n",
            correlated.join(", ")
        ));
    }
    for row in t.declared_tests.iter().flatten() {
        out.push_str(&format!(
            "# {}: the model against {}.\n\
             test <- anova(lm({}, data = d), fit)\nprint(test)\n\
             exact_tests[[{}]] <- c(F = test$F[2], p = test$`Pr(>F)`[2])\n",
            test_key(row),
            formula(&s.response, &strs(&row.reduced), |n| n.to_owned()),
            formula(&s.response, &strs(&row.reduced), r_name),
            r_string(&test_key(row)),
        ));
    }
    out.push_str("str(exact_tests)\n");
    out.push_str(&expected("#", t));
    out
}

/// The Python lines computing the exact tests of `s` (fitted as `fit` on `d`).
pub fn python_exact_tests(r: &AnalysisResult, s: &LinearSummary) -> String {
    let Ok(t) = &r.exact_tests else {
        return String::new();
    };
    let ols = |response: &str, terms: &[&str]| {
        format!(
            "smf.ols({}, data=d).fit()",
            py_string(&formula(response, terms, py_name))
        )
    };
    let mut out = String::from(
        "# What the release gives exactly (issue 22): functions of the columns' means and X'X,\n\
         # so the same numbers as the raw data's. R's AIC and BIC count sigma as a parameter and\n\
         # statsmodels' fit.aic and fit.bic do not, so they are computed here as R does.\n\
         from statsmodels.stats.anova import anova_lm\n\
         k = len(fit.params) + 1\n\
         exact_tests = {\"log_likelihood\": fit.llf, \"aic\": -2 * fit.llf + 2 * k,\n\
         \x20              \"bic\": -2 * fit.llf + np.log(fit.nobs) * k}\n\
         # The F test of dropping each predictor.\n\
         exact_tests[\"drop_f\"] = [\n",
    );
    for p in &s.predictors {
        out.push_str(&format!(
            "    anova_lm({}, fit)[\"F\"].iloc[1],\n",
            ols(&s.response, &others(&s.predictors, p))
        ));
    }
    out.push_str("]\n");
    if t.vif.is_ok() && s.predictors.len() > 1 {
        out.push_str("# Variance inflation factors: 1 / (1 - R^2) of each predictor on the others.\nexact_tests[\"vif\"] = {\n");
        for p in &s.predictors {
            out.push_str(&format!(
                "    {}: 1 / (1 - {}.rsquared),\n",
                py_string(p),
                ols(p, &others(&s.predictors, p))
            ));
        }
        out.push_str("}\n");
    }
    let correlated: Vec<&str> = t
        .residual_correlations
        .iter()
        .filter(|c| c.correlation.is_some())
        .map(|c| c.column.as_str())
        .collect();
    if !correlated.is_empty() {
        out.push_str("# The residuals' correlation with each column not in the model (seed 001 §3.2).\nexact_tests[\"residual_correlations\"] = {\n");
        for c in correlated {
            out.push_str(&format!(
                "    {k}: np.corrcoef(fit.resid, d[{k}])[0, 1],\n",
                k = py_string(c)
            ));
        }
        out.push_str("}\n");
    }
    for row in t.declared_tests.iter().flatten() {
        out.push_str(&format!(
            "# {}: the model against the reduced one.\n\
             test = anova_lm({}, fit)\nprint(test)\n\
             exact_tests[{}] = {{\"F\": test[\"F\"].iloc[1], \"p\": test[\"Pr(>F)\"].iloc[1]}}\n",
            test_key(row),
            ols(&s.response, &strs(&row.reduced)),
            py_string(&test_key(row)),
        ));
    }
    out.push_str("print(exact_tests)\n");
    out.push_str(&expected("#", t));
    out
}
