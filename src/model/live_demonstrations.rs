//! The live demonstrations of the deployment that served the page (issue 12 §1): which ones the
//! collector lists, and how many places the participant's cohort still has for simulated
//! participants. No I/O here: `services::simulate` and the participant page fetch, this module
//! reads what the collector answered.
//!
//! The collector lists only demonstration surveys (`GET /api/surveys`): a real survey's existence
//! is not public. A page served by a static host gets no list, and says that sending needs the
//! services (`chooser-static-host` in the catalogues, `locales/`).

use serde::Deserialize;

use orthomask_survey::definition::valid_survey_id;

/// Where the collector lists its live demonstrations (same origin).
pub const LIVE_SURVEYS_PATH: &str = "/api/surveys";

/// One live demonstration, as the collector lists it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct LiveSurvey {
    /// Its id (the participant link is [`participant_link`] of it).
    pub survey: String,
    /// Its title.
    pub title: String,
    /// Its introduction.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether the record is split over the right-masking services.
    #[serde(default)]
    pub share_mode: bool,
    /// Participants per cohort.
    pub cohort_size: usize,
}

#[derive(Deserialize)]
struct LiveSurveys {
    surveys: Vec<LiveSurvey>,
}

/// Why the collector's list is not usable.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum LiveListError {
    /// Not the JSON the collector's `GET /api/surveys` answers.
    #[error("the list of live demonstrations ({LIVE_SURVEYS_PATH}) is not valid: {0}")]
    Malformed(String),
}

/// The live demonstrations in the collector's answer. An entry whose id is not a survey id is
/// left out: the page builds links only from ids ([`participant_link`]), never from addresses.
///
/// # Errors
/// [`LiveListError::Malformed`] naming serde's line and column.
pub fn live_surveys(text: &str) -> Result<Vec<LiveSurvey>, LiveListError> {
    let list: LiveSurveys =
        serde_json::from_str(text).map_err(|e| LiveListError::Malformed(e.to_string()))?;
    Ok(list
        .surveys
        .into_iter()
        .filter(|s| valid_survey_id(&s.survey))
        .collect())
}

/// The page's link to a survey of its own collector.
pub fn participant_link(survey: &str) -> String {
    format!("#/participate?survey={survey}")
}

/// Where the collector publishes a survey's status (same origin).
pub fn status_path(survey: &str) -> String {
    format!(
        "/api/surveys/{}/status",
        super::participation::percent_encode(survey)
    )
}

/// The part of a survey's public status the participant page reads.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct PublicStatus {
    /// Participants per cohort.
    pub cohort_size: usize,
    /// Every cohort so far.
    pub cohorts: Vec<CohortPlaces>,
}

/// How many places of a cohort were handed out.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct CohortPlaces {
    /// Its index.
    pub cohort: u32,
    /// Places handed out (definitions given to participants).
    pub assigned: usize,
}

/// Read a survey's public status.
///
/// # Errors
/// [`LiveListError::Malformed`].
pub fn public_status(text: &str) -> Result<PublicStatus, LiveListError> {
    serde_json::from_str(text).map_err(|e| LiveListError::Malformed(e.to_string()))
}

impl PublicStatus {
    /// Places still free in `cohort` (0 when it is unknown or full): how many simulated
    /// participants fill it, so it closes and its hand-over runs.
    pub fn places_left(&self, cohort: u32) -> usize {
        self.cohorts
            .iter()
            .find(|c| c.cohort == cohort)
            .map_or(0, |c| self.cohort_size.saturating_sub(c.assigned))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_keeps_survey_ids_only() {
        let text = r#"{"surveys": [
            {"survey": "leaps-demo", "title": "Walking", "description": "d", "share_mode": false,
             "cohort_size": 10, "status": "open", "participant_url": "http://x/#/participate?survey=leaps-demo"},
            {"survey": "../evil", "title": "t", "cohort_size": 4},
            {"survey": "shares-demo", "title": "Shares", "cohort_size": 6, "share_mode": true}
        ]}"#;
        let list = live_surveys(text).unwrap();
        assert_eq!(
            list.iter().map(|s| s.survey.as_str()).collect::<Vec<_>>(),
            ["leaps-demo", "shares-demo"]
        );
        assert!(list[1].share_mode);
        assert_eq!(
            participant_link(&list[0].survey),
            "#/participate?survey=leaps-demo"
        );
    }

    #[test]
    fn a_page_that_is_not_the_list_is_one_line() {
        let e = live_surveys("<html>not found</html>").unwrap_err();
        let message = e.to_string();
        assert!(message.starts_with("the list of live demonstrations (/api/surveys) is not valid"));
        assert!(message.contains("line 1 column 1"), "{message}");
        assert!(!message.contains('\n'));
    }

    #[test]
    fn places_left_count_the_participants_cohort() {
        let status = public_status(
            r#"{"survey": "s", "cohort_size": 10, "status": "open",
                "cohorts": [{"cohort": 0, "assigned": 10, "status": "handed_over"},
                            {"cohort": 1, "assigned": 3, "status": "open"}]}"#,
        )
        .unwrap();
        assert_eq!(status.places_left(1), 7);
        assert_eq!(status.places_left(0), 0);
        assert_eq!(status.places_left(7), 0);
        assert_eq!(status_path("leaps-demo"), "/api/surveys/leaps-demo/status");
    }
}
