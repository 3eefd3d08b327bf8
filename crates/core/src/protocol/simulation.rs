//! Every party of a protocol in one process: what `orthomask pipeline` and the classroom run.
//!
//! The functions here only wire the party types of [`tm2`](super::tm2), [`second`](super::second)
//! and [`collusion`](super::collusion) together; each party still sees only its own inputs. The
//! simulation additionally knows the padding noise, which lets it report the condition (3.5)
//! margin that no real party can compute.

use super::collusion::{LeftProvider, RightProvider, check_extension, split_into_shares};
use super::design::{
    DesignParameters, DesignReport, Strictness, check_design, condition_3_5_margin,
};
use super::qa::{QaReport, max_row_norm};
use super::second::{
    SecondCollector, SecondDesign, SecondParticipant, SecondProvider, SecondUpload,
};
use super::share_handover::{
    FixedMatrix, combine_parts, masked_part, masks_parts, ring_seed, unmasker_of,
};
use super::tm2::{
    DataCollector, MaskingServiceProvider, Participant, Release, RightMaskKind, Tm2Design,
    UnmaskedCohort,
};
use super::{ProtocolError, require_finite};
use crate::key::{Key, StreamId};
use crate::linalg::parallel;
use crate::mask::Mask;
use nalgebra::DMatrix;

/// The keys of a simulated survey, one per party.
#[derive(Clone, Debug)]
pub struct PartyKeys {
    /// The collector's key (right masks `B_k`, left mask `A₁`).
    pub collector: Key,
    /// The masking service provider's key (`A₂,k`).
    pub provider: Key,
    /// Simulated participants' noise (each participant reads its own stream).
    pub participants: Key,
}

impl PartyKeys {
    /// Fresh production keys from 3 × 256 bits of operating-system entropy read by the caller,
    /// in the order collector, provider, participants (see [`Key::from_entropy`]).
    pub fn from_entropy(entropy: [[u8; 32]; 3]) -> Self {
        let [collector, provider, participants] = entropy.map(Key::from_entropy);
        Self {
            collector,
            provider,
            participants,
        }
    }

    /// Teaching keys `number`, `number + 1`, `number + 2` (535, 536, 537 reproduce the roles of
    /// seed 003 §3.2: `B₁` from 535, `A₂` from 536, and in MATLAB mode `A₁` from 535 + 2 = 537).
    pub fn teaching(number: u64) -> Self {
        Self {
            collector: Key::teaching(number),
            provider: Key::teaching(number + 1),
            participants: Key::teaching(number + 2),
        }
    }

    /// Whether any key is a guessable teaching key.
    pub fn any_teaching(&self) -> bool {
        self.collector.is_teaching()
            || self.provider.is_teaching()
            || self.participants.is_teaching()
    }
}

/// Split `n` participants into cohorts of at most `m`, as even as possible (sizes differ by at
/// most one), so the smallest cohort is as large as it can be.
///
/// # Errors
/// [`ProtocolError::InvalidParameter`] for `m = 0` or `n = 0`.
pub fn cohort_sizes(n: usize, m: usize) -> Result<Vec<usize>, ProtocolError> {
    if m == 0 || n == 0 {
        return Err(ProtocolError::InvalidParameter {
            what: format!("cannot split {n} participants into cohorts of {m}"),
        });
    }
    let count = n.div_ceil(m);
    let (base, extra) = (n / count, n % count);
    Ok((0..count).map(|k| base + usize::from(k < extra)).collect())
}

/// The safety inputs of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Safety {
    /// Largest absolute value of a masked answer on the padded record's scale (1 when the design
    /// scales by declared ranges; DP allowance included): the `x_max` of condition (3.5).
    pub x_max: f64,
    /// The δ of Appendix C.
    pub delta: f64,
    /// Refuse or, in teaching mode, only warn.
    pub strictness: Strictness,
}

/// Everything a modified / first-method run produced.
#[derive(Clone, Debug)]
pub struct Tm2Run {
    /// `x·B_k` of every participant, in participant order (`n × p`).
    pub uploads: DMatrix<f64>,
    /// `A₂,k X_k B_k` of every cohort, stacked (`n × p`).
    pub provider_to_collector: DMatrix<f64>,
    /// The collector's release.
    pub release: Release,
    /// Participants per cohort.
    pub cohort_sizes: Vec<usize>,
    /// The design check.
    pub design_report: DesignReport,
    /// Smallest condition (3.5) margin `λ_min(X₂X₂ᵀ)/λ_max(X₁X₁ᵀ)` over cohorts (when asked for
    /// and the design pads with noise).
    pub margin: Option<f64>,
}

/// Run the modified TM² or the first method on `raw` (`n × answers`), keeping every party's view.
///
/// This is [`run_tm2_streaming`] with an observer that copies each cohort's uploads and the
/// provider's output into the two `n × p` matrices of [`Tm2Run`] (what `orthomask pipeline`
/// writes out). Surveys too large to hold those views use [`run_tm2_streaming`] directly.
///
/// # Errors
/// Design refusals, malformed data, QA failures and mask errors.
pub fn run_tm2(
    raw: &DMatrix<f64>,
    design: &Tm2Design,
    keys: &PartyKeys,
    cohort_size: Option<usize>,
    safety: Safety,
    compute_margin: bool,
) -> Result<Tm2Run, ProtocolError> {
    let n = raw.nrows();
    let mut uploads = DMatrix::zeros(n, design.p());
    let mut provider_to_collector = DMatrix::zeros(n, design.p());
    let summary = run_tm2_streaming(
        raw,
        design,
        keys,
        cohort_size,
        safety,
        compute_margin,
        &mut |exchange| {
            let (start, size) = (exchange.first_participant, exchange.uploads.nrows());
            uploads.rows_mut(start, size).copy_from(exchange.uploads);
            provider_to_collector
                .rows_mut(start, size)
                .copy_from(exchange.provider_to_collector);
        },
    )?;
    Ok(Tm2Run {
        uploads,
        provider_to_collector,
        release: summary.release,
        cohort_sizes: summary.cohort_sizes,
        design_report: summary.design_report,
        margin: summary.margin,
    })
}

/// What one cohort exchanged, shown to the observer of [`run_tm2_streaming`] once the cohort is
/// done and then dropped.
#[derive(Clone, Copy, Debug)]
pub struct CohortExchange<'a> {
    /// Cohort index `k`.
    pub cohort: u32,
    /// Global index of the cohort's first participant.
    pub first_participant: usize,
    /// `X_k B_k`: what the cohort's devices uploaded (`n_k × p`).
    pub uploads: &'a DMatrix<f64>,
    /// `A₂,k X_k B_k`: what the provider passed to the collector (`n_k × p`).
    pub provider_to_collector: &'a DMatrix<f64>,
}

/// Everything a streamed run produced besides the per-cohort exchanges.
#[derive(Clone, Debug)]
pub struct Tm2Summary {
    /// The collector's release.
    pub release: Release,
    /// Participants per cohort.
    pub cohort_sizes: Vec<usize>,
    /// The design check.
    pub design_report: DesignReport,
    /// Smallest condition (3.5) margin over cohorts (when asked for and the design pads).
    pub margin: Option<f64>,
}

/// One cohort's part of a run: devices pad and mask, the provider masks, the collector unmasks.
struct CohortOutcome {
    uploads: DMatrix<f64>,
    provider_to_collector: DMatrix<f64>,
    unmasked: UnmaskedCohort,
    margin: Option<f64>,
}

/// Run the modified TM² or the first method on `raw` (`n × answers`), handing each cohort's
/// exchanged matrices to `observe` (in cohort order) instead of keeping them.
///
/// This is [`run_tm2_cohorts`] with `raw` cut into cohorts of at most `cohort_size` records
/// (sizes as even as possible, [`cohort_sizes`]; `None`: one cohort of everybody).
///
/// # Errors
/// Design refusals, malformed data, QA failures and mask errors (the first failing cohort's).
pub fn run_tm2_streaming(
    raw: &DMatrix<f64>,
    design: &Tm2Design,
    keys: &PartyKeys,
    cohort_size: Option<usize>,
    safety: Safety,
    compute_margin: bool,
    observe: &mut dyn FnMut(CohortExchange<'_>),
) -> Result<Tm2Summary, ProtocolError> {
    if raw.ncols() != design.answers() {
        return Err(ProtocolError::Shape {
            what: "answer columns",
            expected: design.answers(),
            found: raw.ncols(),
        });
    }
    require_finite(raw)?;
    let sizes = cohort_sizes(raw.nrows(), cohort_size.unwrap_or(raw.nrows()))?;
    let blocks = starts_of(&sizes)
        .into_iter()
        .zip(sizes.clone())
        .map(|(start, size)| Ok(raw.rows(start, size).into_owned()));
    run_tm2_cohorts(
        blocks,
        &sizes,
        design,
        keys,
        safety,
        compute_margin,
        &mut |exchange| {
            observe(exchange);
            Ok(())
        },
    )
}

/// The index of each cohort's first participant.
fn starts_of(sizes: &[usize]) -> Vec<usize> {
    sizes
        .iter()
        .scan(0, |next, &size| {
            let start = *next;
            *next += size;
            Some(start)
        })
        .collect()
}

/// Run the modified TM² or the first method on answers that arrive cohort by cohort: `cohorts`
/// yields each cohort's `sizes[k] × answers` block in order (a file read as it goes, or a
/// matrix cut into blocks), and `observe` sees each cohort's exchanged matrices, in order, once
/// the cohort is done. Errors of either (a malformed file, a full disk, an interruption) stop
/// the run: nothing more is read and the error is returned.
///
/// Memory is `O(n·p₁)` for the release plus `O(n_k·p)` per cohort in flight (at most two per
/// core): nothing `n × n`, `p × p` or `n × p` is held (the optional condition (3.5) margin,
/// `compute_margin`, a simulation-only diagnostic, holds a Lanczos basis of at most `n_k × 192`
/// per cohort; see [`condition_3_5_margin`]). Natively, cohorts are processed in parallel, one
/// per core; a single cohort instead spreads its blocked products over the cores. The results
/// are bit-identical whatever the number of cores: every cohort reads its own key sub-streams
/// and the kernels split work at boundaries fixed by the problem (`crate::linalg::parallel`).
///
/// # Errors
/// Design refusals, malformed data, QA failures and mask errors (the first failing cohort's),
/// and the source's or the observer's own errors.
pub fn run_tm2_cohorts<E: From<ProtocolError> + Send>(
    cohorts: impl Iterator<Item = Result<DMatrix<f64>, E>> + Send,
    sizes: &[usize],
    design: &Tm2Design,
    keys: &PartyKeys,
    safety: Safety,
    compute_margin: bool,
    observe: &mut dyn FnMut(CohortExchange<'_>) -> Result<(), E>,
) -> Result<Tm2Summary, E> {
    if sizes.is_empty() || sizes.contains(&0) {
        return Err(ProtocolError::InvalidParameter {
            what: format!("cohort sizes {sizes:?}: every cohort needs a participant"),
        }
        .into());
    }
    let design_report = check_design(
        &DesignParameters {
            smallest_cohort: sizes.iter().copied().min().unwrap_or(0),
            largest_cohort: sizes.iter().copied().max().unwrap_or(0),
            p1: design.p1(),
            masked_columns: design.masked_columns(),
            p2: design.p2(),
            sigma: design.sigma(),
            x_max: safety.x_max,
            delta: safety.delta,
            orthogonal_right_mask: design.right_mask_kind() == RightMaskKind::Haar,
        },
        safety.strictness,
    )
    .map_err(ProtocolError::from)?;
    u32::try_from(sizes.len()).map_err(|_| ProtocolError::InvalidParameter {
        what: "too many cohorts".into(),
    })?;

    let collector = DataCollector::new(keys.collector.clone(), design.clone())?;
    let provider = MaskingServiceProvider::new(keys.provider.clone(), design.clone());
    let starts = starts_of(sizes);
    let run_cohort = |k: usize, raw: DMatrix<f64>| -> Result<CohortOutcome, ProtocolError> {
        // `k` fits in u32: checked above.
        let cohort = k as u32;
        let (start, size) = (starts[k], sizes[k]);
        if raw.shape() != (size, design.answers()) {
            return Err(ProtocolError::Shape {
                what: "a cohort's answers (rows × columns)",
                expected: size * design.answers(),
                found: raw.len(),
            });
        }
        let b = collector.right_mask(cohort)?;
        let device = Participant::new(design, &b)?;
        // Each device pads its own record; the block product below equals masking row by row.
        let mut padded = DMatrix::zeros(size, design.p());
        for i in 0..size {
            let participant = (start + i) as u64;
            let answers: Vec<f64> = raw.row(i).iter().copied().collect();
            let mut noise = keys
                .participants
                .stream(StreamId::ParticipantNoise { participant })
                .rng();
            let x = device
                .pad(&answers, &mut noise)
                .map_err(|e| renumber(e, start + i))?;
            padded.row_mut(i).copy_from_slice(&x);
        }
        let margin = if compute_margin && design.p2() > 0 {
            // The masked answers only: the QA and kept columns cancel from condition (3.5)
            // (design.rs, "Masks that keep columns fixed").
            let masked: Vec<usize> = (0..design.answers())
                .filter(|j| !design.kept().contains(j))
                .collect();
            let x1 = padded.select_columns(&masked);
            let x2 = padded.columns(design.p1(), design.p2()).into_owned();
            condition_3_5_margin(&x1, &x2)
        } else {
            None
        };
        let mut uploads = padded;
        b.right_apply(&mut uploads)?;
        let provider_to_collector = provider.mask_cohort(cohort, &uploads)?;
        let unmasked = collector.unmask_cohort(cohort, &provider_to_collector)?;
        Ok(CohortOutcome {
            uploads,
            provider_to_collector,
            unmasked,
            margin,
        })
    };

    // The collector's cohorts, stacked as they arrive: one `n × p₁` matrix is all the run keeps.
    let n: usize = sizes.iter().sum();
    let mut stacked = DMatrix::zeros(n, design.p1());
    let mut qa = Vec::new();
    let mut done = 0;
    let mut margin: Option<f64> = None;
    let mut first_error: Option<E> = None;
    // Cohorts are independent until the release: the other cores run the next cohorts while this
    // thread hands finished ones to the observer, in order, with at most two cohorts per core in
    // flight (so no core waits for the observer and the source is read at most that far ahead).
    // A single cohort runs on this thread and spreads its blocked products over the cores.
    parallel::pipeline_over(
        cohorts.take(sizes.len()),
        2 * parallel::workers(),
        |k, raw: Result<DMatrix<f64>, E>| raw.and_then(|raw| run_cohort(k, raw).map_err(E::from)),
        |outcome| {
            let outcome = match outcome {
                Ok(outcome) => outcome,
                Err(e) => {
                    first_error = Some(e);
                    return false;
                }
            };
            let k = done;
            if let Err(e) = observe(CohortExchange {
                cohort: k as u32,
                first_participant: starts[k],
                uploads: &outcome.uploads,
                provider_to_collector: &outcome.provider_to_collector,
            }) {
                first_error = Some(e);
                return false;
            }
            if let Some(m) = outcome.margin {
                margin = Some(margin.map_or(m, |old: f64| old.min(m)));
            }
            stacked
                .rows_mut(starts[k], sizes[k])
                .copy_from(&outcome.unmasked.data);
            qa.extend(outcome.unmasked.qa);
            done += 1;
            true
        },
    );
    if let Some(e) = first_error {
        return Err(e);
    }
    if done != sizes.len() {
        return Err(ProtocolError::Shape {
            what: "cohorts supplied",
            expected: sizes.len(),
            found: done,
        }
        .into());
    }
    let release = collector.release_stacked(stacked, qa)?;
    Ok(Tm2Summary {
        release,
        cohort_sizes: sizes.to_vec(),
        design_report,
        margin,
    })
}

/// Bytes a [`run_tm2_cohorts`] run is expected to hold at its peak, for cohorts of `sizes`,
/// records of `p` values of which the collector keeps `p1`, and `workers` threads.
///
/// Each cohort in flight holds its padded records, the provider's output and the kernels'
/// blocked workspace: measured at about `4·8·m·p` bytes for one cohort of `m` (peak resident set
/// of `orthomask pipeline` over its input: 4.1× `8·m·p` at m = 3 000, p = 5 295, and 4.3× at
/// the 20 190 records of statsmodels' `randhie`), with at most `2·workers` cohorts in flight
/// (and the one being handed over). The release adds three `n × p₁` matrices (the unmasked
/// cohorts, the orbit sample and its work space). An estimate for refusing what cannot fit, not a
/// bound.
pub fn estimated_peak_bytes(sizes: &[usize], p: usize, p1: usize, workers: usize) -> f64 {
    const BYTES: f64 = 8.0;
    const COPIES_PER_COHORT: f64 = 4.0;
    const RELEASE_COPIES: f64 = 3.0;
    let largest = sizes.iter().copied().max().unwrap_or(0) as f64;
    let in_flight = sizes.len().min(2 * workers.max(1) + 1) as f64;
    let n: usize = sizes.iter().sum();
    in_flight * COPIES_PER_COHORT * BYTES * largest * p as f64
        + RELEASE_COPIES * BYTES * (n * p1) as f64
}

/// Give a per-record error the participant's global index.
fn renumber(error: ProtocolError, record: usize) -> ProtocolError {
    match error {
        ProtocolError::RecordLength {
            expected, found, ..
        } => ProtocolError::RecordLength {
            record,
            expected,
            found,
        },
        ProtocolError::NonFinite { column, value, .. } => ProtocolError::NonFinite {
            record,
            column,
            value,
        },
        other => other,
    }
}

/// Everything a second-method run produced.
#[derive(Clone, Debug)]
pub struct SecondRun {
    /// What each device sent (`kept` values and `A₀x*`).
    pub uploads: Vec<SecondUpload>,
    /// What the provider forwarded (`A₀x*B₁`).
    pub provider_to_collector: Vec<SecondUpload>,
    /// The release `XB₁B₂`.
    pub release: DMatrix<f64>,
    /// The combined release `A₁A₂X`, when asked for.
    pub combined: Option<DMatrix<f64>>,
    /// QA checks, one per record.
    pub qa: Vec<QaReport>,
}

/// Run the second method on `raw` (`n × columns`).
///
/// # Errors
/// Malformed data, QA failures and mask errors.
pub fn run_second(
    raw: &DMatrix<f64>,
    design: &SecondDesign,
    keys: &PartyKeys,
    combined: bool,
) -> Result<SecondRun, ProtocolError> {
    if raw.ncols() != design.columns() {
        return Err(ProtocolError::Shape {
            what: "columns",
            expected: design.columns(),
            found: raw.ncols(),
        });
    }
    require_finite(raw)?;
    let collector = SecondCollector::new(keys.collector.clone(), design.clone())?;
    let provider = SecondProvider::new(keys.provider.clone(), design.clone());
    let a0 = collector.row_mixer()?;
    let device = SecondParticipant::new(design, &a0)?;
    let (mut uploads, mut forwarded, mut qa) = (Vec::new(), Vec::new(), Vec::new());
    let mut xb1 = DMatrix::zeros(raw.nrows(), raw.ncols());
    for i in 0..raw.nrows() {
        let record: Vec<f64> = raw.row(i).iter().copied().collect();
        let mut noise = keys
            .participants
            .stream(StreamId::ParticipantNoise {
                participant: i as u64,
            })
            .rng();
        let upload = device
            .mask_record(&record, &mut noise)
            .map_err(|e| renumber(e, i))?;
        let doubly = provider.mask_upload(&upload)?;
        let (row, report) = collector.unmask_record(&doubly)?;
        xb1.row_mut(i).copy_from_slice(&row);
        qa.extend(report);
        uploads.push(upload);
        forwarded.push(doubly);
    }
    let release = collector.release(&xb1)?;
    let combined = if combined {
        Some(provider.finish_combined(&collector.start_combined(&xb1)?)?)
    } else {
        None
    };
    Ok(SecondRun {
        uploads,
        provider_to_collector: forwarded,
        release,
        combined,
        qa,
    })
}

/// The keys of a simulated collusion-resistant survey, one per party.
#[derive(Clone, Debug)]
pub struct CollusionKeys {
    /// The collector's key: its left mask `A_c` over the release.
    pub collector: Key,
    /// One key per right-masking service (`K₁ ≥ 2`), for its `Bᵢ`.
    pub right: Vec<Key>,
    /// One key per left-masking provider (`K₂ ≥ 1`), for its `A_j`.
    pub left: Vec<Key>,
    /// Simulated participants' padding and shares (each participant reads its own streams).
    pub participants: Key,
}

impl CollusionKeys {
    /// Whether any key is a guessable teaching key.
    pub fn any_teaching(&self) -> bool {
        self.collector.is_teaching()
            || self.participants.is_teaching()
            || self.right.iter().chain(&self.left).any(Key::is_teaching)
    }
}

/// Everything a collusion-resistant run produced.
#[derive(Clone, Debug)]
pub struct CollusionRun {
    /// Share `i` of every participant, as sent to right provider `i` (`n × p` each).
    pub shares: Vec<DMatrix<f64>>,
    /// Each right provider's part as the collector receives it (`n × p₁`, fixed point, with its
    /// cancelling mask when `K₁ ≥ 3`: `share_handover`), by sending provider.
    pub parts: Vec<FixedMatrix>,
    /// The parts' sum decoded: `A X_{p₁}` on the devices' scale, before the collector unscales.
    pub summed: DMatrix<f64>,
    /// What the collector recovers before its own mask: `A X₁` unscaled, QA column last.
    pub combined: DMatrix<f64>,
    /// The release `A_c A X₁` (QA column last): the collector's own mask comes last.
    pub release: DMatrix<f64>,
    /// The collector's QA check.
    pub qa: Option<QaReport>,
    /// The design check (the same as [`run_tm2`]'s).
    pub design_report: DesignReport,
    /// Right-masking providers `K₁`.
    pub right_providers: usize,
    /// Left-masking providers `K₂`.
    pub left_providers: usize,
}

/// Run the collusion-resistant extension (seed 000 §3.5) with one key per party, as the services
/// run it (`super::share_handover`): after the left chain, the provider that unmasks share `i` is
/// the next on the ring (`K₁ ≥ 3`; its own for `K₁ = 2`), with the partial key `Wᵢ`, and adds
/// its cancelling mask; the collector sums the parts modulo `2¹²⁸`.
///
/// The design is checked as [`run_tm2`] checks it — `p₁ < n ≤ p` and σ against the Appendix C
/// bound, refused or (teaching) reported per `safety` — since the paper's stage-one analysis of the
/// extension rests on the same condition (3.5). The right masks are Haar whatever the design's
/// right-mask law, so the bound always applies. The collector sums the services' `A Xⁱ`, checks
/// QA and publishes `A_c · A X₁` through [`DataCollector::release`], as the services do.
///
/// # Errors
/// Design refusals, too few providers, malformed data, QA failures and mask errors.
pub fn run_collusion(
    raw: &DMatrix<f64>,
    design: &Tm2Design,
    keys: &CollusionKeys,
    share_sigma: f64,
    safety: Safety,
) -> Result<CollusionRun, ProtocolError> {
    check_extension(design, keys.right.len(), keys.left.len())?;
    if raw.ncols() != design.answers() {
        return Err(ProtocolError::Shape {
            what: "answer columns",
            expected: design.answers(),
            found: raw.ncols(),
        });
    }
    require_finite(raw)?;
    let n = raw.nrows();
    let design_report = check_design(
        &DesignParameters {
            smallest_cohort: n,
            largest_cohort: n,
            p1: design.p1(),
            masked_columns: design.masked_columns(),
            p2: design.p2(),
            sigma: design.sigma(),
            x_max: safety.x_max,
            delta: safety.delta,
            orthogonal_right_mask: true,
        },
        safety.strictness,
    )?;
    let collector = DataCollector::new(keys.collector.clone(), design.clone())?;
    let k1 = keys.right.len();
    let rights = keys
        .right
        .iter()
        .enumerate()
        .map(|(i, key)| RightProvider::new(key, i as u32, design.p()))
        .collect::<Result<Vec<_>, _>>()?;
    let lefts: Vec<LeftProvider> = keys
        .left
        .iter()
        .enumerate()
        .map(|(j, key)| LeftProvider::new(key.clone(), j as u32))
        .collect();
    let mut share_blocks = vec![DMatrix::zeros(n, design.p()); k1];
    for i in 0..n {
        let answers: Vec<f64> = raw.row(i).iter().copied().collect();
        let participant = i as u64;
        let mut noise = keys
            .participants
            .stream(StreamId::ParticipantNoise { participant })
            .rng();
        let x = design
            .pad(&answers, &mut noise)
            .map_err(|e| renumber(e, i))?;
        let shares = split_into_shares(
            &x,
            design.answers(),
            k1,
            share_sigma,
            &mut keys
                .participants
                .stream(StreamId::Shares { participant })
                .rng(),
        )?;
        for (block, share) in share_blocks.iter_mut().zip(&shares) {
            block.row_mut(i).copy_from_slice(share);
        }
    }
    let q = design.p1();
    let seeds: Vec<Key> = keys.right.iter().map(|k| ring_seed(k, 0)).collect();
    let mut parts: Vec<Option<FixedMatrix>> = vec![None; k1];
    let mut scale = 0.0;
    for (i, (right, shares)) in rights.iter().zip(&share_blocks).enumerate() {
        let mut m = right.mask_shares(shares)?;
        for left in &lefts {
            m = left.mask(&m)?;
        }
        scale += max_row_norm(&m);
        // Service j = u(i) holds only the partial key of Bᵢ handed on to it.
        let j = unmasker_of(i as u32, k1) as usize;
        let y = right.unmasking_key(q)?.unmask_leading(&m)?;
        let (received, own) = if masks_parts(k1) {
            (Some(&seeds[i]), Some(&seeds[j]))
        } else {
            (None, None)
        };
        parts[j] = Some(masked_part(&y, received, own)?);
    }
    let parts: Vec<FixedMatrix> = parts.into_iter().flatten().collect();
    let mut sum = parts[0].clone();
    for part in &parts[1..] {
        sum.wrapping_add(part)?;
    }
    let summed = sum.decode();
    let (data, qa) = combine_parts(design, &parts, scale)?;
    let release = collector.release(&[UnmaskedCohort {
        cohort: 0,
        data: data.clone(),
        qa: qa.clone(),
    }])?;
    Ok(CollusionRun {
        shares: share_blocks,
        parts,
        summed,
        combined: data,
        release: release.data,
        qa,
        design_report,
        right_providers: k1,
        left_providers: lefts.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mask::test_support::test_block;
    use crate::protocol::DesignError;
    use crate::tolerance::{PRESERVED_STATISTICS, ROUND_TRIP};

    fn relative_gram_error(raw: &DMatrix<f64>, released: &DMatrix<f64>) -> f64 {
        let gram = raw.tr_mul(raw);
        (released.tr_mul(released) - &gram).amax() / gram.amax()
    }

    fn safety() -> Safety {
        Safety {
            x_max: 888.0,
            delta: 0.5,
            strictness: Strictness::Refuse,
        }
    }

    #[test]
    fn cohort_sizes_are_even() {
        assert_eq!(cohort_sizes(2000, 250).unwrap(), vec![250; 8]);
        assert_eq!(cohort_sizes(20, 8).unwrap(), vec![7, 7, 6]);
        assert_eq!(cohort_sizes(5, 10).unwrap(), vec![5]);
        assert!(cohort_sizes(0, 3).is_err());
        assert!(cohort_sizes(3, 0).is_err());
    }

    /// Issue "Masking at scale", done means: the cohort pipeline preserves `XᵀX` and the means to
    /// 1e-10 relative at a size where every large-scale path is taken — blocked products for
    /// `B_k` (200 records, p = 269), for `A₂,k` (dimension 200) and for the collector's leading
    /// columns of `B_kᵀ` (p₁ = 9 columns), and the orbit-sampled `A₁` (n = 600) — with and
    /// without a kept column (partial masking).
    #[test]
    fn cohort_pipeline_at_scale_preserves_statistics() {
        use crate::mask::{BLOCKED_MIN_DIM, BLOCKED_MIN_VECTORS, ORBIT_MIN_ROWS};
        let (n, m, answers, p2) = (600, 200, 8, 260);
        assert!(n >= ORBIT_MIN_ROWS, "the release must take the orbit path");
        // Cohorts of m records through B_k, and A₂,k of dimension m over p columns.
        assert!(m >= BLOCKED_MIN_VECTORS.max(BLOCKED_MIN_DIM));
        assert!(answers + 1 >= BLOCKED_MIN_VECTORS && answers + 1 + p2 >= BLOCKED_MIN_DIM);
        // Columns with distinct, non-zero means.
        let raw = DMatrix::from_fn(n, answers, |i, j| {
            ((i * 7 + j * 13) % 17) as f64 + 2.0 * j as f64 - 5.0
        });
        let bound = super::super::design::appendix_c_bound(m, answers + 1, p2, 888.0, 0.5).unwrap();
        for kept in [vec![], vec![1]] {
            let design = Tm2Design::modified(answers, p2, bound.sigma_min * 1.01)
                .unwrap()
                .with_kept(kept.clone())
                .unwrap();
            let run = run_tm2(
                &raw,
                &design,
                &PartyKeys::teaching(3),
                Some(m),
                safety(),
                false,
            )
            .unwrap();
            assert_eq!(run.cohort_sizes, vec![m; 3]);
            let expected = raw.clone().insert_column(answers, 888.0);
            let released = &run.release.data;
            assert!(relative_gram_error(&expected, released) < PRESERVED_STATISTICS);
            let means = expected.row_sum() / n as f64;
            let mean_error = (released.row_sum() / n as f64 - &means).amax() / means.amax();
            assert!(mean_error < PRESERVED_STATISTICS, "means: {mean_error}");
            for &k in &kept {
                let moved = (released.column(k) - raw.column(k)).amax();
                assert!(
                    moved < PRESERVED_STATISTICS * raw.amax(),
                    "kept column moved {moved}"
                );
            }
            let masked = (0..answers).find(|j| !kept.contains(j)).unwrap();
            assert!((released.column(masked) - raw.column(masked)).amax() > 1.0);
            assert!(run.release.qa.iter().all(QaReport::passed));
        }
    }

    /// The streamed run shows every cohort once, in order, and releases what `run_tm2` releases.
    #[test]
    fn streaming_run_shows_each_cohort_and_matches_run_tm2() {
        let raw = test_block(70, 3);
        let bound = super::super::design::appendix_c_bound(18, 4, 40, 888.0, 0.5).unwrap();
        let design = Tm2Design::modified(3, 40, bound.sigma_min * 1.01).unwrap();
        let keys = PartyKeys::teaching(4);
        let mut seen = Vec::new();
        let summary =
            run_tm2_streaming(&raw, &design, &keys, Some(18), safety(), false, &mut |e| {
                seen.push((e.cohort, e.first_participant, e.uploads.nrows()));
                assert_eq!(e.provider_to_collector.shape(), e.uploads.shape());
            })
            .unwrap();
        assert_eq!(
            seen,
            vec![(0, 0, 18), (1, 18, 18), (2, 36, 17), (3, 53, 17)]
        );
        let full = run_tm2(&raw, &design, &keys, Some(18), safety(), false).unwrap();
        let scale = full.release.data.amax();
        assert!((summary.release.data - &full.release.data).amax() < ROUND_TRIP * scale);
        assert_eq!(full.uploads.nrows(), 70);
    }

    /// Issue 23 §2: cohorts run in parallel give the bits a one-thread run gives for the same
    /// keys (each cohort reads its own sub-streams; the kernels split at fixed boundaries) — the
    /// release's orbit path (n ≥ 512) included.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn one_thread_and_several_release_the_same_bits() {
        use crate::linalg::parallel::with_forced_workers;
        let raw = test_block(520, 3);
        let bound = super::super::design::appendix_c_bound(40, 4, 120, 888.0, 0.5).unwrap();
        let design = Tm2Design::modified(3, 120, bound.sigma_min * 1.01).unwrap();
        let run = |threads| {
            with_forced_workers(threads, || {
                run_tm2(
                    &raw,
                    &design,
                    &PartyKeys::teaching(8),
                    Some(40),
                    safety(),
                    true,
                )
                .unwrap()
            })
        };
        let (one, several) = (run(1), run(3));
        let bits = |m: &DMatrix<f64>| m.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&one.release.data), bits(&several.release.data));
        assert_eq!(bits(&one.uploads), bits(&several.uploads));
        assert_eq!(
            one.margin.map(f64::to_bits),
            several.margin.map(f64::to_bits)
        );
    }

    /// Why a test source stopped.
    #[derive(Debug)]
    enum Stop {
        Protocol(ProtocolError),
        Source(usize),
        Observer(u32),
    }
    impl From<ProtocolError> for Stop {
        fn from(e: ProtocolError) -> Self {
            Self::Protocol(e)
        }
    }

    /// A source that fails (a malformed line, an interruption) or an observer that fails (a full
    /// disk) stops the run with its own error; nothing is read far beyond the failure.
    #[test]
    fn a_failing_source_or_observer_stops_the_run() {
        let raw = test_block(200, 3);
        let bound = super::super::design::appendix_c_bound(10, 4, 60, 888.0, 0.5).unwrap();
        let design = Tm2Design::modified(3, 60, bound.sigma_min * 1.01).unwrap();
        let sizes = vec![10; 20];
        let read = std::sync::atomic::AtomicUsize::new(0);
        let source = (0..20).map(|k| {
            read.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            if k == 5 {
                Err(Stop::Source(k))
            } else {
                Ok(raw.rows(10 * k, 10).into_owned())
            }
        });
        let mut observed = 0;
        let stopped = run_tm2_cohorts(
            source,
            &sizes,
            &design,
            &PartyKeys::teaching(2),
            safety(),
            false,
            &mut |_| {
                observed += 1;
                Ok(())
            },
        )
        .unwrap_err();
        assert!(matches!(stopped, Stop::Source(5)), "{stopped:?}");
        assert_eq!(observed, 5);
        let window = 2 * parallel::workers();
        assert!(read.into_inner() <= 6 + window);

        let blocks = (0..20).map(|k| Ok(raw.rows(10 * k, 10).into_owned()));
        let stopped = run_tm2_cohorts(
            blocks,
            &sizes,
            &design,
            &PartyKeys::teaching(2),
            safety(),
            false,
            &mut |e| {
                if e.cohort == 2 {
                    Err(Stop::Observer(e.cohort))
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert!(matches!(stopped, Stop::Observer(2)), "{stopped:?}");
        // A source shorter than its sizes, or a block of the wrong shape, is refused.
        let short = (0..3).map(|k| Ok(raw.rows(10 * k, 10).into_owned()));
        let refused = run_tm2_cohorts::<Stop>(
            short,
            &sizes,
            &design,
            &PartyKeys::teaching(2),
            safety(),
            false,
            &mut |_| Ok(()),
        )
        .unwrap_err();
        assert!(matches!(
            refused,
            Stop::Protocol(ProtocolError::Shape { .. })
        ));
    }

    #[test]
    fn cohorts_preserve_statistics_and_report_margin() {
        let raw = test_block(60, 3);
        let bound = super::super::design::appendix_c_bound(20, 4, 60, 888.0, 0.5).unwrap();
        let design = Tm2Design::modified(3, 60, bound.sigma_min * 1.01).unwrap();
        let run = run_tm2(
            &raw,
            &design,
            &PartyKeys::teaching(1),
            Some(20),
            safety(),
            true,
        )
        .unwrap();
        assert_eq!(run.cohort_sizes, vec![20, 20, 20]);
        let expected = raw.clone().insert_column(3, 888.0);
        assert!(relative_gram_error(&expected, &run.release.data) < PRESERVED_STATISTICS);
        assert!(run.margin.unwrap() > 1.0);
        assert_eq!(run.release.qa.len(), 3);
    }

    #[test]
    fn unsafe_designs_are_refused_and_teaching_mode_warns() {
        let raw = test_block(20, 8);
        let design = Tm2Design::first_method(8).unwrap();
        let refused = run_tm2(
            &raw,
            &design,
            &PartyKeys::teaching(1),
            None,
            safety(),
            false,
        )
        .unwrap_err();
        assert!(matches!(
            refused,
            ProtocolError::Design(DesignError::FewerColumnsThanParticipants { .. })
        ));
        let teaching = Safety {
            strictness: Strictness::WarnOnly,
            ..safety()
        };
        let run = run_tm2(
            &raw,
            &design,
            &PartyKeys::teaching(1),
            None,
            teaching,
            false,
        )
        .unwrap();
        assert_eq!(run.design_report.overridden.len(), 1);
        assert!(
            relative_gram_error(&raw.clone().insert_column(8, 888.0), &run.release.data)
                < PRESERVED_STATISTICS
        );
    }

    #[test]
    fn bad_records_name_the_participant() {
        let mut raw = test_block(30, 2);
        raw[(17, 1)] = f64::NAN;
        let design = Tm2Design::modified(2, 40, 5000.0).unwrap();
        let error = run_tm2(
            &raw,
            &design,
            &PartyKeys::teaching(1),
            None,
            safety(),
            false,
        )
        .unwrap_err();
        assert!(
            matches!(
                error,
                ProtocolError::NonFinite {
                    record: 17,
                    column: 1,
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("record 17"));
    }

    #[test]
    fn second_method_run_keeps_treatment_columns() {
        let raw = test_block(12, 5);
        let design = SecondDesign::new(5, vec![0, 1], 4, 1.0, Some(888.0)).unwrap();
        let run = run_second(&raw, &design, &PartyKeys::teaching(2), true).unwrap();
        assert_eq!(run.qa.len(), 12);
        assert_eq!(run.release.columns(0, 2), raw.columns(0, 2));
        let combined = run.combined.unwrap();
        assert!(relative_gram_error(&raw, &combined) < PRESERVED_STATISTICS);
    }

    fn collusion_keys(right: u64, left: u64) -> CollusionKeys {
        CollusionKeys {
            collector: Key::teaching(40),
            right: (0..right).map(|i| Key::teaching(10 + i)).collect(),
            left: (0..left).map(|j| Key::teaching(20 + j)).collect(),
            participants: Key::teaching(30),
        }
    }

    #[test]
    fn collusion_run_preserves_statistics_and_checks_the_design() {
        let raw = test_block(15, 2);
        // Two masked answers: the QA column cancels from condition (3.5) (design.rs).
        let bound = super::super::design::appendix_c_bound(15, 2, 40, 888.0, 0.5).unwrap();
        let design = Tm2Design::modified(2, 40, bound.sigma_min * 1.01).unwrap();
        let keys = collusion_keys(2, 2);
        let tau = crate::protocol::collusion::share_sigma(&design, raw.amax());
        let run = run_collusion(&raw, &design, &keys, tau, safety()).unwrap();
        let expected = raw.clone().insert_column(2, 888.0);
        assert!(relative_gram_error(&expected, &run.release) < PRESERVED_STATISTICS);
        assert_eq!(
            run.design_report.noise_bound.unwrap().sigma_min,
            bound.sigma_min
        );
        assert!(run.qa.unwrap().passed());
        let too_few = collusion_keys(1, 2);
        assert!(run_collusion(&raw, &design, &too_few, tau, safety()).is_err());
        // σ below the Appendix C bound: refused, or reported in teaching mode — as run_tm2 does.
        let weak = Tm2Design::modified(2, 40, bound.sigma_min * 0.5).unwrap();
        assert!(matches!(
            run_collusion(&raw, &weak, &keys, tau, safety()),
            Err(ProtocolError::Design(DesignError::SigmaBelowBound { .. }))
        ));
        let teaching = Safety {
            strictness: Strictness::WarnOnly,
            ..safety()
        };
        let warned = run_collusion(&raw, &weak, &keys, tau, teaching).unwrap();
        assert_eq!(warned.design_report.overridden.len(), 1);
        assert!(keys.any_teaching());
    }
}
