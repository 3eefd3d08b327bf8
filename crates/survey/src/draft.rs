//! From an administrator's draft to a survey the services can run: the collector fills in the
//! masking parameters with the one [`Plan`] (seed 000's conditions, the Appendix C bound, optional
//! device-side DP of seed 004) and refuses unsafe designs with a one-line reason.
//!
//! * `p₁` = answer columns + one column per model term ([`crate::terms`]) + the QA column
//!   ([`DEFAULT_QA_CONSTANT`], seed 003 §3.2, unless the QA floor of [`crate::floors`] is
//!   higher): a term is a data column like an answer's, masked and counted alike, so each one
//!   raises the cohort floor `cohort_floor(p₁)` too.
//! * Share mode needs at least [`MIN_SHARE_SERVICES`] right-masking services (the policy's
//!   derivation: with two, the collector and one service read yes/no answers).
//! * `p₂`, σ and DP are the plan's for cohorts of `m` (largest) and `min_cohort_size` (smallest
//!   released): see [`crate::plan`]. A smaller cohort only lowers the Appendix C bound
//!   (γ = p₂/n grows), so σ is safe for every cohort size from the minimum to `m`.
//! * A cohort is released only with at least `min_cohort_size` records
//!   ([`default_min_cohort_size`]: the policy's `cohort_floor(p₁)` — the `p₁ < n` of seed 000 and
//!   an anonymity set of at least five; `m` with DP, which σ_DP was calibrated for); one the
//!   administrator asks for must lie from that floor to `m` ([`check_min_cohort_size`]). The
//!   minimum is written into the definition the collector signs, so devices and accepting
//!   services hold every cohort to it ([`crate::floors`]).
//! * `x_max` is what the questions declare ([`SurveyDefinition::x_max`]): a real survey never
//!   reads it off the data.
//!
//! The definition a participant loads is the planned template with the cohort's index and device
//! key ([`hydrate`]).

use crate::cohort_choice::default_cohort_size;
use crate::definition::{
    Content, DpParameters, Masking, Question, RecordScaling, ShareMode, SurveyDefinition,
    SurveyError, Term, Translation, valid_survey_id,
};
use crate::plan::{CohortBounds, DeclaredRange, DpRequest, Plan, PlanError, PlanRequest};
use crate::policy::{
    DEFAULT_QA_CONSTANT, MAX_COHORT, MIN_SHARE_SERVICES, MinCohortSizeError, check_min_cohort_size,
    cohort_floor, default_min_cohort_size,
};
use orthomask_core::key::Key;
use orthomask_core::protocol::design::Strictness;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The administrator's draft of a survey; the collector fills in the masking parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurveyDraft {
    /// Identifier: 1–64 characters from `a–z 0–9 - _`.
    pub id: String,
    /// Title shown to participants.
    pub title: String,
    /// Optional introduction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Consent text.
    pub consent: String,
    /// BCP 47 tag of the texts' language (default `en`).
    #[serde(
        default = "crate::definition::default_language",
        skip_serializing_if = "crate::definition::is_default_language"
    )]
    pub language: String,
    /// The texts in other languages, by tag (the survey definition's format).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub translations: BTreeMap<String, Translation>,
    /// The questions (the survey definition's format).
    pub questions: Vec<Question>,
    /// Model terms the devices compute from the answers (the survey definition's format,
    /// [`crate::terms`]): one more data column each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<Term>,
    /// Participants per cohort `m` (absent: the plan's choice, `crate::cohort_choice` — the rule
    /// `orthomask pipeline` applies too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort_size: Option<usize>,
    /// Fewest participants for which a cohort is released (default `p₁ + 1`, or `m` with DP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cohort_size: Option<usize>,
    /// Device-side differential privacy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp: Option<DpDraft>,
    /// Share mode (seed 000 §3.5): records split over all configured right-masking services.
    #[serde(default)]
    pub share_mode: bool,
    /// Whether loading the definition needs a one-use invitation token.
    #[serde(default)]
    pub invitations: bool,
    /// A demonstration (`crate::demonstrations`): labelled as such in the definition
    /// (`masking.teaching`), the plan and the manifest, and allowed to be open to anyone in the
    /// basic protocol — which hands the cohort's device key to whoever opens it.
    #[serde(default)]
    pub demonstration: bool,
}

impl SurveyDraft {
    /// Check what the team wrote — id, texts, questions — as a definition is checked
    /// ([`crate::validation::validate_content`]): the survey team's JSON editor runs it as they
    /// type, [`plan_survey`] before anything else.
    ///
    /// # Errors
    /// [`SurveyError::Invalid`] naming the first offending field.
    pub fn validate_content(&self) -> Result<(), SurveyError> {
        crate::validation::validate_content(&Content {
            id: &self.id,
            title: &self.title,
            description: self.description.as_deref(),
            consent: &self.consent,
            questions: &self.questions,
            terms: &self.terms,
            language: &self.language,
            translations: &self.translations,
        })
    }
}

/// Requested DP level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpDraft {
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
}

/// Where participants upload: the public base URLs of the services.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Endpoints<'a> {
    /// The masking service provider.
    pub provider: &'a str,
    /// The right-masking services of share mode, by index.
    pub right_services: &'a [String],
}

/// What the collector decided for a survey, kept with it for the status page and the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SurveyPlan {
    /// The masking parameters (σ, p₂, DP and the Appendix C bound of a full cohort).
    #[serde(flatten)]
    pub masking: Plan,
    /// Participants per cohort.
    pub cohort_size: usize,
    /// Fewest records for which a cohort is released.
    pub min_cohort_size: usize,
    /// Right-masking services (0: the basic protocol).
    pub share_services: usize,
    /// Whether the definition needs an invitation.
    pub invitations: bool,
    /// A demonstration: its device key may have reached anyone, so its release is labelled
    /// (absent in plans stored before demonstrations existed: `false`).
    #[serde(default)]
    pub demonstration: bool,
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
    /// The decisions.
    pub plan: SurveyPlan,
}

/// Why a draft cannot become a survey; each message says what to change.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    /// The id breaks the schema's rule.
    #[error("id: use 1-64 characters from a-z, 0-9, - and _")]
    Id,
    /// Cohorts of 0, or larger than the services hold.
    #[error("cohort_size must be 1 to {MAX_COHORT}, got {0}")]
    CohortSize(usize),
    /// Share mode with fewer right-masking services configured than the policy's
    /// [`MIN_SHARE_SERVICES`] (with two, the collector and one service read yes/no answers).
    #[error(
        "share mode needs at least {MIN_SHARE_SERVICES} right-masking services; this collector \
         knows {0} (--right)"
    )]
    TooFewRightServices(usize),
    /// A basic-protocol survey anyone may load: its definition carries the cohort's device key,
    /// so the masking service provider could load it too and remove `B_k` from every upload.
    #[error(
        "a basic-protocol survey cannot be open to anyone: its definition carries the device key, \
         so the masking service provider could ask for it and unmask every upload; use \
         invitations (\"invitations\": true) or share mode (\"share_mode\": true) \
         (only a labelled demonstration may be open)"
    )]
    OpenBasicSurvey,
    /// A cohort whose hand-over between the services would exceed their body limit.
    #[error(
        "cohorts of {cohort_size} records of length p = {p} make hand-overs of {} MB, over the \
         services' limit of {} MB: use smaller cohorts",
        bytes / 1_000_000,
        crate::policy::MAX_HANDOVER_BYTES / 1_000_000
    )]
    HandOverTooLarge {
        /// The requested `m`.
        cohort_size: usize,
        /// The planned record length `p = p₁ + p₂`.
        p: usize,
        /// The largest hand-over's size.
        bytes: u64,
    },
    /// Cohorts too small for the data columns (seed 000 needs `p₁ < n`) or below the policy's
    /// anonymity set.
    #[error(
        "cohort_size {cohort_size} is too small for {p1} data columns (the answers' {answers} columns \
         and the QA column): seed 000 needs p1 < n and the policy hides each answer among at least \
         {}, so use cohorts of at least {}",
        crate::policy::MIN_ANONYMITY_SET,
        cohort_floor(*p1)
    )]
    CohortTooSmall {
        /// The requested `m`.
        cohort_size: usize,
        /// Data columns.
        p1: usize,
        /// Answer and model-term columns.
        answers: usize,
    },
    /// A minimum cohort outside `cohort_floor(p₁) … m` (the policy's
    /// [`check_min_cohort_size`]).
    #[error(transparent)]
    MinCohortSize(#[from] MinCohortSizeError),
    /// The plan is impossible or unsafe.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The planned definition fails its own validation.
    #[error(transparent)]
    Definition(#[from] SurveyError),
    /// The planned definition is below a floor devices enforce.
    #[error(transparent)]
    Floor(#[from] crate::floors::FloorError),
}

/// Plan a survey from a draft.
///
/// # Errors
/// [`DraftError`], one line naming what to change.
pub fn plan_survey(draft: &SurveyDraft, endpoints: Endpoints<'_>) -> Result<Planned, DraftError> {
    if !valid_survey_id(&draft.id) {
        return Err(DraftError::Id);
    }
    if let Some(m) = draft.cohort_size
        && (m == 0 || m > MAX_COHORT)
    {
        return Err(DraftError::CohortSize(m));
    }
    let share_services = if draft.share_mode {
        if endpoints.right_services.len() < MIN_SHARE_SERVICES {
            return Err(DraftError::TooFewRightServices(
                endpoints.right_services.len(),
            ));
        }
        endpoints.right_services.len()
    } else {
        0
    };
    // Seed 000's basic protocol hides x only from whoever lacks B_k; the definition hands B_k's
    // key to every device it reaches, so it must reach invited devices only (issue 10 §2). A
    // demonstration is the one exception: it has exactly the weakness of teaching keys, and is
    // labelled so in its definition, its plan and its manifest (issue 12 §1).
    if share_services == 0 && !draft.invitations && !draft.demonstration {
        return Err(DraftError::OpenBasicSurvey);
    }
    let mut template = SurveyDefinition {
        id: draft.id.clone(),
        title: draft.title.clone(),
        description: draft.description.clone(),
        consent: draft.consent.clone(),
        language: draft.language.clone(),
        translations: draft.translations.clone(),
        questions: draft.questions.clone(),
        terms: draft.terms.clone(),
        masking: Masking {
            p2: 0,
            sigma: 1.0,
            qa_constant: Some(DEFAULT_QA_CONSTANT),
            cohort: 0,
            // Set below, once the questions' columns are known.
            cohort_size: 0,
            min_cohort_size: None,
            right_mask_key: None,
            teaching: draft.demonstration,
            dp: None,
            share_mode: None,
            // Every survey the collector plans scales each answer by its question's declared
            // range on the device: the release keeps the answers' digits (issue 11 §1).
            scaling: RecordScaling::DeclaredRanges,
        },
        upload_url: upload_url(endpoints.provider, &draft.id),
    };
    // The questions are checked before they are coded into columns: a refusal names the field.
    template.validate_content()?;
    let columns = template.columns();
    let answers = columns.len();
    let p1 = answers + 1;
    let ranges: Vec<DeclaredRange> = columns
        .iter()
        .map(|c| DeclaredRange {
            name: c.name.clone(),
            lo: c.range.0,
            hi: c.range.1,
        })
        .collect();
    let dp = draft.dp.as_ref().map(|d| DpRequest {
        epsilon: d.epsilon,
        delta: d.delta,
        ranges: ranges.clone(),
    });
    let x_max = template.x_max();
    let request_for = |cohorts| PlanRequest {
        ranges: Some(ranges.clone()),
        dp: dp.clone(),
        ..PlanRequest::new(answers, Some(DEFAULT_QA_CONSTANT), cohorts, x_max)
    };
    // A live survey's size is open: the rule's own size, within what the services hold.
    let m = match draft.cohort_size {
        Some(m) => m,
        None => {
            let any = CohortBounds {
                smallest: MAX_COHORT,
                largest: MAX_COHORT,
            };
            default_cohort_size(&request_for(any), MAX_COHORT)?.size
        }
    };
    template.masking.cohort_size = m;
    if m < cohort_floor(p1) {
        return Err(DraftError::CohortTooSmall {
            cohort_size: m,
            p1,
            answers,
        });
    }
    let min_cohort_size =
        draft
            .min_cohort_size
            .unwrap_or(default_min_cohort_size(p1, m, draft.dp.is_some()));
    check_min_cohort_size(p1, m, min_cohort_size)?;
    let cohorts = CohortBounds {
        smallest: min_cohort_size,
        largest: m,
    };
    let plan = Plan::new(&request_for(cohorts))?;
    plan.check(cohorts, Strictness::Refuse)?;
    // Refused now rather than when the first cohort closes and its hand-over cannot be sent.
    let p = p1 + plan.p2;
    let bytes = crate::policy::handover_bytes(m, p);
    if bytes > crate::policy::MAX_HANDOVER_BYTES {
        return Err(DraftError::HandOverTooLarge {
            cohort_size: m,
            p,
            bytes,
        });
    }
    template.masking.p2 = plan.p2;
    // The plan's constant: the policy's, or the QA floor's where that is higher (`Plan::new`).
    template.masking.qa_constant = plan.qa_constant;
    template.masking.min_cohort_size = Some(min_cohort_size);
    template.masking.sigma = plan.sigma;
    template.masking.dp = plan.dp.as_ref().map(|d| DpParameters {
        epsilon: d.epsilon,
        delta: d.delta,
        sigma: d.sigma,
    });
    if share_services > 0 {
        // The shares hide the answers (DP noise included), not the QA constant or the padding.
        let design = template.design()?;
        template.masking.share_mode = Some(ShareMode {
            providers: endpoints
                .right_services
                .iter()
                .map(|u| upload_url(u, &draft.id))
                .collect(),
            share_sigma: plan.share_sigma(&design),
        });
    }
    // The participant-facing definition must pass its own validation and the floors every
    // device holds it to (`crate::floors`), so a plan devices would refuse is refused here.
    let sample = hydrate(&template, share_services, 0, &Key::from_bytes([0; 32]));
    sample.validate()?;
    crate::floors::check(&sample)?;
    let mut names: Vec<String> = columns.into_iter().map(|c| c.name).collect();
    names.push("QA".into());
    Ok(Planned {
        plan: SurveyPlan {
            masking: plan,
            cohort_size: m,
            min_cohort_size,
            share_services,
            invitations: draft.invitations,
            demonstration: draft.demonstration,
            columns: names,
            binary_columns: template.binary_columns(),
        },
        template,
    })
}

/// Where a survey's uploads go at the service with base URL `base` (the address devices check
/// definitions against, [`crate::trust::Deployment::upload_url`]).
fn upload_url(base: &str, survey: &str) -> String {
    crate::trust::Deployment::upload_url(base, survey)
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
    use crate::definition::QuestionKind;
    use crate::policy::FAILURE_TARGET;
    use crate::tolerance::HAND_COMPUTED;
    use orthomask_core::protocol::design::appendix_c_bound;
    use orthomask_dp::device::CohortMechanism;

    fn draft(m: usize) -> SurveyDraft {
        let q = |id: &str, kind| Question {
            id: id.into(),
            label: format!("{id}?"),
            help: None,
            optional: false,
            show_if: None,
            kind,
        };
        SurveyDraft {
            id: "s".into(),
            title: "T".into(),
            description: None,
            consent: "ok".into(),
            language: "en".into(),
            translations: BTreeMap::new(),
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
            terms: Vec::new(),
            cohort_size: Some(m),
            min_cohort_size: None,
            dp: None,
            share_mode: false,
            invitations: true,
            demonstration: false,
        }
    }

    /// Three answers (smoker 1 column, age 1, region of three options 2) and two terms: p₁ =
    /// 4 + 2 + 1 (QA) = 7, the cohort floor max(p₁ + 1, 5) = 8 instead of 6, and the terms'
    /// columns follow the answers' and precede QA, with ranges derived by hand: age² over
    /// [18, 100] is [324, 10000], age·(region=s) over [18, 100]×[0, 1] is [0, 100].
    #[test]
    fn model_terms_count_in_p1_and_the_cohort_floor() {
        use crate::definition::TermKind;
        let without = plan(&draft(7), &[]).unwrap();
        assert_eq!(without.plan.masking.p1, 5);
        let mut d = draft(8);
        d.terms = vec![
            Term {
                id: "age_sq".into(),
                kind: TermKind::Power {
                    of: "age".into(),
                    exponent: 2,
                },
            },
            Term {
                id: "age_s".into(),
                kind: TermKind::Product {
                    of: ["age".into(), "region=s".into()],
                },
            },
        ];
        let planned = plan(&d, &[]).unwrap();
        assert_eq!(planned.plan.masking.p1, 4 + 2 + 1);
        assert_eq!(planned.template.design().unwrap().p1(), 7);
        assert_eq!(
            planned.plan.columns,
            [
                "smoker", "age", "region=s", "region=e", "age_sq", "age_s", "QA"
            ]
        );
        assert_eq!(
            planned.plan.binary_columns,
            ["smoker", "region=s", "region=e"]
        );
        let ranges = planned.plan.masking.scaling.as_ref().unwrap();
        let by_hand = [("age_sq", 324.0, 10000.0), ("age_s", 0.0, 100.0)];
        for (range, (name, lo, hi)) in ranges[4..].iter().zip(by_hand) {
            assert_eq!(range.name, name);
            assert!((range.lo - lo).abs() < HAND_COMPUTED && (range.hi - hi).abs() < HAND_COMPUTED);
        }
        d.cohort_size = Some(7);
        match plan(&d, &[]) {
            Err(e @ DraftError::CohortTooSmall { p1: 7, .. }) => {
                assert!(e.to_string().contains("at least 8"), "{e}")
            }
            other => panic!("cohorts of 7 with p1 = 7: {other:?}"),
        }
    }

    fn plan(d: &SurveyDraft, rights: &[String]) -> Result<Planned, DraftError> {
        plan_survey(
            d,
            Endpoints {
                provider: "http://m",
                right_services: rights,
            },
        )
    }

    /// m = 20: p₂ = ⌈(√20 + √(2 ln 10⁶)/(1 − √0.5))²⌉ = 503, the sample survey's value; p₁ = 4
    /// answer columns (smoker, age, region=s, region=e) + QA = 5.
    #[test]
    fn parameters_follow_seed_000_and_appendix_c() {
        let planned = plan(&draft(20), &[]).unwrap();
        let p = &planned.plan;
        assert_eq!((p.masking.p1, p.masking.p2), (5, 503));
        assert_eq!(p.min_cohort_size, 6);
        // The devices scale every answer to [−1, 1] (x_max = 1) and only the 4 answer columns
        // enter condition (3.5): the QA column cancels (orthomask_core::protocol::design).
        assert!((p.masking.x_max - 1.0).abs() < HAND_COMPUTED);
        assert_eq!(p.masking.masked_columns, Some(4));
        let bound = appendix_c_bound(20, 4, 503, 1.0, 0.5).unwrap();
        assert!(
            p.masking.sigma > bound.sigma_min && p.masking.sigma < bound.sigma_min * (1.0 + 1e-8)
        );
        let recorded = p.masking.appendix_c.as_ref().unwrap();
        assert!(recorded.failure_probability <= FAILURE_TARGET);
        assert!((recorded.gamma - 503.0 / 20.0).abs() < HAND_COMPUTED);
        assert_eq!(p.binary_columns, ["smoker", "region=s", "region=e"]);
        assert_eq!(p.columns.last().map(String::as_str), Some("QA"));
        assert_eq!(
            planned.template.upload_url,
            "http://m/api/surveys/s/uploads"
        );
        let d = hydrate(&planned.template, 0, 3, &Key::teaching(1));
        assert_eq!(d.masking.cohort, 3);
        assert!(d.masking.right_mask_key.is_some());
        assert!(d.validate().is_ok());
        assert_eq!(d.design().unwrap().p(), 508);
    }

    /// Issue 23 §1: a draft that names no cohort size gets the plan's rule — the one
    /// `orthomask pipeline` applies — and keeps the policy's accuracy target; one size larger
    /// would not (the defining property, on the planned survey's own figures).
    #[test]
    fn a_draft_without_a_cohort_size_gets_the_plans_rule() {
        let planned = plan(
            &SurveyDraft {
                cohort_size: None,
                ..draft(20)
            },
            &[],
        )
        .unwrap();
        let m = planned.plan.cohort_size;
        assert_eq!(planned.template.masking.cohort_size, m);
        let digits = |p: &Planned| {
            p.plan
                .masking
                .unmasking_accuracy()
                .unwrap()
                .expected_digits_lost()
        };
        assert!(digits(&planned) <= crate::policy::TARGET_DIGITS_LOST);
        // Four masked answers: (E8) allows at most 10⁴/(3·4) records, the rule far fewer.
        assert!((cohort_floor(5)..=833).contains(&m), "{m}");
        let larger = plan(&draft(m + 1), &[]).unwrap();
        // The plan widens records for accuracy where it can; the rule's size is the largest
        // the failure target's own noise columns keep within the target.
        assert!(
            larger.plan.masking.p2 > crate::plan::default_noise_columns(m + 1).unwrap()
                || digits(&larger) > crate::policy::TARGET_DIGITS_LOST
        );
    }

    #[test]
    fn unsafe_or_impossible_drafts_are_refused_with_a_reason() {
        let e = plan(&draft(5), &[]).unwrap_err().to_string();
        assert!(e.contains("at least 6"), "{e}");
        let mut d = draft(20);
        d.min_cohort_size = Some(5);
        assert!(matches!(
            plan(&d, &[]).unwrap_err(),
            DraftError::MinCohortSize(MinCohortSizeError { min: 5, .. })
        ));
        let mut d = draft(20);
        d.share_mode = true;
        assert!(matches!(
            plan(&d, &["http://r0".into()]).unwrap_err(),
            DraftError::TooFewRightServices(1)
        ));
        // Issue 43: two services leave the collector with one of them reading yes/no answers.
        let e = plan(&d, &["http://r0".into(), "http://r1".into()]).unwrap_err();
        assert!(matches!(e, DraftError::TooFewRightServices(2)), "{e}");
        assert_eq!(
            e.to_string(),
            "share mode needs at least 3 right-masking services; this collector knows 2 (--right)"
        );
        let mut d = draft(20);
        d.questions[1].id = "smoker".into();
        assert!(plan(&d, &[]).unwrap_err().to_string().contains("duplicate"));
        // Issue 10 §2: the device key must not reach uninvited devices in the basic protocol;
        // share mode has no device key, so it may be open.
        let mut d = draft(20);
        d.invitations = false;
        assert!(matches!(
            plan(&d, &[]).unwrap_err(),
            DraftError::OpenBasicSurvey
        ));
        assert!(
            plan(&d, &[])
                .unwrap_err()
                .to_string()
                .contains("invitations")
        );
        d.share_mode = true;
        let rights: Vec<String> = (0..3).map(|i| format!("http://r{i}")).collect();
        assert!(plan(&d, &rights).is_ok());
        let mut d = draft(20);
        d.id = "Not OK".into();
        assert!(matches!(plan(&d, &[]).unwrap_err(), DraftError::Id));
        assert!(matches!(
            plan(&draft(MAX_COHORT + 1), &[]).unwrap_err(),
            DraftError::CohortSize(_)
        ));
        // Issue 10 §6: m = 10 000 needs p₂ ≈ 13 900 noise columns, a 1.1 GB hand-over.
        let e = plan(&draft(MAX_COHORT), &[]).unwrap_err();
        assert!(matches!(e, DraftError::HandOverTooLarge { .. }), "{e}");
        assert!(e.to_string().contains("smaller cohorts"));
        assert!(plan(&draft(2000), &[]).is_ok());
    }

    #[test]
    fn share_mode_lists_every_right_masking_service() {
        let mut d = draft(20);
        d.share_mode = true;
        let rights: Vec<String> = (0..3).map(|i| format!("http://r{i}")).collect();
        let planned = plan(&d, &rights).unwrap();
        let share = planned.template.masking.share_mode.clone().unwrap();
        assert_eq!(share.providers[1], "http://r1/api/surveys/s/uploads");
        assert_eq!(planned.plan.share_services, 3);
        let def = hydrate(&planned.template, 3, 1, &Key::teaching(1));
        assert!(def.masking.right_mask_key.is_none());
        assert!(def.validate().is_ok());
    }

    #[test]
    fn dp_is_calibrated_for_the_smallest_released_cohort() {
        let mut d = draft(200);
        d.dp = Some(DpDraft {
            epsilon: 0.5,
            delta: 0.01,
        });
        let planned = plan(&d, &[]).unwrap();
        let dp = planned.plan.masking.dp.clone().unwrap();
        assert_eq!(dp.smallest_cohort, 200);
        let expected = CohortMechanism::new(4, 200)
            .unwrap()
            .calibrate(0.5, 0.01)
            .unwrap()
            .sigma();
        assert!((dp.sigma - expected).abs() <= HAND_COMPUTED * expected);
        assert!(dp.guarantee.as_ref().unwrap().delta <= 0.01);
        // age has range [18, 100]: σ_age = σ·82/2.
        assert!((dp.columns[1].sigma - expected * 41.0).abs() < HAND_COMPUTED * expected * 41.0);
        assert!(planned.plan.masking.x_max > 1.0);
        assert!(planned.template.design().unwrap().dp().is_some());
    }

    /// Issue 20 §9: an open survey (share mode, no invitations) may take device-side DP — anyone
    /// can fill all but one place of a cohort there, and DP noise is what bounds what the last
    /// record's sums then show. The collector sees `A X` in share mode as in the basic protocol,
    /// so the same calibration holds; the shares hide the DP noise too.
    #[test]
    fn an_open_share_mode_survey_may_take_dp() {
        let mut d = draft(40);
        d.share_mode = true;
        d.invitations = false;
        d.dp = Some(DpDraft {
            epsilon: 1.0,
            delta: 1e-5,
        });
        let rights: Vec<String> = (0..3).map(|i| format!("http://r{i}")).collect();
        let planned = plan(&d, &rights).unwrap();
        let dp = planned.plan.masking.dp.clone().unwrap();
        assert_eq!(dp.smallest_cohort, 40);
        let share = planned.template.masking.share_mode.clone().unwrap();
        // τ = 100·(1 + 4σ_dp) on the scaled record (`collusion::share_sigma`).
        assert!(
            (share.share_sigma - 100.0 * (1.0 + 4.0 * dp.sigma)).abs()
                < HAND_COMPUTED * share.share_sigma
        );
        let def = hydrate(&planned.template, 3, 0, &Key::teaching(1));
        crate::floors::check(&def).unwrap();
        assert!(def.design().unwrap().dp().is_some());
    }

    /// Issue 12 §1: a demonstration may be open to anyone in the basic protocol, and says so in
    /// its definition and its plan; a survey that is not one keeps the refusal.
    #[test]
    fn a_demonstration_may_be_open_and_is_labelled() {
        let mut d = draft(20);
        d.invitations = false;
        d.demonstration = true;
        let planned = plan(&d, &[]).unwrap();
        assert!(planned.template.masking.teaching);
        assert!(planned.plan.demonstration);
        assert!(!planned.plan.invitations);
        let e = plan(
            &SurveyDraft {
                demonstration: false,
                ..d.clone()
            },
            &[],
        )
        .unwrap_err();
        assert!(matches!(e, DraftError::OpenBasicSurvey));
        assert!(!e.to_string().contains('\n'));
        assert!(e.to_string().contains("demonstration"));
        // Not a demonstration: nothing is labelled.
        let planned = plan(&draft(20), &[]).unwrap();
        assert!(!planned.template.masking.teaching);
        assert!(!planned.plan.demonstration);
        // The draft's flag defaults to false in JSON written before it existed.
        let mut json = serde_json::to_value(draft(20)).unwrap();
        json.as_object_mut().unwrap().remove("demonstration");
        let back: SurveyDraft = serde_json::from_value(json).unwrap();
        assert!(!back.demonstration);
    }

    /// The collector stores the plan as JSON: the masking parameters sit beside the cohort
    /// rules, as in the plans stored before the plan moved here.
    #[test]
    fn the_stored_plan_is_flat_json() {
        let planned = plan(&draft(20), &[]).unwrap();
        let json = serde_json::to_value(&planned.plan).unwrap();
        for field in [
            "p1",
            "p2",
            "sigma",
            "x_max",
            "appendix_c",
            "cohort_size",
            "columns",
        ] {
            assert!(json.get(field).is_some(), "{field}");
        }
        let back: SurveyPlan = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, planned.plan);
        // Plans stored before demonstrations existed still load, as not demonstrations.
        let mut old = json;
        old.as_object_mut().unwrap().remove("demonstration");
        let back: SurveyPlan = serde_json::from_value(old).unwrap();
        assert!(!back.demonstration);
    }

    /// Found by the survey team's builder: a categorical question whose options are not yet
    /// typed made the plan index `options[1..]` and panic. The draft is refused naming the field.
    /// Issue 21 §4: a survey whose cohorts of 250 would lose 2.16 digits with the policy's 1 140
    /// columns gets the 2 174 that keep within 2 (Python brute force, as in plan.rs), at the
    /// smallest δ meeting the failure target — and the devices' floors accept that plan.
    #[test]
    fn extra_noise_columns_for_accuracy_pass_the_devices_floors() {
        let planned = plan(&draft(250), &[]).unwrap();
        assert_eq!(planned.plan.masking.p2, 2174);
        assert!(planned.plan.masking.delta < crate::policy::APPENDIX_C_DELTA);
        let sample = hydrate(&planned.template, 0, 0, &Key::from_bytes([1; 32]));
        let floors = crate::floors::check(&sample).unwrap();
        assert!(sample.masking.sigma >= floors.sigma);
    }

    #[test]
    fn a_categorical_question_without_options_is_refused_not_a_panic() {
        let mut d = draft(20);
        d.questions[2].kind = QuestionKind::Categorical { options: vec![] };
        let message = plan(&d, &[]).unwrap_err().to_string();
        assert!(message.contains("questions[2].options"), "{message}");
        assert!(message.contains("at least two options"), "{message}");
    }
}
