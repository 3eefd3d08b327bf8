//! `orthomask mask right`: right-multiply every row of a CSV file by a keyed mask.

use super::{KindChoice, RngChoice};
use crate::io::{print_json, read_table, write_csv};
use crate::keys::parse_key;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use orthomask_core::mask::Mask;
use orthomask_core::protocol::tm2::{DataCollector, Tm2Design};
use orthomask_formats::csv::Precision;
use serde_json::json;
use std::path::PathBuf;

/// Which side to mask.
#[derive(Subcommand)]
pub enum MaskCommand {
    /// X·B: mask each row (record) with a p×p right mask drawn from the key.
    Right(RightArgs),
}

/// Arguments of `mask right`.
#[derive(Args)]
pub struct RightArgs {
    /// Input CSV (header row, numbers).
    #[arg(long)]
    input: PathBuf,
    /// The key: 64 hex digits, or a short number (teaching key; reproducible and guessable).
    #[arg(long)]
    key: String,
    /// Generator turning the key into a matrix.
    #[arg(long, value_enum, default_value_t = RngChoice::Chacha)]
    rng: RngChoice,
    /// Law of the mask.
    #[arg(long, value_enum, default_value_t = KindChoice::Haar)]
    kind: KindChoice,
    /// Output CSV (same header as the input).
    #[arg(long)]
    out: PathBuf,
    /// Round the output to this many decimals (default: round-trip precision).
    #[arg(long)]
    decimals: Option<u8>,
    /// Print a JSON summary on standard output.
    #[arg(long)]
    json: bool,
}

/// Run `mask`.
pub fn run(command: MaskCommand) -> Result<()> {
    match command {
        MaskCommand::Right(args) => right(args),
    }
}

fn right(args: RightArgs) -> Result<()> {
    let table = read_table(&args.input)?;
    let key = parse_key(&args.key)?;
    let teaching = key.is_teaching();
    let p = table.headers().len();
    // The same construction the collector uses for B in the protocol, so `mask right` with the
    // collector's key reproduces what participants' devices send.
    let design = Tm2Design::first_method(p)?
        .with_qa(None)?
        .with_right_mask(args.kind.kind())
        .with_generator(args.rng.generator());
    let b = DataCollector::new(key, design)?.right_mask(0)?;
    let mut masked = table.data().clone();
    b.right_apply(&mut masked).context("applying the mask")?;
    let precision = args
        .decimals
        .map_or(Precision::RoundTrip, Precision::Decimals);
    write_csv(&args.out, table.headers(), &masked, precision)?;
    if args.json {
        print_json(&json!({
            "input": args.input.display().to_string(),
            "out": args.out.display().to_string(),
            "rows": masked.nrows(),
            "columns": p,
            "kind": args.kind.name(),
            "rng": args.rng.name(),
            "teaching_key": teaching,
            "decimals": args.decimals,
        }))?;
    } else {
        println!(
            "masked {} rows × {p} columns with a {} mask → {}",
            masked.nrows(),
            args.kind.name(),
            args.out.display()
        );
    }
    Ok(())
}
