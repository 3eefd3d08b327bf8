//! The live demonstrations of the deployment that served the page (issue 12 §1): which ones the
//! collector lists, and how many places the participant's cohort still has for simulated
//! participants. No I/O here: `services::simulate` and the participant page fetch, this module
//! reads what the collector answered.
//!
//! The collector lists only demonstration surveys (`GET /api/surveys`): a real survey's existence
//! is not public. A page served by a static host gets no list, and says that sending needs the
//! services (`chooser-static-host` in the catalogues, `locales/`).

use orthomask_survey::api::{Demonstration, Demonstrations, SurveyStatus};
use orthomask_survey::definition::valid_survey_id;

/// Where the collector lists its live demonstrations (same origin).
pub const LIVE_SURVEYS_PATH: &str = "/api/surveys";

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
pub fn live_surveys(text: &str) -> Result<Vec<Demonstration>, LiveListError> {
    let list: Demonstrations =
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

/// Read a survey's public status (`orthomask_survey::api::SurveyStatus`, without the admin
/// view's parts).
///
/// # Errors
/// [`LiveListError::Malformed`].
pub fn public_status(text: &str) -> Result<SurveyStatus, LiveListError> {
    serde_json::from_str(text).map_err(|e| LiveListError::Malformed(e.to_string()))
}

/// Places still free in `cohort` of a survey's status (0 when it is unknown or full): how many
/// simulated participants fill it, so it closes and its hand-over runs.
pub fn places_left(status: &SurveyStatus, cohort: u32) -> usize {
    status
        .cohorts
        .iter()
        .find(|c| c.cohort == cohort)
        .map_or(0, |c| status.cohort_size.saturating_sub(c.assigned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_keeps_survey_ids_only() {
        let demo = |id: &str, share_mode: bool| {
            serde_json::json!({"survey": id, "title": "t", "description": null,
                "share_mode": share_mode, "cohort_size": 4, "status": "open",
                "participant_url": format!("http://x/#/participate?survey={id}")})
        };
        let text = serde_json::json!({"surveys": [
            demo("leaps-demo", false), demo("../evil", false), demo("shares-demo", true)
        ]})
        .to_string();
        let list = live_surveys(&text).unwrap();
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
        let cohort = |k: u32, assigned: usize, status: &str| {
            serde_json::json!({"cohort": k, "assigned": assigned, "status": status,
                "records": null, "note": null, "qa": null, "reopened": 0})
        };
        let text = serde_json::json!({"survey": "s", "title": "t", "demonstration": true,
            "status": "open", "error": null, "cohort_size": 10, "min_cohort_size": 5,
            "share_services": 0, "current_cohort": 1,
            "cohorts": [cohort(0, 10, "closed"), cohort(1, 3, "open")],
            "spoilt": {"cohorts": 0, "reopened_invitations": 0}, "refused_handovers": [],
            "released_at": null, "erased_at": null, "release_csv_url": null, "manifest_url": null})
        .to_string();
        let status = public_status(&text).unwrap();
        assert_eq!(places_left(&status, 1), 7);
        assert_eq!(places_left(&status, 0), 0);
        assert_eq!(places_left(&status, 7), 0);
        assert_eq!(status_path("leaps-demo"), "/api/surveys/leaps-demo/status");
    }
}
