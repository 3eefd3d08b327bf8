//! `orthomask audit`: check a release (and its manifest) for consistency and disclosure risks.

use crate::io::{print_json, read_text};
use anyhow::{Result, bail};
use clap::Args;
use nalgebra::DMatrix;
use orthomask_formats::csv::{parse_table, printed_decimals};
use orthomask_formats::manifest::Manifest;
use orthomask_stats::audit::{Expected, Release, Status, audit};
use serde_json::json;
use std::path::PathBuf;

/// Arguments of `audit`.
#[derive(Args)]
pub struct AuditArgs {
    /// The released CSV.
    #[arg(long)]
    input: PathBuf,
    /// Its manifest.json.
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Exit with status 1 when any check fails.
    #[arg(long)]
    strict: bool,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// What the manifest promises, in the audit's terms.
pub fn expected_from(manifest: &Manifest) -> Expected {
    let p = manifest.cross_products.len();
    Expected {
        n: manifest.n,
        columns: manifest.columns.clone(),
        means: manifest.column_means.iter().map(|c| c.mean).collect(),
        cross_products: DMatrix::from_fn(p, p, |i, j| {
            manifest.cross_products[i]
                .get(j)
                .copied()
                .unwrap_or(f64::NAN)
        }),
        qa_constant: manifest.qa.as_ref().map(|q| q.constant),
        binary_columns: manifest.binary_columns.clone(),
        kept_columns: manifest.kept_columns.clone(),
    }
}

/// Run `audit`.
pub fn run(args: AuditArgs) -> Result<()> {
    let bytes = std::fs::read(&args.input)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", args.input.display()))?;
    let table = parse_table(&bytes, &args.input.display().to_string())?;
    let manifest = match &args.manifest {
        Some(path) => Some(Manifest::parse(
            &read_text(path)?,
            &path.display().to_string(),
        )?),
        None => None,
    };
    let expected = manifest.as_ref().map(expected_from);
    let release = Release {
        names: table.headers(),
        data: table.data(),
        decimals: printed_decimals(&bytes),
    };
    let report = audit(&release, expected.as_ref());
    if args.json {
        print_json(&json!({
            "input": args.input.display().to_string(),
            "overall": report.overall().as_str(),
            "checks": report.checks.iter().map(|c| json!({
                "id": c.id,
                "status": c.status.as_str(),
                "detail": c.detail,
                "numbers": c.numbers.iter().map(|(k, v)| (k.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            })).collect::<Vec<_>>(),
        }))?;
    } else {
        for c in &report.checks {
            println!("{:4}  {}", c.status.as_str(), c.detail);
        }
        println!("overall: {}", report.overall().as_str());
    }
    if args.strict && report.overall() == Status::Fail {
        bail!("audit of {} failed", args.input.display());
    }
    Ok(())
}
