//! What a device and an accepting service demand of a survey definition, whoever signed it
//! (issue 20 §2–§3, issue 43).
//!
//! A definition is the collector's decision, and its signature proves only who decided. A
//! dishonest collector (or an edited template row) could sign a weak plan: no noise columns
//! (`p₂ = 0`: the provider learns `‖x‖²`, which for a single yes/no question is the answer),
//! σ below seed 000's Appendix C bound, no QA column or one that cannot reveal anything, cohorts
//! of two (whose left mask keeping `1ₙ` fixed is the identity or the swap), share mode over two
//! services, thin shares, DP noise below what its own (ε, δ) needs, or a design the services
//! cannot hold. So the device checks the policy's floors itself before it masks anything
//! ([`check`], called by `crate::trust::Deployment::accept`), and the accepting services check
//! the same floors on the template the collector registers with them and withhold cohorts below
//! [`Floors::cohort`], derived from that signed template — never from a number the collector
//! sends them apart. Every field a definition carries, and why it has a floor here or needs
//! none, is the table in `docs/threat-model.md` ("What a signed definition may not weaken").
//!
//! # The floors
//! With `m` the cohort size, `p₁` the data columns (answers and QA), `p_m` the answer columns
//! the masks move and `x_max` the largest answer the padded record carries (1 once scaled by
//! the declared ranges, plus [`DP_ALLOWANCE_SDS`] DP standard deviations with device-side DP):
//!
//! 1. a QA column (seed 003 §3.1), so that a batch altered on its way is caught;
//! 2. in share mode at least [`MIN_SHARE_SERVICES`] right-masking services (the policy's
//!    derivation: with two, the collector and one service read yes/no answers);
//! 3. what the services hold: `p ≤ MAX_P`, `m ≤ MAX_COHORT` and a full cohort's hand-over
//!    within `MAX_HANDOVER_BYTES` (`crate::policy`) — beyond them every upload is refused or
//!    the cohort can never be handed over, and the answers never reach a release;
//! 4. cohorts of at least `max(policy::cohort_floor(p₁), min_cohort_size)`, and `m` at least
//!    that (a cohort that can never reach its floor would be withheld every time);
//! 5. `p₂ ≥ noise_columns_for(m, δ, FAILURE_TARGET)` — more noise columns than participants
//!    (`p ≥ n`, Theorem 3.6), and enough that the Appendix C failure probability
//!    `exp(−m(√γ − 1)²(1 − √(1 − δ))²/2)` is at most [`FAILURE_TARGET`], which depends on
//!    `γ = p₂/m` alone;
//! 6. `σ ≥ σ_min`, Appendix C's `σ²_min = p_m x_max² / [(√γ − 1)²(1 − δ)]` for a full cohort,
//!    at the smallest δ for which `p₂` meets the failure target
//!    (`orthomask_core::protocol::design::smallest_delta_for`; at most δ = ½)
//!    (seed 000, Appendix C; the QA and kept columns cancel from condition (3.5), as
//!    `orthomask_core::protocol::design` derives), so that condition (3.5) holds outside that
//!    failure event;
//! 7. in share mode, shares whose noise is at least `SHARE_SCALE·x_max`
//!    (`SurveyDefinition::share_sigma_floor`; also checked when a definition is parsed, but an
//!    accepting service opens a template without its masking checks);
//! 8. a QA constant that lets the check reveal a change of [`QA_REVEALS`] ([`QaFloor`], below);
//! 9. with device-side DP, a σ_DP that meets the definition's own (ε, δ) at every cohort size it
//!    can release, from its minimum to `m` (`orthomask_dp::device`, (D9) and (D11)).
//!
//! # The QA floor (floor 8)
//! The collector removes the right masks and passes the QA column when every entry is within
//! `QA_RELATIVE·(|q| + s)` of `q` (`orthomask_core::protocol::qa::check_constant`), with `q` the
//! QA entry as the padded record carries it — `c`, or `c/|c| = ±1` when the device scales its
//! answers (`Tm2Design::record_qa_entry`; the collector multiplies the column back by `|c|` and
//! the scale with it, so the comparison is the same) — and `s` the rounding scale of the block:
//! the largest row norm of the masked block, in share mode the sum of the `K` services' (each
//! the largest row norm of its `A Xⁱ Bᵢ`).
//!
//! A left mask `M` in place of one keeping `1ₙ` fixed turns the QA column `q·1ₙ` into `q·M1ₙ`,
//! so a change `ρ = ‖M1ₙ − 1ₙ‖_∞` is revealed exactly when `|q|·ρ > QA_RELATIVE·(|q| + s)`:
//!
//! ```text
//! (Q1)   ρ_min = QA_RELATIVE · (1 + s/|q|)
//! ```
//!
//! is the smallest change the check reveals. With `c = 0` the column is `0` whatever `M` does,
//! and nothing is ever revealed; a `|c|` small next to `s` reveals only changes of many times
//! the constant itself. The policy asks `ρ_min ≤ QA_REVEALS` of an honest run.
//!
//! **The honest scale.** The masks are orthogonal, so a row of `A X B` has the length of a row of
//! `A X`, a unit combination of the cohort's records; the padding, the bulk of every record, is
//! i.i.d. `N(0, σ²)`, and for a fixed orthogonal `A` the rows of `A X₂` have that law again. So an
//! honest block's rows are as long as honest records, and `s` is the longest honest record
//! ([`UploadBounds`]: the answers, the DP noise and the padding by Laurent & Massart, at the
//! policy's false-refusal rate), `K` times the longest honest share in share mode. It depends on
//! `q` only through the QA entry's own square: `s(q) = √(s₀² + q²)`, with `s₀` the same bound
//! with the QA entry 0 (in share mode `K` shares each carrying `q/K`: `K·√(s₀,share² + q²/K²) =
//! √(s₀² + q²)`, `s₀ = K·s₀,share`).
//!
//! **The floor.** With `κ = QA_RELATIVE/(QA_REVEALS − QA_RELATIVE)`, (Q1) meets the target
//! exactly when `|q| ≥ κ·s(q)`, i.e. `q² ≥ κ²(s₀² + q²)`:
//!
//! ```text
//! (Q2)   |q| ≥ q_min = κ·s₀ / √(1 − κ²).
//! ```
//!
//! Unscaled, `q = c` and (Q2) is a floor on the constant; the plan keeps `DEFAULT_QA_CONSTANT`
//! unless `q_min` is higher, then takes `⌈q_min⌉` ([`QaFloor::planned_constant`]). Scaled, every
//! `c ≠ 0` carries `q = ±1`, so (Q2) asks `q_min ≤ 1` of the record length instead: a definition
//! whose noise (σ, `p₂`, DP noise, share noise) makes records so long that `ρ_min > QA_REVEALS`
//! is refused whatever its constant ([`FloorError::QaCheckBlind`]) — no constant can repair it,
//! and its release would lose as many digits to rounding as its check would miss.

use crate::definition::{DpParameters, SurveyDefinition};
use crate::intake_bounds::UploadBounds;
use crate::plan::ShareSplit;
use crate::policy::{
    APPENDIX_C_DELTA, DEFAULT_QA_CONSTANT, DP_ALLOWANCE_SDS, FAILURE_TARGET, MAX_COHORT,
    MAX_HANDOVER_BYTES, MAX_P, MIN_SHARE_SERVICES, QA_REVEALS, UPLOAD_FALSE_REFUSAL,
    check_min_cohort_size, cohort_floor, handover_bytes,
};
use orthomask_core::protocol::design::{appendix_c_bound, noise_columns_for, smallest_delta_for};
use orthomask_core::protocol::tm2::Tm2Design;
use orthomask_core::tolerance::QA_RELATIVE;
use orthomask_dp::device::{CohortMechanism, DeviceDpError};

/// A definition below one of the policy's floors; each message says what and by how much.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FloorError {
    /// No QA column.
    #[error(
        "the survey definition has no QA column, so a batch altered on its way could not be \
         detected; it was refused and nothing was sent"
    )]
    NoQaColumn,
    /// Share mode over fewer right-masking services than the policy's
    /// [`MIN_SHARE_SERVICES`] (`docs/threat-model.md`, "Share mode, two right-masking
    /// services": the collector with one of two reads yes/no answers).
    #[error(
        "the survey definition splits each answer over {found} right-masking services, below the \
         {needed} that keep the collector with one of them from reading yes/no answers; it was \
         refused and nothing was sent"
    )]
    TooFewShareServices {
        /// The services the definition names.
        found: usize,
        /// [`MIN_SHARE_SERVICES`].
        needed: usize,
    },
    /// A design the services cannot hold (`policy::MAX_P`, `policy::MAX_COHORT`,
    /// `policy::MAX_HANDOVER_BYTES`): its uploads or hand-overs would be refused, and no answer
    /// would ever be released.
    #[error(
        "the survey definition's {what} is {found}, above the {limit} the services hold, so its \
         answers could never be released; it was refused and nothing was sent"
    )]
    BeyondServiceLimit {
        /// What is too large.
        what: &'static str,
        /// The definition's value.
        found: u64,
        /// The policy's limit.
        limit: u64,
    },
    /// Cohorts too small to hide a record.
    #[error(
        "the survey definition lets a group of {found} answers be released, below the {floor} \
         that hide each answer among others; it was refused and nothing was sent"
    )]
    CohortBelowFloor {
        /// The smaller of the cohort size and the definition's own minimum.
        found: usize,
        /// The floor.
        floor: usize,
    },
    /// Too few noise columns for the cohort.
    #[error(
        "the survey definition pads answers with {found} noise values, below the {needed} a \
         group of {cohort} needs; it was refused and nothing was sent"
    )]
    TooFewNoiseColumns {
        /// `p₂` of the definition.
        found: usize,
        /// The policy's noise columns for the cohort size.
        needed: usize,
        /// The cohort size.
        cohort: usize,
    },
    /// Noise σ below the Appendix C bound.
    #[error(
        "the survey definition's noise level {found} is below the {needed} that hides its answers \
         (seed 000, Appendix C); it was refused and nothing was sent"
    )]
    NoiseBelowBound {
        /// σ of the definition.
        found: f64,
        /// The Appendix C bound σ_min.
        needed: f64,
    },
    /// Share noise below `SHARE_SCALE` times the largest answer the record carries
    /// (`SurveyDefinition::share_sigma_floor`; `orthomask_core::protocol::collusion`).
    #[error(
        "the survey definition's share noise {found} is below the {needed} that hides the answers \
         from each right-masking service; it was refused and nothing was sent"
    )]
    ShareNoiseBelowFloor {
        /// `share_sigma` of the definition.
        found: f64,
        /// The floor.
        needed: f64,
    },
    /// A QA constant whose check cannot reveal a change of [`QA_REVEALS`] ((Q2) of the module
    /// documentation): 0, or too small next to the records' length.
    #[error(
        "the survey definition's QA constant {found} is below the {floor} its QA check needs to \
         reveal a change of {QA_REVEALS:e} in how the masks act on the records (seed 003 §3.1); \
         it was refused and nothing was sent"
    )]
    QaConstantBelowFloor {
        /// The definition's QA constant.
        found: f64,
        /// `q_min` of (Q2).
        floor: f64,
    },
    /// Scaled records so long that no QA constant (carried as ±1) lets the check reveal a change
    /// of [`QA_REVEALS`] ((Q1)–(Q2) of the module documentation).
    #[error(
        "the survey definition's records reach a length of {scale:.3e} on the devices' scale, so \
         its QA check would miss any change below {revealed:.2e} in how the masks act on them, \
         above the policy's {QA_REVEALS:e}; it was refused and nothing was sent"
    )]
    QaCheckBlind {
        /// The rounding scale `s(1)` of an honest block.
        scale: f64,
        /// `ρ_min` of (Q1) at `|q| = 1`.
        revealed: f64,
    },
    /// Device-side DP noise that does not give the definition's own (ε, δ) for some cohort size
    /// it can release (`orthomask_dp::device`, (D9), (D11)).
    #[error(
        "the survey definition's DP noise {sigma} guarantees only δ = {found:.3e} at ε = {epsilon} \
         for a group of {cohort}, above the δ = {stated:e} it states; it was refused and nothing \
         was sent"
    )]
    DpAboveBudget {
        /// σ_DP of the definition (on the `[−1, 1]` scale).
        sigma: f64,
        /// The definition's ε.
        epsilon: f64,
        /// The definition's δ.
        stated: f64,
        /// The δ that σ_DP guarantees at ε (1: none can be derived for this group size).
        found: f64,
        /// The cohort size at which it falls short.
        cohort: usize,
    },
    /// The floors cannot be computed (a design outside the bound's domain).
    #[error("the survey definition's masking cannot be checked: {0}")]
    Unchecked(String),
}

/// The floor on the QA entry of one design ((Q2) of the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QaFloor {
    /// `s₀`: the rounding scale of an honest block without the QA entry (the longest honest
    /// record, `K` times the longest honest share in share mode, with the QA entry 0).
    pub scale_without_qa: f64,
    /// `q_min`: the least `|q|` (the QA entry as the record carries it) whose check reveals a
    /// change of [`QA_REVEALS`].
    pub entry: f64,
}

impl QaFloor {
    /// The floor for records of `design` whose answers are at most `answers_bound` as the record
    /// carries them (1 scaled), split as `share` says (`None`: the basic protocol).
    pub fn of(design: &Tm2Design, answers_bound: f64, share: Option<ShareSplit>) -> Self {
        let services = share.map_or(1, |s| s.services) as f64;
        let longest = UploadBounds::of_design(
            design,
            answers_bound,
            share,
            Some(0.0),
            UPLOAD_FALSE_REFUSAL,
        )
        .longest_upload();
        let scale_without_qa = services * longest;
        let kappa = QA_RELATIVE / (QA_REVEALS - QA_RELATIVE);
        Self {
            scale_without_qa,
            entry: kappa * scale_without_qa / (1.0 - kappa * kappa).sqrt(),
        }
    }

    /// `s(q) = √(s₀² + q²)`: the rounding scale of an honest block whose records carry `q`.
    pub fn scale(&self, q: f64) -> f64 {
        self.scale_without_qa.hypot(q)
    }

    /// (Q1): the smallest relative change of the masks' action on `1ₙ` the QA check reveals
    /// when the records carry `q` (infinite for `q = 0`: nothing is revealed).
    pub fn revealed(&self, q: f64) -> f64 {
        QA_RELATIVE * (1.0 + self.scale(q) / q.abs())
    }

    /// The QA constant the collector's plan gives a design with this floor: the policy's
    /// [`DEFAULT_QA_CONSTANT`] unless `q_min` is higher, then `⌈q_min⌉`. A device that scales
    /// carries any constant as ±1 (module documentation), so there the default stays and the
    /// record length alone decides.
    pub fn planned_constant(&self, scaled: bool) -> f64 {
        if scaled || self.entry <= DEFAULT_QA_CONSTANT {
            DEFAULT_QA_CONSTANT
        } else {
            self.entry.ceil()
        }
    }
}

/// The floors one definition is held to ([`check`]), and the cohort floor the services use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Floors {
    /// The fewest records a cohort of this survey is masked and released with.
    pub cohort: usize,
    /// The fewest noise columns for its cohort size.
    pub noise_columns: usize,
    /// Appendix C's σ_min for a full cohort.
    pub sigma: f64,
    /// The floor on the QA entry ((Q2)).
    pub qa: QaFloor,
}

impl Floors {
    /// The floors of `definition` (module documentation), without checking it against them.
    ///
    /// # Errors
    /// [`FloorError::Unchecked`] when the definition's design does not build or the bound is
    /// outside its domain; [`FloorError::TooFewNoiseColumns`] when `p₂` does not exceed the
    /// cohort size (the bound needs `γ > 1`).
    pub fn of(definition: &SurveyDefinition) -> Result<Self, FloorError> {
        let m = &definition.masking;
        let design = definition
            .design()
            .map_err(|e| FloorError::Unchecked(e.to_string()))?;
        let cohort = cohort_floor(design.p1()).max(m.min_cohort_size.unwrap_or(0));
        let noise_columns = noise_columns_for(m.cohort_size, APPENDIX_C_DELTA, FAILURE_TARGET)
            .map_err(|e| FloorError::Unchecked(e.to_string()))?;
        if m.p2 <= m.cohort_size {
            return Err(FloorError::TooFewNoiseColumns {
                found: m.p2,
                needed: noise_columns,
                cohort: m.cohort_size,
            });
        }
        let x_max = definition.record_answers_max()
            + m.dp.as_ref().map_or(0.0, |dp| DP_ALLOWANCE_SDS * dp.sigma);
        // The least σ that meets the failure target with these columns: Appendix C at the
        // smallest δ that reaches it (at most APPENDIX_C_DELTA once p₂ passes floor 5; plans
        // with extra columns for accuracy use exactly that δ, issue 21 §4).
        let delta = smallest_delta_for(m.cohort_size, m.p2, FAILURE_TARGET)
            .unwrap_or(APPENDIX_C_DELTA)
            .min(APPENDIX_C_DELTA);
        let bound = appendix_c_bound(m.cohort_size, design.answers().max(1), m.p2, x_max, delta)
            .map_err(|e| FloorError::Unchecked(e.to_string()))?;
        Ok(Self {
            cohort,
            noise_columns,
            sigma: bound.sigma_min,
            qa: QaFloor::of(
                &design,
                definition.record_answers_max(),
                definition.share_split(),
            ),
        })
    }
}

/// Why a cohort of `n` records must be withheld — neither masked nor released — under the
/// cohort floor `floor` ([`Floors::cohort`]), if it must: the one rule the provider applies
/// before masking and the collector applies to what it receives.
pub fn withheld_reason(n: usize, floor: usize) -> Option<String> {
    (n < floor).then(|| {
        format!(
            "{n} records, fewer than the {floor} needed to mask a cohort safely; the cohort is \
             withheld and nothing of it is released"
        )
    })
}

/// Check `definition` against every floor (module documentation) and return them.
///
/// # Errors
/// The first [`FloorError`], in the module documentation's order.
pub fn check(definition: &SurveyDefinition) -> Result<Floors, FloorError> {
    let m = &definition.masking;
    let Some(constant) = m.qa_constant else {
        return Err(FloorError::NoQaColumn);
    };
    if let Some(share) = &m.share_mode
        && share.providers.len() < MIN_SHARE_SERVICES
    {
        return Err(FloorError::TooFewShareServices {
            found: share.providers.len(),
            needed: MIN_SHARE_SERVICES,
        });
    }
    check_service_limits(definition)?;
    let floors = Floors::of(definition)?;
    let design = definition
        .design()
        .map_err(|e| FloorError::Unchecked(e.to_string()))?;
    let p1 = design.p1();
    // The policy's rule for a minimum, in a participant's words; absent, the minimum is the
    // policy's floor (`Masking::min_cohort_size`).
    let policy_floor = cohort_floor(p1);
    let min = m.min_cohort_size.unwrap_or(policy_floor);
    if check_min_cohort_size(p1, m.cohort_size, min).is_err() {
        return Err(FloorError::CohortBelowFloor {
            found: m.cohort_size.min(min),
            floor: floors.cohort.max(policy_floor),
        });
    }
    if m.p2 < floors.noise_columns {
        return Err(FloorError::TooFewNoiseColumns {
            found: m.p2,
            needed: floors.noise_columns,
            cohort: m.cohort_size,
        });
    }
    if m.sigma < floors.sigma {
        return Err(FloorError::NoiseBelowBound {
            found: m.sigma,
            needed: floors.sigma,
        });
    }
    if let Some(share) = &m.share_mode {
        let needed = definition
            .share_sigma_floor()
            .map_err(|e| FloorError::Unchecked(e.to_string()))?;
        // A NaN is no noise either.
        if share.share_sigma.is_nan() || share.share_sigma < needed {
            return Err(FloorError::ShareNoiseBelowFloor {
                found: share.share_sigma,
                needed,
            });
        }
    }
    check_qa(&design, constant, &floors.qa)?;
    if let Some(dp) = &m.dp {
        check_dp(design.answers(), min, m.cohort_size, dp)?;
    }
    Ok(floors)
}

/// Floor 3: a record, a cohort and a full cohort's hand-over the services hold. `p₂` and `m`
/// are compared before anything is computed from them, so a hostile number cannot overflow.
fn check_service_limits(definition: &SurveyDefinition) -> Result<(), FloorError> {
    let m = &definition.masking;
    let beyond = |what, found: usize, limit: usize| FloorError::BeyondServiceLimit {
        what,
        found: found as u64,
        limit: limit as u64,
    };
    if m.p2 > MAX_P {
        return Err(beyond("record length p", m.p2, MAX_P));
    }
    if m.cohort_size > MAX_COHORT {
        return Err(beyond("cohort size", m.cohort_size, MAX_COHORT));
    }
    let p = definition
        .design()
        .map_err(|e| FloorError::Unchecked(e.to_string()))?
        .p();
    if p > MAX_P {
        return Err(beyond("record length p", p, MAX_P));
    }
    let bytes = handover_bytes(m.cohort_size, p);
    if bytes > MAX_HANDOVER_BYTES {
        return Err(FloorError::BeyondServiceLimit {
            what: "hand-over of a full cohort (bytes)",
            found: bytes,
            limit: MAX_HANDOVER_BYTES,
        });
    }
    Ok(())
}

/// Floor 8, (Q2): the records' QA entry against `q_min`.
fn check_qa(design: &Tm2Design, constant: f64, floor: &QaFloor) -> Result<(), FloorError> {
    let q = design.record_qa_entry().unwrap_or(0.0);
    if q.abs() >= floor.entry {
        return Ok(());
    }
    if design.scaler().is_some() && floor.entry > 1.0 {
        // A scaled record carries every constant as ±1: no constant reaches the floor.
        return Err(FloorError::QaCheckBlind {
            scale: floor.scale(1.0),
            revealed: floor.revealed(1.0),
        });
    }
    Err(FloorError::QaConstantBelowFloor {
        found: constant,
        floor: floor.entry,
    })
}

/// Floor 9: σ_DP gives the stated (ε, δ) at every cohort size from `smallest` to `largest`
/// ((D11): the release is as private as its least private cohort, and δ(σ, ε) is not claimed
/// monotone in the cohort size, so each size is checked). Each size is first checked with the
/// best split (D9) at the smallest — the split the plan keeps for every size
/// (`CohortMechanism::calibrate_for_sizes`), so a planned σ passes on that one evaluation per
/// size — and a size that fails it gets its own best split, which is a valid guarantee for that
/// size too (any split is), so no honest σ is refused for the split chosen.
fn check_dp(
    answers: usize,
    smallest: usize,
    largest: usize,
    dp: &DpParameters,
) -> Result<(), FloorError> {
    let short = |found: f64, cohort: usize| FloorError::DpAboveBudget {
        sigma: dp.sigma,
        epsilon: dp.epsilon,
        stated: dp.delta,
        found,
        cohort,
    };
    let unchecked = |e: DeviceDpError| FloorError::Unchecked(e.to_string());
    let largest = largest.max(smallest);
    // A cohort too small for the mechanism's derivation (`n_s − 1 > p`) has no guarantee: δ = 1.
    let Ok(mechanism) = CohortMechanism::new(answers as u64, smallest as u64) else {
        return Err(short(1.0, smallest));
    };
    let split = mechanism
        .split_at(dp.sigma, dp.epsilon)
        .map_err(unchecked)?;
    for n in smallest..=largest {
        let mut delta = mechanism
            .delta_with_split(n as u64, dp.sigma, &split)
            .map_err(unchecked)?;
        if delta.is_nan() || delta > dp.delta {
            delta = CohortMechanism::new(answers as u64, n as u64)
                .map_err(DeviceDpError::from)
                .and_then(|sized| sized.delta_at(dp.sigma, dp.epsilon))
                .map_err(unchecked)?;
        }
        if delta.is_nan() || delta > dp.delta {
            return Err(short(delta, n));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draft::{Endpoints, SurveyDraft, hydrate, plan_survey};
    use crate::tolerance::{HAND_COMPUTED, QA_FLOOR_MARGIN};
    use orthomask_core::key::Key;

    /// A planned survey of the services' test shape (a yes/no, an integer and two numbers:
    /// four answers, `p₁ = 5`) with cohorts of `m`.
    fn planned(m: usize) -> SurveyDefinition {
        planned_with(m, 0, None)
    }

    /// The test shape with cohorts of `m`, in share mode over `services` right-masking services
    /// (0: the basic protocol) and with device-side DP at `dp = (ε, δ)`.
    fn planned_with(m: usize, services: usize, dp: Option<(f64, f64)>) -> SurveyDefinition {
        let mut json = serde_json::json!({
            "id": "s", "title": "T", "consent": "ok",
            "questions": [
                {"id": "smoker", "label": "Smoke?", "kind": "yes_no"},
                {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90},
                {"id": "income", "label": "Income", "kind": "number", "min": 0, "max": 250},
                {"id": "score", "label": "Score", "kind": "number", "min": 0, "max": 100}
            ],
            "cohort_size": m, "share_mode": services > 0, "invitations": true
        });
        if let Some((epsilon, delta)) = dp {
            json["dp"] = serde_json::json!({"epsilon": epsilon, "delta": delta});
        }
        plan_and_hydrate(&serde_json::from_value(json).unwrap(), services)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Plan `draft` as the collector does, over `services` right-masking services, and hand out
    /// cohort 3's definition.
    fn plan_and_hydrate(
        draft: &SurveyDraft,
        services: usize,
    ) -> Result<SurveyDefinition, crate::draft::DraftError> {
        let rights: Vec<String> = (0..services).map(|i| format!("http://r{i}")).collect();
        let planned = plan_survey(
            draft,
            Endpoints {
                provider: "http://m",
                right_services: &rights,
            },
        )?;
        Ok(hydrate(
            &planned.template,
            services,
            3,
            &Key::from_bytes([5; 32]),
        ))
    }

    /// The sample survey `www/surveys/leaps-demo.json`: unscaled answers (up to 100) and
    /// σ = 938.36, so its QA entry is the constant itself.
    fn unscaled() -> SurveyDefinition {
        SurveyDefinition::parse(
            include_str!("../../../www/surveys/leaps-demo.json"),
            "leaps-demo.json",
        )
        .unwrap()
    }

    /// What the collector's own plan produces passes, with the floors the plan chose above.
    #[test]
    fn a_planned_definition_meets_every_floor() {
        let d = planned(20);
        let floors = check(&d).unwrap();
        // p₁ = 5: p₁ + 1 = 6 binds, above the anonymity set of five.
        assert_eq!(floors.cohort, 6);
        assert_eq!(floors.noise_columns, 503);
        assert!(d.masking.sigma > floors.sigma);
    }

    /// Issue 20 §3: each downgrade a dishonest collector could sign is refused, naming it.
    #[test]
    fn each_downgrade_is_refused_with_one_line() {
        let refusal = |edit: &dyn Fn(&mut SurveyDefinition)| {
            let mut d = planned(20);
            edit(&mut d);
            let e = check(&d).unwrap_err();
            let text = e.to_string();
            assert!(!text.contains('\n') && text.contains("refused"), "{text}");
            e
        };
        // No noise columns at all: the provider would read ‖x‖².
        assert!(matches!(
            refusal(&|d| d.masking.p2 = 0),
            FloorError::TooFewNoiseColumns { found: 0, .. }
        ));
        // Noise columns above the cohort, yet short of the failure target.
        assert!(matches!(
            refusal(&|d| d.masking.p2 = 25),
            FloorError::TooFewNoiseColumns { needed: 503, .. }
        ));
        // σ a little below the bound.
        let bound = check(&planned(20)).unwrap().sigma;
        assert!(matches!(
            refusal(&|d| d.masking.sigma = bound * 0.999),
            FloorError::NoiseBelowBound { .. }
        ));
        assert!(matches!(
            refusal(&|d| d.masking.qa_constant = None),
            FloorError::NoQaColumn
        ));
        // Cohorts of two (identity or swap), or a minimum of two under a cohort of twenty.
        assert!(matches!(
            refusal(&|d| d.masking.cohort_size = 2),
            FloorError::CohortBelowFloor { .. } | FloorError::TooFewNoiseColumns { .. }
        ));
        assert!(matches!(
            refusal(&|d| d.masking.min_cohort_size = Some(2)),
            FloorError::CohortBelowFloor { found: 2, floor: 6 }
        ));
        // Issue 43 §2: a QA constant of 0 reads 0 under every left mask, so nothing is revealed.
        assert!(matches!(
            refusal(&|d| d.masking.qa_constant = Some(0.0)),
            FloorError::QaConstantBelowFloor { found: 0.0, .. }
        ));
        // Noise inflated until the QA check goes blind (and the release loses its digits): no
        // constant repairs a scaled record, which carries it as ±1.
        let blind = refusal(&|d| d.masking.sigma = 1e6);
        assert!(
            matches!(blind, FloorError::QaCheckBlind { revealed, .. } if revealed > QA_REVEALS),
            "{blind}"
        );
        // A design the services cannot hold: its answers would never be released.
        for (edit, what) in [
            (
                (|d: &mut SurveyDefinition| d.masking.p2 = MAX_P + 1) as fn(&mut SurveyDefinition),
                "record length p",
            ),
            (|d| d.masking.cohort_size = MAX_COHORT + 1, "cohort size"),
            // 10 000 records of p = 40 005: 4.3 GB, over the 537 MB limit.
            (
                |d| {
                    d.masking.cohort_size = MAX_COHORT;
                    d.masking.p2 = 40_000;
                },
                "hand-over of a full cohort (bytes)",
            ),
        ] {
            let e = refusal(&edit);
            assert!(
                matches!(e, FloorError::BeyondServiceLimit { what: w, found, limit }
                    if w == what && found > limit),
                "{e}"
            );
        }
    }

    /// Issue 43 §1: share mode over two right-masking services lets the collector with one of
    /// them read yes/no answers (`policy::MIN_SHARE_SERVICES`); three pass. Thin shares are
    /// refused too — an accepting service opens a template without the parser's masking checks,
    /// so the floors carry them.
    #[test]
    fn share_mode_needs_three_services_and_thick_shares() {
        let three = planned_with(20, 3, None);
        check(&three).unwrap();
        let refused = |d: &SurveyDefinition| {
            let e = check(d).unwrap_err();
            let text = e.to_string();
            assert!(!text.contains('\n') && text.contains("refused"), "{text}");
            e
        };
        let mut two = three.clone();
        if let Some(share) = two.masking.share_mode.as_mut() {
            share.providers.pop();
        }
        assert_eq!(
            refused(&two),
            FloorError::TooFewShareServices {
                found: 2,
                needed: 3
            }
        );
        assert!(
            refused(&two)
                .to_string()
                .starts_with("the survey definition splits each answer over 2 right-masking")
        );
        let mut thin = three.clone();
        let needed = thin.share_sigma_floor().unwrap();
        // Scaled answers: the floor is SHARE_SCALE·1.
        assert!((needed - crate::policy::SHARE_SCALE).abs() < HAND_COMPUTED * needed);
        if let Some(share) = thin.masking.share_mode.as_mut() {
            share.share_sigma = needed * 0.99;
        }
        assert!(matches!(
            refused(&thin),
            FloorError::ShareNoiseBelowFloor { found, needed: n }
                if (found - 0.99 * needed).abs() < HAND_COMPUTED * needed && n == needed
        ));
    }

    /// Issue 43 §2, (Q2) on a definition whose QA entry is its constant (unscaled answers): 0
    /// and the largest constant below the floor are refused, the floor itself is accepted, each
    /// refusal naming the constant and the floor.
    #[test]
    fn the_qa_constant_is_refused_below_its_floor_and_accepted_at_it() {
        let d = unscaled();
        let floor = check(&d).unwrap().qa.entry;
        assert!(floor > 0.0 && floor < DEFAULT_QA_CONSTANT);
        let with = |c: f64| {
            let mut d = d.clone();
            d.masking.qa_constant = Some(c);
            check(&d)
        };
        for c in [0.0, f64::from_bits(floor.to_bits() - 1), -floor / 2.0] {
            let e = with(c).unwrap_err();
            assert_eq!(
                e,
                FloorError::QaConstantBelowFloor { found: c, floor },
                "{c}"
            );
            let text = e.to_string();
            assert!(
                text.contains(&format!("QA constant {c} is below the {floor}"))
                    && text.contains("a change of 1e-2")
                    && !text.contains('\n'),
                "{text}"
            );
        }
        with(floor).unwrap();
        with(-floor).unwrap();
        with(DEFAULT_QA_CONSTANT).unwrap();
    }

    /// (Q1)–(Q2) against the check itself (`orthomask_core::protocol::qa::check_constant`, which
    /// shares no code with the floor): at the floor, an honest block's check reveals a change of
    /// the masks' action on `1ₙ` just above [`QA_REVEALS`] and misses one just below; at half the
    /// floor it misses one just above.
    #[test]
    fn at_the_floor_the_check_reveals_exactly_the_policys_change() {
        use orthomask_core::protocol::qa::check_constant;
        let floor = check(&unscaled()).unwrap().qa;
        let reveals = |c: f64, rho: f64| {
            // The QA column of `q·M1ₙ` with one entry moved by ρ, unmasked at the honest scale.
            let column = [c, c * (1.0 + rho), c];
            !check_constant(&column, c, floor.scale(c)).passed()
        };
        let (above, below) = (
            QA_REVEALS * (1.0 + QA_FLOOR_MARGIN),
            QA_REVEALS * (1.0 - QA_FLOOR_MARGIN),
        );
        assert!(reveals(floor.entry, above));
        assert!(!reveals(floor.entry, below));
        assert!(!reveals(floor.entry / 2.0, above));
        // (Q1) at the floor is the target.
        assert!(
            (floor.revealed(floor.entry) - QA_REVEALS).abs() < HAND_COMPUTED * QA_REVEALS,
            "{}",
            floor.revealed(floor.entry)
        );
    }

    /// (Q2) by hand for the test survey (four scaled answers, `m = 20`, `p₂ = 503`, no DP, the
    /// basic protocol): `t = ln(3·10⁹)`, `U = 503 + 2√(503t) + 2t`, `s₀² = (4 + σ²U)(1 + 10⁻⁹)`
    /// (`intake_bounds` with the QA entry 0), `κ = 10⁻⁹/(10⁻² − 10⁻⁹)`, `q_min = κs₀/√(1 − κ²)`:
    /// about 1.9·10⁻⁶, far below the ±1 the record carries, so the check reveals changes of
    /// `10⁻⁹(1 + √(s₀² + 1)) ≈ 2·10⁻⁸`.
    #[test]
    fn the_qa_floor_is_q2_by_hand() {
        let d = planned(20);
        let floors = check(&d).unwrap();
        let t = (3.0f64 / 1e-9).ln();
        let u = 503.0 + 2.0 * (503.0 * t).sqrt() + 2.0 * t;
        let sigma = d.masking.sigma;
        let s0 = ((4.0 + sigma * sigma * u) * (1.0 + 1e-9)).sqrt();
        let kappa = 1e-9 / (1e-2 - 1e-9);
        let q_min = kappa * s0 / (1.0 - kappa * kappa).sqrt();
        assert!((floors.qa.scale_without_qa - s0).abs() < HAND_COMPUTED * s0);
        assert!((floors.qa.entry - q_min).abs() < HAND_COMPUTED * q_min);
        assert!(floors.qa.entry < 2e-6 && floors.qa.entry > 1.9e-6);
        let revealed = floors.qa.revealed(1.0);
        assert!(
            (revealed - 1e-9 * (1.0 + (s0 * s0 + 1.0).sqrt())).abs() < HAND_COMPUTED * revealed
        );
        assert!(revealed < 2.1e-8 && revealed > 2.0e-8, "{revealed}");
    }

    /// Device-side DP: the planned σ_DP meets the definition's own (ε, δ) at every cohort size
    /// it may release; half of it does not, nor does the planned σ once the minimum cohort is
    /// lowered below the size it was calibrated for (the plan's DP cohorts are full ones).
    #[test]
    fn dp_noise_must_give_the_stated_budget_at_every_releasable_size() {
        let d = planned_with(20, 0, Some((1.0, 1e-5)));
        assert_eq!(d.masking.min_cohort_size, Some(20));
        check(&d).unwrap();
        let refused = |d: &SurveyDefinition| {
            let e = check(d).unwrap_err();
            let text = e.to_string();
            assert!(!text.contains('\n') && text.contains("refused"), "{text}");
            e
        };
        let mut thin = d.clone();
        if let Some(dp) = thin.masking.dp.as_mut() {
            dp.sigma /= 2.0;
        }
        assert!(matches!(
            refused(&thin),
            FloorError::DpAboveBudget { found, stated, cohort: 20, .. } if found > stated
        ));
        let mut smaller = d.clone();
        smaller.masking.min_cohort_size = Some(6);
        assert!(matches!(
            refused(&smaller),
            FloorError::DpAboveBudget { found, stated, cohort, .. }
                if found > stated && cohort < 20
        ));
    }

    /// Issue 43: whatever the design — one answer or three hundred, cohorts of the smallest size
    /// to 2 000, with or without DP, basic protocol or share mode over three or five services —
    /// the collector's plan is a definition every device accepts, with the policy's QA constant
    /// (a scaled record carries it as ±1). The one design of the grid whose records are too long
    /// for the QA check to reveal a change of [`QA_REVEALS`] — 300 answers in the smallest
    /// cohorts, DP at ε = 0.1, five services: records of 1.7·10⁷ on the devices' scale — is
    /// refused by the plan with the floor's one line, not planned for devices to refuse.
    #[test]
    fn the_planners_designs_meet_every_floor() {
        let draft = |answers: usize, m: usize, dp: Option<(f64, f64)>, share: bool| {
            let questions: Vec<serde_json::Value> = (0..answers)
                .map(|i| {
                    if i % 2 == 0 {
                        serde_json::json!({"id": format!("q{i}"), "label": "?", "kind": "yes_no"})
                    } else {
                        serde_json::json!({"id": format!("q{i}"), "label": "?", "kind": "number",
                            "min": -5, "max": 100})
                    }
                })
                .collect();
            let mut json = serde_json::json!({
                "id": "s", "title": "T", "consent": "ok", "questions": questions,
                "cohort_size": m, "share_mode": share, "invitations": true
            });
            if let Some((epsilon, delta)) = dp {
                json["dp"] = serde_json::json!({"epsilon": epsilon, "delta": delta});
            }
            serde_json::from_value::<SurveyDraft>(json).unwrap()
        };
        let strong = Some((0.1, 1e-5));
        let mut planned = 0;
        for (answers, cohorts) in [
            (1, &[5, 20, 250, 2000][..]),
            (4, &[20, 250, 2000]),
            (300, &[302, 2000]),
        ] {
            for &m in cohorts {
                for dp in [None, Some((1.0, 1e-5)), strong] {
                    for services in [0, 3, 5] {
                        let what =
                            format!("{answers} answers, m = {m}, DP {dp:?}, {services} services");
                        let result =
                            plan_and_hydrate(&draft(answers, m, dp, services > 0), services);
                        if (answers, m, dp, services) == (300, 302, strong, 5) {
                            let e = result.unwrap_err();
                            assert!(
                                matches!(
                                    e,
                                    crate::draft::DraftError::Floor(FloorError::QaCheckBlind {
                                        revealed,
                                        ..
                                    }) if revealed > QA_REVEALS
                                ),
                                "{what}: {e}"
                            );
                            continue;
                        }
                        let d = result.unwrap_or_else(|e| panic!("{what}: {e}"));
                        let floors = check(&d).unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert_eq!(d.masking.qa_constant, Some(DEFAULT_QA_CONSTANT), "{what}");
                        assert!(floors.qa.revealed(1.0) <= QA_REVEALS, "{what}");
                        planned += 1;
                    }
                }
            }
        }
        assert_eq!(planned, 3 * 3 * (4 + 3 + 2) - 1);
    }
}
