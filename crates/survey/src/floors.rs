//! What a device and an accepting service demand of a survey definition, whoever signed it
//! (issue 20 §2–§3).
//!
//! A definition is the collector's decision, and its signature proves only who decided. A
//! dishonest collector (or an edited template row) could sign a weak plan: no noise columns
//! (`p₂ = 0`: the provider learns `‖x‖²`, which for a single yes/no question is the answer),
//! σ below seed 000's Appendix C bound, no QA column, or cohorts of two (whose left mask keeping
//! `1ₙ` fixed is the identity or the swap). So the device checks the policy's floors itself
//! before it masks anything ([`check`], called by `crate::trust::Deployment::accept`), and the
//! accepting services check the same floors on the template the collector registers with them
//! and withhold cohorts below [`Floors::cohort`], derived from that signed template — never
//! from a number the collector sends them apart.
//!
//! # The floors
//! With `m` the cohort size, `p₁` the data columns (answers and QA), `p_m` the answer columns
//! the masks move and `x_max` the largest answer the padded record carries (1 once scaled by
//! the declared ranges, plus [`DP_ALLOWANCE_SDS`] DP standard deviations with device-side DP):
//!
//! 1. a QA column (seed 003 §3.1), so that a batch altered on its way is caught;
//! 2. cohorts of at least `max(policy::cohort_floor(p₁), min_cohort_size)`, and `m` at least
//!    that (a cohort that can never reach its floor would be withheld every time);
//! 3. `p₂ ≥ noise_columns_for(m, δ, FAILURE_TARGET)` — more noise columns than participants
//!    (`p ≥ n`, Theorem 3.6), and enough that the Appendix C failure probability
//!    `exp(−m(√γ − 1)²(1 − √(1 − δ))²/2)` is at most [`FAILURE_TARGET`], which depends on
//!    `γ = p₂/m` alone;
//! 4. `σ ≥ σ_min`, Appendix C's `σ²_min = p_m x_max² / [(√γ − 1)²(1 − δ)]` for a full cohort,
//!    at the smallest δ for which `p₂` meets the failure target
//!    (`orthomask_core::protocol::design::smallest_delta_for`; at most δ = ½)
//!    (seed 000, Appendix C; the QA and kept columns cancel from condition (3.5), as
//!    `orthomask_core::protocol::design` derives), so that condition (3.5) holds outside that
//!    failure event.
//!
//! In share mode the shares' scale is checked when the definition is parsed
//! (`SurveyDefinition::validate`: `share_sigma ≥ SHARE_SCALE·x_max`).

use crate::definition::SurveyDefinition;
use crate::policy::{
    APPENDIX_C_DELTA, DP_ALLOWANCE_SDS, FAILURE_TARGET, check_min_cohort_size, cohort_floor,
};
use orthomask_core::protocol::design::{appendix_c_bound, noise_columns_for, smallest_delta_for};

/// A definition below one of the policy's floors; each message says what and by how much.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FloorError {
    /// No QA column.
    #[error(
        "the survey definition has no QA column, so a batch altered on its way could not be \
         detected; it was refused and nothing was sent"
    )]
    NoQaColumn,
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
    /// The floors cannot be computed (a design outside the bound's domain).
    #[error("the survey definition's masking cannot be checked: {0}")]
    Unchecked(String),
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
        // smallest δ that reaches it (at most APPENDIX_C_DELTA once p₂ passes floor 3; plans
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
    if m.qa_constant.is_none() {
        return Err(FloorError::NoQaColumn);
    }
    let floors = Floors::of(definition)?;
    let p1 = definition
        .design()
        .map(|d| d.p1())
        .map_err(|e| FloorError::Unchecked(e.to_string()))?;
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
    Ok(floors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draft::{Endpoints, SurveyDraft, hydrate, plan_survey};
    use orthomask_core::key::Key;

    /// A planned survey of the services' test shape (a yes/no, an integer and two numbers:
    /// four answers, `p₁ = 5`) with cohorts of `m`.
    fn planned(m: usize) -> SurveyDefinition {
        let draft: SurveyDraft = serde_json::from_value(serde_json::json!({
            "id": "s", "title": "T", "consent": "ok",
            "questions": [
                {"id": "smoker", "label": "Smoke?", "kind": "yes_no"},
                {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90},
                {"id": "income", "label": "Income", "kind": "number", "min": 0, "max": 250},
                {"id": "score", "label": "Score", "kind": "number", "min": 0, "max": 100}
            ],
            "cohort_size": m, "share_mode": false, "invitations": true
        }))
        .unwrap();
        let planned = plan_survey(
            &draft,
            Endpoints {
                provider: "http://m",
                right_services: &[],
            },
        )
        .unwrap();
        hydrate(&planned.template, 0, 3, &Key::from_bytes([5; 32]))
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
    }

    /// The bound is Appendix C's, checked by hand for the test survey: four scaled answers
    /// (`x_max = 1`), `m = 20`, `p₂ = 503`, at the smallest δ meeting 10⁻⁶,
    /// `δ* = 1 − (1 − √(2 ln 10⁶)/(√503 − √20))² = 0.4998007200783049`:
    /// `σ_min = √(4 / ((√(503/20) − 1)²(1 − δ*))) = 0.7043286287595583` (Python's `math`) —
    /// just under the plan's σ at δ = ½ (0.7044689733310107), which therefore passes.
    #[test]
    fn the_noise_floor_is_appendix_c_by_hand() {
        let floors = check(&planned(20)).unwrap();
        assert!((floors.sigma - 0.704_328_628_759_558_3).abs() < crate::tolerance::HAND_COMPUTED);
    }
}
