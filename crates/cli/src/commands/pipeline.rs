//! `orthomask pipeline`: run a whole protocol on raw data with every party simulated, and write
//! the release, its manifest and its data package (and, on request, what left the devices and what the provider
//! sent the collector).
//!
//! Every survey decision is the application layer's: σ, `p₂` and DP are
//! `orthomask_survey::plan::Plan`, the manifest is `orthomask_survey::manifest::build` — the
//! same calls the data collector service makes, so both write the same manifest for the same
//! design. This file turns flags and a CSV into a plan request, runs the core's simulation and
//! writes files.

use super::{KindChoice, RngChoice};
use crate::interrupt;
use crate::io::{CsvFile, Staged, masked_names, print_json, warn, write_csv};
use crate::keys::teaching_warning;
use crate::progress::Progress;
use crate::survey_file::SurveyFile;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use nalgebra::DMatrix;
use orthomask_core::key::Key;
use orthomask_core::protocol::Strictness;
use orthomask_core::protocol::qa::QaReport;
use orthomask_core::protocol::second::{COMBINED_RELEASE_WARNING, SecondDesign, SecondUpload};
use orthomask_core::protocol::simulation::{
    CollusionKeys, PartyKeys, Safety, cohort_sizes, estimated_peak_bytes, run_collusion,
    run_second, run_tm2_cohorts,
};
use orthomask_core::protocol::tm2::Tm2Design;
use orthomask_formats::csv::Precision;
use orthomask_formats::keyfile::parse_key_file;
use orthomask_formats::manifest::{Cohorts, Manifest, Method, RightMask, XMaxSource};
use orthomask_survey::cohort_choice::{CohortChoice, default_cohort_size};
use orthomask_survey::manifest::{Provenance, Released, ShareSplit};
use orthomask_survey::plan::{
    CohortBounds, DeclaredRange, DpRequest, Plan, PlanRequest, scales_answers,
};
use orthomask_survey::policy::{
    APPENDIX_C_DELTA, DEFAULT_QA_CONSTANT, FAILURE_TARGET, SECOND_METHOD_NOISE_ROWS,
    SECOND_METHOD_SIGMA,
};
use orthomask_survey::share_view::{OneServiceView, one_service_view_of};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

/// `--method`: which protocol to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodChoice {
    /// Modified TM² (Ding, Miao & Wu 2020): Gaussian padding, Haar right mask. The default.
    Modified,
    /// First TM² method (Wu et al. 2017 §3.1): invertible uniform-entries B₁, QA column.
    First,
    /// Second TM² method (Wu et al. 2017 §3.3): A₀ row operator, block-diagonal B₁, B₂; releases XB₁B₂.
    Second,
    /// Collusion-resistant extension (Ding, Miao & Wu 2020 §3.5): additive shares, K₁ + K₂ providers.
    Collusion,
}

impl MethodChoice {
    /// The manifest's name of the protocol.
    fn method(self) -> Method {
        match self {
            Self::Modified => Method::Modified,
            Self::First => Method::First,
            Self::Second => Method::Second,
            Self::Collusion => Method::Collusion,
        }
    }
}

/// `--cohort-size`: a number of participants or one cohort of everybody.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CohortSize {
    /// One cohort of all participants (`all`).
    All,
    /// At most this many participants per cohort.
    AtMost(usize),
}

fn parse_cohort_size(text: &str) -> Result<CohortSize, String> {
    if text == "all" {
        return Ok(CohortSize::All);
    }
    match text.parse::<usize>() {
        Ok(m) if m > 0 => Ok(CohortSize::AtMost(m)),
        _ => Err(format!(
            "expected a positive number of participants or `all`, got {text:?}"
        )),
    }
}

/// Arguments of `pipeline`.
#[derive(Args)]
pub struct PipelineArgs {
    /// Raw data: CSV with a header row. A constant column named QA is used as the QA column.
    #[arg(long)]
    input: PathBuf,
    /// Directory for release.csv, manifest.json and datapackage.json (and, with --write-exchanges, upload.csv and
    /// msp_to_collector.csv).
    #[arg(long)]
    out_dir: PathBuf,
    /// Protocol.
    #[arg(long, value_enum, default_value_t = MethodChoice::Modified)]
    method: MethodChoice,
    /// Noise columns p₂ (default: the fewest that make the Appendix C failure probability at most
    /// --max-failure-probability for the largest cohort; first method 0).
    #[arg(long)]
    noise_cols: Option<usize>,
    /// Target for the default number of noise columns: Pr[condition (3.5) fails] at most this.
    #[arg(long, default_value_t = FAILURE_TARGET)]
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
    #[arg(long, default_value_t = APPENDIX_C_DELTA)]
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
    /// Participants per cohort, or `all` for one cohort of everybody (the papers' protocol).
    ///
    /// Default: the plan's choice, printed with the summary — the largest cohort that keeps the
    /// release within the policy's accuracy target (two lost digits) with the failure target's
    /// noise columns, at least the policy's floor (p₁ + 1, and 5); see
    /// orthomask_survey::cohort_choice. A monolithic run (`all`) holds n × p numbers with p > n
    /// and is refused when it would not fit in the memory available.
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
    #[arg(long, verbatim_doc_comment, value_parser = parse_cohort_size)]
    cohort_size: Option<CohortSize>,
    /// No progress bar and no summary (warnings and errors are still shown).
    #[arg(long)]
    quiet: bool,
    /// Use at most this many threads (default: every core). The release is bit-identical for
    /// any number.
    #[arg(long)]
    threads: Option<NonZeroUsize>,
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
    /// Skip the condition (3.7) margin of each cohort (on by default).
    #[arg(long)]
    no_margin: bool,
    /// Also write what left the devices (upload.csv) and what the provider sent the collector
    /// (msp_to_collector.csv): n × p numbers each, 180 MB at 1 500 × 10 with the default noise
    /// columns; needed by `orthomask attack appendix-a`.
    #[arg(long)]
    write_exchanges: bool,
    /// Device-side differential privacy: ε (with --dp-delta). Each device adds Gaussian noise
    /// calibrated by seed 004's setting B for the smallest cohort before padding and masking.
    #[arg(long, requires = "dp_delta")]
    dp_epsilon: Option<f64>,
    /// Device-side differential privacy: δ (with --dp-epsilon).
    #[arg(long, requires = "dp_epsilon")]
    dp_delta: Option<f64>,
    /// Declared answer ranges, `COL=LO:HI,…`: the devices scale every answer by its range before
    /// padding (modified and collusion methods) and DP noise is calibrated on that scale
    /// (default: each column's observed range — simulation only; a real survey declares them).
    #[arg(long, value_delimiter = ',')]
    range: Vec<String>,
    /// Print the manifest as JSON on standard output.
    #[arg(long)]
    json: bool,
    /// The survey definition whose coded answers the input holds (`orthomask survey code`'s
    /// output): datapackage.json then carries its questions' titles, value labels and ranges.
    #[arg(long)]
    survey: Option<PathBuf>,
}

impl PipelineArgs {
    /// How released numbers are written: round-trip by default, `--decimals` when asked.
    fn release_precision(&self) -> Precision {
        self.decimals
            .map_or(Precision::RoundTrip, Precision::Decimals)
    }

    /// Refuse or, with `--unsafe-teaching`, only warn.
    fn strictness(&self) -> Strictness {
        if self.unsafe_teaching {
            Strictness::WarnOnly
        } else {
            Strictness::Refuse
        }
    }
}

/// The raw input: its answer columns and the QA constant, read in bounded memory.
struct RawData {
    file: SurveyFile,
    answer_names: Vec<String>,
    /// The file's column of each answer.
    answer_columns: Vec<usize>,
    qa: Option<f64>,
}

impl RawData {
    /// The names of the answer columns at `indices`.
    fn names_of(&self, indices: &[usize]) -> Vec<String> {
        indices
            .iter()
            .map(|&k| self.answer_names[k].clone())
            .collect()
    }

    /// Participants (rows).
    fn rows(&self) -> usize {
        self.file.rows()
    }

    /// What the first pass learned of answer `j`.
    fn answer(&self, j: usize) -> &crate::survey_file::ColumnSummary {
        self.file.column(self.answer_columns[j])
    }

    /// The largest absolute answer.
    fn answers_abs_max(&self) -> f64 {
        (0..self.answer_names.len())
            .map(|j| self.answer(j).abs_max())
            .fold(0.0, f64::max)
    }

    /// Every answer in memory (`n × answers`), for the methods that run without cohorts.
    fn load_answers(&self) -> Result<DMatrix<f64>> {
        self.file.load(&self.answer_columns)
    }

    /// The answer columns observed to hold only 0s and 1s, both present.
    fn binary_columns(&self) -> Vec<String> {
        (0..self.answer_names.len())
            .filter(|&j| self.answer(j).binary.is_binary())
            .map(|j| self.answer_names[j].clone())
            .collect()
    }
}

fn split_input(file: SurveyFile, args: &PipelineArgs) -> Result<RawData> {
    let qa_index = if args.no_qa {
        None
    } else {
        file.headers().iter().position(|h| h == "QA")
    };
    let qa = match qa_index {
        Some(j) => {
            let column = file.column(j);
            let c = column.first;
            if let Some((i, v)) = column.first_change {
                bail!(
                    "{}:{}:{}: the QA column must be constant ({c} in row 1, {v} here)",
                    file.path().display(),
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
    let answer_columns: Vec<usize> = (0..file.headers().len())
        .filter(|&j| Some(j) != qa_index)
        .collect();
    Ok(RawData {
        answer_names: answer_columns
            .iter()
            .map(|&j| file.headers()[j].clone())
            .collect(),
        answer_columns,
        qa,
        file,
    })
}

/// The declared largest absolute entry and where it came from: `--x-max`, the `--range`s when
/// every answer column has one (a survey's declared questions), or the data's own maximum in a
/// simulation.
fn declared_x_max(args: &PipelineArgs, raw: &RawData) -> Result<(f64, XMaxSource)> {
    let data_max = raw.answers_abs_max().max(raw.qa.map_or(0.0, f64::abs));
    if args.x_max.is_none()
        && let Some(ranges_max) = every_range_declared(args, raw)
    {
        return Ok((
            ranges_max.max(raw.qa.map_or(0.0, f64::abs)),
            XMaxSource::Declared,
        ));
    }
    match args.x_max {
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
            Ok((declared, XMaxSource::Declared))
        }
        None => Ok((data_max, XMaxSource::Data)),
    }
}

/// The largest `|lo|`, `|hi|` of the `--range`s when every answer column has a well-formed one;
/// `None` otherwise (malformed specifications are reported by [`declared_ranges`]).
fn every_range_declared(args: &PipelineArgs, raw: &RawData) -> Option<f64> {
    let mut covered = vec![false; raw.answer_names.len()];
    let mut largest: f64 = 0.0;
    for spec in &args.range {
        let (name, bounds) = spec.split_once('=')?;
        let (lo, hi) = bounds.split_once(':')?;
        let (lo, hi): (f64, f64) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
        let j = raw.answer_names.iter().position(|n| n == name.trim())?;
        covered[j] = true;
        largest = largest.max(lo.abs()).max(hi.abs());
    }
    covered.iter().all(|&c| c).then_some(largest)
}

/// Each answer column's range: from `--range`, or in a simulation read off the data (saying so).
/// A constant column gets the plan's observed range (`DeclaredRange::observed`).
fn declared_ranges(
    args: &PipelineArgs,
    raw: &RawData,
    purpose: &str,
) -> Result<Vec<DeclaredRange>> {
    let mut declared: Vec<Option<(f64, f64)>> = vec![None; raw.answer_names.len()];
    for spec in &args.range {
        let (j, lo, hi) = parse_range(spec, raw)?;
        declared[j] = Some((lo, hi));
    }
    let undeclared: Vec<&str> = declared
        .iter()
        .zip(&raw.answer_names)
        .filter(|(r, _)| r.is_none())
        .map(|(_, name)| name.as_str())
        .collect();
    if !undeclared.is_empty() && args.dp_epsilon.is_some() {
        // A DP guarantee is about ranges declared before the data: a range read off the data
        // leaks its extremes (the largest and smallest answers), so no guarantee would hold
        // (issue 21 §2; diffprivlib warns about the same mistake, we refuse it).
        bail!(
            "device-side DP needs every answer's range declared before the data; declare {} with \
             --range COL=LO:HI (a range read off the data would leak its extremes)",
            undeclared.join(", ")
        );
    }
    if !undeclared.is_empty() {
        // Scaling only (no DP): ranges read off the data leak their extremes and serve this
        // simulation only.
        warn(&format!(
            "{purpose} ranges of {} are taken from the data (simulation only): declare them with --range COL=LO:HI for a real survey",
            undeclared.join(", ")
        ));
    }
    Ok(declared
        .into_iter()
        .zip(&raw.answer_names)
        .enumerate()
        .map(|(j, (range, name))| match range {
            Some((lo, hi)) => DeclaredRange {
                name: name.clone(),
                lo,
                hi,
            },
            None => DeclaredRange::observed(name, raw.answer(j).min, raw.answer(j).max),
        })
        .collect())
}

/// `--survey`: the definition, whose columns must be the input's answer columns, in order.
fn survey_of(
    args: &PipelineArgs,
    raw: &RawData,
) -> Result<Option<orthomask_survey::definition::SurveyDefinition>> {
    let Some(path) = &args.survey else {
        return Ok(None);
    };
    let definition = super::survey::load(path)?;
    let columns: Vec<String> = definition.columns().into_iter().map(|c| c.name).collect();
    if columns != raw.answer_names {
        bail!(
            "--survey {}: its columns are {} but {} has {} (code the answers with `orthomask survey code`)",
            path.display(),
            columns.join(", "),
            args.input.display(),
            raw.answer_names.join(", ")
        );
    }
    Ok(Some(definition))
}

/// One `--range COL=LO:HI`: the answer column's index and the bounds.
fn parse_range(spec: &str, raw: &RawData) -> Result<(usize, f64, f64)> {
    let (name, bounds) = spec
        .split_once('=')
        .with_context(|| format!("--range {spec:?}: expected COL=LO:HI"))?;
    let (lo, hi) = bounds
        .split_once(':')
        .with_context(|| format!("--range {spec:?}: expected COL=LO:HI"))?;
    let j = raw
        .answer_names
        .iter()
        .position(|n| n == name.trim())
        .with_context(|| format!("--range: no answer column named {name:?}"))?;
    let parse = |t: &str| {
        t.trim()
            .parse::<f64>()
            .with_context(|| format!("--range {spec:?}: {t:?} is not a number"))
    };
    Ok((j, parse(lo)?, parse(hi)?))
}

/// The `--range`s as declared, and only those: the data package states a raw range only where
/// the survey declared one (a range read off the data would publish the raw extremes).
fn declared_only(args: &PipelineArgs, raw: &RawData) -> Result<Vec<DeclaredRange>> {
    args.range
        .iter()
        .map(|spec| {
            let (j, lo, hi) = parse_range(spec, raw)?;
            Ok(DeclaredRange {
                name: raw.answer_names[j].clone(),
                lo,
                hi,
            })
        })
        .collect()
}

/// Device-side DP asked for by `--dp-epsilon`/`--dp-delta`, over the declared ranges.
fn dp_request(args: &PipelineArgs, ranges: &[DeclaredRange]) -> Option<DpRequest> {
    let (Some(epsilon), Some(delta)) = (args.dp_epsilon, args.dp_delta) else {
        return None;
    };
    Some(DpRequest {
        epsilon,
        delta,
        ranges: ranges.to_vec(),
    })
}

/// Whether the devices scale each answer by its range before padding (the plan's rule).
fn scales_records(args: &PipelineArgs) -> bool {
    scales_answers(args.method.method())
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

/// What a method produced, for the manifest.
struct Outcome {
    release: DMatrix<f64>,
    release_names: Vec<String>,
    plan: Plan,
    margin: Option<f64>,
    cohorts: Cohorts,
    right_mask: RightMask,
    kept: Vec<String>,
    qa: Vec<QaReport>,
    warnings: Vec<String>,
    /// Share mode: what one right-masking service alone learns.
    share_view: Option<OneServiceView>,
    /// Share mode: how each record was split.
    shares: Option<ShareSplit>,
    /// What left the devices and what the provider sent, written but not yet in place.
    exchanges: Vec<CsvFile>,
    /// The cohort size the plan chose, when the user did not.
    cohort_choice: Option<CohortChoice>,
}

/// Run `pipeline`: Ctrl-C stops it between cohorts with nothing written, and `--threads` caps
/// the cores it uses.
pub fn run(args: PipelineArgs) -> Result<()> {
    interrupt::catch();
    match args.threads {
        Some(threads) => orthomask_core::runtime::with_max_threads(threads, || run_pipeline(&args)),
        None => run_pipeline(&args),
    }
}

fn run_pipeline(args: &PipelineArgs) -> Result<()> {
    let raw = split_input(SurveyFile::scan(&args.input)?, args)?;
    let definition = survey_of(args, &raw)?;
    let (keys, teaching) = party_keys(args)?;
    let (x_max, x_max_source) = declared_x_max(args, &raw)?;
    let kept: Vec<usize> = args
        .keep
        .iter()
        .map(|name| {
            raw.answer_names
                .iter()
                .position(|h| h == name)
                .with_context(|| {
                    format!(
                        "--keep: {} has no answer column named {name:?} (columns: {})",
                        args.input.display(),
                        raw.answer_names.join(", ")
                    )
                })
        })
        .collect::<Result<_>>()?;
    let outcome = match args.method {
        MethodChoice::Modified | MethodChoice::First | MethodChoice::Collusion => {
            tm2_method(args, &raw, &keys, kept, x_max)?
        }
        MethodChoice::Second => second_method(args, &raw, &keys, kept, x_max)?,
    };
    let mut warnings = outcome.warnings.clone();
    if teaching {
        warnings.push(teaching_warning(args.teaching_key.unwrap_or_default()));
    }
    interrupt::check()?;
    let mut release = CsvFile::create(&args.out_dir.join("release.csv"), &outcome.release_names)?;
    release.write_rows(&outcome.release, args.release_precision())?;
    let manifest = orthomask_survey::manifest::build(
        &outcome.plan,
        &Released {
            columns: &outcome.release_names,
            data: &outcome.release,
            qa: &outcome.qa,
            decimals: args.decimals,
        },
        Provenance {
            method: args.method.method(),
            right_mask: outcome.right_mask,
            generator: args.rng.generator().into(),
            x_max_source,
            cohorts: outcome.cohorts.clone(),
            kept_columns: outcome.kept.clone(),
            binary_columns: raw.binary_columns(),
            condition_3_7_margin: outcome.margin,
            teaching_keys: teaching,
            warnings,
            // No services took uploads, so no receipts were issued.
            receipt_roots: Vec::new(),
            share_view: outcome.share_view,
            shares: outcome.shares,
            // A CSV declares no model terms: every column is an answer.
            model_terms: Vec::new(),
        },
    );
    let mut manifest_file = Staged::create(&args.out_dir.join("manifest.json"))?;
    manifest_file.write(&manifest.to_json())?;
    // The same data package the collector serves, with what the CSV (and `--survey`) tells:
    // without a definition, names, roles, the declared ranges and the columns observed 0/1
    // (`survey::datapackage`).
    let package = orthomask_survey::datapackage::build(&orthomask_survey::datapackage::Sources {
        manifest: &manifest,
        definition: definition.as_ref(),
        declared_ranges: &declared_only(args, &raw)?,
    });
    let mut package_file = Staged::create(&args.out_dir.join("datapackage.json"))?;
    package_file.write(&package.to_json())?;
    // Everything is written under temporary names: the last chance to stop with nothing in
    // place. Then the exchanges, the release and its manifest are put in place together.
    interrupt::check()?;
    for exchange in outcome.exchanges {
        exchange.commit()?;
    }
    release.commit()?;
    manifest_file.commit()?;
    package_file.commit()?;
    for w in &outcome.warnings {
        warn(w);
    }
    if args.json {
        print_json(&serde_json::to_value(&manifest)?)?;
    } else if !args.quiet {
        if let Some(choice) = &outcome.cohort_choice {
            println!(
                "{} (the plan's choice; --cohort-size M or all to choose)",
                choice.describe()
            );
        }
        summarise(args, &manifest);
    }
    Ok(())
}

fn summarise(args: &PipelineArgs, m: &Manifest) {
    println!(
        "{} TM²: n = {}, p1 = {}, p2 = {}, sigma = {}",
        m.method.as_str(),
        m.n,
        m.p1,
        m.p2,
        m.sigma
    );
    if let Some(c) = &m.appendix_c {
        println!(
            "Appendix C: sigma_min = {:.6}, Pr[condition (3.5) fails] <= {:.3e} (gamma = {:.3}, delta = {})",
            c.sigma_min, c.failure_probability, c.gamma, c.delta
        );
    }
    if let Some(u) = &m.unmasking_error {
        println!(
            "unmasking: expected (rms) error {:.2e} per released value{} (masking is expected to cost about {:.1} significant digits of a coefficient; a rounding model, not a bound)",
            u.expected_entry_error,
            if u.scaled_by_declared_ranges {
                " in units of each answer's half-range"
            } else {
                ""
            },
            u.expected_digits_lost
        );
    }
    if let Some(g) =
        m.dp.as_ref()
            .and_then(|d| d.guarantee.as_ref().map(|g| (d.sigma, g)))
    {
        let (sigma, g) = g;
        println!(
            "device DP: sigma = {sigma:.4} guarantees (epsilon = {:.4}, delta = {:.3e}) for one record replaced (sums epsilon {:.4}, complement epsilon {:.4}; {:.2}x seed 004's sigma {:.4})",
            g.epsilon,
            g.delta,
            g.epsilon_sums,
            g.epsilon_complement,
            g.growth_factor,
            g.paper_sigma
        );
    }
    if let Some(v) = &m.share_view {
        println!(
            "share mode: one of {} right-masking services sees each answer at signal-to-noise {:.2e}, (epsilon = {:.4}, delta = {:.0e})",
            v.services, v.signal_to_noise, v.epsilon, v.delta
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
    let files = if args.write_exchanges {
        "upload.csv, msp_to_collector.csv, release.csv, manifest.json, datapackage.json"
    } else {
        "release.csv, manifest.json, datapackage.json"
    };
    println!("wrote {}/{{{files}}}", args.out_dir.display());
}

fn tm2_method(
    args: &PipelineArgs,
    raw: &RawData,
    keys: &PartyKeys,
    kept: Vec<usize>,
    x_max: f64,
) -> Result<Outcome> {
    let n = raw.rows();
    let kind = args.kind.unwrap_or(if args.method == MethodChoice::First {
        KindChoice::UniformEntries
    } else {
        KindChoice::Haar
    });
    let wants_dp = args.dp_epsilon.is_some();
    let ranges = if scales_records(args) || wants_dp {
        let purpose = if wants_dp {
            "DP and scaling"
        } else {
            "scaling"
        };
        Some(declared_ranges(args, raw, purpose)?)
    } else {
        None
    };
    let dp = ranges.as_deref().and_then(|r| dp_request(args, r));
    if dp.is_some() && args.method == MethodChoice::Collusion {
        bail!("device-side DP is not supported with --method collusion");
    }
    let request = |cohorts| PlanRequest {
        answers: raw.answer_names.len(),
        qa_constant: raw.qa,
        cohorts,
        x_max,
        ranges: ranges.clone().filter(|_| scales_records(args)),
        kept_columns: kept.len(),
        delta: args.delta,
        failure_target: args.max_failure_probability,
        noise_columns: args
            .noise_cols
            .or((args.method == MethodChoice::First).then_some(0)),
        sigma: args.sigma,
        orthogonal_right_mask: kind == KindChoice::Haar,
        dp: dp.clone(),
    };
    let with_range_hint = |e: orthomask_survey::plan::PlanError| match e {
        orthomask_survey::plan::PlanError::Ranges(_) => {
            anyhow::anyhow!("{e} (declare it with --range COL=LO:HI)")
        }
        other => other.into(),
    };
    // The cohort size: the user's, or the plan's rule (issue 23 §1). The collusion method runs
    // one cohort (its share hand-over is per survey).
    let (cohort_size, cohort_choice) = match (args.cohort_size, args.method) {
        (Some(CohortSize::All), _) => (None, None),
        (Some(CohortSize::AtMost(m)), _) => (Some(m), None),
        (None, MethodChoice::Collusion) => (None, None),
        (None, _) => {
            let everybody = CohortBounds {
                smallest: n,
                largest: n,
            };
            let choice = default_cohort_size(&request(everybody), n).map_err(with_range_hint)?;
            (Some(choice.size).filter(|&m| m < n), Some(choice))
        }
    };
    let sizes = cohort_sizes(n, cohort_size.unwrap_or(n))?;
    let cohorts = CohortBounds {
        smallest: sizes.iter().copied().min().unwrap_or(n),
        largest: sizes.iter().copied().max().unwrap_or(n),
    };
    let plan = Plan::new(&request(cohorts)).map_err(with_range_hint)?;
    let mut design = plan
        .design()?
        .with_right_mask(kind.kind())
        .with_generator(args.rng.generator());
    if !kept.is_empty() {
        design = design.with_kept(kept.clone())?;
    }
    let kept_names = raw.names_of(&kept);
    let mut release_names = raw.answer_names.clone();
    if raw.qa.is_some() {
        release_names.push("QA".to_owned());
    }
    // Before any work: a monolithic run (and the collusion method's single cohort) holds n × p
    // numbers with p > n.
    crate::memory::refuse_what_cannot_fit(
        estimated_peak_bytes(
            &sizes,
            design.p(),
            design.p1(),
            orthomask_core::runtime::workers(),
        ),
        &format!(
            "{} of {} records (records of p = {} values)",
            if sizes.len() == 1 {
                "one cohort"
            } else {
                "cohorts"
            },
            cohorts.largest,
            design.p()
        ),
    )?;
    if args.method == MethodChoice::Collusion {
        return collusion_method(args, raw, keys, plan, &design, release_names, kept_names);
    }
    // The second pass: the file cohort by cohort, each cohort masked as it arrives. Ctrl-C is
    // honoured before the next cohort is read (the cohorts in flight finish), and what the run
    // writes stays under temporary names until the end (`run_pipeline`).
    let mut exchanges = if args.write_exchanges {
        let names = masked_names("m", design.p());
        vec![
            CsvFile::create(&args.out_dir.join("upload.csv"), &names)?,
            CsvFile::create(&args.out_dir.join("msp_to_collector.csv"), &names)?,
        ]
    } else {
        Vec::new()
    };
    let mut progress = Progress::cohorts(n, sizes.len(), args.quiet);
    let blocks = raw
        .file
        .blocks(&raw.answer_columns, sizes.clone())?
        .map(|block| {
            interrupt::check()?;
            block
        });
    let run = run_tm2_cohorts(
        blocks,
        &sizes,
        &design,
        keys,
        Safety {
            x_max: plan.x_max,
            delta: plan.delta,
            strictness: args.strictness(),
        },
        !args.no_margin,
        &mut |exchange| {
            if let [uploads, provider_to_collector] = exchanges.as_mut_slice() {
                uploads.write_rows(exchange.uploads, Precision::RoundTrip)?;
                provider_to_collector
                    .write_rows(exchange.provider_to_collector, Precision::RoundTrip)?;
            }
            progress.cohort_done(exchange.uploads.nrows());
            Ok(())
        },
    );
    progress.finish();
    let run = run?;
    let mut warnings = run.design_report.overridden.clone();
    if let Some(margin) = run.margin
        && margin <= 1.0
    {
        warnings.push(format!(
            "condition (3.5) failed in this simulation (margin {margin:.4} <= 1): Theorem 3.9's guarantee does not hold for this draw; add noise columns or raise sigma"
        ));
    }
    warnings.extend(plan.weak_bound_warning());
    Ok(Outcome {
        release: run.release.data,
        release_names,
        plan,
        margin: run.margin,
        cohorts: Cohorts {
            size: cohort_size,
            sizes: run.cohort_sizes,
        },
        right_mask: design.right_mask_kind().into(),
        kept: kept_names,
        qa: run.release.qa,
        warnings,
        share_view: None,
        shares: None,
        exchanges,
        cohort_choice,
    })
}

/// The collusion-resistant extension (seed 000 §3.5): one cohort, additive shares.
fn collusion_method(
    args: &PipelineArgs,
    raw: &RawData,
    keys: &PartyKeys,
    plan: Plan,
    design: &Tm2Design,
    release_names: Vec<String>,
    kept_names: Vec<String>,
) -> Result<Outcome> {
    if args.cohort_size.is_some() {
        bail!("--cohort-size is not supported with --method collusion");
    }
    let answers = raw.load_answers()?;
    let n = answers.nrows();
    let teaching_base = args.teaching_key.map(|t| t + 10);
    let collusion_keys = CollusionKeys {
        collector: keys.collector.clone(),
        right: provider_keys(args.right_providers, teaching_base)?,
        left: provider_keys(args.left_providers, teaching_base.map(|t| t + 10))?,
        participants: keys.participants.clone(),
    };
    // The shares hide the answers: their bound on the record's scale (1 when scaled), from the
    // declared bound or in simulation their maximum.
    let tau = plan.share_sigma(design);
    let record_ranges: Vec<(f64, f64)> = match design.scaler() {
        Some(scaler) => vec![(-1.0, 1.0); scaler.len()],
        None => answers.column_iter().map(|c| (c.min(), c.max())).collect(),
    };
    let share_view = one_service_view_of(args.right_providers, tau, &record_ranges)?;
    // The core runs the same design checks as for the modified protocol: the extension's
    // stage-one analysis needs condition (3.5) too.
    let run = run_collusion(
        &answers,
        design,
        &collusion_keys,
        tau,
        Safety {
            x_max: plan.x_max,
            delta: plan.delta,
            strictness: args.strictness(),
        },
    )?;
    if args.write_exchanges {
        let names = masked_names("m", design.p());
        write_blocks(
            &args.out_dir.join("upload.csv"),
            "provider",
            &run.shares,
            &names,
        )?;
        // What the collector receives in share mode: each right provider's part (the leading
        // p₁ columns of the share it unmasked, plus its cancelling mask), decoded.
        let parts: Vec<_> = run.parts.iter().map(|p| p.decode()).collect();
        write_blocks(
            &args.out_dir.join("msp_to_collector.csv"),
            "provider",
            &parts,
            &masked_names("m", design.p1()),
        )?;
    }
    Ok(Outcome {
        release: run.release,
        release_names,
        plan,
        margin: None,
        cohorts: Cohorts {
            size: None,
            sizes: vec![n],
        },
        right_mask: RightMask::Haar,
        kept: kept_names,
        qa: run.qa.into_iter().collect(),
        warnings: run.design_report.overridden,
        share_view: Some(share_view),
        shares: Some(ShareSplit {
            services: args.right_providers,
            share_sigma: tau,
        }),
        exchanges: Vec::new(),
        cohort_choice: None,
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
    raw: &RawData,
    keys: &PartyKeys,
    kept: Vec<usize>,
    x_max: f64,
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
    let sigma = args.sigma.unwrap_or(SECOND_METHOD_SIGMA);
    let design = SecondDesign::new(
        raw.answer_names.len(),
        kept.clone(),
        args.noise_rows.unwrap_or(SECOND_METHOD_NOISE_ROWS),
        sigma,
        raw.qa,
    )?
    .with_generator(args.rng.generator());
    let run = run_second(&raw.load_answers()?, &design, keys, args.combined)?;
    let kept_names = raw.names_of(&kept);
    if args.write_exchanges {
        write_second_uploads(&args.out_dir.join("upload.csv"), &run.uploads, &kept_names)?;
        write_second_uploads(
            &args.out_dir.join("msp_to_collector.csv"),
            &run.provider_to_collector,
            &kept_names,
        )?;
    }
    let mut warnings = Vec::new();
    if let Some(combined) = &run.combined {
        write_csv(
            &args.out_dir.join("release_orthogonal.csv"),
            &raw.answer_names,
            combined,
            args.release_precision(),
        )?;
        warnings.push(COMBINED_RELEASE_WARNING.to_owned());
    }
    // The second method pads with noise rows, not columns: no Appendix C bound, and the release
    // holds the answer columns only.
    let plan = Plan::second_method(raw.answer_names.len(), sigma, x_max, args.delta);
    Ok(Outcome {
        release: run.release,
        release_names: raw.answer_names.clone(),
        plan,
        margin: None,
        cohorts: Cohorts {
            size: None,
            sizes: vec![raw.rows()],
        },
        right_mask: RightMask::BlockDiagonalHaar,
        kept: kept_names,
        qa: run.qa,
        warnings,
        share_view: None,
        shares: None,
        exchanges: Vec::new(),
        cohort_choice: None,
    })
}
