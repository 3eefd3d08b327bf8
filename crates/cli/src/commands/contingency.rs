//! `orthomask contingency`: contingency tables from (masked) indicator columns, with χ², odds
//! ratio and relative risk (seed 003 Table 1 / Table 6 construction), and Fisher's exact test
//! for 2×2 tables.
//!
//! Counts recovered from a release are rounded to integers (the largest rounding residual is
//! reported) and printed as integers, in the text and in the JSON (`table`, `row_totals`,
//! `col_totals`); with `--no-rounding` they stay real numbers.
//!
//! # JSON
//! `fisher` (2×2 tables of integer counts, else `null`): `{p_value, odds_ratio, ci_low,
//! ci_high}` as R's `fisher.test` reports them — two-sided p-value, conditional
//! maximum-likelihood odds ratio and its exact 95% interval; `odds_ratio` and `ci_high` are
//! `null` when infinite (the first cell as large as the margins allow; R prints `Inf`).
//! `smallest_expected`, and `warnings`, which says when an expected count is below 5 and the χ²
//! p-values should give way to Fisher's.

use super::model::load;
use crate::io::{print_json, warn};
use anyhow::{Context, Result};
use clap::Args;
use orthomask_formats::csv::Table;
use orthomask_stats::association::SMALL_EXPECTED_COUNT;
use orthomask_stats::contingency::{ContingencyTable, CountRounding, Factor};
use orthomask_stats::fisher::FisherExact;
use serde_json::{Value, json};
use std::path::PathBuf;

/// Arguments of `contingency`.
#[derive(Args)]
pub struct ContingencyArgs {
    /// Data: CSV with a header row.
    #[arg(long)]
    input: PathBuf,
    /// Row variable: one binary column, or several dummy columns of one categorical variable.
    #[arg(long, value_delimiter = ',', required = true)]
    row: Vec<String>,
    /// Column variable: one binary column, or several dummy columns.
    #[arg(long, value_delimiter = ',', required = true)]
    col: Vec<String>,
    /// Label of the level none of the row dummies marks (the reference).
    #[arg(long, default_value = "other")]
    row_reference: String,
    /// Label of the level none of the column dummies marks.
    #[arg(long, default_value = "other")]
    col_reference: String,
    /// Keep fractional counts instead of rounding to integers (columns not declared binary).
    #[arg(long)]
    no_rounding: bool,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

fn factor(table: &Table, columns: &[String], reference: &str) -> Result<Factor> {
    let indices = table.column_indices(columns)?;
    let data = table.data().select_columns(&indices);
    Ok(if columns.len() == 1 {
        Factor::binary(&columns[0], data.as_slice())?
    } else {
        Factor::with_reference(&columns.join("+"), columns.to_vec(), data, reference)?
    })
}

fn ratio(r: Option<&orthomask_stats::association::RatioEstimate>) -> Value {
    r.map_or(Value::Null, |r| {
        json!({"estimate": r.estimate(), "ci_low": r.ci_low(), "ci_high": r.ci_high(), "log_std_error": r.log_std_error(), "zero_cell_shift": r.zero_cell_shift()})
    })
}

fn fisher_json(f: Option<&FisherExact>) -> Value {
    // Infinite odds ratios and limits are `null` (see the module docs).
    let finite = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
    f.map_or(Value::Null, |f| {
        json!({"p_value": f.p_value(), "odds_ratio": finite(f.odds_ratio()), "ci_low": finite(f.ci_low()), "ci_high": finite(f.ci_high())})
    })
}

/// A count for the text table: an integer as an integer, a real count to 4 decimals; never
/// "-0".
fn count_text(value: f64, integer: bool) -> String {
    let value = if value == 0.0 { 0.0 } else { value };
    if integer {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.4}");
        if text
            .trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            text.trim_start_matches('-').to_owned()
        } else {
            text
        }
    }
}

/// Run `contingency`.
pub fn run(args: ContingencyArgs) -> Result<()> {
    let (table, _) = load(&args.input)?;
    let rows = factor(&table, &args.row, &args.row_reference)?;
    let cols = factor(&table, &args.col, &args.col_reference)?;
    let rounding = if args.no_rounding {
        CountRounding::Keep
    } else {
        CountRounding::ToIntegers
    };
    let counts = ContingencyTable::new(&rows, &cols, rounding)
        .with_context(|| format!("cross-classifying {}", args.input.display()))?;
    let association = counts.association().context("testing association")?;
    let yates = association.yates();
    let integers = counts.integer_counts();
    let mut warnings = Vec::new();
    if association.small_expected_counts() {
        warnings.push(format!(
            "an expected count is {:.2}, below {SMALL_EXPECTED_COUNT}: the χ² p-values are poor approximations{}",
            association.smallest_expected(),
            if association.fisher().is_some() {
                "; read Fisher's exact test"
            } else {
                ""
            }
        ));
    }
    if args.json {
        let (table, row_totals, col_totals) = match &integers {
            Some(cells) => (
                json!(cells),
                json!(
                    cells
                        .iter()
                        .map(|r| r.iter().sum::<u64>())
                        .collect::<Vec<_>>()
                ),
                json!(
                    (0..counts.column_levels().len())
                        .map(|j| cells.iter().map(|r| r[j]).sum::<u64>())
                        .collect::<Vec<_>>()
                ),
            ),
            None => (
                json!(counts.rows()),
                json!(counts.row_totals().iter().collect::<Vec<_>>()),
                json!(counts.column_totals().iter().collect::<Vec<_>>()),
            ),
        };
        return print_json(&json!({
            "row_levels": counts.row_levels(),
            "col_levels": counts.column_levels(),
            "table": table,
            "row_totals": row_totals,
            "col_totals": col_totals,
            "n": counts.n(),
            "rounding_residual": counts.rounding_residual(),
            "chi_square": association.chi_square(),
            "df": association.pearson().df(),
            "p_value": association.p_value(),
            "chi_square_yates": yates.map(|t| t.statistic()),
            "p_value_yates": yates.map(|t| t.p_value()),
            "odds_ratio": ratio(association.odds_ratio()),
            "relative_risk": ratio(association.relative_risk()),
            "fisher": fisher_json(association.fisher()),
            "smallest_expected": association.smallest_expected(),
            "warnings": warnings,
        }));
    }
    for warning in &warnings {
        warn(warning);
    }
    let integer = integers.is_some();
    let width = counts
        .row_levels()
        .iter()
        .map(String::len)
        .max()
        .unwrap_or(1)
        .max(6);
    print!("{:width$}", "");
    for level in counts.column_levels() {
        print!(" {level:>10}");
    }
    println!(" {:>10}", "total");
    for (i, level) in counts.row_levels().iter().enumerate() {
        print!("{level:width$}");
        for &v in counts.counts().row(i).iter() {
            print!(" {:>10}", count_text(v, integer));
        }
        println!(" {:>10}", count_text(counts.row_totals()[i], integer));
    }
    if let Some(r) = counts.rounding_residual() {
        println!("counts rounded to integers (largest rounding {r:.4})");
    }
    println!(
        "Pearson chi² = {:.4} on {} df, p = {:.4e}",
        association.chi_square(),
        association.pearson().df(),
        association.p_value()
    );
    if let Some(y) = yates {
        println!(
            "with continuity correction: chi² = {:.4}, p = {:.4e}",
            y.statistic(),
            y.p_value()
        );
    }
    if let Some(or) = association.odds_ratio() {
        println!(
            "odds ratio {:.4} [{:.4}, {:.4}]",
            or.estimate(),
            or.ci_low(),
            or.ci_high()
        );
    }
    if let Some(rr) = association.relative_risk() {
        println!(
            "relative risk {:.4} [{:.4}, {:.4}]",
            rr.estimate(),
            rr.ci_low(),
            rr.ci_high()
        );
    }
    if let Some(f) = association.fisher() {
        println!(
            "Fisher's exact test: p = {:.4e}; conditional MLE odds ratio {:.4} [{:.4}, {:.4}]",
            f.p_value(),
            f.odds_ratio(),
            f.ci_low(),
            f.ci_high()
        );
    }
    Ok(())
}
