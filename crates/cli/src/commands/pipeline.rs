//! `orthomask pipeline`: run a whole protocol on raw data with every party simulated, and write
//! what left the devices, what the provider sent the collector, the release and its manifest.

use super::{KindChoice, RngChoice};
use crate::io::{masked_names, print_json, read_table, warn, write_csv, write_file};
use crate::keys::teaching_warning;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use nalgebra::DMatrix;
use orthomask_core::key::Key;
use orthomask_core::protocol::collusion::share_sigma;
use orthomask_core::protocol::design::{appendix_c_bound, noise_columns_for};
use orthomask_core::protocol::qa::QaReport;
use orthomask_core::protocol::second::{COMBINED_RELEASE_WARNING, SecondDesign, SecondUpload};
use orthomask_core::protocol::simulation::{
    CollusionKeys, PartyKeys, Safety, cohort_sizes, run_collusion, run_second, run_tm2,
};
use orthomask_core::protocol::tm2::DeviceDp;
use orthomask_core::protocol::tm2::{DEFAULT_QA_CONSTANT, RightMaskKind, Tm2Design};
use orthomask_core::protocol::{NoiseBound, Strictness};
use orthomask_dp::calibration::{Calibration, CalibrationInput};
use orthomask_formats::csv::{Precision, Table};
use orthomask_formats::keyfile::parse_key_file;
use orthomask_formats::manifest::{
    AppendixC, Cohorts, Manifest, Qa, column_means, summary_statistics,
};
use orthomask_formats::manifest::{DpColumn, DpNoise};
use std::path::{Path, PathBuf};

/// Which protocol to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// Modified TM² (Ding, Miao & Wu 2020): Gaussian padding, Haar right mask. The default.
    Modified,
    /// First TM² method (Wu et al. 2017 §3.1): invertible uniform-entries B₁, QA column.
    First,
    /// Second TM² method (Wu et al. 2017 §3.3): A₀ row operator, block-diagonal B₁, B₂; releases XB₁B₂.
    Second,
    /// Collusion-resistant extension (Ding, Miao & Wu 2020 §3.5): additive shares, K₁ + K₂ providers.
    Collusion,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Self::Modified => "modified",
            Self::First => "first",
            Self::Second => "second",
            Self::Collusion => "collusion",
        }
    }
}

/// Arguments of `pipeline`.
#[derive(Args)]
pub struct PipelineArgs {
    /// Raw data: CSV with a header row. A constant column named QA is used as the QA column.
    #[arg(long)]
    input: PathBuf,
    /// Directory for upload.csv, msp_to_collector.csv, release.csv and manifest.json.
    #[arg(long)]
    out_dir: PathBuf,
    /// Protocol.
    #[arg(long, value_enum, default_value_t = Method::Modified)]
    method: Method,
    /// Noise columns p₂ (default: the fewest that make the Appendix C failure probability at most
    /// --max-failure-probability for the largest cohort; first method 0).
    #[arg(long)]
    noise_cols: Option<usize>,
    /// Target for the default number of noise columns: Pr[condition (3.5) fails] at most this.
    #[arg(long, default_value_t = 1e-6)]
    max_failure_probability: f64,
    /// Noise rows of the second method (default 6, as in the paper's Table 7).
    #[arg(long)]
    noise_rows: Option<usize>,
    /// Noise standard deviation σ (default: the Appendix C bound; second method 1).
    #[arg(long)]
    sigma: Option<f64>,
    /// Declared largest absolute value of any answer (default: the data's own maximum; simulation only).
    #[arg(long)]
    x_max: Option<f64>,
    /// The δ of Appendix C, in (0, 1).
    #[arg(long, default_value_t = 0.5)]
    delta: f64,
    /// Columns kept unmasked: partial masking (first/modified) or response and treatment (second).
    #[arg(long, value_delimiter = ',')]
    keep: Vec<String>,
    /// Key file from `orthomask keygen` (default: fresh keys that are not stored).
    #[arg(long, conflicts_with = "teaching_key")]
    key_file: Option<PathBuf>,
    /// Teaching keys N, N+1, N+2 for collector, provider, participants (reproducible, guessable).
    #[arg(long)]
    teaching_key: Option<u64>,
    /// Generator (matlab needs --teaching-key; reproduces the papers' uniform matrices).
    #[arg(long, value_enum, default_value_t = RngChoice::Chacha)]
    rng: RngChoice,
    /// Law of the right mask (default: haar, first method uniform-entries).
    #[arg(long, value_enum)]
    kind: Option<KindChoice>,
    /// Participants per cohort (default: one cohort of everybody, the papers' protocol).
    ///
    /// The survey is split into cohorts of at most M participants (sizes as even as possible). Each
    /// cohort gets its own right mask B_k (its devices receive only B_k's subkey) and its own provider
    /// mask A₂,k; the collector's A₁ still mixes all n rows, so the published release has exactly the
    /// law it has without cohorts. What changes is what the parties see: the provider sees each
    /// X_k·B_k (hence the cohort's M × M Gram matrix X_k·X_kᵀ) and the collector sees each A₂,k·X_k
    /// (hence that cohort's own XᵀX and column sums, not only the survey's totals). A record hides
    /// among the M records of its cohort: p₁ must stay below the smallest cohort, while p ≥ M, the
    /// default noise columns (p₂ > M) and σ's Appendix C bound are checked on the largest, where
    /// γ = p₂/M is smallest; device-side DP is calibrated for the smallest (seed 004 §4). Smaller
    /// cohorts need fewer noise columns, so devices and the provider work less, but each cohort
    /// hides fewer records. See ARCHITECTURE.md, "Cohorts: what each party learns".
    #[arg(long, verbatim_doc_comment)]
    cohort_size: Option<usize>,
    /// The QA constant c (default 888, or the value of an input column named QA).
    #[arg(long)]
    qa_constant: Option<f64>,
    /// Run without a QA column.
    #[arg(long, conflicts_with = "qa_constant")]
    no_qa: bool,
    /// Round release.csv to this many decimals (default: round-trip precision).
    #[arg(long)]
    decimals: Option<u8>,
    /// Teaching mode: run unsafe designs (p < n, …) with warnings instead of refusing them.
    #[arg(long)]
    unsafe_teaching: bool,
    /// Second method: also release A₁A₂X (release_orthogonal.csv); prints a disclosure warning.
    #[arg(long)]
    combined: bool,
    /// Collusion method: right-masking providers K₁.
    #[arg(long, default_value_t = 2)]
    right_providers: usize,
    /// Collusion method: left-masking providers K₂.
    #[arg(long, default_value_t = 1)]
    left_providers: usize,
    /// Skip the condition (3.7) margin (it costs O(m³) per cohort of m).
    #[arg(long)]
    no_margin: bool,
    /// Device-side differential privacy: ε (with --dp-delta). Each device adds Gaussian noise
    /// calibrated by seed 004's setting B for the smallest cohort before padding and masking.
    #[arg(long, requires = "dp_delta")]
    dp_epsilon: Option<f64>,
    /// Device-side differential privacy: δ (with --dp-epsilon).
    #[arg(long, requires = "dp_epsilon")]
    dp_delta: Option<f64>,
    /// Declared ranges for DP scaling, `COL=LO:HI,…` (default: each column's observed range —
    /// simulation only; a real survey declares them).
    #[arg(long, value_delimiter = ',')]
    range: Vec<String>,
    /// Print the manifest as JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// Device-side DP for a design: σ from seed 004 and the declared ranges.
struct DpPlan {
    settings: DeviceDp,
    record: DpNoise,
}

/// Calibrate device-side DP noise (seed 004, setting B) for the smallest cohort.
///
/// The row masks keep `1ₙ` fixed, so the release shows the noisy column sums unmasked and masks
/// only the `n − 1`-dimensional complement: σ is calibrated for `n_s − 1` records (conservative:
/// the bound grows as `n` shrinks), and the cohort structure makes `n_s` the smallest cohort, the
/// block the collector sees (seed 004 §4). The unmasked sum row is a Gaussian mechanism with noise
/// `σ√n_s` on the scaled data, which is checked against setting A's sufficient bound (12).
fn plan_dp(
    args: &PipelineArgs,
    prepared: &Prepared,
    smallest_cohort: usize,
) -> Result<Option<DpPlan>> {
    let (Some(epsilon), Some(delta)) = (args.dp_epsilon, args.dp_delta) else {
        return Ok(None);
    };
    let p = prepared.answers.ncols();
    let calibration = Calibration::new(CalibrationInput {
        epsilon,
        delta,
        n: smallest_cohort.saturating_sub(1) as u64,
        p: p as u64,
        smallest_block: None,
    })
    .with_context(|| {
        format!("calibrating DP noise for cohorts of {smallest_cohort} with {p} answer columns")
    })?;
    let sigma = calibration.setting_b_sufficient();
    if sigma * (smallest_cohort as f64).sqrt() < calibration.setting_a_sufficient() {
        bail!(
            "DP: the unmasked column sums carry noise sigma*sqrt(n) = {:.4}, below setting A's sufficient {:.4}; use larger cohorts",
            sigma * (smallest_cohort as f64).sqrt(),
            calibration.setting_a_sufficient()
        );
    }
    let mut ranges: Vec<Option<(f64, f64)>> = vec![None; p];
    for spec in &args.range {
        let (name, bounds) = spec
            .split_once('=')
            .with_context(|| format!("--range {spec:?}: expected COL=LO:HI"))?;
        let (lo, hi) = bounds
            .split_once(':')
            .with_context(|| format!("--range {spec:?}: expected COL=LO:HI"))?;
        let j = prepared
            .answer_names
            .iter()
            .position(|h| h == name.trim())
            .with_context(|| format!("--range: no answer column named {name:?}"))?;
        let parse = |t: &str| {
            t.trim()
                .parse::<f64>()
                .with_context(|| format!("--range {spec:?}: {t:?} is not a number"))
        };
        ranges[j] = Some((parse(lo)?, parse(hi)?));
    }
    let undeclared: Vec<&str> = ranges
        .iter()
        .zip(&prepared.answer_names)
        .filter(|(r, _)| r.is_none())
        .map(|(_, name)| name.as_str())
        .collect();
    if !undeclared.is_empty() {
        // The DP guarantee is about the declared ranges; ranges read off the data leak the data's
        // extremes and hold only for this simulation.
        warn(&format!(
            "DP ranges of {} are taken from the data (simulation only): declare them with --range COL=LO:HI for a real survey",
            undeclared.join(", ")
        ));
    }
    let ranges: Vec<(f64, f64)> = ranges
        .into_iter()
        .enumerate()
        .map(|(j, r)| {
            r.unwrap_or_else(|| {
                let column = prepared.answers.column(j);
                (column.min(), column.max())
            })
        })
        .collect();
    let settings = DeviceDp::new(&ranges, sigma, epsilon, delta)
        .map_err(|e| anyhow::anyhow!("DP ranges: {e} (declare it with --range COL=LO:HI)"))?;
    let record = DpNoise {
        epsilon,
        delta,
        sigma,
        smallest_cohort,
        columns: prepared
            .answer_names
            .iter()
            .zip(ranges.iter().zip(settings.column_sigmas()))
            .map(|(name, (&(lo, hi), sd))| DpColumn {
                name: name.clone(),
                lo,
                hi,
                sigma: sd,
            })
            .collect(),
    };
    Ok(Some(DpPlan { settings, record }))
}

impl PipelineArgs {
    /// How released numbers are written: round-trip by default, `--decimals` when asked.
    fn release_precision(&self) -> Precision {
        self.decimals
            .map_or(Precision::RoundTrip, Precision::Decimals)
    }
}

/// The raw data split into answers and the QA constant.
struct Prepared {
    answer_names: Vec<String>,
    answers: DMatrix<f64>,
    qa: Option<f64>,
}

fn prepare(table: &Table, args: &PipelineArgs) -> Result<Prepared> {
    let qa_index = if args.no_qa {
        None
    } else {
        table.headers().iter().position(|h| h == "QA")
    };
    let qa = match qa_index {
        Some(j) => {
            let column = table.data().column(j);
            let c = column[0];
            if let Some((i, v)) = column.iter().enumerate().find(|(_, v)| **v != c) {
                bail!(
                    "{}:{}:{}: the QA column must be constant ({c} in row 1, {v} here)",
                    table.source_name(),
                    i + 2,
                    j + 1
                );
            }
            if let Some(given) = args.qa_constant
                && given != c
            {
                bail!("--qa-constant {given} disagrees with the input's QA column ({c})");
            }
            Some(c)
        }
        None if args.no_qa => None,
        None => Some(args.qa_constant.unwrap_or(DEFAULT_QA_CONSTANT)),
    };
    let keep: Vec<usize> = (0..table.headers().len())
        .filter(|&j| Some(j) != qa_index)
        .collect();
    Ok(Prepared {
        answer_names: keep.iter().map(|&j| table.headers()[j].clone()).collect(),
        answers: table.data().select_columns(&keep),
        qa,
    })
}

fn party_keys(args: &PipelineArgs) -> Result<(PartyKeys, bool)> {
    if let Some(path) = &args.key_file {
        let text = crate::io::read_text(path)?;
        return Ok((parse_key_file(&text, &path.display().to_string())?, false));
    }
    if let Some(n) = args.teaching_key {
        warn(&teaching_warning(n));
        return Ok((PartyKeys::teaching(n), true));
    }
    if args.rng == RngChoice::Matlab {
        bail!(
            "--rng matlab reproduces the papers from numeric keys; add --teaching-key N (e.g. 535)"
        );
    }
    Ok((crate::keys::fresh_party_keys()?, false))
}

/// Extra provider keys for the collusion method: teaching numbers when teaching, else fresh.
fn provider_keys(count: usize, teaching_base: Option<u64>) -> Result<Vec<Key>> {
    (0..count as u64)
        .map(|i| match teaching_base {
            Some(base) => Ok(Key::teaching(base + i)),
            None => crate::keys::fresh_key(),
        })
        .collect()
}

/// Files and facts a method produced, for the manifest.
struct Outcome {
    release: DMatrix<f64>,
    release_names: Vec<String>,
    p1: usize,
    p2: usize,
    sigma: f64,
    noise_bound: Option<NoiseBound>,
    margin: Option<f64>,
    cohorts: Cohorts,
    right_mask: &'static str,
    kept: Vec<String>,
    qa: Vec<QaReport>,
    dp: Option<DpNoise>,
    warnings: Vec<String>,
}

/// Run `pipeline`.
pub fn run(args: PipelineArgs) -> Result<()> {
    let table = read_table(&args.input)?;
    let prepared = prepare(&table, &args)?;
    let (keys, teaching) = party_keys(&args)?;
    let data_max = prepared
        .answers
        .amax()
        .max(prepared.qa.map_or(0.0, f64::abs));
    let (x_max, x_max_source) = match args.x_max {
        Some(declared) => {
            if !(declared.is_finite() && declared >= 0.0) {
                bail!("--x-max must be a finite non-negative number, got {declared}");
            }
            if declared < data_max {
                bail!(
                    "--x-max {declared} is below a value in {} ({data_max}); declare the true range",
                    args.input.display()
                );
            }
            (declared, "declared")
        }
        None => (data_max, "data"),
    };
    let kept: Vec<usize> = args
        .keep
        .iter()
        .map(|name| {
            prepared
                .answer_names
                .iter()
                .position(|h| h == name)
                .with_context(|| {
                    format!(
                        "--keep: {} has no answer column named {name:?} (columns: {})",
                        args.input.display(),
                        prepared.answer_names.join(", ")
                    )
                })
        })
        .collect::<Result<_>>()?;
    let strictness = if args.unsafe_teaching {
        Strictness::WarnOnly
    } else {
        Strictness::Refuse
    };
    let outcome = match args.method {
        Method::Modified | Method::First | Method::Collusion => {
            tm2_method(&args, &prepared, &keys, kept, x_max, strictness)?
        }
        Method::Second => second_method(&args, &prepared, &keys, kept)?,
    };
    let mut warnings = outcome.warnings.clone();
    if teaching {
        warnings.push(teaching_warning(args.teaching_key.unwrap_or_default()));
    }
    let precision = args.release_precision();
    write_csv(
        &args.out_dir.join("release.csv"),
        &outcome.release_names,
        &outcome.release,
        precision,
    )?;
    let (_, cross_products) = summary_statistics(&outcome.release);
    let manifest = Manifest {
        orthomask_version: env!("CARGO_PKG_VERSION").to_owned(),
        method: args.method.name().to_owned(),
        n: outcome.release.nrows(),
        p1: outcome.p1,
        p2: outcome.p2,
        columns: outcome.release_names.clone(),
        sigma: outcome.sigma,
        x_max: Some(x_max),
        x_max_source: Some(x_max_source.to_owned()),
        appendix_c: outcome.noise_bound.as_ref().map(|b| AppendixC {
            sigma_min: b.sigma_min,
            failure_probability: b.failure_probability,
            gamma: b.gamma,
            delta: b.delta,
        }),
        condition_3_7_margin: outcome.margin,
        cohorts: outcome.cohorts.clone(),
        right_mask: outcome.right_mask.to_owned(),
        generator: args.rng.name().to_owned(),
        kept_columns: outcome.kept.clone(),
        qa: Qa::summarise(&outcome.qa),
        column_means: column_means(&outcome.release_names, &outcome.release),
        cross_products,
        decimals: args.decimals,
        binary_columns: binary_columns(&prepared),
        dp: outcome.dp.clone(),
        teaching_keys: teaching,
        warnings: warnings.clone(),
    };
    write_file(&args.out_dir.join("manifest.json"), &manifest.to_json())?;
    for w in &outcome.warnings {
        warn(w);
    }
    if args.json {
        print_json(&serde_json::to_value(&manifest)?)?;
    } else {
        summarise(&args.out_dir, &manifest);
    }
    Ok(())
}

/// Answer columns holding only 0s and 1s (both present) in the raw data.
fn binary_columns(prepared: &Prepared) -> Vec<String> {
    prepared
        .answer_names
        .iter()
        .enumerate()
        .filter(|(j, _)| {
            let column = prepared.answers.column(*j);
            column.iter().all(|&v| v == 0.0 || v == 1.0)
                && column.iter().any(|&v| v == 0.0)
                && column.iter().any(|&v| v == 1.0)
        })
        .map(|(_, name)| name.clone())
        .collect()
}

fn summarise(out_dir: &Path, m: &Manifest) {
    println!(
        "{} TM²: n = {}, p1 = {}, p2 = {}, sigma = {}",
        m.method, m.n, m.p1, m.p2, m.sigma
    );
    if let Some(c) = &m.appendix_c {
        println!(
            "Appendix C: sigma_min = {:.6}, Pr[condition (3.5) fails] <= {:.3e} (gamma = {:.3}, delta = {})",
            c.sigma_min, c.failure_probability, c.gamma, c.delta
        );
    }
    if let Some(margin) = m.condition_3_7_margin {
        println!("condition (3.7) margin lambda_min(X2X2')/lambda_max(X1X1') = {margin:.4}");
    }
    if let Some(qa) = &m.qa {
        println!(
            "QA check: {} (max deviation {:.3e}, tolerance {:.3e})",
            if qa.passed { "passed" } else { "FAILED" },
            qa.max_deviation,
            qa.tolerance
        );
    }
    println!(
        "wrote {}/{{upload.csv, msp_to_collector.csv, release.csv, manifest.json}}",
        out_dir.display()
    );
}

fn tm2_method(
    args: &PipelineArgs,
    prepared: &Prepared,
    keys: &PartyKeys,
    kept: Vec<usize>,
    x_max: f64,
    strictness: Strictness,
) -> Result<Outcome> {
    let n = prepared.answers.nrows();
    let answers = prepared.answers.ncols();
    let sizes = cohort_sizes(n, args.cohort_size.unwrap_or(n))?;
    let (smallest, largest) = (
        sizes.iter().copied().min().unwrap_or(n),
        sizes.iter().copied().max().unwrap_or(n),
    );
    let p1 = answers + usize::from(prepared.qa.is_some());
    let kind = args.kind.unwrap_or(if args.method == Method::First {
        KindChoice::UniformEntries
    } else {
        KindChoice::Haar
    });
    let p2 = match args.noise_cols {
        Some(p2) => p2,
        None if args.method == Method::First => 0,
        None => noise_columns_for(largest, args.delta, args.max_failure_probability)?,
    };
    let dp = plan_dp(args, prepared, smallest)?;
    if dp.is_some() && args.method == Method::Collusion {
        bail!("device-side DP is not supported with --method collusion");
    }
    // With DP noise the data columns can exceed the declared range; Appendix C's bound on
    // λ_max(X₁X₁ᵀ) uses x_max plus six noise standard deviations (exceeded with probability
    // below 2e-9 per entry).
    let x_max = x_max
        + dp.as_ref().map_or(0.0, |plan| {
            6.0 * plan
                .settings
                .column_sigmas()
                .iter()
                .copied()
                .fold(0.0, f64::max)
        });
    // Default σ: the Appendix C bound of the largest cohort, where γ = p₂/m is smallest and the
    // bound highest (a hair above, since the bound is strict); where the bound does not apply
    // (p₂ ≤ m), noise of the data's own scale.
    let sigma = match args.sigma {
        Some(s) => s,
        None if p2 == 0 => 0.0,
        None => appendix_c_bound(largest, p1, p2, x_max, args.delta)
            .map(|b| b.sigma_min * (1.0 + 1e-9))
            .unwrap_or(x_max.max(1.0)),
    };
    let mut design = Tm2Design::modified(answers, 0, 1.0)?
        .with_qa(prepared.qa)?
        .with_noise(p2, sigma)?
        .with_right_mask(kind.kind())
        .with_generator(args.rng.generator());
    if !kept.is_empty() {
        design = design.with_kept(kept.clone())?;
    }
    if let Some(plan) = &dp {
        design = design.with_dp(plan.settings.clone())?;
    }
    let dp = dp.map(|plan| plan.record);
    let kept_names: Vec<String> = kept
        .iter()
        .map(|&k| prepared.answer_names[k].clone())
        .collect();
    let mut release_names = prepared.answer_names.clone();
    if prepared.qa.is_some() {
        release_names.push("QA".to_owned());
    }
    let safety = Safety {
        x_max,
        delta: args.delta,
        strictness,
    };
    let mut warnings = Vec::new();
    if args.method == Method::Collusion {
        if args.cohort_size.is_some() {
            bail!("--cohort-size is not supported with --method collusion");
        }
        let teaching_base = args.teaching_key.map(|t| t + 10);
        let collusion_keys = CollusionKeys {
            collector: keys.collector.clone(),
            right: provider_keys(args.right_providers, teaching_base)?,
            left: provider_keys(args.left_providers, teaching_base.map(|t| t + 10))?,
            participants: keys.participants.clone(),
        };
        let run = run_collusion(
            &prepared.answers,
            &design,
            &collusion_keys,
            // The shares hide the answers: their declared bound, or in simulation their maximum.
            share_sigma(
                &design,
                args.x_max.unwrap_or_else(|| prepared.answers.amax()),
            ),
            safety,
        )?;
        warnings.extend(run.design_report.overridden.iter().cloned());
        let names = masked_names("m", design.p());
        write_blocks(
            &args.out_dir.join("upload.csv"),
            "provider",
            &run.shares,
            &names,
        )?;
        write_blocks(
            &args.out_dir.join("msp_to_collector.csv"),
            "provider",
            &run.to_collector,
            &names,
        )?;
        return Ok(Outcome {
            release: run.release,
            release_names,
            p1,
            p2,
            sigma,
            noise_bound: run.design_report.noise_bound,
            margin: None,
            cohorts: Cohorts {
                size: None,
                sizes: vec![n],
            },
            right_mask: "haar",
            kept: kept_names,
            qa: run.qa.into_iter().collect(),
            dp: None,
            warnings,
        });
    }
    let run = run_tm2(
        &prepared.answers,
        &design,
        keys,
        args.cohort_size,
        safety,
        !args.no_margin,
    )?;
    warnings.extend(run.design_report.overridden.iter().cloned());
    if let Some(margin) = run.margin
        && margin <= 1.0
    {
        warnings.push(format!(
            "condition (3.5) failed in this simulation (margin {margin:.4} <= 1): Theorem 3.9's guarantee does not hold for this draw; add noise columns or raise sigma"
        ));
    }
    if let Some(bound) = &run.design_report.noise_bound
        && bound.failure_probability > 0.05
    {
        warnings.push(format!(
            "the Appendix C bound only guarantees Pr[condition (3.5) fails] <= {:.3}; more noise columns (or a larger delta with a larger sigma) tighten it",
            bound.failure_probability
        ));
    }
    let names = masked_names("m", design.p());
    write_csv(
        &args.out_dir.join("upload.csv"),
        &names,
        &run.uploads,
        Precision::RoundTrip,
    )?;
    write_csv(
        &args.out_dir.join("msp_to_collector.csv"),
        &names,
        &run.provider_to_collector,
        Precision::RoundTrip,
    )?;
    Ok(Outcome {
        release: run.release.data,
        release_names,
        p1,
        p2,
        sigma,
        noise_bound: run.design_report.noise_bound,
        margin: run.margin,
        cohorts: Cohorts {
            size: args.cohort_size,
            sizes: run.cohort_sizes,
        },
        right_mask: if design.right_mask_kind() == RightMaskKind::Haar {
            "haar"
        } else {
            "uniform-entries"
        },
        kept: kept_names,
        qa: run.release.qa,
        dp,
        warnings,
    })
}

/// Stack per-provider blocks as rows `provider, participant, m1 … mp`.
fn write_blocks(path: &Path, label: &str, blocks: &[DMatrix<f64>], names: &[String]) -> Result<()> {
    let rows: usize = blocks.iter().map(DMatrix::nrows).sum();
    let width = names.len();
    let mut out = DMatrix::zeros(rows, width + 2);
    let mut r = 0;
    for (b, block) in blocks.iter().enumerate() {
        for i in 0..block.nrows() {
            out[(r, 0)] = b as f64;
            out[(r, 1)] = i as f64;
            for j in 0..width {
                out[(r, j + 2)] = block[(i, j)];
            }
            r += 1;
        }
    }
    let mut headers = vec![label.to_owned(), "participant".to_owned()];
    headers.extend_from_slice(names);
    write_csv(path, &headers, &out, Precision::RoundTrip)
}

/// Rows `participant, row, kept…, m1 … mq` for second-method uploads.
fn write_second_uploads(
    path: &Path,
    uploads: &[SecondUpload],
    kept_names: &[String],
) -> Result<()> {
    let Some(first) = uploads.first() else {
        bail!("no participants")
    };
    let (r, q) = first.mixed.shape();
    let k = first.kept.len();
    let mut out = DMatrix::zeros(uploads.len() * r, 2 + k + q);
    for (i, u) in uploads.iter().enumerate() {
        for row in 0..r {
            let at = i * r + row;
            out[(at, 0)] = i as f64;
            out[(at, 1)] = row as f64;
            for (j, v) in u.kept.iter().enumerate() {
                out[(at, 2 + j)] = *v;
            }
            for j in 0..q {
                out[(at, 2 + k + j)] = u.mixed[(row, j)];
            }
        }
    }
    let mut headers = vec!["participant".to_owned(), "row".to_owned()];
    headers.extend_from_slice(kept_names);
    headers.extend(masked_names("m", q));
    write_csv(path, &headers, &out, Precision::RoundTrip)
}

fn second_method(
    args: &PipelineArgs,
    prepared: &Prepared,
    keys: &PartyKeys,
    kept: Vec<usize>,
) -> Result<Outcome> {
    if kept.is_empty() {
        bail!(
            "--method second needs --keep RESPONSE,TREATMENT: the columns a logistic regression must see unchanged"
        );
    }
    if args.cohort_size.is_some() {
        bail!(
            "--cohort-size is not supported with --method second (its masks act on one record at a time)"
        );
    }
    let noise_rows = args.noise_rows.unwrap_or(6);
    let sigma = args.sigma.unwrap_or(1.0);
    let design = SecondDesign::new(
        prepared.answers.ncols(),
        kept.clone(),
        noise_rows,
        sigma,
        prepared.qa,
    )?
    .with_generator(args.rng.generator());
    let run = run_second(&prepared.answers, &design, keys, args.combined)?;
    let kept_names: Vec<String> = kept
        .iter()
        .map(|&k| prepared.answer_names[k].clone())
        .collect();
    write_second_uploads(&args.out_dir.join("upload.csv"), &run.uploads, &kept_names)?;
    write_second_uploads(
        &args.out_dir.join("msp_to_collector.csv"),
        &run.provider_to_collector,
        &kept_names,
    )?;
    let mut warnings = Vec::new();
    if let Some(combined) = &run.combined {
        let precision = args.release_precision();
        write_csv(
            &args.out_dir.join("release_orthogonal.csv"),
            &prepared.answer_names,
            combined,
            precision,
        )?;
        warnings.push(COMBINED_RELEASE_WARNING.to_owned());
    }
    Ok(Outcome {
        release: run.release,
        release_names: prepared.answer_names.clone(),
        p1: prepared.answers.ncols(),
        p2: 0,
        sigma,
        noise_bound: None,
        margin: None,
        cohorts: Cohorts {
            size: None,
            sizes: vec![prepared.answers.nrows()],
        },
        right_mask: "block-diagonal-haar",
        kept: kept_names,
        qa: run.qa,
        dp: None,
        warnings,
    })
}
