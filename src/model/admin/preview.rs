//! The design the collector will choose, computed in the browser by the same
//! `orthomask_survey::draft::plan_survey` the collector runs on `POST /api/admin/surveys`, with
//! the endpoints it publishes at `GET /api/deployment`. An unsafe design is refused here with
//! the API's own one-line reason (`DraftError`'s text), before anything is sent.
//!
//! [`notes`]: what the participant's form preview says about the draft beyond its questions —
//! the languages offered and, under each conditional question, when it is shown.
//!
//! [`recommends_dp`]: whether the builder recommends device-side differential privacy — for an
//! open survey without it (issue 20 §9).

use orthomask_survey::draft::{Endpoints, SurveyDraft, plan_survey};
use orthomask_survey::languages::offered;
use orthomask_survey::trust::Deployment;

/// What the collector will decide for a draft (`SurveyPlan`'s numbers).
#[derive(Clone, Debug, PartialEq)]
pub struct PlanPreview {
    /// Data columns `p₁` (answers and QA).
    pub p1: usize,
    /// Noise columns `p₂`.
    pub p2: usize,
    /// Noise standard deviation σ.
    pub sigma: f64,
    /// σ of the device-side DP noise, when asked for.
    pub dp_sigma: Option<f64>,
    /// Participants per cohort.
    pub cohort_size: usize,
    /// Fewest records for which a cohort is released.
    pub min_cohort_size: usize,
    /// The Appendix C bound on the probability that condition (3.5) fails, when it applies.
    pub failure_probability: Option<f64>,
    /// Right-masking services (0: the basic protocol).
    pub share_services: usize,
    /// Released columns.
    pub columns: Vec<String>,
    /// Significant digits masking is expected to cost a coefficient (rms under a rounding model;
    /// `orthomask_core::protocol::accuracy`), when the model applies.
    pub expected_digits_lost: Option<f64>,
    /// Why the expected loss exceeds the policy's two digits, when it does (issue 21 §4).
    pub accuracy_note: Option<String>,
}

/// Plan `draft` as the collector will.
///
/// # Errors
/// `DraftError`'s one line, the same text the API answers with.
pub fn preview(draft: &SurveyDraft, endpoints: &Deployment) -> Result<PlanPreview, String> {
    let planned = plan_survey(
        draft,
        Endpoints {
            provider: &endpoints.msp,
            right_services: &endpoints.rights,
        },
    )
    .map_err(|e| e.to_string())?;
    let accuracy = planned
        .plan
        .masking
        .release_accuracy(planned.template.share_split())
        .ok();
    let p = planned.plan;
    Ok(PlanPreview {
        p1: p.masking.p1,
        p2: p.masking.p2,
        sigma: p.masking.sigma,
        dp_sigma: p.masking.dp.as_ref().map(|d| d.sigma),
        cohort_size: p.cohort_size,
        min_cohort_size: p.min_cohort_size,
        failure_probability: p.masking.appendix_c.as_ref().map(|a| a.failure_probability),
        share_services: p.share_services,
        columns: p.columns,
        expected_digits_lost: accuracy.as_ref().map(|a| a.accuracy.expected_digits_lost()),
        accuracy_note: accuracy.and_then(|a| a.note),
    })
}

/// Whether the builder recommends device-side differential privacy for `draft` (issue 20 §9):
/// an open survey (no invitations — necessarily share mode) that does not ask for it. Anyone
/// can take places in an open survey, so whoever fills all but one place of a cohort can work
/// out the last participant's answers from the cohort's released totals (the release keeps
/// `XᵀX` and the means exactly); device-side DP noise on each record bounds what that
/// difference reveals. Not for a demonstration, whose answers are not private anyway (its key
/// is published to everyone), nor for a survey with invitations, whose places the team hands
/// out.
pub fn recommends_dp(draft: &SurveyDraft) -> bool {
    !draft.invitations && !draft.demonstration && draft.dp.is_none()
}

/// The preview's notes on a draft: languages and skip logic.
#[derive(Clone, Debug, PartialEq)]
pub struct FormNotes {
    /// The languages the participants may choose, the main one first.
    pub languages: Vec<String>,
    /// Under each question, when it is shown (`None`: always), e.g. "shown when smokes is yes".
    pub conditions: Vec<Option<String>>,
}

/// The notes of [`FormNotes`] for `draft`, in the words of `orthomask_survey`
/// (`SurveyDefinition::languages`, `SurveyDefinition::condition_text`).
pub fn notes(draft: &SurveyDraft) -> FormNotes {
    FormNotes {
        languages: offered(&draft.language, &draft.translations)
            .into_iter()
            .map(str::to_owned)
            .collect(),
        conditions: draft
            .questions
            .iter()
            .map(|q| q.show_if.as_ref().map(|s| s.text()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::admin::editor;
    use orthomask_survey::trust::CollectorSigningKey;

    const DRAFT: &str = r#"{"id": "s", "title": "T", "consent": "ok", "cohort_size": 20, "invitations": true,
      "questions": [{"id": "smoker", "label": "?", "kind": "yes_no"},
                    {"id": "age", "label": "?", "kind": "integer", "min": 18, "max": 100},
                    {"id": "region", "label": "?", "kind": "categorical", "options": ["n", "s", "e"]}]}"#;

    fn endpoints() -> Deployment {
        Deployment {
            collector_public_key: CollectorSigningKey::from_secret([7; 32]).public_key(),
            collector: "http://c".into(),
            msp: "http://m".into(),
            rights: vec!["http://r0".into()],
            build: None,
            builds: Vec::new(),
        }
    }

    /// The numbers of `orthomask_survey::draft`'s own test for this draft: p₁ = 4 answer columns
    /// + QA, p₂ = 503 for m = 20, minimum cohort p₁ + 1.
    #[test]
    fn the_preview_is_the_collectors_plan() {
        let p = preview(&editor::parse(DRAFT).unwrap(), &endpoints()).unwrap();
        assert_eq!(
            (p.p1, p.p2, p.cohort_size, p.min_cohort_size),
            (5, 503, 20, 6)
        );
        assert_eq!((p.dp_sigma, p.share_services), (None, 0));
        assert!(p.sigma > 0.0 && p.failure_probability.is_some_and(|f| f > 0.0 && f < 1.0));
        assert_eq!(p.columns, ["smoker", "age", "region=s", "region=e", "QA"]);
    }

    /// A cohort too large for two digits: the preview says so, with the collector's reason
    /// (issue 21 §4); a small one states its expected loss and no note.
    #[test]
    fn the_preview_states_the_expected_digits_and_why_not() {
        let small = preview(&editor::parse(DRAFT).unwrap(), &endpoints()).unwrap();
        assert!(
            small
                .expected_digits_lost
                .is_some_and(|d| d > 0.0 && d <= 2.0)
        );
        assert_eq!(small.accuracy_note, None);
        let large = DRAFT.replace("\"cohort_size\": 20", "\"cohort_size\": 3000");
        assert_ne!(large, DRAFT, "the draft names its cohort size");
        let p = preview(&editor::parse(&large).unwrap(), &endpoints()).unwrap();
        assert!(p.expected_digits_lost.is_some_and(|d| d > 2.0));
        let note = p.accuracy_note.unwrap();
        assert!(note.contains("cohorts of at most"), "{note}");
    }

    #[test]
    fn unsafe_designs_are_refused_with_the_apis_line() {
        let small = editor::parse(&DRAFT.replace("20", "5")).unwrap();
        let e = preview(&small, &endpoints()).unwrap_err();
        // The API's line (`DraftError::CohortTooSmall`), whose middle names the policy's reasons.
        assert!(
            e.starts_with("cohort_size 5 is too small for 5 data columns (the answers' 4 columns and the QA column): seed 000 needs p1 < n")
                && e.ends_with("so use cohorts of at least 6")
                && !e.contains('\n'),
            "{e}"
        );
        let shares =
            editor::parse(&DRAFT.replace("\"invitations\": true", "\"share_mode\": true")).unwrap();
        let e = preview(&shares, &endpoints()).unwrap_err();
        // Issue 43: two services would let the collector with one of them read yes/no answers.
        assert_eq!(
            e,
            "share mode needs at least 3 right-masking services; this collector knows 1 (--right)"
        );
        let open = editor::parse(&DRAFT.replace("true", "false")).unwrap();
        assert!(
            preview(&open, &endpoints())
                .unwrap_err()
                .starts_with("a basic-protocol survey cannot be open")
        );
        // A categorical question without options is refused, not coded.
        let empty = editor::parse(&DRAFT.replace(r#"["n", "s", "e"]"#, "[]")).unwrap();
        assert_eq!(
            preview(&empty, &endpoints()).unwrap_err(),
            "survey definition: questions[2].options: need at least two options"
        );
    }

    /// The preview names the languages and says under each conditional question when it is
    /// shown; the survey's own test plans such a draft (`orthomask_survey::demonstrations`).
    #[test]
    fn the_notes_name_languages_and_conditions() {
        let draft = editor::parse(
            r#"{"id": "s", "title": "T", "consent": "ok", "cohort_size": 20, "invitations": true,
              "translations": {"es": {"title": "T", "consent": "ok", "questions": {
                  "smoker": {"label": "¿?"}, "n": {"label": "¿?"}, "stress": {"label": "¿?", "low_label": "a", "high_label": "b"}}}},
              "questions": [{"id": "smoker", "label": "?", "kind": "yes_no"},
                            {"id": "n", "label": "?", "kind": "integer", "min": 1, "max": 60, "show_if": {"question": "smoker", "equals": "yes"}},
                            {"id": "stress", "label": "?", "kind": "likert", "points": 5, "low_label": "l", "high_label": "h",
                             "show_if": {"question": "n", "range": {"min": 10, "max": 60}}}]}"#,
        )
        .unwrap();
        draft.validate_content().unwrap();
        let notes = notes(&draft);
        assert_eq!(notes.languages, ["en", "es"]);
        assert_eq!(
            notes.conditions,
            [
                None,
                Some("shown when smoker is yes".to_owned()),
                Some("shown when n is from 10 to 60".to_owned())
            ]
        );
        let plain = notes_of(DRAFT);
        assert_eq!(plain.languages, ["en"]);
        assert!(plain.conditions.iter().all(Option::is_none));
    }

    fn notes_of(text: &str) -> FormNotes {
        notes(&editor::parse(text).unwrap())
    }

    /// Issue 20 §9: an open survey without DP gets the recommendation; with DP, with
    /// invitations, or as a demonstration it does not.
    #[test]
    fn open_surveys_without_dp_are_told_to_add_it() {
        let with = |from: &str, to: &str| editor::parse(&DRAFT.replace(from, to)).unwrap();
        let invited = editor::parse(DRAFT).unwrap();
        assert!(!recommends_dp(&invited));
        let open = with(
            "\"invitations\": true",
            "\"invitations\": false, \"share_mode\": true",
        );
        assert!(recommends_dp(&open));
        let open_with_dp = with(
            "\"invitations\": true",
            "\"invitations\": false, \"share_mode\": true, \"dp\": {\"epsilon\": 1, \"delta\": 1e-6}",
        );
        assert!(!recommends_dp(&open_with_dp));
        let demonstration = with(
            "\"invitations\": true",
            "\"invitations\": false, \"share_mode\": true, \"demonstration\": true",
        );
        assert!(!recommends_dp(&demonstration));
    }
}
