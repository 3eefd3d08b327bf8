//! `orthomask dp-sigma`: the noise needed for (ε, δ)-differential privacy with and without
//! matrix masking (Ding, Wu, Miao & Chen, seed 004).

use crate::io::print_json;
use anyhow::Result;
use clap::Args;
use orthomask_dp::calibration::{Calibration, CalibrationInput};
use serde_json::json;

/// Arguments of `dp-sigma`.
#[derive(Args)]
pub struct DpSigmaArgs {
    /// ε, in (0, 1).
    #[arg(long)]
    epsilon: f64,
    /// δ, in (0, 1/2).
    #[arg(long)]
    delta: f64,
    /// Records n.
    #[arg(long)]
    n: u64,
    /// Variables p.
    #[arg(long)]
    p: u64,
    /// Smallest block n_s of a block-diagonal mask (cohorts; seed 004 §4).
    #[arg(long)]
    block_min: Option<u64>,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// Run `dp-sigma`.
pub fn run(args: DpSigmaArgs) -> Result<()> {
    let c = Calibration::new(CalibrationInput {
        epsilon: args.epsilon,
        delta: args.delta,
        n: args.n,
        p: args.p,
        smallest_block: args.block_min,
    })?;
    if args.json {
        return print_json(&json!({
            "epsilon": c.epsilon(),
            "delta": c.delta(),
            "n": c.n(),
            "p": c.p(),
            "block_min": c.smallest_block(),
            "setting_a_necessary": c.setting_a_necessary(),
            "setting_a_sufficient": c.setting_a_sufficient(),
            "setting_b_sufficient": c.setting_b_sufficient(),
            "setting_b_explicit": c.setting_b_explicit(),
            "setting_a_explicit_necessary": c.setting_a_explicit().and_then(|e| e.necessary),
            "setting_a_explicit_sufficient": c.setting_a_explicit().map(|e| e.sufficient),
            "ratio": c.ratio(),
        }));
    }
    println!(
        "(ε, δ) = ({}, {}), n = {}, p = {}{}",
        c.epsilon(),
        c.delta(),
        c.n(),
        c.p(),
        c.smallest_block()
            .map(|s| format!(", smallest block n_s = {s}"))
            .unwrap_or_default()
    );
    println!(
        "setting A (noise only):        necessary σ ≥ {:.4} (11), sufficient σ ≥ {:.4} (12)",
        c.setting_a_necessary(),
        c.setting_a_sufficient()
    );
    if let Some(e) = c.setting_a_explicit() {
        println!(
            "setting A, Corollary 3.3:      sufficient σ > {:.4}{}",
            e.sufficient,
            e.necessary
                .map(|n| format!(", necessary σ ≥ {n:.4}"))
                .unwrap_or_else(|| " (its necessary half fails for this δ)".into())
        );
    }
    println!(
        "setting B (noise, then mask):  sufficient σ ≥ {:.4} (13), explicit bound {:.4} (14)",
        c.setting_b_sufficient(),
        c.setting_b_explicit()
    );
    println!(
        "masking reduces the required σ by a factor of {:.2}",
        c.ratio()
    );
    Ok(())
}
