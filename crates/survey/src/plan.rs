//! The one survey plan: how many noise columns `p₂`, which σ, which device-side DP noise — for
//! `orthomask pipeline`, the data collector service, the benchmark and the classroom alike.
//!
//! # The choices (seed 000 §2–§3 and Appendix C; seed 004 §3–§4)
//! With cohorts of at most `m` participants (the largest cohort `m`, the smallest `n_s`; one
//! cohort of everybody is the papers' protocol) and `p₁` data columns (answers and QA column):
//!
//! * **noise columns** `p₂ = ⌈(√m + √(2 ln(1/τ)) / (1 − √(1 − δ)))²⌉`, the fewest for which the
//!   Appendix C failure probability `exp(−m(√γ − 1)²(1 − √(1 − δ))²/2)` (γ = p₂/m) is at most the
//!   target τ ([`FAILURE_TARGET`]) at δ = [`APPENDIX_C_DELTA`]
//!   (`orthomask_core::protocol::design::noise_columns_for`). It is computed for the **largest**
//!   cohort: the failure probability grows as `m` shrinks only through `√m`, while `p ≥ m` and
//!   `γ = p₂/m` are hardest to meet where `m` is largest.
//! * **σ** = `σ_min·(1 + `[`SIGMA_HEADROOM`]`)` with the Appendix C bound
//!   `σ²_min = p₁ x_max² / [(√γ − 1)²(1 − δ)]` of the largest cohort, where γ is smallest and the
//!   bound highest; a smaller cohort only lowers it, so one σ serves every cohort from `n_s` to
//!   `m`. Where the bound does not apply (`p₂ ≤ m`, only with hand-chosen noise columns), σ is the
//!   data's own scale `max(x_max, 1)`.
//! * **DP** (optional): σ_DP is calibrated for the mechanism the devices and masks actually run
//!   (`orthomask_dp::device`, (D1)–(D11)): one participant's record replaced by any other valid
//!   record (scaled, it moves by up to `2√p`), the noisy column sums the masks keeping `1ₙ` fixed
//!   reveal (a Gaussian mechanism, (D5)) and the masked `(n_s − 1)`-dimensional complement
//!   (setting B with the changed row's true norm `2√p·√(1 − 1/n_s)`, (D6)–(D8)), composed with
//!   the best split of the budget (D9), for the **smallest** cohort (the release is as private
//!   as its least private block, (D11)). The plan records the (ε, δ) this σ guarantees, the split
//!   and seed 004's σ for comparison ([`DpGuarantee`]). DP noise is added on the `[−1, 1]` scale,
//!   so DP implies range scaling, and `x_max` grows by [`DP_ALLOWANCE_SDS`] DP standard deviations
//!   before σ is chosen.
//!
//! The resulting [`Plan`] is what every party may know about the design; the manifest records
//! its bound ([`crate::manifest`]).

use crate::policy::{
    ACCURACY_RECORD_WIDTH, APPENDIX_C_DELTA, DEFAULT_QA_CONSTANT, DP_ALLOWANCE_SDS, FAILURE_TARGET,
    SIGMA_HEADROOM, TARGET_DIGITS_LOST, WEAK_BOUND_WARNING,
};
use orthomask_core::protocol::ProtocolError;
use orthomask_core::protocol::accuracy::{
    DigitsTarget, UnmaskingAccuracy, record_data_norm_squared,
};
use orthomask_core::protocol::design::{
    DesignError, DesignParameters, DesignReport, NoiseBound, Strictness, appendix_c_bound,
    check_design, noise_columns_for, smallest_delta_for,
};
use orthomask_core::protocol::tm2::{DeviceDp, Tm2Design};
use orthomask_core::scaling::RangeScaler;
use orthomask_dp::device::{CohortMechanism, NEIGHBOUR_RELATION};
use orthomask_formats::manifest::{AppendixC, DpColumn, DpGuarantee, DpNoise, Method};
use serde::{Deserialize, Serialize};

/// Why a design cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// Seed 000's conditions or the Appendix C bound refuse it, or a parameter is outside its
    /// domain.
    #[error(transparent)]
    Design(#[from] DesignError),
    /// The core cannot build the design from these parameters.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// The device-side mechanism cannot be calibrated for these cohorts.
    #[error(
        "DP: calibrating the noise for cohorts of {smallest_cohort} with {columns} answer columns: {reason}"
    )]
    Calibration {
        /// The smallest cohort σ_DP is calibrated for.
        smallest_cohort: usize,
        /// Answer columns.
        columns: usize,
        /// The calibrator's reason.
        reason: String,
    },
    /// A declared range the device cannot scale (empty, reversed or not finite).
    #[error("declared ranges: {0}")]
    Ranges(ProtocolError),
    /// Scaling and DP were given different ranges (DP noise is calibrated on the scaled record).
    #[error("the ranges to scale by differ from the DP ranges; declare each answer's range once")]
    ScalingRangesDiffer,
    /// Device-side DP with columns kept unmasked: their rows would be released with noise
    /// calibrated for a view that does not contain them.
    #[error(
        "device-side DP cannot be combined with {kept} kept (unmasked) column(s): each would be \
         released row by row with noise calibrated for the masked columns only; drop --keep or DP"
    )]
    DpWithKeptColumns {
        /// How many columns were to be kept.
        kept: usize,
    },
}

/// The largest and smallest cohort of a survey (equal without cohorts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CohortBounds {
    /// The smallest cohort that may be released: it binds `p₁ < n` and DP.
    pub smallest: usize,
    /// The largest cohort: it binds `p ≥ m`, the noise columns and the Appendix C bound.
    pub largest: usize,
}

/// One answer column's declared range (range scaling on the device, device-side DP).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeclaredRange {
    /// Column name.
    pub name: String,
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
}

impl DeclaredRange {
    /// A range read off the data (a simulation's stand-in for a declared one): the observed
    /// `[lo, hi]`, or for a constant column `v ± max(|v|, 1)`, since scaling needs a width.
    pub fn observed(name: &str, lo: f64, hi: f64) -> Self {
        let (lo, hi) = if lo < hi {
            (lo, hi)
        } else {
            let w = lo.abs().max(1.0);
            (lo - w, hi + w)
        };
        Self {
            name: name.to_owned(),
            lo,
            hi,
        }
    }
}

/// Whether the devices of a `method` scale each answer by its range before padding: the padded
/// protocols (modified TM² and its collusion-resistant extension) do; the first method, whose
/// unpadded invertible `B₁` reproduces seed 003's tables in the answers' own units, and the
/// second, which pads with rows, do not.
pub fn scales_answers(method: Method) -> bool {
    matches!(method, Method::Modified | Method::Collusion)
}

/// Device-side DP asked for: the budget and the declared range of every answer column.
#[derive(Clone, Debug, PartialEq)]
pub struct DpRequest {
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// One range per answer column, in column order.
    pub ranges: Vec<DeclaredRange>,
}

/// What a plan is made from.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanRequest {
    /// Answer columns (the record without the QA column).
    pub answers: usize,
    /// The QA constant (`None`: no QA column).
    pub qa_constant: Option<f64>,
    /// Cohort sizes.
    pub cohorts: CohortBounds,
    /// Declared largest absolute answer (before DP noise). Used only when the device does not
    /// scale: a scaled record's answers lie in `[−1, 1]`.
    pub x_max: f64,
    /// The declared range of every answer column when the device scales each answer by it
    /// before padding (`orthomask_core::protocol::tm2::Tm2Design::with_scaling`); `None`: the
    /// record is masked in the answers' own units (the papers' worked examples).
    pub ranges: Option<Vec<DeclaredRange>>,
    /// Answer columns kept unmasked (partial masking): like the QA column they cancel from
    /// condition (3.5) (module documentation).
    pub kept_columns: usize,
    /// The δ of Appendix C (policy: [`APPENDIX_C_DELTA`]).
    pub delta: f64,
    /// Target failure probability of condition (3.5) (policy: [`FAILURE_TARGET`]).
    pub failure_target: f64,
    /// Noise columns chosen by hand (`None`: the policy's; the first method asks for 0).
    pub noise_columns: Option<usize>,
    /// σ chosen by hand (`None`: the policy's).
    pub sigma: Option<f64>,
    /// Whether the right mask is orthogonal, so that Appendix C applies and is recorded.
    pub orthogonal_right_mask: bool,
    /// Device-side DP.
    pub dp: Option<DpRequest>,
}

impl PlanRequest {
    /// A request with every policy default: Appendix C's δ and failure target, the policy's
    /// noise columns and σ, an orthogonal right mask, no DP.
    pub fn new(
        answers: usize,
        qa_constant: Option<f64>,
        cohorts: CohortBounds,
        x_max: f64,
    ) -> Self {
        Self {
            answers,
            qa_constant,
            cohorts,
            x_max,
            ranges: None,
            kept_columns: 0,
            delta: APPENDIX_C_DELTA,
            failure_target: FAILURE_TARGET,
            noise_columns: None,
            sigma: None,
            orthogonal_right_mask: true,
            dp: None,
        }
    }
}

/// The masking parameters of a survey: what the collector decides and every party may know.
///
/// Stored by the data collector with each survey (JSON); the defaults of the fields added since
/// the first stored plans are what those plans meant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The QA constant (`null`: no QA column).
    #[serde(default = "default_qa_constant")]
    pub qa_constant: Option<f64>,
    /// Data columns `p₁` (answers and QA column).
    pub p1: usize,
    /// Noise columns `p₂`.
    pub p2: usize,
    /// Noise standard deviation σ (0 without noise columns).
    pub sigma: f64,
    /// The `x_max` the Appendix C bound assumes, on the padded record's scale: the largest
    /// absolute masked answer (1 when the device scales by declared ranges, the declared `x_max`
    /// otherwise) plus the DP allowance.
    pub x_max: f64,
    /// The columns the left masks move, which condition (3.5) counts (module documentation):
    /// the answers not kept unmasked. Absent in plans stored before it, which counted all `p₁`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub masked_columns: Option<usize>,
    /// The declared ranges the devices scale every answer by (`None`: no scaling; plans stored
    /// before scaling existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Vec<DeclaredRange>>,
    /// The δ of Appendix C.
    #[serde(default = "default_delta")]
    pub delta: f64,
    /// The Appendix C bound of the largest cohort (where it binds), when it applies.
    #[serde(default)]
    pub appendix_c: Option<AppendixC>,
    /// Device-side DP noise, when asked for.
    pub dp: Option<DpNoise>,
    /// Why the release is expected to lose more than [`TARGET_DIGITS_LOST`] digits, when it is
    /// (issue 21 §4). Absent when the target is met, and in plans stored before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy_note: Option<String>,
}

/// The largest cohort for which `target`'s digits are reachable within `widest` noise columns
/// (bisection: the columns (E7) needs grow with the cohort); `None` when not even a cohort of 2
/// reaches them.
fn largest_cohort_within(target: &DigitsTarget, widest: usize) -> Option<usize> {
    let fits = |m: usize| {
        DigitsTarget {
            cohort: m,
            ..*target
        }
        .noise_columns()
        .is_some_and(|p2| p2 <= widest)
    };
    if !fits(2) {
        return None;
    }
    let (mut lo, mut hi) = (2, target.cohort);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

fn default_qa_constant() -> Option<f64> {
    Some(DEFAULT_QA_CONSTANT)
}

fn default_delta() -> f64 {
    APPENDIX_C_DELTA
}

impl Plan {
    /// Plan a design (the module documentation gives every choice).
    ///
    /// # Errors
    /// [`PlanError`] for parameters outside their domain, a DP budget the cohorts cannot meet, or
    /// degenerate declared ranges. Unsafe but well-formed designs (σ below the bound, `p < m`) are
    /// planned; [`Plan::check`] and the protocol runs refuse them.
    pub fn new(request: &PlanRequest) -> Result<Self, PlanError> {
        let p1 = request.answers + usize::from(request.qa_constant.is_some());
        let CohortBounds { largest, .. } = request.cohorts;
        // Kept columns pass both masks unchanged, so with DP each is released row by row as
        // `s + N(0, σ²)`: a Gaussian mechanism of sensitivity 2 per column (2√k for k kept), which
        // σ, calibrated for the masked view, does not cover — and the masked part's changed-row
        // bound (D6)–(D8) assumed masks fixing `1ₙ` only. Refused rather than mis-stated
        // (issue 21 §1; the counterexample is a test).
        if request.dp.is_some() && request.kept_columns > 0 {
            return Err(PlanError::DpWithKeptColumns {
                kept: request.kept_columns,
            });
        }
        let dp = match &request.dp {
            Some(d) => Some(plan_dp(d, request.cohorts)?),
            None => None,
        };
        // DP noise is added on the [−1, 1] scale, so DP implies scaling by its ranges.
        let scaling = match (&request.ranges, &request.dp) {
            (Some(ranges), Some(d)) if ranges != &d.ranges => {
                return Err(PlanError::ScalingRangesDiffer);
            }
            (Some(ranges), _) => Some(ranges.clone()),
            (None, Some(d)) => Some(d.ranges.clone()),
            (None, None) => None,
        };
        let masked_columns = request.answers.saturating_sub(request.kept_columns);
        let declared = if scaling.is_some() {
            1.0
        } else {
            request.x_max
        };
        let x_max = declared + dp.as_ref().map_or(0.0, dp_allowance);
        let with_noise = |p2: usize, delta: f64| -> Result<Self, PlanError> {
            let bound = if p2 == 0 {
                None
            } else {
                match appendix_c_bound(largest, masked_columns.max(1), p2, x_max, delta) {
                    Ok(bound) => Some(bound),
                    Err(DesignError::NoiseColumnsNotAboveParticipants { .. }) => None,
                    Err(other) => return Err(other.into()),
                }
            };
            let sigma = match request.sigma {
                Some(sigma) => sigma,
                None if p2 == 0 => 0.0,
                None => bound.as_ref().map_or(x_max.max(1.0), sigma_above),
            };
            Ok(Self {
                qa_constant: request.qa_constant,
                p1,
                p2,
                sigma,
                x_max,
                masked_columns: Some(masked_columns),
                scaling: scaling.clone(),
                delta,
                appendix_c: bound
                    .filter(|_| request.orthogonal_right_mask)
                    .map(|b| appendix_c_record(&b)),
                dp: dp.clone(),
                accuracy_note: None,
            })
        };
        let mut plan = match request.noise_columns {
            Some(p2) => with_noise(p2, request.delta)?,
            None => {
                let p2 = noise_columns_for(largest, request.delta, request.failure_target)?;
                with_noise(p2, request.delta)?
            }
        };
        // Issue 21 §4: more noise columns lose fewer digits ((E7) of core's accuracy module), so
        // where the policy's σ and columns are the plan's own, it adds columns (lowering δ to the
        // smallest that still meets the failure target) until the expected loss meets
        // `TARGET_DIGITS_LOST`, within `ACCURACY_RECORD_WIDTH`.
        // Only scaled records have one loss for every column (unscaled, a column loses more the
        // smaller it is next to x_max), and columns are added only where they reach the target:
        // where (E8) or the width puts it out of reach, the plan says so instead of paying for
        // a fraction of a digit.
        let chosen_by_policy =
            request.noise_columns.is_none() && request.sigma.is_none() && plan.scaling.is_some();
        let target = plan.digits_target(largest, request.failure_target)?;
        if let Some(target) = target.filter(|_| chosen_by_policy) {
            let widest = ACCURACY_RECORD_WIDTH.saturating_sub(p1);
            let wanted = target.noise_columns().filter(|&p2| p2 <= widest);
            if plan.unmasking_accuracy()?.expected_digits_lost() > TARGET_DIGITS_LOST
                && let Some(p2) = wanted.filter(|&p2| p2 > plan.p2)
                && let Some(delta) = smallest_delta_for(largest, p2, request.failure_target)
            {
                plan = with_noise(p2, delta)?;
            }
        }
        // Issue 43: the QA check must reveal a change of QA_REVEALS in the masks' action on 1ₙ
        // (`crate::floors`, (Q2)): the policy's constant stays unless the floor on it is higher,
        // which only unscaled records of great length reach (a scaled record carries any
        // constant as ±1). A constant the caller chose by hand is the caller's; the devices'
        // floors refuse one below the floor.
        // (A design that does not build is refused wherever it would run; it keeps its constant.)
        if request.qa_constant == Some(DEFAULT_QA_CONSTANT)
            && let Ok(design) = plan.design()
        {
            let scaled = plan.scaling.is_some();
            let bound = if scaled { 1.0 } else { request.x_max.abs() };
            let floor = crate::floors::QaFloor::of(&design, bound, None);
            plan.qa_constant = Some(floor.planned_constant(scaled));
        }
        plan.accuracy_note = plan.shortfall(
            largest,
            request.failure_target,
            request.noise_columns.is_some(),
        )?;
        Ok(plan)
    }

    /// What (E7)–(E8) of core's accuracy module need about this plan for cohorts of at most
    /// `largest` and the Appendix C `failure_target`; `None` without an Appendix C bound (no padding, or a non-orthogonal mask).
    fn digits_target(
        &self,
        largest: usize,
        failure_target: f64,
    ) -> Result<Option<DigitsTarget>, PlanError> {
        if self.appendix_c.is_none() {
            return Ok(None);
        }
        Ok(Some(DigitsTarget {
            cohort: largest,
            masked_columns: self.masked_columns.unwrap_or(self.p1).max(1),
            x_max: self.x_max,
            data_norm_squared: record_data_norm_squared(&self.design()?, self.x_max),
            headroom: SIGMA_HEADROOM,
            failure_target,
            digits: TARGET_DIGITS_LOST,
        }))
    }

    /// Why the expected loss exceeds [`TARGET_DIGITS_LOST`], if it does: the one sentence the
    /// plan, the manifest and the survey team's page show.
    fn shortfall(
        &self,
        largest: usize,
        failure_target: f64,
        hand_chosen: bool,
    ) -> Result<Option<String>, PlanError> {
        let Some(target) = self.digits_target(largest, failure_target)? else {
            return Ok(None);
        };
        let expected = self.unmasking_accuracy()?.expected_digits_lost();
        if expected <= TARGET_DIGITS_LOST {
            return Ok(None);
        }
        if self.scaling.is_none() {
            return Ok(Some(format!(
                "the answers are masked in their own units (no declared ranges), so a column of \
                 magnitude h is expected to lose about {expected:.1} − log₁₀(h) significant \
                 digits, the small columns most; declaring each question's range lets the \
                 devices scale and gives every column the same loss"
            )));
        }
        let widest = ACCURACY_RECORD_WIDTH.saturating_sub(self.p1);
        let head = format!(
            "the release is expected to lose {expected:.1} significant digits to masking, more \
             than the {TARGET_DIGITS_LOST} the policy aims for"
        );
        let why = match target.noise_columns() {
            Some(needed) if hand_chosen => format!(
                "{} noise columns were chosen by hand; {needed} would keep within {TARGET_DIGITS_LOST}",
                self.p2
            ),
            Some(needed) if needed <= widest => {
                format!("{needed} noise columns would keep within {TARGET_DIGITS_LOST}")
            }
            reachable => {
                let limit = if reachable.is_none() {
                    format!(
                        "condition (3.5) makes each record's noise outweigh the answers of a \
                         whole cohort of {largest}, so no number of noise columns loses fewer \
                         than {:.1} digits",
                        target.floor_digits()
                    )
                } else {
                    format!(
                        "keeping within {TARGET_DIGITS_LOST} needs records wider than the \
                         {ACCURACY_RECORD_WIDTH} values the policy builds"
                    )
                };
                match largest_cohort_within(&target, widest) {
                    Some(m) => format!("{limit}; cohorts of at most {m} keep within it"),
                    None => limit,
                }
            }
        };
        Ok(Some(format!("{head}: {why}")))
    }

    /// The plan of a second-method run (seed 003 §3.3): the record is padded with noise *rows*
    /// (`A₀`), not columns, so there is no Appendix C bound, no scaling and no DP, and the
    /// release holds the `columns` answer columns only; `sigma` is the noise rows' standard
    /// deviation ([`crate::policy::SECOND_METHOD_SIGMA`] unless chosen).
    pub fn second_method(columns: usize, sigma: f64, x_max: f64, delta: f64) -> Self {
        Self {
            qa_constant: None,
            p1: columns,
            p2: 0,
            sigma,
            x_max,
            masked_columns: None,
            scaling: None,
            delta,
            appendix_c: None,
            dp: None,
            accuracy_note: None,
        }
    }

    /// The warning a run owes when the Appendix C bound guarantees less than the policy calls a
    /// safety margin (`Pr[condition (3.5) fails] >` [`WEAK_BOUND_WARNING`]: hand-chosen noise
    /// columns can fall far short of the failure target).
    pub fn weak_bound_warning(&self) -> Option<String> {
        let bound = self.appendix_c.as_ref()?;
        (bound.failure_probability > WEAK_BOUND_WARNING).then(|| {
            format!(
                "the Appendix C bound only guarantees Pr[condition (3.5) fails] <= {:.3}; more \
                 noise columns (or a larger delta with a larger sigma) tighten it",
                bound.failure_probability
            )
        })
    }

    /// The shares' standard deviation τ in share mode for this plan's `design`: the core's rule
    /// (`orthomask_core::protocol::collusion::share_sigma`, `τ = SHARE_SCALE·(x_max + 4σ_dp)` on
    /// the record's scale) with the plan's answer bound — 1 when the devices scale, which every
    /// share-mode survey does.
    pub fn share_sigma(&self, design: &Tm2Design) -> f64 {
        let dp_allowance = self.dp.as_ref().map_or(0.0, dp_allowance);
        orthomask_core::protocol::collusion::share_sigma(design, self.x_max - dp_allowance)
    }

    /// Answer columns (`p₁` without the QA column).
    pub fn answers(&self) -> usize {
        self.p1 - usize::from(self.qa_constant.is_some())
    }

    /// The device-side DP settings the plan records, rebuilt for the core.
    ///
    /// # Errors
    /// [`PlanError::Ranges`] when the recorded ranges do not form valid settings.
    pub fn device_dp(&self) -> Result<Option<DeviceDp>, PlanError> {
        self.dp.as_ref().map(device_dp).transpose()
    }

    /// The modified TM² design of this plan (Haar right mask, ChaCha streams; callers choose
    /// another law, generator or kept columns on the result).
    ///
    /// # Errors
    /// [`PlanError`] when the parameters do not form a design.
    pub fn design(&self) -> Result<Tm2Design, PlanError> {
        let design = modified_design(
            self.answers(),
            self.qa_constant,
            self.p2,
            self.sigma,
            self.device_dp()?,
        )?;
        match (&self.scaling, design.scaler()) {
            (Some(ranges), None) => Ok(design
                .with_scaling(scaler_of(ranges).map_err(PlanError::Ranges)?)
                .map_err(PlanError::Ranges)?),
            _ => Ok(design),
        }
    }

    /// The expected rounding error of the released values under this plan
    /// (`orthomask_core::protocol::accuracy`, (E1)–(E2)).
    ///
    /// # Errors
    /// As [`design`](Self::design).
    pub fn unmasking_accuracy(&self) -> Result<UnmaskingAccuracy, PlanError> {
        Ok(UnmaskingAccuracy::of(&self.design()?, self.x_max))
    }

    /// The expected accuracy of a release under this plan — with the shares' noise (E5) in
    /// share mode — and why it exceeds [`TARGET_DIGITS_LOST`], when it does: the one figure and
    /// note the manifest, the survey team's answer and the builder's preview state.
    ///
    /// In share mode the shares' noise τ, which hides the answers from each right-masking
    /// service, dominates the record's norm ((E5): `answers·τ²(K − 1)`), and nothing in the
    /// plan can lower it without showing each service more of the answers; the note says so and
    /// what the basic protocol would lose instead.
    ///
    /// # Errors
    /// As [`design`](Self::design).
    pub fn release_accuracy(
        &self,
        shares: Option<ShareSplit>,
    ) -> Result<ReleaseAccuracy, PlanError> {
        let design = self.design()?;
        let basic = UnmaskingAccuracy::of(&design, self.x_max);
        let Some(split) = shares else {
            return Ok(ReleaseAccuracy {
                accuracy: basic,
                note: self.accuracy_note.clone(),
            });
        };
        let accuracy =
            UnmaskingAccuracy::of_shares(&design, self.x_max, split.services, split.share_sigma);
        let lost = accuracy.expected_digits_lost();
        let note = if lost > TARGET_DIGITS_LOST {
            Some(format!(
                "the release is expected to lose {lost:.1} significant digits to masking, more \
                 than the {TARGET_DIGITS_LOST} the policy aims for: in share mode each record is \
                 split into {} shares whose noise (τ = {:.4} on the scaled record) hides the \
                 answers from each right-masking service, and unmasking carries that noise's \
                 rounding; it cannot be lowered without showing each service more of the \
                 answers (the basic protocol would lose {:.1})",
                split.services,
                split.share_sigma,
                basic.expected_digits_lost()
            ))
        } else {
            self.accuracy_note.clone()
        };
        Ok(ReleaseAccuracy { accuracy, note })
    }

    /// Check the plan against seed 000's conditions for these cohorts (orthogonal right mask).
    ///
    /// # Errors
    /// The first violated condition when `strictness` is [`Strictness::Refuse`].
    pub fn check(
        &self,
        cohorts: CohortBounds,
        strictness: Strictness,
    ) -> Result<DesignReport, PlanError> {
        Ok(check_design(
            &DesignParameters {
                smallest_cohort: cohorts.smallest,
                largest_cohort: cohorts.largest,
                p1: self.p1,
                masked_columns: self.masked_columns.unwrap_or(self.p1),
                p2: self.p2,
                sigma: self.sigma,
                x_max: self.x_max,
                delta: self.delta,
                orthogonal_right_mask: true,
            },
            strictness,
        )?)
    }
}

/// How share mode split each record: into `services` shares with noise `share_sigma` on the
/// answer coordinates (`orthomask_core::protocol::collusion::split_into_shares`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShareSplit {
    /// Right-masking services `K₁`.
    pub services: usize,
    /// The shares' noise τ, on the padded record's scale.
    pub share_sigma: f64,
}

/// A release's expected accuracy ([`Plan::release_accuracy`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ReleaseAccuracy {
    /// The expected unmasking error (E1)–(E2), or (E5) in share mode.
    pub accuracy: UnmaskingAccuracy,
    /// Why the expected loss exceeds [`TARGET_DIGITS_LOST`], when it does.
    pub note: Option<String>,
}

/// The policy's noise columns for cohorts of at most `largest_cohort`: [`noise_columns_for`] at
/// [`APPENDIX_C_DELTA`] and [`FAILURE_TARGET`] — what [`Plan::new`] starts from when the request
/// names none (front ends ask the plan, not this).
///
/// # Errors
/// [`PlanError::Design`] for a cohort of 0.
pub(crate) fn default_noise_columns(largest_cohort: usize) -> Result<usize, PlanError> {
    Ok(noise_columns_for(
        largest_cohort,
        APPENDIX_C_DELTA,
        FAILURE_TARGET,
    )?)
}

/// σ = σ_min·(1 + [`SIGMA_HEADROOM`]): just above the strict Appendix C bound.
pub fn sigma_above(bound: &NoiseBound) -> f64 {
    bound.sigma_min * (1.0 + SIGMA_HEADROOM)
}

/// The bound as the manifest records it.
pub fn appendix_c_record(bound: &NoiseBound) -> AppendixC {
    AppendixC {
        sigma_min: bound.sigma_min,
        failure_probability: bound.failure_probability,
        gamma: bound.gamma,
        delta: bound.delta,
    }
}

/// Calibrate device-side DP noise for the mechanism run (`orthomask_dp::device`, (D10)–(D11′))
/// for every cohort size from the smallest to the largest the survey can release, and the
/// declared ranges, and record what it guarantees (module documentation).
///
/// # Errors
/// [`PlanError::Calibration`] when the cohorts are too small for the columns (`n_s − 1 ≤ p`) or
/// the budget is out of its domain, [`PlanError::Ranges`] for a degenerate range.
pub fn plan_dp(request: &DpRequest, cohorts: CohortBounds) -> Result<DpNoise, PlanError> {
    let smallest_cohort = cohorts.smallest;
    let columns = request.ranges.len();
    let failed = |reason: String| PlanError::Calibration {
        smallest_cohort,
        columns,
        reason,
    };
    let mechanism = CohortMechanism::new(columns as u64, smallest_cohort as u64)
        .map_err(|e| failed(e.to_string()))?;
    let largest = cohorts.largest.max(smallest_cohort) as u64;
    let calibration = mechanism
        .calibrate_for_sizes(largest, request.epsilon, request.delta)
        .map_err(|e| failed(e.to_string()))?;
    let sigma = calibration.sigma();
    // What this σ guarantees, recomputed rather than echoed: the split kept for every cohort
    // size, and the worst δ over those sizes (at most the budget's δ, by (D11′)).
    let split = calibration.split();
    let worst = mechanism
        .worst_delta(largest, sigma, &split)
        .map_err(|e| failed(e.to_string()))?;
    let ranges: Vec<(f64, f64)> = request.ranges.iter().map(|r| (r.lo, r.hi)).collect();
    let settings =
        DeviceDp::new(&ranges, sigma, request.epsilon, request.delta).map_err(PlanError::Ranges)?;
    Ok(DpNoise {
        epsilon: request.epsilon,
        delta: request.delta,
        sigma,
        smallest_cohort,
        columns: request
            .ranges
            .iter()
            .zip(settings.column_sigmas())
            .map(|(r, sd)| DpColumn {
                name: r.name.clone(),
                lo: r.lo,
                hi: r.hi,
                sigma: sd,
            })
            .collect(),
        guarantee: Some(DpGuarantee {
            neighbours: NEIGHBOUR_RELATION.to_owned(),
            covers: Some(DP_COVERS.to_owned()),
            largest_cohort: Some(largest as usize),
            epsilon: split.epsilon(),
            delta: worst,
            epsilon_sums: split.epsilon_sum,
            delta_sums: split.delta_sum,
            epsilon_complement: split.epsilon_complement,
            delta_complement: split.delta_complement,
            paper_sigma: calibration.paper_sigma(),
            growth_factor: calibration.growth_factor(),
        }),
    })
}

/// Whom device-side DP protects (issue 21 §2): it is a property of the view the guarantee was
/// derived for — the collector's (`A(X + C)`, cohort by cohort) and everything computed from it,
/// the release included — under replace-one neighbours. The masking service provider sees the row
/// Gram matrix `X Xᵀ` of each cohort (`x·B_k` keeps lengths and inner products), which the
/// derivation does not cover; a right-masking service sees its share, whose own figure is
/// `share_view`.
pub const DP_COVERS: &str = "the data collector and the public (the release and everything computed \
     from the collector's view), for one participant's record replaced by any other valid record; \
     not the masking service provider, which sees each cohort's row Gram matrix";

/// How far DP noise may carry a scaled answer past `[−1, 1]`: [`DP_ALLOWANCE_SDS`] standard
/// deviations of the noise on that scale (DP implies scaling).
pub fn dp_allowance(dp: &DpNoise) -> f64 {
    DP_ALLOWANCE_SDS * dp.sigma
}

/// The core's scaler for declared ranges.
fn scaler_of(ranges: &[DeclaredRange]) -> Result<RangeScaler, ProtocolError> {
    let pairs: Vec<(f64, f64)> = ranges.iter().map(|r| (r.lo, r.hi)).collect();
    Ok(RangeScaler::new(&pairs)?)
}

/// The core's DP settings for a recorded DP plan.
///
/// # Errors
/// [`PlanError::Ranges`] when the recorded ranges or levels are invalid.
pub fn device_dp(dp: &DpNoise) -> Result<DeviceDp, PlanError> {
    let ranges: Vec<(f64, f64)> = dp.columns.iter().map(|c| (c.lo, c.hi)).collect();
    DeviceDp::new(&ranges, dp.sigma, dp.epsilon, dp.delta).map_err(PlanError::Ranges)
}

/// The modified TM² design with these parameters: `answers` answer columns, the QA column,
/// `p₂` noise columns of standard deviation σ and optional device-side DP.
///
/// # Errors
/// [`ProtocolError`] when the parameters do not form a design.
pub fn modified_design(
    answers: usize,
    qa_constant: Option<f64>,
    p2: usize,
    sigma: f64,
    dp: Option<DeviceDp>,
) -> Result<Tm2Design, ProtocolError> {
    let design = Tm2Design::modified(answers, 0, 1.0)?
        .with_qa(qa_constant)?
        .with_noise(p2, sigma)?;
    match dp {
        Some(dp) => design.with_dp(dp),
        None => Ok(design),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::{
        DIGITS_BY_HAND, DP_SOLVED, HAND_COMPUTED, QUOTED_DELTA, QUOTED_SIGMA_RELATIVE,
        THREE_DECIMALS, ULPS_BELOW_ONE,
    };
    use orthomask_core::tolerance::INVERTED_BOUND;

    fn cohorts(smallest: usize, largest: usize) -> CohortBounds {
        CohortBounds { smallest, largest }
    }

    /// m = 20: p₂ = ⌈(√20 + √(2 ln 10⁶)/(1 − √0.5))²⌉ = ⌈(4.4721 + 5.2565/0.29289)²⌉
    /// = ⌈22.4187²⌉ = 503, the sample survey's value; σ is a hair above the bound for p₁ = 9,
    /// x_max = 888.
    #[test]
    fn policy_defaults_by_hand() {
        let plan = Plan::new(&PlanRequest::new(8, Some(888.0), cohorts(20, 20), 888.0)).unwrap();
        assert_eq!((plan.p1, plan.p2), (9, 503));
        // The 8 answers enter condition (3.5); the QA column cancels (core's design.rs).
        assert_eq!(plan.masked_columns, Some(8));
        let bound = appendix_c_bound(20, 8, 503, 888.0, 0.5).unwrap();
        assert!(plan.sigma > bound.sigma_min);
        assert!(plan.sigma < bound.sigma_min * (1.0 + 10.0 * SIGMA_HEADROOM));
        // σ²_min = p_m x_max² / ((√γ − 1)²(1 − δ)), γ = 503/20.
        let gamma: f64 = 503.0 / 20.0;
        let by_hand = (8.0 * 888.0f64.powi(2) / ((gamma.sqrt() - 1.0).powi(2) * 0.5)).sqrt();
        assert!((bound.sigma_min - by_hand).abs() < HAND_COMPUTED * by_hand);
        let recorded = plan.appendix_c.as_ref().unwrap();
        assert!(recorded.failure_probability <= FAILURE_TARGET);
        assert_eq!(default_noise_columns(20).unwrap(), 503);
        assert!(plan.check(cohorts(20, 20), Strictness::Refuse).is_ok());
        assert_eq!(plan.design().unwrap().p(), 512);
        assert!(plan.scaling.is_none() && plan.design().unwrap().scaler().is_none());
    }

    /// Scaled by declared ranges, the record's answers lie in [−1, 1]: x_max = 1, whatever the
    /// ranges, so σ²_min = 8 / ((√γ − 1)²(1 − δ)) — 888 times smaller than unscaled above.
    #[test]
    fn scaled_records_take_sigma_for_unit_answers() {
        let mut request = PlanRequest::new(8, Some(888.0), cohorts(20, 20), 888.0);
        request.ranges = Some(
            (0..8)
                .map(|j| DeclaredRange {
                    name: format!("c{j}"),
                    lo: -(10f64.powi(j)),
                    hi: 10f64.powi(j + 1),
                })
                .collect(),
        );
        let plan = Plan::new(&request).unwrap();
        assert_eq!(plan.x_max, 1.0);
        let gamma: f64 = 503.0 / 20.0;
        let by_hand = (8.0 / ((gamma.sqrt() - 1.0).powi(2) * 0.5)).sqrt();
        assert!((plan.appendix_c.as_ref().unwrap().sigma_min - by_hand).abs() < HAND_COMPUTED);
        let design = plan.design().unwrap();
        assert_eq!(design.scaler().unwrap().len(), 8);
        // The stored plan carries the ranges, so the collector unscales what devices scaled.
        let again: Plan = serde_json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();
        assert_eq!(again, plan);
        // Kept columns cancel like the QA column.
        request.kept_columns = 3;
        assert_eq!(Plan::new(&request).unwrap().masked_columns, Some(5));
        // DP with other ranges than the scaling's is refused in one line.
        request.kept_columns = 0;
        request.dp = Some(dp_request(8));
        assert!(matches!(
            Plan::new(&request),
            Err(PlanError::ScalingRangesDiffer)
        ));
    }

    /// The bound binds on the largest cohort: cohorts of 30 and 20 get the noise columns and σ
    /// of 30 (γ smallest there), and one σ is safe for both.
    #[test]
    fn the_largest_cohort_binds_noise_and_sigma() {
        let mixed = Plan::new(&PlanRequest::new(4, Some(888.0), cohorts(20, 30), 888.0)).unwrap();
        let large = Plan::new(&PlanRequest::new(4, Some(888.0), cohorts(30, 30), 888.0)).unwrap();
        assert_eq!(mixed.p2, large.p2);
        assert!((mixed.sigma - large.sigma).abs() < HAND_COMPUTED * large.sigma);
        assert!(mixed.check(cohorts(20, 30), Strictness::Refuse).is_ok());
        let small_bound = appendix_c_bound(20, 4, mixed.p2, 888.0, 0.5).unwrap();
        assert!(small_bound.sigma_min < mixed.appendix_c.as_ref().unwrap().sigma_min);
    }

    /// Hand-chosen parameters: too few noise columns leave no bound (σ falls back to the data's
    /// scale), the first method asks for none (σ = 0) and a non-orthogonal mask records none.
    #[test]
    fn hand_chosen_parameters() {
        let mut request = PlanRequest::new(3, Some(888.0), cohorts(20, 20), 888.0);
        request.noise_columns = Some(10);
        let few = Plan::new(&request).unwrap();
        assert!(few.appendix_c.is_none());
        assert!((few.sigma - 888.0).abs() < HAND_COMPUTED);
        assert!(few.check(cohorts(20, 20), Strictness::Refuse).is_err());
        request.noise_columns = Some(0);
        let none = Plan::new(&request).unwrap();
        assert!(none.sigma.abs() < HAND_COMPUTED && none.appendix_c.is_none());
        request.noise_columns = Some(60);
        request.orthogonal_right_mask = false;
        assert!(Plan::new(&request).unwrap().appendix_c.is_none());
        request.delta = 1.5;
        assert!(
            Plan::new(&request)
                .unwrap_err()
                .to_string()
                .contains("delta")
        );
    }

    fn dp_request(columns: usize) -> DpRequest {
        DpRequest {
            epsilon: 0.5,
            delta: 0.01,
            ranges: (0..columns)
                .map(|j| DeclaredRange {
                    name: format!("c{j}"),
                    lo: 0.0,
                    hi: 10.0 * (j + 1) as f64,
                })
                .collect(),
        }
    }

    /// DP is calibrated for the mechanism run (`orthomask_dp::device`) at the smallest cohort;
    /// each column's noise is σ(hi − lo)/2, x_max grows by six σ on the scaled record, and the
    /// plan records what σ guarantees: δ at the budget's ε no more than the budget's δ, split
    /// between the sums and the complement, and σ against seed 004's for comparison.
    #[test]
    fn dp_is_calibrated_for_the_smallest_cohort() {
        let mut request = PlanRequest::new(3, Some(888.0), cohorts(150, 200), 888.0);
        request.dp = Some(dp_request(3));
        let plan = Plan::new(&request).unwrap();
        let dp = plan.dp.as_ref().unwrap();
        assert_eq!(dp.smallest_cohort, 150);
        let mechanism = CohortMechanism::new(3, 150).unwrap();
        let calibration = mechanism.calibrate(0.5, 0.01).unwrap();
        let expected = calibration.sigma();
        assert!((dp.sigma - expected).abs() <= HAND_COMPUTED * expected);
        let g = dp.guarantee.as_ref().unwrap();
        assert_eq!(g.neighbours, "replace-one-record");
        assert!(
            g.delta <= 0.01 && (g.epsilon - 0.5).abs() < DP_SOLVED,
            "{g:?}"
        );
        assert!(mechanism.delta_at(dp.sigma, 0.5).unwrap() <= 0.01);
        assert!((g.epsilon_sums + g.epsilon_complement - g.epsilon).abs() < HAND_COMPUTED);
        assert!((g.delta_sums + g.delta_complement - g.delta).abs() < ULPS_BELOW_ONE);
        // Seed 004's σ for n_s − 1 rows, neighbours at distance 1 (eq. (13)), and the growth
        // (D12) the mechanism run needs over it (its size is tested in orthomask-dp).
        let paper = orthomask_dp::Calibration::new(orthomask_dp::CalibrationInput {
            epsilon: 0.5,
            delta: 0.01,
            n: 149,
            p: 3,
            smallest_block: None,
        })
        .unwrap()
        .setting_b_sufficient();
        assert!((g.paper_sigma - paper).abs() <= HAND_COMPUTED * paper);
        assert!((g.growth_factor - dp.sigma / paper).abs() < HAND_COMPUTED);
        assert!((dp.columns[2].sigma - expected * 15.0).abs() <= HAND_COMPUTED * expected * 15.0);
        // DP scales the record: x_max is 1 plus six DP standard deviations on that scale.
        let allowance = DP_ALLOWANCE_SDS * expected;
        assert!((plan.x_max - (1.0 + allowance)).abs() < HAND_COMPUTED * plan.x_max);
        assert_eq!(plan.scaling.as_ref().unwrap().len(), 3);
        assert!(plan.design().unwrap().dp().is_some());
        // Too small a cohort for the budget: one line naming the cohort.
        request.cohorts = cohorts(4, 200);
        let e = Plan::new(&request).unwrap_err().to_string();
        assert!(
            e.starts_with("DP: calibrating the noise for cohorts of 4"),
            "{e}"
        );
        // A reversed range cannot be scaled.
        let mut bad = dp_request(1);
        bad.ranges[0].hi = -1.0;
        assert!(matches!(
            plan_dp(&bad, cohorts(200, 200)),
            Err(PlanError::Ranges(_))
        ));
    }

    /// By hand (dp crate, `tests/device_mechanism.rs`, checked against SciPy): ε = 0.1, δ = 0.01,
    /// one answer, cohorts of 101 give σ* ≈ 8.560139.
    #[test]
    fn dp_sigma_matches_the_hand_computed_mechanism() {
        let request = DpRequest {
            epsilon: 0.1,
            delta: 0.01,
            ranges: vec![DeclaredRange {
                name: "a".into(),
                lo: 0.0,
                hi: 1.0,
            }],
        };
        let dp = plan_dp(&request, cohorts(101, 101)).unwrap();
        assert!(
            (dp.sigma - 8.560139).abs() < QUOTED_SIGMA_RELATIVE * 8.560139,
            "{}",
            dp.sigma
        );
        // An old stored DP record without a guarantee still reads.
        let old = r#"{"epsilon": 0.5, "delta": 0.01, "sigma": 2.0, "smallest_cohort": 20,
            "columns": []}"#;
        let parsed: DpNoise = serde_json::from_str(old).unwrap();
        assert!(parsed.guarantee.is_none());
    }

    /// Issue 21 §1, the counterexample: two answers, one kept, cohorts of 101, (ε, δ) =
    /// (0.5, 10⁻⁵). The σ calibrated for the masked view is 6.653; the kept column alone would be
    /// released row by row as a Gaussian mechanism of sensitivity 2 with that σ, whose exact δ at
    /// ε = 0.5 is 7.6515·10⁻³ (SciPy: `norm.cdf(Δ/2σ − εσ/Δ) − e^ε·norm.cdf(−Δ/2σ − εσ/Δ)`),
    /// 765 times the budget. The plan refuses the combination with one line.
    #[test]
    fn dp_with_kept_columns_is_refused() {
        let mut request = PlanRequest::new(2, Some(888.0), cohorts(101, 101), 1.0);
        request.kept_columns = 1;
        let mut dp = dp_request(2);
        dp.epsilon = 0.5;
        dp.delta = 1e-5;
        request.dp = Some(dp);
        let e = Plan::new(&request).unwrap_err();
        assert!(matches!(e, PlanError::DpWithKeptColumns { kept: 1 }), "{e}");
        assert!(!e.to_string().contains('\n'));
        // The numbers of the counterexample, against SciPy.
        let sigma = CohortMechanism::new(2, 101)
            .unwrap()
            .calibrate(0.5, 1e-5)
            .unwrap()
            .sigma();
        assert!((sigma - 6.653).abs() < THREE_DECIMALS, "{sigma}");
        let kept_alone =
            orthomask_dp::gaussian_mechanism::gaussian_mechanism_delta(2.0, 6.653, 0.5).unwrap();
        assert!(
            (kept_alone - 7.651_536e-3).abs() < QUOTED_DELTA,
            "{kept_alone}"
        );
        // Without the kept column the same request plans.
        request.kept_columns = 0;
        assert!(Plan::new(&request).is_ok());
    }

    /// Issue 21 §3: σ is checked at every cohort size the survey can release (D11′), so the plan
    /// states the worst δ over them, and it is within the budget at each size — recomputed here
    /// one size at a time with the recorded split.
    #[test]
    fn dp_holds_at_every_cohort_size_the_survey_can_release() {
        let mut request = PlanRequest::new(3, Some(888.0), cohorts(30, 60), 1.0);
        request.dp = Some(dp_request(3));
        let plan = Plan::new(&request).unwrap();
        let dp = plan.dp.as_ref().unwrap();
        let g = dp.guarantee.as_ref().unwrap();
        assert_eq!(g.largest_cohort, Some(60));
        assert!(
            g.covers
                .as_deref()
                .unwrap()
                .contains("not the masking service provider")
        );
        let mechanism = CohortMechanism::new(3, 30).unwrap();
        let split = orthomask_dp::device::BudgetSplit {
            epsilon_sum: g.epsilon_sums,
            delta_sum: g.delta_sums,
            epsilon_complement: g.epsilon_complement,
            delta_complement: g.delta_complement,
        };
        for n in 30..=60 {
            let at_n = mechanism.delta_with_split(n, dp.sigma, &split).unwrap();
            assert!(at_n <= 0.01, "cohort of {n}: δ = {at_n}");
            assert!(at_n <= g.delta * (1.0 + HAND_COMPUTED), "cohort of {n}");
        }
    }

    /// Issue 43: the plan keeps the policy's QA constant unless the QA floor (`crate::floors`,
    /// (Q2)) is higher, then takes the floor rounded up. Unscaled answers up to 888 (records of
    /// length about 1.7·10⁴) need a constant of 1.7·10⁻³ and keep 888; answers up to 10¹² make
    /// records of about 2·10¹³, whose floor is about 2·10⁶. A constant chosen by hand is the
    /// caller's, and a scaled record carries any constant as ±1, so there the default stays.
    #[test]
    fn the_plan_raises_the_qa_constant_only_above_its_floor() {
        use crate::floors::QaFloor;
        let usual = Plan::new(&PlanRequest::new(4, Some(888.0), cohorts(20, 20), 888.0)).unwrap();
        assert_eq!(usual.qa_constant, Some(DEFAULT_QA_CONSTANT));
        let floor = QaFloor::of(&usual.design().unwrap(), 888.0, None);
        assert!(
            floor.entry > 1.6e-3 && floor.entry < 1.8e-3,
            "{}",
            floor.entry
        );
        let huge = Plan::new(&PlanRequest::new(4, Some(888.0), cohorts(20, 20), 1e12)).unwrap();
        let floor = QaFloor::of(&huge.design().unwrap(), 1e12, None);
        assert!(floor.entry > 1e6 && floor.entry < 1e7, "{}", floor.entry);
        assert_eq!(huge.qa_constant, Some(floor.entry.ceil()));
        assert!(floor.revealed(floor.entry.ceil()) <= crate::policy::QA_REVEALS);
        let by_hand = Plan::new(&PlanRequest::new(4, Some(5.0), cohorts(20, 20), 1e12)).unwrap();
        assert_eq!(by_hand.qa_constant, Some(5.0));
        let scaled = Plan::new(&scaled(4, 20)).unwrap();
        assert_eq!(scaled.qa_constant, Some(888.0));
    }

    /// Plans stored by the collector before `qa_constant` and `delta` were recorded read back
    /// with the values those plans used.
    #[test]
    fn stored_plans_keep_their_meaning() {
        let old = r#"{"p1": 5, "p2": 503, "sigma": 1.5, "x_max": 888.0,
            "appendix_c": {"sigma_min": 1.0, "failure_probability": 1e-7, "gamma": 25.15, "delta": 0.5},
            "dp": null}"#;
        let plan: Plan = serde_json::from_str(old).unwrap();
        assert!(
            plan.qa_constant
                .is_some_and(|c| (c - DEFAULT_QA_CONSTANT).abs() < HAND_COMPUTED)
        );
        assert!((plan.delta - APPENDIX_C_DELTA).abs() < HAND_COMPUTED);
        assert_eq!(plan.answers(), 4);
        let again: Plan = serde_json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();
        assert_eq!(again, plan);
    }

    /// A request for `answers` scaled answers (declared ranges) and the QA column, one cohort
    /// size `m`.
    fn scaled(answers: usize, m: usize) -> PlanRequest {
        let mut request = PlanRequest::new(answers, Some(888.0), cohorts(m, m), 1.0);
        request.ranges = Some(dp_request(answers).ranges);
        request
    }

    /// Issue 21 §4: the policy's columns for a cohort of 200 with 5 scaled answers are expected
    /// to lose 2.14 digits, so the plan adds columns until the loss is at most 2. The fewest
    /// that do, 1 844, come from a brute-force search in Python over p₂ with σ_min at the
    /// smallest δ meeting 10⁻⁶ (`R² = 5 + 1 + p₂σ²`, `3R² ≤ 10⁴`), not from (E7) solved.
    #[test]
    fn the_plan_adds_noise_columns_until_two_digits() {
        let plan = Plan::new(&scaled(5, 200)).unwrap();
        assert_eq!(plan.p2, 1844);
        let digits = plan.unmasking_accuracy().unwrap().expected_digits_lost();
        assert!(digits <= TARGET_DIGITS_LOST && digits > 1.99, "{digits}");
        assert!(plan.delta < APPENDIX_C_DELTA, "δ = {}", plan.delta);
        let recorded = plan.appendix_c.as_ref().unwrap();
        assert!(recorded.failure_probability <= FAILURE_TARGET * (1.0 + INVERTED_BOUND));
        assert!(plan.check(cohorts(200, 200), Strictness::Refuse).is_ok());
        assert_eq!(plan.accuracy_note, None);
        // One column fewer would not do: the policy's default design (1 030) loses more.
        let default = Plan::new(&PlanRequest {
            noise_columns: Some(1030),
            ..scaled(5, 200)
        })
        .unwrap();
        let lost = default.unmasking_accuracy().unwrap().expected_digits_lost();
        assert!((lost - 2.142).abs() < THREE_DECIMALS, "{lost}");
        assert!(
            default
                .accuracy_note
                .as_deref()
                .unwrap()
                .contains("chosen by hand"),
            "{:?}",
            default.accuracy_note
        );
    }

    /// Where condition (3.5) puts two digits out of reach the plan keeps the policy's columns
    /// and says why, with the floor (E8) and the largest cohort that would keep within it (both
    /// by brute force in Python: ½·log₁₀(3(11 + 1 500·10)) = 2.33; 169 is the largest cohort
    /// whose 4 085 columns reach two digits).
    #[test]
    fn a_cohort_too_large_for_two_digits_says_why() {
        let plan = Plan::new(&scaled(10, 1500)).unwrap();
        assert_eq!(plan.p2, default_noise_columns(1500).unwrap());
        let note = plan.accuracy_note.as_deref().expect("the plan says why");
        assert!(
            note.contains("expected to lose 3.0 significant digits"),
            "{note}"
        );
        assert!(
            note.contains("no number of noise columns loses fewer than 2.3"),
            "{note}"
        );
        assert!(
            note.contains("cohorts of at most 169 keep within it"),
            "{note}"
        );
    }

    /// The loss grows like log₁₀ m with the policy's columns ((E6): R² = 2·m·p_m·γ/(√γ − 1)²
    /// plus the record's own part): 1.31 digits for cohorts of 12 with 4 answers (Python, from
    /// the issue's factor 1.423), which needs no extra columns.
    #[test]
    fn small_cohorts_keep_the_policy_columns() {
        let plan = Plan::new(&scaled(4, 12)).unwrap();
        assert_eq!(plan.p2, default_noise_columns(12).unwrap());
        let digits = plan.unmasking_accuracy().unwrap().expected_digits_lost();
        assert!((digits - 1.314).abs() < THREE_DECIMALS, "{digits}");
        assert_eq!(plan.accuracy_note, None);
    }

    /// Share mode (E5): four scaled answers in cohorts of 10 split over three services with
    /// τ = 100 are expected to lose 2.6902102411341327 digits, against 1.2701493381775686 for
    /// the basic protocol (both by hand in Python from (E1), (E2) and (E5) with this plan's
    /// p₂ = 446 and σ); the release's note says why, and the basic figure.
    #[test]
    fn share_mode_says_what_its_shares_cost() {
        let plan = Plan::new(&scaled(4, 10)).unwrap();
        let basic = plan.release_accuracy(None).unwrap();
        let lost = basic.accuracy.expected_digits_lost();
        assert!(
            (lost - 1.270_149_338_177_568_6).abs() < DIGITS_BY_HAND,
            "{lost}"
        );
        assert_eq!(basic.note, None);
        let split = ShareSplit {
            services: 3,
            share_sigma: 100.0,
        };
        let shared = plan.release_accuracy(Some(split)).unwrap();
        let lost = shared.accuracy.expected_digits_lost();
        assert!(
            (lost - 2.690_210_241_134_132_7).abs() < DIGITS_BY_HAND,
            "{lost}"
        );
        let note = shared.note.unwrap();
        assert!(
            note.contains("split into 3 shares") && note.contains("basic protocol would lose 1.3"),
            "{note}"
        );
    }
}
