//! The cohort size a survey gets when nobody chose one: the one rule `orthomask pipeline` and the
//! survey team's builder apply (issue 23 §1).
//!
//! # The trade-off
//! A cohort of `m` records is masked as one block: the provider sees its `m × m` Gram matrix
//! under the padding, the collector its own `XᵀX` and column sums, and a record hides among the
//! `m` records of its cohort. Three things move with `m`:
//!
//! * **who a record hides among** — more is better, and the policy's floor
//!   [`cohort_floor`]`(p₁) = max(p₁ + 1, MIN_ANONYMITY_SET)` is the least accepted;
//! * **digits** — with the policy's noise columns the expected loss of the release grows like
//!   `½·log₁₀ m` ((E6) of `orthomask_core::protocol::accuracy`: condition (3.5) makes each
//!   record's noise outweigh the whole cohort's answers, `p₂σ² ≈ 2·m·p_m·γ/(√γ − 1)²` on the
//!   scaled record, `p_m` the masked answers);
//! * **work** — a device's `p × p` mask with `p = p₁ + p₂` and `p₂` growing faster than `m`
//!   (`(√γ − 1)√m` is fixed by the failure target), so the cost per record grows like `m²`
//!   once the noise columns dominate.
//!
//! # The rule
//! The default is the **largest** cohort whose plan meets [`TARGET_DIGITS_LOST`] with the noise
//! columns the failure target alone asks for (`plan::default_noise_columns`): as many records to hide
//! among as the accuracy target allows without widening every record for accuracy. Beyond it,
//! meeting the target needs extra noise columns that grow without bound as `m` approaches the
//! (E8) limit (`3·m·p_m ≤ 10^{2D}`; at 20 masked answers the columns needed go from 590 at
//! `m = 40` to 2 169 at `m = 80`: a device's work ×13 for twice the anonymity), and past that
//! limit no number of columns meets it. Clamped to `[cohort_floor(p₁), MAX_COHORT]`; where even
//! the floor misses the target (many columns), the floor is chosen and the plan's accuracy note
//! says what the release is expected to lose. With fewer participants than the rule's size, one
//! cohort holds everybody. Designs without the Appendix C bound (no padding, or a non-orthogonal
//! mask: the first method) have no accuracy model here and keep the papers' single cohort.
//!
//! **With device-side DP** the rule looks at the survey without DP: a DP release's digits are set
//! by its noise, orders of magnitude above rounding, and the noise is calibrated for whatever
//! cohorts are chosen (it shrinks as the smallest cohort grows, which the rule's largest-within-
//! target choice already favours). Counting the DP allowance in `x_max` would instead push the
//! rule to the floor, where the DP noise is largest.
//!
//! The expected loss is increasing in `m` by (E6) (the factor `γ/(√γ − 1)²` grows like `m`), so
//! the rule scans `m` upwards from the floor and stops at the first cohort that misses the
//! target; rounding `p₂` up to an integer can only lower a loss, never break the order by more
//! than one step, which the scan tolerates by construction (it returns the last size that met
//! the target before the first miss).

use crate::plan::{CohortBounds, Plan, PlanError, PlanRequest, default_noise_columns};
use crate::policy::{MAX_COHORT, TARGET_DIGITS_LOST, cohort_floor};

/// Why the default cohort size is what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CohortReason {
    /// The largest cohort meeting [`TARGET_DIGITS_LOST`] with the failure target's noise columns.
    AccuracyTarget,
    /// The policy's floor: even it misses the accuracy target (the plan's note says by how much).
    Floor,
    /// [`MAX_COHORT`]: the services' memory limit per cohort binds before the accuracy target.
    Largest,
    /// No more participants than the rule's size (or no accuracy model for the design): one
    /// cohort of everybody.
    Everybody,
}

/// The cohort size chosen for a survey and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CohortChoice {
    /// Participants per cohort, at most (the survey splits into cohorts as even as possible).
    pub size: usize,
    /// Why.
    pub reason: CohortReason,
}

impl CohortChoice {
    /// One line for the user: what was chosen and why.
    pub fn describe(&self) -> String {
        let size = self.size;
        match self.reason {
            CohortReason::AccuracyTarget => format!(
                "cohorts of at most {size} records: the largest that keeps the release within \
                 {TARGET_DIGITS_LOST} lost digits with the policy's noise columns"
            ),
            CohortReason::Floor => format!(
                "cohorts of {size} records, the policy's floor for this many columns (even it \
                 loses more than {TARGET_DIGITS_LOST} digits: see the plan's accuracy note)"
            ),
            CohortReason::Largest => {
                format!("cohorts of at most {size} records, the largest the services hold")
            }
            CohortReason::Everybody => format!("one cohort of all {size} records"),
        }
    }
}

/// The default cohort size for `participants` records planned by `request` (whose `cohorts`
/// are ignored: they are what is being chosen). See the module documentation for the rule.
///
/// # Errors
/// [`PlanError`] when a cohort's plan cannot be made (DP budgets the cohorts cannot meet,
/// degenerate ranges) or `participants` is 0.
pub fn default_cohort_size(
    request: &PlanRequest,
    participants: usize,
) -> Result<CohortChoice, PlanError> {
    let floor = cohort_floor(request.answers + usize::from(request.qa_constant.is_some()));
    let everybody = CohortChoice {
        size: participants,
        reason: CohortReason::Everybody,
    };
    if participants <= floor {
        return Ok(everybody);
    }
    let meets = |m: usize| -> Result<Option<bool>, PlanError> {
        let plan = Plan::new(&PlanRequest {
            cohorts: CohortBounds {
                smallest: m,
                largest: m,
            },
            noise_columns: request
                .noise_columns
                .map_or_else(|| default_noise_columns(m).map(Some), |p2| Ok(Some(p2)))?,
            // Device-side DP is calibrated for whatever cohorts are chosen; the rule weighs the
            // masking's own rounding (module documentation).
            dp: None,
            ranges: request
                .ranges
                .clone()
                .or_else(|| request.dp.as_ref().map(|d| d.ranges.clone())),
            ..request.clone()
        })?;
        if plan.appendix_c.is_none() {
            return Ok(None);
        }
        Ok(Some(
            plan.unmasking_accuracy()?.expected_digits_lost() <= TARGET_DIGITS_LOST,
        ))
    };
    match meets(floor)? {
        None => return Ok(everybody),
        Some(false) => {
            return Ok(CohortChoice {
                size: floor,
                reason: CohortReason::Floor,
            });
        }
        Some(true) => {}
    }
    let cap = MAX_COHORT.min(participants);
    let mut best = floor;
    while best < cap && meets(best + 1)? == Some(true) {
        best += 1;
    }
    let reason = if best < participants && best == MAX_COHORT {
        CohortReason::Largest
    } else if best == participants {
        CohortReason::Everybody
    } else {
        CohortReason::AccuracyTarget
    };
    Ok(CohortChoice { size: best, reason })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::DeclaredRange;
    use crate::policy::DEFAULT_QA_CONSTANT;

    /// A survey of `answers` answers in `[0, 100]`, scaled by their ranges, with the QA column.
    fn scaled(answers: usize) -> PlanRequest {
        PlanRequest {
            ranges: Some(
                (0..answers)
                    .map(|j| DeclaredRange {
                        name: format!("x{j}"),
                        lo: 0.0,
                        hi: 100.0,
                    })
                    .collect(),
            ),
            ..PlanRequest::new(
                answers,
                Some(DEFAULT_QA_CONSTANT),
                CohortBounds {
                    smallest: 1,
                    largest: 1,
                },
                100.0,
            )
        }
    }

    fn digits(request: &PlanRequest, m: usize) -> f64 {
        Plan::new(&PlanRequest {
            cohorts: CohortBounds {
                smallest: m,
                largest: m,
            },
            noise_columns: Some(default_noise_columns(m).unwrap()),
            ..request.clone()
        })
        .unwrap()
        .unmasking_accuracy()
        .unwrap()
        .expected_digits_lost()
    }

    /// The chosen size meets the target and the next one does not: the defining property, checked
    /// on the plan's own accuracy figure (the oracle is the plan, which the rule only searches).
    #[test]
    fn the_choice_is_the_largest_cohort_within_the_target() {
        for answers in [1, 4, 10, 20] {
            let request = scaled(answers);
            let choice = default_cohort_size(&request, 1_000_000).unwrap();
            assert_eq!(choice.reason, CohortReason::AccuracyTarget, "{answers}");
            assert!(digits(&request, choice.size) <= TARGET_DIGITS_LOST);
            assert!(digits(&request, choice.size + 1) > TARGET_DIGITS_LOST);
            assert!(choice.size >= cohort_floor(answers + 1));
        }
    }

    /// (E8): `3·m·p_m ≤ 10⁴` at two digits is necessary, so more masked answers mean smaller
    /// cohorts; 20 answers fit about 40 (measured with `orthomask pipeline`: 590 noise columns
    /// lose 1.97 digits at m = 40, 2.0 with 749 at 50).
    #[test]
    fn more_answers_mean_smaller_cohorts_within_the_e8_limit() {
        let sizes: Vec<usize> = [1, 4, 10, 20]
            .iter()
            .map(|&a| default_cohort_size(&scaled(a), 1_000_000).unwrap().size)
            .collect();
        assert!(sizes.windows(2).all(|w| w[0] > w[1]), "{sizes:?}");
        for (&answers, &m) in [1usize, 4, 10, 20].iter().zip(&sizes) {
            assert!(3 * m * answers <= 10_000, "{answers} answers: {m}");
        }
        assert!((35..=50).contains(&sizes[3]), "{sizes:?}");
    }

    #[test]
    fn few_participants_make_one_cohort_and_many_columns_the_floor() {
        let small = default_cohort_size(&scaled(4), 12).unwrap();
        assert_eq!(
            small,
            CohortChoice {
                size: 12,
                reason: CohortReason::Everybody
            }
        );
        let tiny = default_cohort_size(&scaled(4), 3).unwrap();
        assert_eq!(tiny.size, 3);
        // 400 masked answers: (E8) puts two digits out of reach even at the floor of 402.
        let wide = default_cohort_size(&scaled(400), 100_000).unwrap();
        assert_eq!(
            wide,
            CohortChoice {
                size: 402,
                reason: CohortReason::Floor
            }
        );
        assert!(wide.describe().contains("floor"));
    }

    /// DP does not shrink the cohorts (its noise would grow): the choice is the survey's without DP.
    #[test]
    fn device_dp_keeps_the_cohorts_of_the_survey_without_it() {
        use crate::plan::DpRequest;
        let plain = scaled(8);
        let with_dp = PlanRequest {
            dp: Some(DpRequest {
                epsilon: 1.0,
                delta: 1e-5,
                ranges: plain.ranges.clone().unwrap(),
            }),
            ranges: None,
            ..plain.clone()
        };
        assert_eq!(
            default_cohort_size(&with_dp, 100_000).unwrap(),
            default_cohort_size(&plain, 100_000).unwrap()
        );
    }

    /// Unscaled first-method designs (no padding) have no Appendix C bound: the papers' single
    /// cohort.
    #[test]
    fn designs_without_the_bound_keep_one_cohort() {
        let first = PlanRequest {
            noise_columns: Some(0),
            orthogonal_right_mask: false,
            ..scaled(3)
        };
        assert_eq!(
            default_cohort_size(&first, 500).unwrap().reason,
            CohortReason::Everybody
        );
    }
}
