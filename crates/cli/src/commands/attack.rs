//! `orthomask attack appendix-a`: what the provider can recover from `XB` when `p < n`.

use crate::io::{print_json, read_table};
use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use orthomask_core::attack::{Consistent, appendix_a_attack};
use orthomask_core::tolerance::BINARY_FULL_PRECISION;
use serde_json::json;
use std::path::PathBuf;

/// Attacks.
#[derive(Subcommand)]
pub enum AttackCommand {
    /// Appendix A of Ding, Miao & Wu (2020): recover a binary column from the provider's view XB.
    AppendixA(AppendixAArgs),
}

/// Arguments of `attack appendix-a`.
#[derive(Args)]
pub struct AppendixAArgs {
    /// The provider's view XB (e.g. upload.csv of a pipeline run).
    #[arg(long)]
    input: PathBuf,
    /// Name of the raw column the attacker knows to be binary (labels the result).
    #[arg(long)]
    binary_col: String,
    /// How far from 0 or 1 a reconstructed value may be (raise it for rounded input).
    #[arg(long, default_value_t = BINARY_FULL_PRECISION)]
    tolerance: f64,
    /// Give up after this many search nodes.
    #[arg(long, default_value_t = 50_000_000)]
    budget: u64,
    /// Raw data holding the true column (demonstrations only: reports whether the attack found it).
    #[arg(long)]
    truth: Option<PathBuf>,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// Run `attack`.
pub fn run(command: AttackCommand) -> Result<()> {
    match command {
        AttackCommand::AppendixA(args) => appendix_a(args),
    }
}

fn appendix_a(args: AppendixAArgs) -> Result<()> {
    let table = read_table(&args.input)?;
    let truth = match &args.truth {
        Some(path) => {
            let raw = read_table(path)?;
            let j = raw.column_index(&args.binary_col)?;
            let column: Vec<f64> = raw.data().column(j).iter().copied().collect();
            if let Some((i, v)) = column
                .iter()
                .enumerate()
                .find(|(_, v)| **v != 0.0 && **v != 1.0)
            {
                bail!(
                    "{}:{}: column {} is not binary (value {v})",
                    path.display(),
                    i + 2,
                    args.binary_col
                );
            }
            if column.len() != table.data().nrows() {
                bail!(
                    "{} has {} rows but {} has {}",
                    path.display(),
                    column.len(),
                    args.input.display(),
                    table.data().nrows()
                );
            }
            Some(
                column
                    .iter()
                    .map(|&v| u8::from(v == 1.0))
                    .collect::<Vec<u8>>(),
            )
        }
        None => None,
    };
    let outcome = appendix_a_attack(table.data(), args.tolerance, args.budget)?;
    let candidates = match &outcome.consistent {
        Consistent::All { .. } => None,
        Consistent::Listed(list) => Some(list.clone()),
    };
    let recovered = outcome.recovered().map(<[u8]>::to_vec);
    let truth_found = truth.as_ref().map(|t| outcome.is_candidate(t));
    let truth_recovered = truth
        .as_ref()
        .map(|t| recovered.as_deref() == Some(t.as_slice()));
    if args.json {
        return print_json(&json!({
            "input": args.input.display().to_string(),
            "binary_col": args.binary_col,
            "rows": outcome.rows,
            "columns": outcome.columns,
            "rank": outcome.rank,
            "constraints": outcome.constraints,
            "all_binary_vectors_consistent": candidates.is_none(),
            "candidates": candidates,
            "recovered": recovered,
            "nodes": outcome.nodes,
            "truth_is_candidate": truth_found,
            "truth_recovered": truth_recovered,
        }));
    }
    println!(
        "Appendix A attack on {} (n = {} rows, p = {} columns, rank {})",
        args.input.display(),
        outcome.rows,
        outcome.columns,
        outcome.rank
    );
    match &candidates {
        None => println!(
            "no row is a combination of the others: all 2^{} binary vectors remain possible for {} — nothing recovered",
            outcome.rows, args.binary_col
        ),
        Some(list) => {
            println!(
                "{} linear constraints; {} non-zero binary vectors are consistent:",
                outcome.constraints,
                list.len()
            );
            for v in list {
                println!(
                    "  {}",
                    v.iter().map(u8::to_string).collect::<Vec<_>>().join("")
                );
            }
            match &recovered {
                Some(v) => println!(
                    "recovered {}: {}",
                    args.binary_col,
                    v.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
                ),
                None => println!("{} is one of these candidates", args.binary_col),
            }
        }
    }
    if let (Some(found), Some(exact)) = (truth_found, truth_recovered) {
        let verdict = if candidates.is_none() {
            "not identified (every binary vector remains possible)"
        } else if exact {
            "recovered exactly"
        } else if found {
            "among the candidates"
        } else {
            "not found"
        };
        println!("true {}: {verdict}", args.binary_col);
    }
    Ok(())
}
