//! Shared plumbing of the analysis commands: CSV → dataset, coefficients → JSON and text.

use crate::io::read_table;
use anyhow::Result;
use orthomask_formats::csv::Table;
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::inference::Coefficient;
use serde_json::{Value, json};
use std::path::Path;

/// Read a CSV file as a dataset, keeping the table for column lookups in messages.
pub fn load(path: &Path) -> Result<(Table, Dataset)> {
    let table = read_table(path)?;
    let dataset = Dataset::new(table.headers().to_vec(), table.data().clone())?;
    Ok((table, dataset))
}

/// `--no-intercept` as the library's enum.
pub fn intercept(no_intercept: bool) -> Intercept {
    if no_intercept {
        Intercept::Excluded
    } else {
        Intercept::Included
    }
}

/// Check that every named column exists, so a typo gets the file's column list.
pub fn require_columns(table: &Table, names: &[&str]) -> Result<()> {
    for name in names {
        table.column_index(name)?;
    }
    Ok(())
}

/// Coefficients as the JSON the issue fixes: `{name, estimate, std_error, t|z, p, ci_low, ci_high}`.
pub fn coefficients_json(coefficients: &[Coefficient]) -> Value {
    Value::Array(
        coefficients
            .iter()
            .map(|c| {
                let mut row = json!({
                    "name": c.name(),
                    "estimate": c.estimate(),
                    "std_error": c.std_error(),
                    "p": c.p_value(),
                    "ci_low": c.ci_low(),
                    "ci_high": c.ci_high(),
                });
                row[c.reference().statistic_name()] = json!(c.statistic());
                row
            })
            .collect(),
    )
}

/// A coefficient table in the style of R's `summary()`.
pub fn print_coefficients(coefficients: &[Coefficient]) {
    let width = coefficients
        .iter()
        .map(|c| c.name().len())
        .max()
        .unwrap_or(4)
        .max(4);
    let stat = coefficients
        .first()
        .map_or("t", |c| c.reference().statistic_name());
    println!(
        "{:width$}  {:>14} {:>12} {:>9} {:>10}  {:>25}",
        "term", "estimate", "std. error", stat, "p", "95% confidence interval"
    );
    for c in coefficients {
        println!(
            "{:width$}  {:>14.6} {:>12.6} {:>9.3} {:>10.3e}  [{:>11.5}, {:>11.5}]",
            c.name(),
            c.estimate(),
            c.std_error(),
            c.statistic(),
            c.p_value(),
            c.ci_low(),
            c.ci_high()
        );
    }
}

/// Split `--x a,b` into names.
pub fn names(list: &[String]) -> Vec<&str> {
    list.iter().map(String::as_str).collect()
}
