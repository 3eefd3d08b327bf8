//! The classroom demonstration: the 20 LEAPS records of seed 003 Table 2 (or more simulated
//! participants) walked through the protocol, with what each party sees.
//!
//! All masking is `orthomask_core::protocol::simulation::run_tm2`; the collector's view `A₂X₁`
//! is `DataCollector::unmask_cohort` on the provider's batch; the attack is
//! `orthomask_core::attack::appendix_a_attack`; the collusion (provider plus one participant's
//! copy of `B`) is `Mask::unmask_leading` on the provider's view; Table 6 and Figure 2 are
//! `orthomask-stats`. The classroom runs every design in teaching mode: unsafe choices are
//! carried out and reported as warnings, which is the point of the lesson.

use nalgebra::DMatrix;
use orthomask_core::attack::{Consistent, appendix_a_attack};
use orthomask_core::key::{Key, KeyError, StreamId};
use orthomask_core::mask::Mask;
use orthomask_core::protocol::simulation::{PartyKeys, Safety, run_tm2};
use orthomask_core::protocol::tm2::{
    DataCollector, Generator, Tm2Design, right_mask_from_device_key,
};
use orthomask_core::protocol::{ProtocolError, Strictness};
use orthomask_core::random::{UnitUniform, standard_normal};
use orthomask_core::tolerance::BINARY_FULL_PRECISION;
use orthomask_formats::csv::{CsvError, Table, parse_table};
use orthomask_stats::contingency::{ContingencyError, ContingencyTable};
use orthomask_survey::plan::{CohortBounds, Plan, PlanError, PlanRequest};
use orthomask_survey::policy::{APPENDIX_C_DELTA, DEFAULT_QA_CONSTANT};
use serde::{Deserialize, Serialize};

use super::analysis::{AnalysisError, ScatterPanel, scatter_panel};
use super::residual_lesson::{ResidualLesson, residual_lesson};
use super::shown;

/// Seed 003 Table 2: 20 LEAPS records (eight answers and the QA column 888).
pub const LEAPS_TABLE2: &str = include_str!("../../data/paper/leaps_table2.csv");

/// The teaching key of seed 003 §3.2 (`B₁` from 535, `A₂` from 536, `A₁` from 537).
pub const PAPER_KEY: u64 = 535;

/// Rows and columns of a matrix shown as a table.
pub const TABLE_ROWS: usize = 10;
/// Columns of a matrix shown as a table.
pub const TABLE_COLUMNS: usize = 10;
/// Largest block drawn as a heatmap.
pub const HEATMAP_SIZE: usize = 60;

/// Node budget of the attack's search (seed 000 Appendix A).
pub const ATTACK_BUDGET: u64 = 5_000_000;

/// Why the classroom cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ClassroomError {
    /// No participants asked for.
    #[error("the classroom needs at least one participant")]
    NoParticipants,
    /// Paper mode with keys other than the paper's.
    #[error("the paper's matrices come from MATLAB's rng(535): paper mode needs the teaching keys")]
    PaperNeedsTeachingKeys,
    /// A random key that is not 64 hex digits.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The bundled LEAPS table does not parse (a broken build).
    #[error(transparent)]
    Table(#[from] CsvError),
    /// The design or a protocol step failed.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// The policy could not plan the default design.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// Table 6 needs a column the data lack.
    #[error("no column {0}")]
    NoColumn(String),
    /// A 2×2 table cannot be formed.
    #[error(transparent)]
    Contingency(#[from] ContingencyError),
    /// A Figure 2 panel cannot be drawn.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
}

/// Which protocol the classroom runs (a lesson's choice, not the manifest's `Method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClassroomMethod {
    /// The modified TM² of seed 000: Gaussian padding, Haar right mask `B`.
    Modified,
    /// The first method exactly as printed in seed 003 §3.2: invertible `B₁` from MATLAB
    /// `rng(535)`, no padding, `p = 9 < n = 20` (so the attack works).
    Paper,
}

/// Which keys the parties use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyChoice {
    /// Guessable teaching keys `k`, `k + 1`, `k + 2` (collector, provider, participants).
    Teaching(u64),
    /// Fresh 256-bit keys (hex) from the browser's random source.
    Random {
        /// Collector's key.
        collector: String,
        /// Provider's key.
        provider: String,
        /// Simulated participants' noise key.
        participants: String,
    },
}

impl KeyChoice {
    fn party_keys(&self) -> Result<PartyKeys, KeyError> {
        match self {
            Self::Teaching(k) => Ok(PartyKeys::teaching(*k)),
            Self::Random {
                collector,
                provider,
                participants,
            } => Ok(PartyKeys {
                collector: Key::from_hex(collector)?,
                provider: Key::from_hex(provider)?,
                participants: Key::from_hex(participants)?,
            }),
        }
    }

    /// Label shown next to the keys.
    pub fn label(&self) -> String {
        match self {
            Self::Teaching(k) => format!(
                "teaching keys {k}, {}, {} — guessable, for demonstrations only",
                k + 1,
                k + 2
            ),
            Self::Random { .. } => "fresh random 256-bit keys from this browser".to_owned(),
        }
    }
}

/// The classroom's controls.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassroomParams {
    /// Protocol.
    pub method: ClassroomMethod,
    /// Simulated participants (the 20 LEAPS records, then resampled ones).
    pub n: usize,
    /// Participants per cohort (0: one cohort of all).
    pub cohort_size: usize,
    /// Noise columns `p₂`.
    pub p2: usize,
    /// Noise standard deviation σ.
    pub sigma: f64,
    /// Keys.
    pub keys: KeyChoice,
    /// Response of Figure 2.
    pub y: String,
    /// Predictor of Figure 2.
    pub x: String,
}

/// Answer columns of seed 003 Table 2 (the QA column aside).
pub const TABLE2_ANSWERS: usize = 8;

/// The largest answer seed 003 Table 2's questions allow (the ADL score, 0 to 100, as declared by
/// the sample survey `www/surveys/leaps-demo.json`).
pub const TABLE2_X_MAX: f64 = 100.0;

/// The paper's 20 records under the modified TM² with the survey plan's noise for one cohort of
/// 20 (`orthomask_survey::plan`: `p₂ = 503` and σ a hair above the Appendix C bound for the 8
/// masked answers and `x_max` = [`TABLE2_X_MAX`], with δ = 0.5 and failure probability 10⁻⁶;
/// the QA column cancels from condition (3.5), see `orthomask_core::protocol::design`).
///
/// # Errors
/// [`ClassroomError::Plan`] if the policy could not plan it (it always can: the constants are in
/// range).
pub fn default_params() -> Result<ClassroomParams, ClassroomError> {
    let cohort = CohortBounds {
        smallest: 20,
        largest: 20,
    };
    let plan = Plan::new(&PlanRequest::new(
        TABLE2_ANSWERS,
        Some(DEFAULT_QA_CONSTANT),
        cohort,
        TABLE2_X_MAX,
    ))?;
    Ok(ClassroomParams {
        method: ClassroomMethod::Modified,
        n: 20,
        cohort_size: 0,
        p2: plan.p2,
        sigma: plan.sigma,
        keys: KeyChoice::Teaching(PAPER_KEY),
        y: "ADL".into(),
        x: "BBS".into(),
    })
}

impl Default for ClassroomParams {
    /// [`default_params`].
    fn default() -> Self {
        // The policy's constants are in their domains and 20 records take 503 noise columns, so
        // this plan cannot fail (`the_default_design_is_the_plans` runs it).
        default_params().expect("the survey plan plans the paper's 20 records")
    }
}

/// A matrix as the page shows it: the top-left corner as a table, a larger block as a heatmap.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatrixView {
    /// What it is (`XB`, `A₂X₁`, …).
    pub title: String,
    /// Who sees it.
    pub seen_by: String,
    /// Full rows.
    pub rows: usize,
    /// Full columns.
    pub cols: usize,
    /// Column names of the shown columns.
    pub headers: Vec<String>,
    /// The first [`TABLE_ROWS`] × [`TABLE_COLUMNS`] entries.
    pub table: Vec<Vec<f64>>,
    /// The first [`HEATMAP_SIZE`] × [`HEATMAP_SIZE`] entries.
    pub heat: Vec<Vec<f64>>,
}

impl MatrixView {
    fn new(title: &str, seen_by: &str, m: &DMatrix<f64>, names: &[String]) -> Self {
        let block = |r: usize, c: usize| -> Vec<Vec<f64>> {
            (0..m.nrows().min(r))
                .map(|i| (0..m.ncols().min(c)).map(|j| m[(i, j)]).collect())
                .collect()
        };
        let headers = (0..m.ncols().min(TABLE_COLUMNS))
            .map(|j| {
                names
                    .get(j)
                    .cloned()
                    .unwrap_or_else(|| format!("noise {}", j + 1 - names.len()))
            })
            .collect();
        Self {
            title: title.to_owned(),
            seen_by: seen_by.to_owned(),
            rows: m.nrows(),
            cols: m.ncols(),
            headers,
            table: block(TABLE_ROWS, TABLE_COLUMNS),
            heat: block(HEATMAP_SIZE, HEATMAP_SIZE),
        }
    }
}

/// The Appendix A attack on one binary column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttackView {
    /// The binary column looked for.
    pub column: String,
    /// Participants in the attacked cohort.
    pub n: usize,
    /// `rank(XB)`.
    pub rank: usize,
    /// Linear constraints `n − rank`.
    pub constraints: usize,
    /// Surviving candidates (`None`: all `2ⁿ`).
    pub candidates: Option<usize>,
    /// The first few candidates.
    pub listed: Vec<Vec<u8>>,
    /// The true column (the classroom knows it).
    pub truth: Vec<u8>,
    /// Whether the truth survived (it always should).
    pub truth_is_candidate: bool,
    /// The column recovered exactly, when only one non-constant candidate survived.
    pub recovered: Option<Vec<u8>>,
}

/// The provider and one participant collude: `X₁ = (XB)·B⁻¹[:, :p₁]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollusionView {
    /// The first rows recovered.
    pub recovered: Vec<Vec<f64>>,
    /// The same rows of the raw data.
    pub original: Vec<Vec<f64>>,
    /// Largest |recovered − raw| over the whole first cohort.
    pub max_error: f64,
}

/// Seed 003 Table 6: a 2×2 table in vector form (from the release) and in the usual form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table6 {
    /// Row factor (Group).
    pub rows: String,
    /// Column factor (MIF).
    pub columns: String,
    /// `V₁ᵀV₂`, `V₁ᵀV₁`, `V₂ᵀV₂`, `n` from the masked columns.
    pub vector: [f64; 4],
    /// Counts from the masked release (rows 1, 0; columns 1, 0).
    pub from_release: Vec<Vec<f64>>,
    /// Counts from the raw data.
    pub from_raw: Vec<Vec<f64>>,
}

/// The live condition (3.7) indicator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Condition37 {
    /// Whether σ meets the Appendix C bound and (3.5) held in every cohort of this run.
    pub holds: bool,
    /// The explanation with numbers.
    pub text: String,
    /// Appendix C: smallest σ.
    pub sigma_min: Option<f64>,
    /// Appendix C: bound on Pr[(3.5) fails].
    pub failure_probability: Option<f64>,
    /// This run's smallest margin λ_min(X₂X₂ᵀ)/λ_max(X₁X₁ᵀ).
    pub margin: Option<f64>,
}

/// Everything the classroom shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassroomResult {
    /// The parameters run.
    pub params: ClassroomParams,
    /// Participants.
    pub n: usize,
    /// `p₁` (answers and QA).
    pub p1: usize,
    /// `p₂`.
    pub p2: usize,
    /// Participants per cohort.
    pub cohort_sizes: Vec<usize>,
    /// Names of the `p₁` data columns.
    pub headers: Vec<String>,
    /// Participant 1's answers and QA constant (what only their device knows).
    pub participant_row: Vec<f64>,
    /// Participant 1's upload `x·B` (first entries).
    pub participant_upload: Vec<f64>,
    /// `X`, `XB`, `A₂X₁`, `A₁A₂X₁`.
    pub views: Vec<MatrixView>,
    /// `B` itself when small (the paper's `B₁` of eq. (1)).
    pub right_mask: Option<MatrixView>,
    /// Design problems this run ignored (teaching mode).
    pub warnings: Vec<String>,
    /// Condition (3.7).
    pub condition: Condition37,
    /// The attack, when `p < n`.
    pub attack: Vec<AttackView>,
    /// Why the attack was not run or failed.
    pub attack_note: String,
    /// Provider + participant collusion (or the text of why not, as the page shows it).
    pub collusion: Result<CollusionView, String>,
    /// Figure 2: original and released panels (or the text of why not).
    pub figure2: Vec<Result<ScatterPanel, String>>,
    /// Table 6 (or the text of why not).
    pub table6: Result<Table6, String>,
    /// The release as CSV (round-trip precision), for the analyst view.
    pub release_csv: String,
    /// Why a release has no residual plots: a skewed survey's raw and released Q–Q plots, masked
    /// with this run's collector key (or the text of why not).
    pub residual_lesson: Result<ResidualLesson, String>,
}

/// The answer columns of Table 2 and the raw matrix of `n` participants: the 20 records first,
/// then records resampled from them with jitter on the continuous answers (Δ ± N(0, 0.05²),
/// age ± N(0, 3²), BBS ± N(0, 2²), ADL ± N(0, 2.5²), rounded and clipped to their ranges),
/// drawn from the participants' key so a run is reproducible.
///
/// # Errors
/// [`ClassroomError::NoParticipants`] when `n` is zero.
pub fn participants(
    n: usize,
    keys: &PartyKeys,
) -> Result<(Vec<String>, DMatrix<f64>), ClassroomError> {
    let table = parse_table(LEAPS_TABLE2.as_bytes(), "leaps_table2.csv")?;
    let answers = table.headers().len() - 1; // without QA
    let names: Vec<String> = table.headers()[..answers].to_vec();
    let base = table.data().columns(0, answers).into_owned();
    if n == 0 {
        return Err(ClassroomError::NoParticipants);
    }
    let mut raw = DMatrix::zeros(n, answers);
    let mut rng = keys.participants.stream(StreamId::Scratch(20_17)).rng();
    // (column, standard deviation, decimals, low, high)
    let jitter = [
        (2, 0.05, 2, -1.0, 2.0),
        (3, 3.0, 0, 18.0, 100.0),
        (4, 2.0, 0, 0.0, 56.0),
        (7, 2.5, 1, 0.0, 100.0),
    ];
    for i in 0..n {
        if i < base.nrows() {
            raw.row_mut(i).copy_from(&base.row(i));
            continue;
        }
        let source = ((rng.next_unit() * base.nrows() as f64) as usize).min(base.nrows() - 1);
        raw.row_mut(i).copy_from(&base.row(source));
        for (j, sd, decimals, lo, hi) in jitter {
            let scale = 10f64.powi(decimals);
            let v = raw[(i, j)] + sd * standard_normal(&mut rng);
            raw[(i, j)] = ((v * scale).round() / scale).clamp(lo, hi);
        }
    }
    Ok((names, raw))
}

fn design(params: &ClassroomParams, answers: usize) -> Result<Tm2Design, ProtocolError> {
    match params.method {
        ClassroomMethod::Modified => Tm2Design::modified(answers, params.p2, params.sigma),
        ClassroomMethod::Paper => {
            Tm2Design::first_method(answers).map(|d| d.with_generator(Generator::Matlab))
        }
    }
}

fn binary_column(raw: &DMatrix<f64>, j: usize, rows: std::ops::Range<usize>) -> Vec<u8> {
    rows.map(|i| u8::from(raw[(i, j)] > 0.5)).collect()
}

fn attack(
    uploads: &DMatrix<f64>,
    raw: &DMatrix<f64>,
    names: &[String],
    first_cohort: usize,
) -> (Vec<AttackView>, String) {
    let block = uploads.rows(0, first_cohort).into_owned();
    let mut views = Vec::new();
    for column in ["IH", "MIF"] {
        let Some(j) = names.iter().position(|n| n == column) else {
            continue;
        };
        let truth = binary_column(raw, j, 0..first_cohort);
        match appendix_a_attack(&block, BINARY_FULL_PRECISION, ATTACK_BUDGET) {
            Ok(outcome) => {
                let (candidates, listed) = match &outcome.consistent {
                    Consistent::All { .. } => (None, Vec::new()),
                    Consistent::Listed(list) => {
                        (Some(list.len()), list.iter().take(8).cloned().collect())
                    }
                };
                views.push(AttackView {
                    column: column.to_owned(),
                    n: outcome.rows,
                    rank: outcome.rank,
                    constraints: outcome.constraints,
                    candidates,
                    listed,
                    truth_is_candidate: outcome.is_candidate(&truth),
                    recovered: outcome.recovered().map(<[u8]>::to_vec),
                    truth,
                });
            }
            Err(e) => return (views, format!("the attack stopped: {e}")),
        }
    }
    (views, String::new())
}

fn table6(
    raw: &DMatrix<f64>,
    release: &DMatrix<f64>,
    names: &[String],
) -> Result<Table6, ClassroomError> {
    let index = |name: &str| {
        names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| ClassroomError::NoColumn(name.to_owned()))
    };
    let (g, m) = (index("Group")?, index("MIF")?);
    let column = |d: &DMatrix<f64>, j: usize| -> Vec<f64> { d.column(j).iter().copied().collect() };
    let masked = ContingencyTable::from_binary_columns(
        "Group",
        &column(release, g),
        "MIF",
        &column(release, m),
    )?;
    let usual =
        ContingencyTable::from_binary_columns("Group", &column(raw, g), "MIF", &column(raw, m))?;
    let c = masked.counts();
    Ok(Table6 {
        rows: "Group".into(),
        columns: "MIF".into(),
        vector: [
            c[(0, 0)],
            masked.row_totals()[0],
            masked.column_totals()[0],
            masked.n() as f64,
        ],
        from_release: masked.rows(),
        from_raw: usual.rows(),
    })
}

/// Run the classroom. `progress` receives fractions in `[0, 1]` and a stage name.
///
/// # Errors
/// [`ClassroomError`] for parameters that cannot run at all (no participants, invalid σ, a real
/// key in paper mode); unsafe but valid designs run with warnings.
pub fn run_classroom(
    params: &ClassroomParams,
    progress: &mut dyn FnMut(f64, &str),
) -> Result<ClassroomResult, ClassroomError> {
    let mut params = params.clone();
    if params.method == ClassroomMethod::Paper {
        params.n = 20;
        params.p2 = 0;
        params.cohort_size = 0;
        if !matches!(params.keys, KeyChoice::Teaching(_)) {
            return Err(ClassroomError::PaperNeedsTeachingKeys);
        }
    }
    let keys = params.keys.party_keys()?;
    progress(0.05, "simulating participants");
    let (names, raw) = participants(params.n, &keys)?;
    let design = design(&params, names.len())?;
    let cohort = if params.cohort_size == 0 {
        params.n
    } else {
        params.cohort_size
    };
    // Condition (3.5) concerns the masked answers only (the QA column cancels).
    let x_max = raw.amax();
    progress(0.15, "running the protocol");
    let run = run_tm2(
        &raw,
        &design,
        &keys,
        Some(cohort),
        Safety {
            x_max,
            delta: APPENDIX_C_DELTA,
            strictness: Strictness::WarnOnly,
        },
        params.method == ClassroomMethod::Modified,
    )?;
    progress(0.55, "the collector's view");
    let mut headers = names.clone();
    headers.push("QA".into());
    let x1 = raw
        .clone()
        .insert_column(names.len(), design.qa_constant().unwrap_or(0.0));
    let collector = DataCollector::new(keys.collector.clone(), design.clone())?;
    let first = run.cohort_sizes[0];
    let a2x1 = collector
        .unmask_cohort(0, &run.provider_to_collector.rows(0, first).into_owned())?
        .data;
    let release = &run.release.data;
    let mut views = vec![
        MatrixView::new(
            "X₁ (raw answers)",
            "each participant knows only their own row",
            &x1,
            &headers,
        ),
        MatrixView::new(
            "XB (uploads)",
            "the masking service provider",
            &run.uploads,
            &headers,
        ),
        MatrixView::new(
            "A₂X₁ (cohort 1 after removing B)",
            "the data collector",
            &a2x1,
            &headers,
        ),
        MatrixView::new(
            "A₁A₂X₁ (the release)",
            "everybody, including the public",
            release,
            &headers,
        ),
    ];
    views[1].headers = (0..run.uploads.ncols().min(TABLE_COLUMNS))
        .map(|j| format!("col {}", j + 1))
        .collect();
    let b = right_mask_from_device_key(&design, &collector.device_key(0), 0)?;
    let right_mask = (design.p() <= 12).then(|| {
        let dense = b.to_dense();
        let labels: Vec<String> = (1..=design.p()).map(|j| format!("c{j}")).collect();
        MatrixView::new(
            "B (the right mask)",
            "the collector and every participant's device",
            &dense,
            &labels,
        )
    });

    progress(0.65, "condition (3.7)");
    let bound = run.design_report.noise_bound.clone();
    let condition = {
        let margin = run.margin;
        let sigma_ok = bound
            .as_ref()
            .is_some_and(|b| design.sigma() >= b.sigma_min);
        let margin_ok = margin.is_some_and(|m| m > 1.0);
        let text = match (&bound, margin) {
            (Some(b), Some(m)) => format!(
                "σ = {} {} the Appendix C bound {} (so Pr[(3.5) fails] ≤ {}); in this run λmin(X₂X₂ᵀ)/λmax(X₁X₁ᵀ) = {} {} 1 in the worst cohort",
                super::format::sig(design.sigma(), 5),
                if sigma_ok { "≥" } else { "<" },
                super::format::sig(b.sigma_min, 5),
                super::format::sig(b.failure_probability, 3),
                super::format::sig(m, 4),
                if margin_ok { ">" } else { "≤" },
            ),
            _ if design.p2() == 0 => {
                "no noise columns: condition (3.7) cannot hold (p₂ = 0)".to_owned()
            }
            _ => format!(
                "the Appendix C bound needs more noise columns than participants per cohort (p₂ = {} ≤ n = {cohort})",
                design.p2()
            ),
        };
        Condition37 {
            holds: sigma_ok && margin_ok,
            text,
            sigma_min: bound.as_ref().map(|b| b.sigma_min),
            failure_probability: bound.as_ref().map(|b| b.failure_probability),
            margin,
        }
    };

    progress(0.7, "the Appendix A attack");
    let (attack, attack_note) = if design.p() < first {
        attack(&run.uploads, &raw, &names, first)
    } else {
        (
            Vec::new(),
            format!(
                "p = {} ≥ n = {first}: the provider's view has full row rank, no row is a combination of the others, and all 2^{first} binary columns stay possible — the attack learns nothing",
                design.p()
            ),
        )
    };

    progress(0.8, "collusion");
    let collusion = b
        .unmask_leading(&run.uploads.rows(0, first).into_owned(), design.p1())
        .map(|recovered| {
            let truth = x1.rows(0, first);
            let max_error = (&recovered - truth).amax();
            let take = |m: &DMatrix<f64>| -> Vec<Vec<f64>> {
                (0..m.nrows().min(5))
                    .map(|i| m.row(i).iter().copied().collect())
                    .collect()
            };
            CollusionView {
                recovered: take(&recovered),
                original: take(&truth.into_owned()),
                max_error,
            }
        });
    let collusion = shown(collusion);

    progress(0.9, "Figure 2 and Table 6");
    let panel = |name: &str, title: &str, m: &DMatrix<f64>| {
        let table = Table::new(name, headers.clone(), m.clone()).map_err(ClassroomError::from)?;
        Ok::<_, ClassroomError>(scatter_panel(title, &table, &params.y, &params.x)?)
    };
    let figure2 = vec![
        shown(panel("original", "Original data X", &x1)),
        shown(panel("release", "Masked release A₁A₂X₁", release)),
    ];
    let residual_lesson = residual_lesson(&keys.collector);
    let table6 = shown(table6(&x1, release, &headers));
    let release_csv = orthomask_formats::csv::write_table(
        &headers,
        release,
        orthomask_formats::csv::Precision::RoundTrip,
    );
    progress(1.0, "done");
    Ok(ClassroomResult {
        n: params.n,
        p1: design.p1(),
        p2: design.p2(),
        cohort_sizes: run.cohort_sizes.clone(),
        participant_row: x1.row(0).iter().copied().collect(),
        participant_upload: run
            .uploads
            .row(0)
            .iter()
            .take(TABLE_COLUMNS)
            .copied()
            .collect(),
        headers,
        views,
        right_mask,
        warnings: run.design_report.overridden.clone(),
        condition,
        attack,
        attack_note,
        collusion,
        figure2,
        table6,
        residual_lesson,
        release_csv,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_core::tolerance::{
        PRINTED_HAIR_BELOW_ONE, PRINTED_HAIR_HUNDREDS, QA_RELATIVE, RECOVERED,
    };
    use orthomask_stats::tolerance::RELEASE_REGRESSION_RELATIVE;
    use orthomask_survey::tolerance::PLAN_SIGMA_ABOVE_MINIMUM;

    const TABLE3: &str = include_str!("../../data/paper/leaps_table3_xb1.csv");
    const B1: &str = include_str!("../../data/paper/b1_eq1.csv");

    fn defaults() -> ClassroomParams {
        default_params().unwrap()
    }

    /// The default design is the plan's for one cohort of 20, 8 masked answers and `x_max` = 100:
    /// p₂ = 503 and σ just above σ_min = √(8·100²/((√(503/20) − 1)²·0.5)) ≈ 99.7. The sample
    /// survey was planned when the QA constant 888 was counted in `x_max` (σ = 938.36); more
    /// noise is still safe, so its σ stays valid and at least the plan's.
    #[test]
    fn the_default_design_is_the_plans() {
        let p = ClassroomParams::default();
        assert_eq!(p.p2, 503);
        let gamma: f64 = 503.0 / 20.0;
        let by_hand = (8.0 * 100.0f64.powi(2) / ((gamma.sqrt() - 1.0).powi(2) * 0.5)).sqrt();
        assert!(
            p.sigma > by_hand && p.sigma < by_hand * (1.0 + PLAN_SIGMA_ABOVE_MINIMUM),
            "{}",
            p.sigma
        );
        let sample = orthomask_survey::definition::SurveyDefinition::parse(
            include_str!("../../www/surveys/leaps-demo.json"),
            "leaps-demo.json",
        )
        .unwrap();
        assert_eq!(sample.masking.p2, p.p2);
        assert!(p.sigma <= sample.masking.sigma);
    }

    fn paper() -> ClassroomResult {
        let params = ClassroomParams {
            method: ClassroomMethod::Paper,
            ..defaults()
        };
        run_classroom(&params, &mut |_, _| {}).unwrap()
    }

    /// Seed 003 eq. (1) and Table 3: the paper mode's `B₁` and `XB₁` are the printed ones (to
    /// the printed four and two decimals).
    #[test]
    fn paper_mode_reproduces_equation_1_and_table_3() {
        let r = paper();
        let b1 = parse_table(B1.as_bytes(), "b1").unwrap();
        let shown = r.right_mask.as_ref().unwrap();
        for i in 0..9 {
            for j in 0..9 {
                assert!(
                    (shown.table[i][j.min(TABLE_COLUMNS - 1)]
                        - b1.data()[(i, j.min(TABLE_COLUMNS - 1))])
                        .abs()
                        <= 0.000_05 + PRINTED_HAIR_BELOW_ONE
                );
            }
        }
        let t3 = parse_table(TABLE3.as_bytes(), "t3").unwrap();
        let xb = &r.views[1];
        for i in 0..TABLE_ROWS {
            for j in 0..9 {
                assert!(
                    (xb.table[i][j] - t3.data()[(i, j)]).abs() <= 0.005 + PRINTED_HAIR_HUNDREDS,
                    "({i},{j})"
                );
            }
        }
        assert!(!r.warnings.is_empty(), "p = 9 < n = 20 must be reported");
    }

    /// Seed 000 Appendix A on the paper's design: `p < n`, the truth survives among few
    /// candidates; the collusion returns the raw data; Table 6 is 6, 6 / 3, 5 both ways.
    #[test]
    fn paper_mode_attack_collusion_and_table_6() {
        let r = paper();
        assert_eq!(r.attack.len(), 2);
        for a in &r.attack {
            assert!(a.truth_is_candidate);
            assert_eq!(a.constraints, 11);
            assert!(a.candidates.unwrap() < 1 << 20);
        }
        let c = r.collusion.as_ref().unwrap();
        assert!(c.max_error < RECOVERED, "{}", c.max_error);
        let t = r.table6.as_ref().unwrap();
        assert_eq!(t.from_release, vec![vec![6.0, 6.0], vec![3.0, 5.0]]);
        assert_eq!(t.from_raw, t.from_release);
        assert_eq!(t.vector, [6.0, 12.0, 9.0, 20.0]);
    }

    /// The default modified design: condition (3.7) holds, nothing to attack, Figure 2's lines
    /// agree to rounding, the release keeps the QA column at 888.
    #[test]
    fn modified_default_is_safe_and_preserves_the_fit() {
        let r = run_classroom(&defaults(), &mut |_, _| {}).unwrap();
        assert!(r.condition.holds, "{}", r.condition.text);
        assert!(r.attack.is_empty());
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        let (o, m) = (
            r.figure2[0].as_ref().unwrap(),
            r.figure2[1].as_ref().unwrap(),
        );
        assert!((o.slope - m.slope).abs() < RELEASE_REGRESSION_RELATIVE * o.slope.abs());
        assert!(
            (o.intercept - m.intercept).abs() < RELEASE_REGRESSION_RELATIVE * o.intercept.abs()
        );
        assert_eq!(r.views[1].cols, 8 + 1 + 503);
        let release = parse_table(r.release_csv.as_bytes(), "r").unwrap();
        assert!(
            release
                .data()
                .column(8)
                .iter()
                .all(|v| (v - 888.0).abs() < QA_RELATIVE)
        );
    }

    /// With too few noise columns the design is unsafe: warnings, the indicator turns off, the
    /// attack runs; larger n adds resampled participants reproducibly.
    #[test]
    fn unsafe_and_larger_designs() {
        let params = ClassroomParams {
            p2: 5,
            sigma: 100.0,
            ..defaults()
        };
        let r = run_classroom(&params, &mut |_, _| {}).unwrap();
        assert!(!r.condition.holds);
        assert!(!r.warnings.is_empty());
        assert_eq!(r.attack.len(), 2);
        assert!(r.attack.iter().all(|a| a.truth_is_candidate));
        let big = ClassroomParams {
            n: 60,
            cohort_size: 30,
            p2: 60,
            sigma: 4000.0,
            ..defaults()
        };
        let a = run_classroom(&big, &mut |_, _| {}).unwrap();
        let b = run_classroom(&big, &mut |_, _| {}).unwrap();
        assert_eq!(a.cohort_sizes, vec![30, 30]);
        assert_eq!(a.release_csv, b.release_csv);
        assert!(run_classroom(&ClassroomParams { n: 0, ..defaults() }, &mut |_, _| {}).is_err());
    }
}
