//! The analyst view's exports: the coefficient table as CSV, everything as JSON, and the R and
//! Python scripts that compute the same results from the release with R's and statsmodels' own
//! functions (the exact tests: [`super::exact_exports`]; a data package's labelled tables:
//! [`super::labels`]). What they export is [`super::analysis`]'s result.

use super::analysis::{AnalysisResult, LinearSummary, LogisticSummary};
use super::contingency_summary::TableSummary;
use super::exact_exports::{python_exact_tests, r_exact_tests};
use super::labels::{LoadedPackage, python_labelled_tables, r_labelled_tables};
use super::script_names::{py_name, r_name, r_string};

/// The tables the exported scripts compute as 2×2 tables of binary columns: none when they are
/// the data package's labelled tables.
fn binary_tables(r: &AnalysisResult) -> Vec<&TableSummary> {
    match r.package {
        Some(_) => Vec::new(),
        None => r.tables.iter().filter_map(|t| t.as_ref().ok()).collect(),
    }
}

/// The labelled tables in an exported script (`write`: R's or Python's), if a package was loaded.
fn labelled_exports(
    r: &AnalysisResult,
    write: fn(&LoadedPackage, &[&TableSummary]) -> String,
) -> String {
    let tables: Vec<&TableSummary> = r.tables.iter().filter_map(|t| t.as_ref().ok()).collect();
    r.package
        .as_ref()
        .map(|p| write(p, &tables))
        .unwrap_or_default()
}

/// The coefficient table as CSV at full (round-trip) precision.
pub fn coefficients_csv(s: &LinearSummary) -> String {
    let mut out = String::from("term,estimate,std_error,t,p,ci_low,ci_high\n");
    for c in &s.coefficients {
        let name = if c.name.contains([',', '"']) {
            format!("\"{}\"", c.name.replace('"', "\"\""))
        } else {
            c.name.clone()
        };
        out.push_str(&format!(
            "{name},{},{},{},{},{},{}\n",
            c.estimate, c.std_error, c.t, c.p, c.ci_low, c.ci_high
        ));
    }
    out
}

/// Everything computed, as JSON (the linear model in the layout of `orthomask regress --json`).
pub fn result_json(r: &AnalysisResult) -> String {
    let linear = r.linear.as_ref().ok().map(|s| {
        serde_json::json!({
            "response": s.response,
            "predictors": s.predictors,
            "coefficients": s.coefficients,
            "r_squared": s.r_squared,
            "adj_r_squared": s.adj_r_squared,
            "sigma": s.sigma,
            "f_statistic": s.f_statistic,
            "f_p_value": s.f_p_value,
            "df_resid": s.df_resid,
            "n": s.n,
        })
    });
    let tables: Vec<&TableSummary> = r.tables.iter().filter_map(|t| t.as_ref().ok()).collect();
    let value = serde_json::json!({
        "input": r.name,
        "n": r.n,
        "linear": linear,
        "logistic": r.logistic.as_ref().ok(),
        "exact_tests": r.exact_tests.as_ref().ok(),
        "contingency_tables": tables,
        "audit": r.audit.as_ref().ok().map(|a| &a.checks),
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

fn expected_comment(prefix: &str, s: &LinearSummary) -> String {
    let mut out = format!("{prefix} Expected coefficients (computed in the browser):\n");
    for c in &s.coefficients {
        out.push_str(&format!("{prefix}   {:<16} {:.10e}\n", c.name, c.estimate));
    }
    out.push_str(&format!(
        "{prefix}   R-squared        {:.10}\n",
        s.r_squared
    ));
    out
}

/// The logistic model's expected coefficients, as a comment.
fn expected_logistic_comment(prefix: &str, l: &LogisticSummary) -> String {
    let mut out = format!("{prefix} Expected coefficients (computed in the browser):\n");
    for c in &l.coefficients {
        out.push_str(&format!("{prefix}   {:<16} {:.10e}\n", c.name, c.estimate));
    }
    out.push_str(&format!("{prefix}   deviance         {:.10}\n", l.deviance));
    out
}

/// An R script that reproduces the regression and the contingency tables from the release.
///
/// Checked by running it: the Playwright suite runs the exported script with `Rscript` on a
/// release and compares `lm`'s and `glm`'s coefficients and standard errors with
/// `orthomask regress --json` and `orthomask logit --json` (1e-9 relative). `glm` as R runs it
/// by default does not reproduce the fit to that accuracy, for two reasons the script corrects:
/// it stops when the deviance changes by less than 1e-8 relative (estimates 1.5e-8 short of the
/// maximum on the LEAPS release), and `summary()` takes its standard errors from the weights at
/// the *previous* iterate (7.6e-5 off there). The script converges to 1e-14 and then takes one
/// more Fisher-scoring step from the estimate (`update(logit, start = coef(logit))`), so the
/// weights are those at the estimate, as in `Cov(β̂) = (ZᵀD̂Z)⁻¹` of `orthomask logit`.
pub fn r_snippet(r: &AnalysisResult) -> String {
    let file = &r.name;
    let mut out = format!(
        "# Reproduce the Orthomask analysis of {file} in R.\n\
         # The release keeps means and X'X, so lm() on it gives the raw data's coefficients.\n\
         d <- read.csv({}, check.names = FALSE)\n",
        r_string(file)
    );
    if let Ok(s) = &r.linear {
        let rhs: Vec<String> = s.predictors.iter().map(|p| r_name(p)).collect();
        out.push_str(&format!(
            "fit <- lm({} ~ {}, data = d)\nprint(summary(fit))\nprint(confint(fit))\n",
            r_name(&s.response),
            rhs.join(" + ")
        ));
        out.push_str(&expected_comment("#", s));
        out.push_str(&r_exact_tests(r, s));
    }
    if let Ok(l) = &r.logistic {
        let rhs: Vec<String> = r.x.iter().map(|p| r_name(p)).collect();
        out.push_str(&format!(
            "logit <- glm({} ~ {}, family = binomial, data = d,\n\
             \x20   control = glm.control(epsilon = 1e-14, maxit = 100))\n\
             # One more step from the estimate: summary() takes its standard errors from the\n\
             # weights where the last step started, so they become those at the estimate.\n\
             logit <- update(logit, start = coef(logit))\nprint(summary(logit))\n",
            r_name(&l.response),
            rhs.join(" + ")
        ));
        out.push_str(&expected_logistic_comment("#", l));
    }
    for t in binary_tables(r) {
        out.push_str(&format!(
            "# 2x2 table of {a} by {b} from cross-products (seed 003 Table 1): rows {a} = 1, 0; columns {b} = 1, 0\n\
             z1 <- d[[{qa}]]; z2 <- d[[{qb}]]; n <- nrow(d)\n\
             d11 <- sum(z1 * z2); d10 <- sum(z1 * z1) - d11; d01 <- sum(z2 * z2) - d11\n\
             print(round(matrix(c(d11, d01, d10, n - d11 - d10 - d01), 2, 2)))\n",
            a = t.rows,
            b = t.columns,
            qa = r_string(&t.rows),
            qb = r_string(&t.columns),
        ));
    }
    out.push_str(&labelled_exports(r, r_labelled_tables));
    out
}

/// A Python (pandas + statsmodels) script that reproduces the same results.
pub fn python_snippet(r: &AnalysisResult) -> String {
    let file = &r.name;
    let mut out = format!(
        "# Reproduce the Orthomask analysis of {file} in Python (pandas, statsmodels).\n\
         import numpy as np\nimport pandas as pd\nimport statsmodels.formula.api as smf\n\n\
         d = pd.read_csv(\"{file}\")\n"
    );
    if let Ok(s) = &r.linear {
        let rhs: Vec<String> = s.predictors.iter().map(|p| py_name(p)).collect();
        out.push_str(&format!(
            "fit = smf.ols(\"{} ~ {}\", data=d).fit()\nprint(fit.summary())\n",
            py_name(&s.response),
            rhs.join(" + ")
        ));
        out.push_str(&expected_comment("#", s));
        out.push_str(&python_exact_tests(r, s));
    }
    if let Ok(l) = &r.logistic {
        let rhs: Vec<String> = r.x.iter().map(|p| py_name(p)).collect();
        out.push_str(&format!(
            "logit = smf.logit(\"{} ~ {}\", data=d).fit()\nprint(logit.summary())\n",
            py_name(&l.response),
            rhs.join(" + ")
        ));
    }
    for t in binary_tables(r) {
        out.push_str(&format!(
            "# 2x2 table of {a} by {b} from cross-products (seed 003 Table 1)\n\
             z1, z2, n = d[\"{a}\"].to_numpy(), d[\"{b}\"].to_numpy(), len(d)\n\
             d11 = z1 @ z2; d10 = z1 @ z1 - d11; d01 = z2 @ z2 - d11\n\
             print(np.round([[d11, d10], [d01, n - d11 - d10 - d01]]))\n",
            a = t.rows,
            b = t.columns
        ));
    }
    out.push_str(&labelled_exports(r, python_labelled_tables));
    out
}
