//! `orthomask logit`: logistic regression by Newton/IRLS (for second-method releases `XB₁B₂`,
//! whose response and treatment columns are kept, and for raw data).

use super::model::{
    coefficients_json, intercept, load, names, print_coefficients, require_columns,
};
use crate::io::print_json;
use anyhow::{Context, Result};
use clap::Args;
use orthomask_stats::logistic::LogisticRegression;
use serde_json::json;
use std::path::PathBuf;

/// Arguments of `logit`.
#[derive(Args)]
pub struct LogitArgs {
    /// Data: CSV with a header row.
    #[arg(long)]
    input: PathBuf,
    /// Binary (0/1) response column.
    #[arg(long)]
    y: String,
    /// Predictor columns.
    #[arg(long, value_delimiter = ',', required = true)]
    x: Vec<String>,
    /// Fit without an intercept.
    #[arg(long)]
    no_intercept: bool,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// Run `logit`.
pub fn run(args: LogitArgs) -> Result<()> {
    let (table, data) = load(&args.input)?;
    let predictors = names(&args.x);
    let mut all = predictors.clone();
    all.push(&args.y);
    require_columns(&table, &all)?;
    let fit = LogisticRegression::fit(&data, &args.y, &predictors, intercept(args.no_intercept))
        .with_context(|| {
            format!(
                "logistic regression of {} in {}",
                args.y,
                args.input.display()
            )
        })?;
    let lr = fit
        .likelihood_ratio()
        .map(|t| json!({"statistic": t.statistic(), "df": t.df(), "p_value": t.p_value()}));
    if args.json {
        return print_json(&json!({
            "response": args.y,
            "intercept": !args.no_intercept,
            "n": fit.n(),
            "df_resid": fit.df_resid(),
            "coefficients": coefficients_json(fit.coefficients()),
            "deviance": fit.deviance(),
            "null_deviance": fit.null_deviance(),
            "log_likelihood": fit.log_likelihood(),
            "null_log_likelihood": fit.null_log_likelihood(),
            "likelihood_ratio_test": lr,
            "iterations": fit.iterations(),
        }));
    }
    println!(
        "Logistic regression of {} on {} ({} observations, {} Newton steps)",
        args.y,
        args.x.join(", "),
        fit.n(),
        fit.iterations()
    );
    print_coefficients(fit.coefficients());
    println!(
        "residual deviance {:.4} on {} df; null deviance {:.4}",
        fit.deviance(),
        fit.df_resid(),
        fit.null_deviance()
    );
    if let Some(t) = fit.likelihood_ratio() {
        println!(
            "likelihood-ratio test: chi² = {:.4} on {} df, p = {:.4e}",
            t.statistic(),
            t.df(),
            t.p_value()
        );
    }
    Ok(())
}
