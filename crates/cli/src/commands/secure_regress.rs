//! `orthomask secure-regress`: linear and ridge regression over data vertically partitioned
//! among two or more agencies (seed 001 §3), without any agency revealing its columns.
//!
//! The agencies assemble the cross-product matrix `[1 D]ᵀ[1 D]` pair by pair with the secure
//! matrix product (`orthomask_secure::assembly`); from it anyone holding it fits the regression
//! (§3.1), the ridge regression (§3.2) and the residual correlations of the diagnostics (§3.3).
//! Exact hat-matrix diagonals need every predictor's values, so they are printed only when a
//! single agency holds all the predictors (it computes them locally).

use crate::io::{print_json, read_table, warn};
use crate::keys::teaching_or_fresh;
use anyhow::{Result, bail};
use clap::Args;
use orthomask_core::key::{Key, StreamId};
use orthomask_formats::csv::Table;
use orthomask_secure::assembly::{Assembly, AssemblyError, assemble};
use orthomask_secure::breach::refusal_may_be_chance;
use orthomask_secure::diagnostics::residual_correlations;
use orthomask_secure::leverage::{hat_diagonal, high_leverage_cutoff};
use orthomask_secure::protocol::ProtocolError;
use orthomask_secure::regression::{OlsFit, Term};
use orthomask_secure::ridge::RidgeFit;
use serde_json::{Value, json};
use std::path::PathBuf;

/// Arguments of `secure-regress`.
#[derive(Args)]
pub struct SecureRegressArgs {
    /// One agency's columns (CSV, one row per subject, the same subjects in the same order at
    /// every agency); give it once per agency, at least twice.
    #[arg(long = "agency", required = true)]
    agencies: Vec<PathBuf>,
    /// Response column (a column name of any agency).
    #[arg(long)]
    y: String,
    /// Predictor columns (names of any agencies' columns).
    #[arg(long, value_delimiter = ',', required = true)]
    x: Vec<String>,
    /// Fit without an intercept.
    #[arg(long)]
    no_intercept: bool,
    /// Also fit ridge regression with this penalty λ ≥ 0 (seed 001 eq. (5)).
    #[arg(long)]
    ridge: Option<f64>,
    /// Teaching key for the agencies' randomness (reproducible, guessable); default: fresh OS key.
    #[arg(long)]
    teaching_key: Option<u64>,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// Draws of every pair's `Z` before a refusal counts as coming from the data (as in
/// `secure-product`: a near-unit column of `I − ZZᵀ` can be bad luck of the draw).
const MAX_DRAWS: u16 = 16;

/// The agencies' files, their columns and where each global column lives.
struct Agencies {
    tables: Vec<Table>,
    names: Vec<String>,
    owner: Vec<usize>,
}

impl Agencies {
    fn read(paths: &[PathBuf]) -> Result<Self> {
        if paths.len() < 2 {
            bail!("secure regression needs at least two agencies (--agency A.csv --agency B.csv)");
        }
        let tables = paths
            .iter()
            .map(|p| read_table(p))
            .collect::<Result<Vec<_>>>()?;
        let subjects = tables[0].data().nrows();
        let (mut names, mut owner): (Vec<String>, Vec<usize>) = (Vec::new(), Vec::new());
        for (agency, (table, path)) in tables.iter().zip(paths).enumerate() {
            if table.data().nrows() != subjects {
                bail!(
                    "{} has {} subjects but {} has {}; every agency must list the same subjects in the same order",
                    path.display(),
                    table.data().nrows(),
                    paths[0].display(),
                    subjects
                );
            }
            for name in table.headers() {
                if let Some(first) = names.iter().position(|n| n == name) {
                    bail!(
                        "column {name:?} is held by both {} and {}; name the agencies' columns apart",
                        paths[owner[first]].display(),
                        path.display()
                    );
                }
                names.push(name.clone());
                owner.push(agency);
            }
        }
        Ok(Self {
            tables,
            names,
            owner,
        })
    }

    fn column(&self, name: &str) -> Result<usize> {
        self.names.iter().position(|n| n == name).ok_or_else(|| {
            anyhow::anyhow!(
                "no agency holds a column {name:?}; the columns are {}",
                self.names.join(", ")
            )
        })
    }

    /// Assemble the cross-products, redrawing every `Z` when a refusal can be bad luck.
    fn assemble(&self, key: &Key) -> Result<(Assembly, u16)> {
        let blocks: Vec<_> = self.tables.iter().map(|t| t.data().clone()).collect();
        let mut draw = 0;
        loop {
            let streams = |generator: usize, partner: usize| {
                key.stream(StreamId::SecureAssembly {
                    generator: u16::try_from(generator).unwrap_or(u16::MAX),
                    partner: u16::try_from(partner).unwrap_or(u16::MAX),
                    draw,
                })
            };
            match assemble(&blocks, streams) {
                Ok(assembly) => return Ok((assembly, draw + 1)),
                Err(AssemblyError::Pair {
                    source: ProtocolError::Refused { findings },
                    ..
                }) if draw + 1 < MAX_DRAWS && refusal_may_be_chance(&findings) => {
                    draw += 1;
                }
                Err(e) => bail!("secure assembly refused after {} draw(s): {e}", draw + 1),
            }
        }
    }
}

/// Run `secure-regress`.
pub fn run(args: SecureRegressArgs) -> Result<()> {
    let agencies = Agencies::read(&args.agencies)?;
    let response = agencies.column(&args.y)?;
    let predictors = args
        .x
        .iter()
        .map(|name| agencies.column(name))
        .collect::<Result<Vec<_>>>()?;
    let intercept = !args.no_intercept;
    let key = teaching_or_fresh(args.teaching_key)?;
    let (assembly, draws) = agencies.assemble(&key)?;
    let products = assembly.cross_products();
    let fit = OlsFit::fit(products, response, &predictors, intercept)?;
    let ridge = args
        .ridge
        .map(|lambda| RidgeFit::fit(products, response, &predictors, lambda, intercept))
        .transpose()?;
    let correlations = residual_correlations(products, &fit)?;
    let term_name = |term: &Term| match *term {
        Term::Intercept => "(Intercept)".to_owned(),
        Term::Column(c) => agencies.names[c].clone(),
    };
    // Exact leverages only where one agency holds every predictor (seed 001 §3.3).
    let holder = agencies.owner[predictors[0]];
    let leverage = if predictors.iter().all(|&c| agencies.owner[c] == holder) {
        let local: Vec<usize> = predictors
            .iter()
            .map(|&c| {
                c - agencies
                    .owner
                    .iter()
                    .position(|&o| o == holder)
                    .unwrap_or(0)
            })
            .collect();
        let table = &agencies.tables[holder];
        let columns = table.data().select_columns(&local);
        let h = hat_diagonal(&fit, &columns)?;
        let cutoff = high_leverage_cutoff(&fit);
        Some(json!({
            "agency": holder,
            "cutoff": cutoff,
            "above_cutoff": h.iter().filter(|&&v| v > cutoff).count(),
            "hat_diagonal": h.iter().copied().collect::<Vec<f64>>(),
        }))
    } else {
        None
    };
    let warnings: Vec<String> = assembly
        .warnings()
        .iter()
        .map(|w| format!("{}: {}", args.agencies[w.agency].display(), w.finding))
        .collect();

    let ses = fit.standard_errors();
    let ts = fit.t_values();
    let coefficients: Vec<Value> = fit
        .terms()
        .iter()
        .enumerate()
        .map(|(k, term)| {
            json!({
                "name": term_name(term),
                "estimate": fit.coefficients()[k],
                "std_error": ses[k],
                "t": ts[k],
                "p": fit.p_values()[k],
            })
        })
        .collect();
    let pairs: Vec<Value> = assembly
        .pairs()
        .iter()
        .map(|p| {
            json!({
                "generator": p.generator(),
                "responder": p.responder(),
                "generator_learned": {"independent": p.generator_learned().independent(), "unknowns": p.generator_learned().unknowns()},
                "responder_learned": {"independent": p.responder_learned().independent(), "unknowns": p.responder_learned().unknowns()},
            })
        })
        .collect();
    let correlations: Vec<Value> = correlations
        .iter()
        .map(|c| json!({"name": agencies.names[c.column], "in_model": c.in_model, "correlation": c.correlation}))
        .collect();
    let ridge = ridge.map(|r| {
        json!({
            "lambda": r.lambda(),
            "coefficients": r.terms().iter().zip(r.coefficients().iter())
                .map(|(t, b)| json!({"name": term_name(t), "estimate": b}))
                .collect::<Vec<_>>(),
            "rss": r.residual_sum_of_squares(),
            "effective_df": r.effective_df(),
        })
    });
    let report = json!({
        "response": args.y,
        "intercept": intercept,
        "n": fit.subjects(),
        "df_resid": fit.residual_df(),
        "coefficients": coefficients,
        "sigma": fit.sigma_squared().sqrt(),
        "r_squared": fit.r_squared(),
        "adj_r_squared": fit.adjusted_r_squared(),
        "residual_correlations": correlations,
        "leverage": leverage,
        "ridge": ridge,
        "pairs": pairs,
        "z_draws": draws,
        "warnings": warnings,
    });
    if args.json {
        return print_json(&report);
    }
    for w in &warnings {
        warn(w);
    }
    print_report(&report);
    Ok(())
}

/// The report as text, from the same values as the JSON.
fn print_report(report: &Value) {
    println!(
        "{} regressed securely over {} subjects (no agency revealed its columns):",
        report["response"].as_str().unwrap_or_default(),
        report["n"]
    );
    println!(
        "{:14} {:>14} {:>12} {:>9} {:>10}",
        "term", "estimate", "std. error", "t", "p"
    );
    for c in report["coefficients"].as_array().into_iter().flatten() {
        println!(
            "{:14} {:>14.6} {:>12.6} {:>9.3} {:>10.3e}",
            c["name"].as_str().unwrap_or_default(),
            c["estimate"].as_f64().unwrap_or(f64::NAN),
            c["std_error"].as_f64().unwrap_or(f64::NAN),
            c["t"].as_f64().unwrap_or(f64::NAN),
            c["p"].as_f64().unwrap_or(f64::NAN),
        );
    }
    println!(
        "residual σ = {:.6} on {} df, R² = {:.6}, adjusted R² = {:.6}",
        report["sigma"].as_f64().unwrap_or(f64::NAN),
        report["df_resid"],
        report["r_squared"].as_f64().unwrap_or(f64::NAN),
        report["adj_r_squared"].as_f64().unwrap_or(f64::NAN),
    );
    if let Some(ridge) = report["ridge"].as_object() {
        println!("ridge regression, λ = {}:", ridge["lambda"]);
        for c in ridge["coefficients"].as_array().into_iter().flatten() {
            println!(
                "{:14} {:>14.6}",
                c["name"].as_str().unwrap_or_default(),
                c["estimate"].as_f64().unwrap_or(f64::NAN)
            );
        }
    }
    println!("residual correlations with every other attribute:");
    for c in report["residual_correlations"]
        .as_array()
        .into_iter()
        .flatten()
    {
        println!(
            "{:14} {:>10.6}",
            c["name"].as_str().unwrap_or_default(),
            c["correlation"].as_f64().unwrap_or(f64::NAN)
        );
    }
    match report["leverage"].as_object() {
        Some(l) => println!(
            "leverage (computed by agency {}, which holds every predictor): {} subjects above 2k/n = {:.4}",
            l["agency"],
            l["above_cutoff"],
            l["cutoff"].as_f64().unwrap_or(f64::NAN)
        ),
        None => println!(
            "leverage: the predictors are spread over several agencies, so exact hat diagonals would need their values; none are printed"
        ),
    }
}
