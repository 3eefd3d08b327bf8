//! From an administrator's draft to a survey the services can run: the collector fills in the
//! masking parameters (seed 000's conditions, the Appendix C bound, optional device-side DP of
//! seed 004) and refuses unsafe designs with a one-line reason.
//!
//! * `p₁` = answer columns + the QA column (constant 888, seed 003 §3.2).
//! * `p₂ = noise_columns_for(m, δ = 0.5, 10⁻⁶)`: the fewest noise columns for which the Appendix C
//!   bound fails with probability at most 10⁻⁶ for a cohort of `m`.
//! * σ: the Appendix C bound for a cohort of `m` with the definition's `x_max()` (a hair above:
//!   the bound is strict). A smaller cohort only lowers the bound (γ = p₂/n grows), so σ is safe
//!   for every cohort size from the minimum to `m`.
//! * DP (optional): σ_DP from seed 004's setting B for the smallest cohort that may be released,
//!   as `orthomask pipeline` does (`plan_dp` in `crates/cli/src/commands/pipeline.rs`); `x_max`
//!   then grows by six DP standard deviations.
//! * A cohort is released only with at least `min_cohort_size` records (default `p₁ + 1`, the
//!   `p₁ < n` of seed 000; `m` with DP, which σ_DP was calibrated for).

use crate::wire::{MAX_COHORT, Registration, SurveyDraft, valid_survey_id};
use orthomask_core::key::Key;
use orthomask_core::protocol::design::{
    DesignParameters, Strictness, appendix_c_bound, check_design, noise_columns_for,
};
use orthomask_core::protocol::tm2::DEFAULT_QA_CONSTANT;
use orthomask_dp::calibration::{Calibration, CalibrationInput};
use orthomask_formats::manifest::{AppendixC, DpColumn, DpNoise};
use orthomask_formats::survey::{DpParameters, Masking, QuestionKind, ShareMode, SurveyDefinition};
use serde::{Deserialize, Serialize};

/// The δ of Appendix C (as the command line's default).
pub const APPENDIX_C_DELTA: f64 = 0.5;
/// Target probability that condition (3.5) fails.
pub const FAILURE_TARGET: f64 = 1e-6;

/// What the collector decided for a survey, kept with it for the status page and the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Data columns including QA.
    pub p1: usize,
    /// Noise columns.
    pub p2: usize,
    /// Noise σ.
    pub sigma: f64,
    /// Declared largest absolute entry (answers, QA constant, DP allowance).
    pub x_max: f64,
    /// Participants per cohort.
    pub cohort_size: usize,
    /// Fewest records for which a cohort is released.
    pub min_cohort_size: usize,
    /// The Appendix C bound for a full cohort.
    pub appendix_c: AppendixC,
    /// Device-side DP, when asked for.
    pub dp: Option<DpNoise>,
    /// Right-masking services (0: the basic protocol).
    pub share_services: usize,
    /// Whether the definition needs an invitation.
    pub invitations: bool,
    /// Released column names (answers, then `QA`).
    pub columns: Vec<String>,
    /// Columns coding 0/1 answers (yes/no, category dummies, answered indicators).
    pub binary_columns: Vec<String>,
}

/// A planned survey.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned {
    /// The definition of cohort 0 without its key (see [`hydrate`]).
    pub template: SurveyDefinition,
    /// What the provider and the right-masking services are told.
    pub registration: Registration,
    /// The decisions.
    pub plan: Plan,
}

/// Plan a survey from a draft. `msp_url` and `right_urls` are the public base URLs participants
/// upload to.
///
/// # Errors
/// One line naming what to change.
pub fn plan_survey(
    draft: &SurveyDraft,
    msp_url: &str,
    right_urls: &[String],
) -> Result<Planned, String> {
    if !valid_survey_id(&draft.id) {
        return Err("id: use 1-64 characters from a-z, 0-9, - and _".into());
    }
    let m = draft.cohort_size;
    if m == 0 || m > MAX_COHORT {
        return Err(format!("cohort_size must be 1 to {MAX_COHORT}, got {m}"));
    }
    let share_services = if draft.share_mode {
        if right_urls.len() < 2 {
            return Err(format!(
                "share mode needs at least two right-masking services; this collector knows {} (--right)",
                right_urls.len()
            ));
        }
        if draft.dp.is_some() {
            return Err("device-side DP is not supported in share mode".into());
        }
        right_urls.len()
    } else {
        0
    };
    let mut template = SurveyDefinition {
        id: draft.id.clone(),
        title: draft.title.clone(),
        description: draft.description.clone(),
        consent: draft.consent.clone(),
        questions: draft.questions.clone(),
        masking: Masking {
            p2: 0,
            sigma: 1.0,
            qa_constant: Some(DEFAULT_QA_CONSTANT),
            cohort: 0,
            cohort_size: m,
            right_mask_key: None,
            teaching: false,
            dp: None,
            share_mode: None,
        },
        upload_url: format!("{msp_url}/api/surveys/{}/uploads", draft.id),
    };
    let columns = template.columns();
    let answers = columns.len();
    let p1 = answers + 1;
    if p1 >= m {
        return Err(format!(
            "cohort_size {m} is too small for {p1} data columns (the answers' {answers} columns \
             and the QA column): seed 000 needs p1 < n, so use cohorts of at least {}",
            p1 + 1
        ));
    }
    let min_cohort_size =
        draft
            .min_cohort_size
            .unwrap_or(if draft.dp.is_some() { m } else { p1 + 1 });
    if min_cohort_size <= p1 || min_cohort_size > m {
        return Err(format!(
            "min_cohort_size must be from {} (p1 + 1) to the cohort size {m}, got {min_cohort_size}",
            p1 + 1
        ));
    }
    let p2 = noise_columns_for(m, APPENDIX_C_DELTA, FAILURE_TARGET).map_err(|e| e.to_string())?;
    let dp = match &draft.dp {
        None => None,
        Some(d) => Some(plan_dp(&template, d.epsilon, d.delta, min_cohort_size)?),
    };
    let dp_allowance = dp.as_ref().map_or(0.0, |d| {
        6.0 * d.columns.iter().map(|c| c.sigma).fold(0.0, f64::max)
    });
    let x_max = template.x_max() + dp_allowance;
    let bound = appendix_c_bound(m, p1, p2, x_max, APPENDIX_C_DELTA).map_err(|e| e.to_string())?;
    let sigma = bound.sigma_min * (1.0 + 1e-9);
    check_design(
        &DesignParameters {
            smallest_cohort: min_cohort_size,
            largest_cohort: m,
            p1,
            p2,
            sigma,
            x_max,
            delta: APPENDIX_C_DELTA,
            orthogonal_right_mask: true,
        },
        Strictness::Refuse,
    )
    .map_err(|e| e.to_string())?;
    template.masking.p2 = p2;
    template.masking.sigma = sigma;
    template.masking.dp = dp.as_ref().map(|d| DpParameters {
        epsilon: d.epsilon,
        delta: d.delta,
        sigma: d.sigma,
    });
    if share_services > 0 {
        // The shares hide the answers (DP noise included), not the QA constant or the padding.
        let design = template.design().map_err(|e| e.to_string())?;
        template.masking.share_mode = Some(ShareMode {
            providers: right_urls
                .iter()
                .map(|u| format!("{u}/api/surveys/{}/uploads", draft.id))
                .collect(),
            share_sigma: orthomask_core::protocol::collusion::share_sigma(
                &design,
                template.answers_max(),
            ),
        });
    }
    // The participant-facing definition must pass its own validation.
    hydrate(&template, share_services, 0, &Key::from_bytes([0; 32]))
        .validate()
        .map_err(|e| e.to_string())?;
    let registration = Registration {
        survey: draft.id.clone(),
        answers,
        qa_constant: Some(DEFAULT_QA_CONSTANT),
        p2,
        sigma,
        cohort_size: m,
        min_cohort_size,
        share_services,
    };
    registration.validate()?;
    let mut names: Vec<String> = columns.iter().map(|c| c.name.clone()).collect();
    names.push("QA".into());
    let binary_columns = columns
        .iter()
        .filter(|c| {
            let q = &template.questions[c.question];
            matches!(
                q.kind,
                QuestionKind::YesNo | QuestionKind::Categorical { .. }
            ) || (q.optional && c.name == format!("{}_answered", q.id))
        })
        .map(|c| c.name.clone())
        .collect();
    Ok(Planned {
        plan: Plan {
            p1,
            p2,
            sigma,
            x_max,
            cohort_size: m,
            min_cohort_size,
            appendix_c: AppendixC {
                sigma_min: bound.sigma_min,
                failure_probability: bound.failure_probability,
                gamma: bound.gamma,
                delta: bound.delta,
            },
            dp,
            share_services,
            invitations: draft.invitations,
            columns: names,
            binary_columns,
        },
        template,
        registration,
    })
}

/// Device-side DP noise, calibrated as `orthomask pipeline` does: seed 004 setting B for
/// `n_s − 1` records of the smallest released cohort, checked against setting A for the unmasked
/// column sums.
fn plan_dp(
    template: &SurveyDefinition,
    epsilon: f64,
    delta: f64,
    smallest: usize,
) -> Result<DpNoise, String> {
    let columns = template.columns();
    let calibration = Calibration::new(CalibrationInput {
        epsilon,
        delta,
        n: smallest.saturating_sub(1) as u64,
        p: columns.len() as u64,
        smallest_block: None,
    })
    .map_err(|e| format!("dp: {e}"))?;
    let sigma = calibration.setting_b_sufficient();
    if sigma * (smallest as f64).sqrt() < calibration.setting_a_sufficient() {
        return Err(format!(
            "dp: the unmasked column sums would carry noise {:.4}, below setting A's sufficient \
             {:.4}; use larger cohorts",
            sigma * (smallest as f64).sqrt(),
            calibration.setting_a_sufficient()
        ));
    }
    Ok(DpNoise {
        epsilon,
        delta,
        sigma,
        smallest_cohort: smallest,
        columns: columns
            .iter()
            .map(|c| DpColumn {
                name: c.name.clone(),
                lo: c.range.0,
                hi: c.range.1,
                sigma: sigma * (c.range.1 - c.range.0) / 2.0,
            })
            .collect(),
    })
}

/// The definition a participant of `cohort` receives: the template with the cohort index and the
/// cohort's device key (basic protocol; in share mode there is none). Each service that takes an
/// upload publishes the cohort's receipts next to its upload address, so the definition need not
/// name them.
pub fn hydrate(
    template: &SurveyDefinition,
    share_services: usize,
    cohort: u32,
    device_key: &Key,
) -> SurveyDefinition {
    let mut d = template.clone();
    d.masking.cohort = cohort;
    d.masking.right_mask_key = (share_services == 0).then(|| device_key.to_hex());
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_formats::survey::Question;

    fn draft(m: usize) -> SurveyDraft {
        let q = |id: &str, kind| Question {
            id: id.into(),
            label: format!("{id}?"),
            help: None,
            optional: false,
            kind,
        };
        SurveyDraft {
            id: "s".into(),
            title: "T".into(),
            description: None,
            consent: "ok".into(),
            questions: vec![
                q("smoker", QuestionKind::YesNo),
                q("age", QuestionKind::Integer { min: 18, max: 100 }),
                q(
                    "region",
                    QuestionKind::Categorical {
                        options: vec!["n".into(), "s".into(), "e".into()],
                    },
                ),
            ],
            cohort_size: m,
            min_cohort_size: None,
            dp: None,
            share_mode: false,
            invitations: false,
        }
    }

    /// m = 20: p₂ = ⌈(√20 + √(2 ln 10⁶)/(1 − √0.5))²⌉ = 503, the sample survey's value; p₁ = 4
    /// answer columns (smoker, age, region=s, region=e) + QA = 5.
    #[test]
    fn parameters_follow_seed_000_and_appendix_c() {
        let planned = plan_survey(&draft(20), "http://m", &[]).unwrap();
        let plan = &planned.plan;
        assert_eq!((plan.p1, plan.p2), (5, 503));
        assert_eq!(plan.min_cohort_size, 6);
        assert!((plan.x_max - 888.0).abs() < 1e-12);
        let bound = appendix_c_bound(20, 5, 503, 888.0, 0.5).unwrap();
        assert!(plan.sigma > bound.sigma_min && plan.sigma < bound.sigma_min * (1.0 + 1e-8));
        assert!(plan.appendix_c.failure_probability <= FAILURE_TARGET);
        assert_eq!(plan.binary_columns, ["smoker", "region=s", "region=e"]);
        assert_eq!(plan.columns.last().map(String::as_str), Some("QA"));
        assert_eq!(planned.registration.p(), 508);
        let d = hydrate(&planned.template, 0, 3, &Key::teaching(1));
        assert_eq!(d.masking.cohort, 3);
        assert!(d.masking.right_mask_key.is_some());
        assert!(d.validate().is_ok());
    }

    #[test]
    fn unsafe_or_impossible_drafts_are_refused_with_a_reason() {
        assert!(
            plan_survey(&draft(5), "http://m", &[])
                .unwrap_err()
                .contains("at least 6")
        );
        let mut d = draft(20);
        d.min_cohort_size = Some(5);
        assert!(
            plan_survey(&d, "http://m", &[])
                .unwrap_err()
                .contains("min_cohort_size")
        );
        let mut d = draft(20);
        d.share_mode = true;
        assert!(plan_survey(&d, "http://m", &["http://r0".into()]).is_err());
        let mut d = draft(20);
        d.questions[1].id = "smoker".into();
        assert!(
            plan_survey(&d, "http://m", &[])
                .unwrap_err()
                .contains("duplicate")
        );
        let mut d = draft(20);
        d.id = "Not OK".into();
        assert!(plan_survey(&d, "http://m", &[]).is_err());
    }

    #[test]
    fn share_mode_lists_every_right_masking_service() {
        let mut d = draft(20);
        d.share_mode = true;
        let rights = vec!["http://r0".to_owned(), "http://r1".to_owned()];
        let planned = plan_survey(&d, "http://m", &rights).unwrap();
        let share = planned.template.masking.share_mode.clone().unwrap();
        assert_eq!(share.providers[1], "http://r1/api/surveys/s/uploads");
        assert_eq!(planned.registration.share_services, 2);
        let def = hydrate(&planned.template, 2, 1, &Key::teaching(1));
        assert!(def.masking.right_mask_key.is_none());
        assert!(def.validate().is_ok());
    }

    #[test]
    fn dp_is_calibrated_for_the_smallest_released_cohort() {
        let mut d = draft(200);
        d.dp = Some(crate::wire::DpDraft {
            epsilon: 0.5,
            delta: 0.01,
        });
        let planned = plan_survey(&d, "http://m", &[]).unwrap();
        let dp = planned.plan.dp.unwrap();
        assert_eq!(dp.smallest_cohort, 200);
        let expected = Calibration::new(CalibrationInput {
            epsilon: 0.5,
            delta: 0.01,
            n: 199,
            p: 4,
            smallest_block: None,
        })
        .unwrap()
        .setting_b_sufficient();
        assert!((dp.sigma - expected).abs() <= 1e-15 * expected);
        // age has range [18, 100]: σ_age = σ·82/2.
        assert!((dp.columns[1].sigma - expected * 41.0).abs() < 1e-12 * expected * 41.0);
        assert!(planned.plan.x_max > 888.0);
        assert!(planned.template.design().unwrap().dp().is_some());
    }
}
