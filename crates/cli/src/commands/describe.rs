//! `orthomask describe`: means, covariance and correlation matrices (identical on raw data and on
//! a release whose row masks keep `1ₙ` fixed).

use super::model::load;
use crate::io::print_json;
use anyhow::Result;
use clap::Args;
use nalgebra::DMatrix;
use orthomask_stats::descriptive::Moments;
use serde_json::{Value, json};
use std::path::PathBuf;

/// Arguments of `describe`.
#[derive(Args)]
pub struct DescribeArgs {
    /// Data: CSV with a header row.
    #[arg(long)]
    input: PathBuf,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

fn rows(m: &DMatrix<f64>) -> Value {
    Value::Array(
        m.row_iter()
            .map(|r| json!(r.iter().copied().collect::<Vec<f64>>()))
            .collect(),
    )
}

/// Run `describe`.
pub fn run(args: DescribeArgs) -> Result<()> {
    let (table, data) = load(&args.input)?;
    let moments = Moments::new(&data)?;
    // A constant column (the QA column) has no correlation; report null rather than fail.
    let correlation = moments.correlation().ok();
    if args.json {
        return print_json(&json!({
            "columns": table.headers(),
            "n": data.nrows(),
            "means": moments.means().iter().collect::<Vec<_>>(),
            "std_devs": moments.std_devs().iter().collect::<Vec<_>>(),
            "covariance": rows(moments.covariance()),
            "correlation": correlation.as_ref().map(rows),
        }));
    }
    println!("{:>16} {:>16} {:>16}", "column", "mean", "std. dev.");
    for (j, name) in table.headers().iter().enumerate() {
        println!(
            "{name:>16} {:>16.6} {:>16.6}",
            moments.means()[j],
            moments.std_devs()[j]
        );
    }
    if correlation.is_none() {
        println!("(no correlation matrix: a column is constant)");
    }
    Ok(())
}
