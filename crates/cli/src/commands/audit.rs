//! `orthomask audit`: check a release (and its manifest) for consistency and disclosure risks.

use crate::io::{print_json, read_bytes, read_text};
use anyhow::{Result, bail};
use clap::Args;
use orthomask_formats::csv::{parse_table, printed_decimals};
use orthomask_formats::manifest::Manifest;
use orthomask_stats::audit::{ReleaseUnderAudit, Status, audit};
use orthomask_survey::audit::expectations;
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

/// Run `audit`.
pub fn run(args: AuditArgs) -> Result<()> {
    let bytes = read_bytes(&args.input)?;
    let table = parse_table(&bytes, &args.input.display().to_string())?;
    let expected = match &args.manifest {
        Some(path) => {
            let name = path.display().to_string();
            Some(expectations(
                &Manifest::parse(&read_text(path)?, &name)?,
                &name,
            )?)
        }
        None => None,
    };
    let release = ReleaseUnderAudit {
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
