//! `orthomask regress`: linear regression with full inference on a (released) CSV file, and the
//! bias-corrected fit for releases carrying device-side DP noise.
//!
//! As R's `lm`/`summary.lm`: collinear terms are dropped and listed (R's `NA` coefficients) and
//! an exact fit is reported with R's warning "essentially perfect fit: summary may be
//! unreliable" instead of being refused.
//!
//! # JSON
//! Besides the coefficient table and the ANOVA: `aliased` — one object per dropped term,
//! `{name, collinear_with, remaining_share, reason}` (`reason` the one-line text); `exact_fit` —
//! whether the residuals are rounding noise; `warnings` — the messages R would print. Every
//! number in the output is finite: where R prints `Inf` or `NaN` (the t statistic of a zero
//! standard error, its p-value, an infinite F of an exact fit) the field is `null`, and
//! `exact_fit`/`warnings` say why.
//!
//! # A formula over declared terms (issue 22 §3)
//! `--terms "y ~ age + I(age^2) + income*smoker"` names the model as R would, instead of
//! `--y`/`--x`: each term is a column of the release or a model term the `--manifest` declares
//! (`orthomask_survey::formula` resolves it, and refuses in one line what a masked release cannot
//! give). With a formula, `--test reset` takes the model's declared powers and
//! `--test chow --group G` its declared products with `G` unless `--powers`/`--interactions`
//! name them.
//!
//! # What is exact on a release (issue 22 §2)
//! Every fit also prints what a masked release gives exactly (`orthomask_stats::model_tests`
//! says why): the normal log-likelihood, AIC and BIC (R's `logLik`, `AIC`, `BIC`), the variance
//! inflation factors (`1/(1 − R²ⱼ)`, car's `vif`), and the correlation of the residuals with
//! every other column (seed 001 §3.2; zero by construction for the model's own terms). With
//! `--test` one F test of nested models is added (R's `anova(lm0, lm1)`):
//! `nested --reduced COL,…` (the model on those columns of `--x` against the full one),
//! `reset --powers COL,…` (without against with the declared power terms; the classical RESET
//! on powers of the fitted values is not computable on a release) and
//! `chow --group COL --interactions COL,…` (the pooled model against the one with the group
//! indicator and its interactions). JSON fields: `log_likelihood`, `parameters`, `aic`, `bic`,
//! `vif` (`[{name, r_squared, vif}]`, or `null` with `vif_unavailable` saying why),
//! `residual_correlations` (`[{column, in_model, correlation}]`, `correlation` `null` for a
//! constant column), and `test` (`{kind, reduced, added, rss_reduced, rss_full, df_reduced,
//! df_full, df, sum_of_squares, f_statistic, p_value}`, plus `group` for Chow), `null` without
//! `--test`.

use super::model::{
    coefficients_json, intercept, load, names, print_coefficients, require_columns,
};
use crate::io::{print_json, read_text, warn};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use orthomask_formats::manifest::Manifest;
use orthomask_stats::bias_corrected::BiasCorrectedRegression;
use orthomask_stats::dataset::Dataset;
use orthomask_stats::linear::{EXACT_FIT_WARNING, LinearRegression};
use orthomask_stats::model_tests::{
    ChowTest, InformationCriteria, NestedFTest, ResetTest, ResidualCorrelation, VarianceInflation,
};
use serde_json::{Value, json};
use std::path::PathBuf;

/// Arguments of `regress`.
#[derive(Args)]
pub struct RegressArgs {
    /// Data: CSV with a header row (a release or raw data).
    #[arg(long)]
    input: PathBuf,
    /// Response column.
    #[arg(long = "y", required_unless_present = "terms")]
    y_column: Option<String>,
    /// Predictor columns.
    #[arg(long = "x", value_delimiter = ',', required_unless_present = "terms")]
    x_columns: Vec<String>,
    /// The model as an R formula over the release's columns and the model terms its
    /// `--manifest` declares, instead of `--y`/`--x`: `"y ~ age + I(age^2) + income*smoker"`
    /// (see `orthomask_survey::formula` for what a release can give).
    #[arg(long, conflicts_with_all = ["y_column", "x_columns", "no_intercept"])]
    terms: Option<String>,
    /// Fit without an intercept (R² and F are then the uncentred versions, as in R).
    #[arg(long)]
    no_intercept: bool,
    /// Known additive noise per column (`COL=SD,…`): fit the bias-corrected regression.
    #[arg(long, value_delimiter = ',')]
    noise_sd: Vec<String>,
    /// The release's manifest: the noise standard deviations of its DP section (the
    /// bias-corrected fit), and the model terms it declares (what `--terms` may name).
    #[arg(long, conflicts_with = "noise_sd")]
    manifest: Option<PathBuf>,
    /// Also test the model against a nested one (R's `anova(lm0, lm1)`).
    #[arg(long, value_enum)]
    test: Option<ModelTest>,
    /// `--test nested`: the reduced model's predictors, a subset of `--x`.
    #[arg(long, value_delimiter = ',', required_if_eq("test", "nested"))]
    reduced: Vec<String>,
    /// `--test reset`: the declared power terms among `--x` (e.g. `age2` = age²). With
    /// `--terms`, the model's powers the manifest declares unless named here.
    #[arg(long, value_delimiter = ',')]
    powers: Vec<String>,
    /// `--test chow`: the group's 0/1 indicator among `--x`.
    #[arg(long, required_if_eq("test", "chow"))]
    group: Option<String>,
    /// `--test chow`: the group's interaction columns among `--x` (e.g. `x_g` = x·group). With
    /// `--terms`, the model's declared products with `--group` unless named here.
    #[arg(long, value_delimiter = ',')]
    interactions: Vec<String>,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
    /// The response, from `--y` or the formula (set by [`resolve_model`]).
    #[arg(skip)]
    y: String,
    /// The predictors, from `--x` or the formula (set by [`resolve_model`]).
    #[arg(skip)]
    x: Vec<String>,
}

/// The F tests of nested models `--test` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ModelTest {
    /// The model on `--reduced` against the full model.
    Nested,
    /// RESET-style: the model without the `--powers` against the full model.
    Reset,
    /// Chow: the pooled model against the one with `--group` and its `--interactions`.
    Chow,
}

impl ModelTest {
    fn word(self) -> &'static str {
        match self {
            Self::Nested => "nested",
            Self::Reset => "reset",
            Self::Chow => "chow",
        }
    }
}

/// Run the `--test` asked for on the full model `response ~ predictors`.
fn model_test(
    args: &RegressArgs,
    kind: ModelTest,
    data: &Dataset,
    predictors: &[&str],
) -> Result<NestedFTest> {
    let intercept = intercept(args.no_intercept);
    let result = match kind {
        ModelTest::Nested => {
            NestedFTest::new(data, &args.y, &names(&args.reduced), predictors, intercept)
        }
        ModelTest::Reset => {
            ResetTest::new(data, &args.y, predictors, &names(&args.powers), intercept)
                .map(|t| t.f_test().clone())
        }
        ModelTest::Chow => ChowTest::new(
            data,
            &args.y,
            predictors,
            args.group.as_deref().unwrap_or_default(),
            &names(&args.interactions),
            intercept,
        )
        .map(|t| t.f_test().clone()),
    };
    result.with_context(|| format!("--test {} in {}", kind.word(), args.input.display()))
}

/// The test as JSON (see the module docs).
fn test_json(args: &RegressArgs, kind: ModelTest, t: &NestedFTest) -> Value {
    let mut value = json!({
        "kind": kind.word(),
        "reduced": t.reduced_terms(),
        "added": t.added_terms(),
        "rss_reduced": t.rss_reduced(),
        "rss_full": t.rss_full(),
        "df_reduced": t.df_reduced(),
        "df_full": t.df_full(),
        "df": t.df(),
        "sum_of_squares": t.sum_of_squares(),
        "f_statistic": finite(Some(t.f_statistic())),
        "p_value": finite(Some(t.p_value())),
    });
    if let (ModelTest::Chow, Some(group)) = (kind, &args.group) {
        value["group"] = json!(group);
    }
    value
}

/// Parse `COL=SD` pairs.
fn parse_noise(pairs: &[String]) -> Result<Vec<(String, f64)>> {
    pairs
        .iter()
        .map(|pair| {
            let (name, sd) = pair
                .split_once('=')
                .with_context(|| format!("--noise-sd {pair:?}: expected COL=SD"))?;
            let sd: f64 = sd
                .trim()
                .parse()
                .with_context(|| format!("--noise-sd {pair:?}: {sd:?} is not a number"))?;
            if !(sd.is_finite() && sd >= 0.0) {
                bail!(
                    "--noise-sd {pair:?}: the standard deviation must be finite and non-negative"
                );
            }
            Ok((name.trim().to_owned(), sd))
        })
        .collect()
}

/// Fill `args.y`, `args.x` (and, with a formula, the intercept and the powers and interactions
/// `--test reset`/`chow` use) from `--y`/`--x` or from `--terms` resolved against the release's
/// columns and the manifest's declared model terms.
fn resolve_model(
    mut args: RegressArgs,
    columns: &[String],
    manifest: Option<&Manifest>,
) -> Result<RegressArgs> {
    let Some(formula) = &args.terms else {
        args.y = args.y_column.clone().unwrap_or_default();
        args.x = args.x_columns.clone();
        if args.test == Some(ModelTest::Reset) && args.powers.is_empty() {
            bail!(
                "--test reset needs --powers COL,… (or a --terms formula and the release's --manifest, which declares them)"
            );
        }
        if args.test == Some(ModelTest::Chow) && args.interactions.is_empty() {
            bail!(
                "--test chow needs --interactions COL,… (or a --terms formula and the release's --manifest, which declares them)"
            );
        }
        return Ok(args);
    };
    let declared = manifest.map_or(&[][..], |m| &m.model_terms[..]);
    let model = orthomask_survey::formula::resolve(formula, columns, declared)
        .with_context(|| format!("--terms in {}", args.input.display()))?;
    if args.test == Some(ModelTest::Reset) && args.powers.is_empty() {
        if model.powers.is_empty() {
            bail!(
                "--test reset: the model {formula:?} has no declared power term (I(x^2) of a term the survey declared)"
            );
        }
        args.powers = model.powers.clone();
    }
    if let (Some(ModelTest::Chow), Some(group), true) =
        (args.test, &args.group, args.interactions.is_empty())
    {
        args.interactions = model.interactions_with(group);
        if args.interactions.is_empty() {
            bail!(
                "--test chow: the model {formula:?} has no declared product with {group} (write x*{group} for a declared x:{group})"
            );
        }
    }
    args.y = model.response;
    args.x = model.predictors;
    args.no_intercept = !model.intercept;
    Ok(args)
}

/// Run `regress`.
pub fn run(args: RegressArgs) -> Result<()> {
    let (table, data) = load(&args.input)?;
    let manifest = match &args.manifest {
        Some(path) => Some(Manifest::parse(
            &read_text(path)?,
            &path.display().to_string(),
        )?),
        None => None,
    };
    let args = resolve_model(args, table.headers(), manifest.as_ref())?;
    let predictors = names(&args.x);
    let mut all = predictors.clone();
    all.push(&args.y);
    require_columns(&table, &all)?;
    let noise = match (manifest.and_then(|m| m.dp), &args.manifest) {
        // Only the model's columns enter the cross-product matrix, so only their noise matters.
        (Some(dp), _) => dp
            .columns
            .into_iter()
            .filter(|c| c.name == args.y || args.x.contains(&c.name))
            .map(|c| (c.name, c.sigma))
            .collect(),
        // A manifest given for its declared terms: a release without DP noise is fitted as it is.
        (None, Some(_)) if args.terms.is_some() => Vec::new(),
        (None, Some(path)) => bail!("{}: the manifest records no DP noise", path.display()),
        _ => parse_noise(&args.noise_sd)?,
    };
    if !noise.is_empty() {
        if args.test.is_some() {
            bail!(
                "--test is for the least-squares fit; the bias-corrected fit of a noisy release has no exact F tests"
            );
        }
        return bias_corrected(&args, &data, &predictors, &noise);
    }
    let fit = LinearRegression::fit(&data, &args.y, &predictors, intercept(args.no_intercept))
        .with_context(|| {
            format!(
                "regressing {} on {} in {}",
                args.y,
                args.x.join(", "),
                args.input.display()
            )
        })?;
    let warnings: Vec<&str> = if fit.is_exact_fit() {
        vec![EXACT_FIT_WARNING]
    } else {
        Vec::new()
    };
    let criteria = InformationCriteria::of(&fit);
    let vif = VarianceInflation::for_predictors(&data, &predictors, intercept(args.no_intercept));
    let correlations = ResidualCorrelation::of(&data, &fit);
    let test = args
        .test
        .map(|kind| model_test(&args, kind, &data, &predictors).map(|t| (kind, t)))
        .transpose()?;
    if args.json {
        let anova = fit.anova();
        let row = |r: orthomask_stats::linear::AnovaRow| json!({"sum_of_squares": r.sum_of_squares(), "df": r.df(), "mean_square": r.mean_square()});
        let aliased: Vec<Value> = fit
            .aliased()
            .iter()
            .map(|a| {
                json!({
                    "name": a.name(),
                    "collinear_with": a.collinear_with(),
                    "remaining_share": a.remaining_share(),
                    "reason": a.to_string(),
                })
            })
            .collect();
        return print_json(&json!({
            "response": args.y,
            "intercept": !args.no_intercept,
            "n": fit.n(),
            "df_resid": fit.df_resid(),
            "coefficients": coefficients_json(fit.coefficients()),
            "aliased": aliased,
            "exact_fit": fit.is_exact_fit(),
            "warnings": warnings,
            "sigma": fit.sigma(),
            "r_squared": fit.r_squared(),
            "adj_r_squared": fit.adj_r_squared(),
            "f_statistic": finite(fit.f_statistic()),
            "f_p_value": finite(fit.f_p_value()),
            "anova": {
                "centered": anova.centered(),
                "regression": row(anova.regression()),
                "residual": row(anova.residual()),
                "total": row(anova.total()),
                "f_statistic": finite(anova.f_statistic()),
                "p_value": finite(anova.p_value()),
            },
            "log_likelihood": finite(Some(criteria.log_likelihood())),
            "parameters": criteria.parameters(),
            "aic": finite(Some(criteria.aic())),
            "bic": finite(Some(criteria.bic())),
            "vif": vif.as_ref().ok().map(|terms| {
                terms
                    .iter()
                    .map(|v| json!({"name": v.term(), "r_squared": v.r_squared(), "vif": v.vif()}))
                    .collect::<Vec<_>>()
            }),
            "vif_unavailable": vif.as_ref().err().map(ToString::to_string),
            "residual_correlations": correlations
                .iter()
                .map(|c| json!({
                    "column": c.column(),
                    "in_model": c.in_model(),
                    "correlation": finite(c.correlation()),
                }))
                .collect::<Vec<_>>(),
            "test": test.as_ref().map(|(kind, t)| test_json(&args, *kind, t)),
        }));
    }
    for warning in &warnings {
        warn(warning);
    }
    println!(
        "Linear regression of {} on {} ({} observations)",
        args.y,
        args.x.join(", "),
        fit.n()
    );
    print_coefficients(fit.coefficients());
    if !fit.aliased().is_empty() {
        println!(
            "({} not defined because of singularities)",
            fit.aliased().len()
        );
        for term in fit.aliased() {
            println!("{term}");
        }
    }
    println!(
        "residual standard error {:.6} on {} degrees of freedom",
        fit.sigma(),
        fit.df_resid()
    );
    println!(
        "R² = {:.6}, adjusted R² = {:.6}",
        fit.r_squared(),
        fit.adj_r_squared()
    );
    if let (Some(f), Some(p)) = (fit.f_statistic(), fit.f_p_value()) {
        println!("F = {f:.4}, p = {p:.4e}");
    }
    print_exact_on_release(&criteria, &vif, &correlations);
    if let Some((kind, t)) = &test {
        print_test(&args, *kind, t);
    }
    Ok(())
}

/// The text form of what a release gives exactly (see the module docs).
fn print_exact_on_release(
    criteria: &InformationCriteria,
    vif: &std::result::Result<Vec<VarianceInflation>, orthomask_stats::model_tests::ModelTestError>,
    correlations: &[ResidualCorrelation],
) {
    println!(
        "log-likelihood {:.6} ({} parameters), AIC = {:.6}, BIC = {:.6}",
        criteria.log_likelihood(),
        criteria.parameters(),
        criteria.aic(),
        criteria.bic()
    );
    match vif {
        Ok(terms) => {
            let listed: Vec<String> = terms
                .iter()
                .map(|v| format!("{} {:.4}", v.term(), v.vif()))
                .collect();
            println!("variance inflation factors: {}", listed.join(", "));
        }
        Err(e) => println!("variance inflation factors: none ({e})"),
    }
    let others: Vec<String> = correlations
        .iter()
        .filter(|c| !c.in_model())
        .map(|c| match c.correlation() {
            Some(r) => format!("{} {r:.6}", c.column()),
            None => format!("{} (constant)", c.column()),
        })
        .collect();
    if !others.is_empty() {
        println!(
            "correlation of the residuals with the columns not in the model: {}",
            others.join(", ")
        );
    }
    println!("(with the model's own terms it is zero by construction)");
}

fn print_test(args: &RegressArgs, kind: ModelTest, t: &NestedFTest) {
    let model = |terms: &[String]| {
        let mut all: Vec<&str> = Vec::new();
        if !args.no_intercept {
            all.push("1");
        }
        all.extend(terms.iter().map(String::as_str));
        format!("{} ~ {}", args.y, all.join(" + "))
    };
    let full: Vec<String> = args.x.clone();
    let title = match kind {
        ModelTest::Nested => "F test of nested models".to_owned(),
        ModelTest::Reset => format!(
            "RESET-style test of the powers {}",
            t.added_terms().join(", ")
        ),
        ModelTest::Chow => format!(
            "Chow test of the group {} (with {})",
            args.group.as_deref().unwrap_or_default(),
            t.added_terms().join(", ")
        ),
    };
    println!(
        "{title}: {} against {}",
        model(t.reduced_terms()),
        model(&full)
    );
    println!(
        "RSS {:.6} on {} df against {:.6} on {} df: F = {:.4} on {} and {} df, p = {:.4e}",
        t.rss_reduced(),
        t.df_reduced(),
        t.rss_full(),
        t.df_full(),
        t.f_statistic(),
        t.df(),
        t.df_full(),
        t.p_value()
    );
}

/// A statistic for the JSON: `null` when absent or not finite (see the module docs).
fn finite(value: Option<f64>) -> Value {
    value
        .filter(|v| v.is_finite())
        .map_or(Value::Null, Value::from)
}

fn bias_corrected(
    args: &RegressArgs,
    data: &orthomask_stats::dataset::Dataset,
    predictors: &[&str],
    noise: &[(String, f64)],
) -> Result<()> {
    let noise_refs: Vec<(&str, f64)> = noise.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let fit = BiasCorrectedRegression::fit(
        data,
        &args.y,
        predictors,
        intercept(args.no_intercept),
        &noise_refs,
    )
    .with_context(|| {
        format!(
            "bias-corrected regression of {} in {}",
            args.y,
            args.input.display()
        )
    })?;
    let rows: Vec<_> = fit
        .names()
        .iter()
        .zip(fit.estimates().iter().zip(fit.naive_estimates().iter()))
        .map(|(name, (estimate, naive))| json!({"name": name, "estimate": estimate, "naive_estimate": naive}))
        .collect();
    if args.json {
        return print_json(&json!({
            "response": args.y,
            "bias_corrected": true,
            "n": fit.n(),
            "noise_sd": noise.iter().map(|(n, s)| json!({"name": n, "sd": s})).collect::<Vec<_>>(),
            "coefficients": rows,
            "residual_variance": fit.residual_variance(),
        }));
    }
    println!(
        "Bias-corrected regression of {} (noise subtracted from the cross-products)",
        args.y
    );
    for row in &rows {
        println!(
            "{:>16}  corrected {:>14.6}  naive {:>14.6}",
            row["name"].as_str().unwrap_or(""),
            row["estimate"],
            row["naive_estimate"]
        );
    }
    println!("residual variance {:.6}", fit.residual_variance());
    Ok(())
}
