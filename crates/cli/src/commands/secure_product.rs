//! `orthomask secure-product`: the secure matrix product `XᵀY` of Karr, Lin, Reiter & Sanil
//! (2004) between two agencies holding different columns of the same subjects, run end to end.

use crate::io::{print_json, read_table, warn};
use crate::keys::teaching_or_fresh;
use anyhow::{Result, bail};
use clap::Args;
use orthomask_core::key::StreamId;
use orthomask_secure::breach::{AgencyFinding, refusal_may_be_chance};
use orthomask_secure::end_to_end::{EndToEndError, secure_product};
use orthomask_secure::protocol::ProtocolError;
use serde_json::json;
use std::path::PathBuf;

/// Arguments of `secure-product`.
#[derive(Args)]
pub struct SecureProductArgs {
    /// Agency A's columns X (CSV, one row per subject; A generates Z).
    #[arg(long)]
    a: PathBuf,
    /// Agency B's columns Y (CSV, same subjects in the same order).
    #[arg(long)]
    b: PathBuf,
    /// Teaching key for A's randomness (reproducible, guessable); default: a fresh OS key.
    #[arg(long)]
    teaching_key: Option<u64>,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// One line per breach finding, naming the agency.
fn describe(findings: &[AgencyFinding]) -> Vec<String> {
    findings
        .iter()
        .map(|w| {
            format!(
                "agency {}: {}",
                if w.agency == 0 { "A" } else { "B" },
                w.finding
            )
        })
        .collect()
}

/// Draws of `Z` agency A tries before giving up (see `run`).
const MAX_DRAWS: u32 = 16;

/// Run `secure-product`.
pub fn run(args: SecureProductArgs) -> Result<()> {
    let a = read_table(&args.a)?;
    let b = read_table(&args.b)?;
    if a.data().nrows() != b.data().nrows() {
        bail!(
            "{} has {} subjects but {} has {}; both agencies must list the same subjects in the same order",
            args.a.display(),
            a.data().nrows(),
            args.b.display(),
            b.data().nrows()
        );
    }
    let key = teaching_or_fresh(args.teaching_key)?;
    // B refuses a Z that makes some column of I − ZZᵀ nearly a unit vector. Whether that happens
    // depends on the random draw as well as on the data, so A draws Z again (from a fresh stream)
    // up to MAX_DRAWS times; a refusal that persists comes from the data (a high-leverage subject)
    // and is reported.
    let mut draw = 0;
    let report = loop {
        match secure_product(
            a.data(),
            b.data(),
            &key.stream(StreamId::SecureProduct { draw }),
        ) {
            Ok(report) => break report,
            Err(EndToEndError::Protocol {
                source: ProtocolError::Refused { findings },
                ..
            }) if draw + 1 < MAX_DRAWS && refusal_may_be_chance(&findings) => {
                draw += 1;
            }
            Err(EndToEndError::Protocol { source, warnings }) => {
                let reasons = describe(&warnings);
                bail!(
                    "secure product refused after {} draw(s) of Z: {source}{}",
                    draw + 1,
                    if reasons.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", reasons.join("; "))
                    }
                );
            }
            Err(other) => return Err(other.into()),
        }
    };
    let warnings = describe(report.warnings());
    let product = report.product();
    let dims = report.dimensions();
    if args.json {
        return print_json(&json!({
            "a_columns": a.headers(),
            "b_columns": b.headers(),
            "xty": product.row_iter().map(|r| r.iter().copied().collect::<Vec<f64>>()).collect::<Vec<_>>(),
            "n": dims.subjects(),
            "p": dims.sender_columns(),
            "q": dims.receiver_columns(),
            "g": dims.complement_columns(),
            "a_learned": {"paper": report.a_learned().paper(), "independent": report.a_learned().independent(), "unknowns": report.a_learned().unknowns()},
            "b_learned": {"paper": report.b_learned().paper(), "independent": report.b_learned().independent(), "unknowns": report.b_learned().unknowns()},
            "z_draws": draw + 1,
            "warnings": warnings,
        }));
    }
    for w in &warnings {
        warn(w);
    }
    println!(
        "XᵀY ({} × {}), computed without either agency revealing its columns:",
        product.nrows(),
        product.ncols()
    );
    print!("{:>12}", "");
    for h in b.headers() {
        print!(" {h:>14}");
    }
    println!();
    for (i, h) in a.headers().iter().enumerate() {
        print!("{h:>12}");
        for v in product.row(i).iter() {
            print!(" {v:>14.6}");
        }
        println!();
    }
    println!(
        "n = {}, Z has g = {} columns; A learned {} independent constraints on B's {} unknowns, B learned {} on A's {}",
        dims.subjects(),
        dims.complement_columns(),
        report.a_learned().independent(),
        report.a_learned().unknowns(),
        report.b_learned().independent(),
        report.b_learned().unknowns()
    );
    Ok(())
}
