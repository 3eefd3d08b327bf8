//! `orthomask contingency`: contingency tables from (masked) indicator columns, with χ², odds
//! ratio and relative risk (seed 003 Table 1 / Table 6 construction).

use super::model::load;
use crate::io::print_json;
use anyhow::{Context, Result};
use clap::Args;
use orthomask_formats::csv::Table;
use orthomask_stats::contingency::{ContingencyTable, CountRounding, Factor};
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
    if args.json {
        return print_json(&json!({
            "row_levels": counts.row_levels(),
            "col_levels": counts.column_levels(),
            "table": counts.rows(),
            "row_totals": counts.row_totals().iter().collect::<Vec<_>>(),
            "col_totals": counts.column_totals().iter().collect::<Vec<_>>(),
            "n": counts.n(),
            "rounding_residual": counts.rounding_residual(),
            "chi_square": association.chi_square(),
            "df": association.pearson().df(),
            "p_value": association.p_value(),
            "chi_square_yates": yates.map(|t| t.statistic()),
            "p_value_yates": yates.map(|t| t.p_value()),
            "odds_ratio": ratio(association.odds_ratio()),
            "relative_risk": ratio(association.relative_risk()),
        }));
    }
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
        for v in counts.counts().row(i).iter() {
            print!(" {v:>10}");
        }
        println!(" {:>10}", counts.row_totals()[i]);
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
    Ok(())
}
