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

use super::model::{
    coefficients_json, intercept, load, names, print_coefficients, require_columns,
};
use crate::io::{print_json, read_text, warn};
use anyhow::{Context, Result, bail};
use clap::Args;
use orthomask_formats::manifest::Manifest;
use orthomask_stats::bias_corrected::BiasCorrectedRegression;
use orthomask_stats::linear::{EXACT_FIT_WARNING, LinearRegression};
use serde_json::{Value, json};
use std::path::PathBuf;

/// Arguments of `regress`.
#[derive(Args)]
pub struct RegressArgs {
    /// Data: CSV with a header row (a release or raw data).
    #[arg(long)]
    input: PathBuf,
    /// Response column.
    #[arg(long)]
    y: String,
    /// Predictor columns.
    #[arg(long, value_delimiter = ',', required = true)]
    x: Vec<String>,
    /// Fit without an intercept (R² and F are then the uncentred versions, as in R).
    #[arg(long)]
    no_intercept: bool,
    /// Known additive noise per column (`COL=SD,…`): fit the bias-corrected regression.
    #[arg(long, value_delimiter = ',')]
    noise_sd: Vec<String>,
    /// Take the noise standard deviations from a release manifest's DP section.
    #[arg(long, conflicts_with = "noise_sd")]
    manifest: Option<PathBuf>,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
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

/// Run `regress`.
pub fn run(args: RegressArgs) -> Result<()> {
    let (table, data) = load(&args.input)?;
    let predictors = names(&args.x);
    let mut all = predictors.clone();
    all.push(&args.y);
    require_columns(&table, &all)?;
    let noise = match &args.manifest {
        Some(path) => {
            let manifest = Manifest::parse(&read_text(path)?, &path.display().to_string())?;
            let dp = manifest
                .dp
                .with_context(|| format!("{}: the manifest records no DP noise", path.display()))?;
            // Only the model's columns enter the cross-product matrix, so only their noise matters.
            dp.columns
                .into_iter()
                .filter(|c| c.name == args.y || args.x.contains(&c.name))
                .map(|c| (c.name, c.sigma))
                .collect()
        }
        None => parse_noise(&args.noise_sd)?,
    };
    if !noise.is_empty() {
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
    Ok(())
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
