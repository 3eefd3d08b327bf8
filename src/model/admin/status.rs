//! The admin API's answers as typed structs. Every field the page does not need to act on is
//! optional, so a collector that adds fields (`title`, `demonstration`, `invitations`) or leaves
//! some out still renders.

use serde::Deserialize;
use serde_json::Value;

/// Declares a state as the collector's API words it (`docs/openapi.yaml`; the services' own
/// enums with their transitions are in `orthomask_server::states`), shown as that word.
macro_rules! api_state {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant),+
        }

        impl $name {
            /// The API's word for it.
            pub const fn word(self) -> &'static str {
                match self {
                    $(Self::$variant => $word),+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.word())
            }
        }
    };
}

api_state!(
    /// A survey's state at the collector.
    SurveyPhase {
        /// Taking participants.
        Open = "open",
        /// Closed to participants; its cohorts are being handed over.
        Closing = "closing",
        /// Published.
        Released = "released",
        /// Stopped by an error the page shows.
        Failed = "failed",
    }
);

api_state!(
    /// A cohort's state at the collector.
    CohortPhase {
        /// Taking participants.
        Open = "open",
        /// Closed; its hand-over is on the way.
        Closed = "closed",
        /// Closed without participants.
        Empty = "empty",
        /// Its masked records arrived.
        Received = "received",
        /// Too few records to release.
        Withheld = "withheld",
        /// Someone in it sent invalid data (its QA check failed): left out of the release, its
        /// invitations reopened (issue 20 §8).
        Spoilt = "spoilt",
        /// Left out by the survey team (its hand-over never came or was never believed).
        Failed = "failed",
    }
);

/// `GET /api/admin/surveys`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct SurveyList {
    /// The surveys, oldest first.
    pub surveys: Vec<SurveySummary>,
}

/// One survey of the list.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SurveySummary {
    /// Id.
    pub survey: String,
    /// State.
    pub status: SurveyPhase,
    /// When it was created (RFC 3339).
    #[serde(default)]
    pub created_at: Option<String>,
    /// Title, when the collector lists it.
    #[serde(default)]
    pub title: Option<String>,
    /// Whether it is a demonstration survey, when the collector says.
    #[serde(default)]
    pub demonstration: Option<bool>,
}

/// `GET /api/admin/surveys/{id}` (and the close operations' answers).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SurveyStatus {
    /// Id.
    pub survey: String,
    /// Title.
    #[serde(default)]
    pub title: Option<String>,
    /// State.
    pub status: SurveyPhase,
    /// Why the survey failed, if it did.
    #[serde(default)]
    pub error: Option<String>,
    /// Participants per cohort.
    #[serde(default)]
    pub cohort_size: Option<u64>,
    /// Fewest records released per cohort.
    #[serde(default)]
    pub min_cohort_size: Option<u64>,
    /// Right-masking services (0: basic protocol).
    #[serde(default)]
    pub share_services: u64,
    /// The cohort new participants join.
    #[serde(default)]
    pub current_cohort: Option<u64>,
    /// Every cohort.
    #[serde(default)]
    pub cohorts: Vec<CohortStatus>,
    /// When the release was published.
    #[serde(default)]
    pub released_at: Option<String>,
    /// The release's address.
    #[serde(default)]
    pub release_csv_url: Option<String>,
    /// The manifest's address.
    #[serde(default)]
    pub manifest_url: Option<String>,
    /// Each service's own status of the survey (admin view only).
    #[serde(default)]
    pub services: Vec<ServiceStatus>,
    /// Invitation counts, when the collector reports them.
    #[serde(default)]
    pub invitations: Option<InvitationCounts>,
    /// Whether it is a demonstration (open to anyone, its key handed to everyone).
    #[serde(default)]
    pub demonstration: bool,
    /// How often a cohort was spoilt (left out because someone sent invalid data). The
    /// collector always reports it in the admin view; absent (the public status), none.
    #[serde(default)]
    pub spoilt: SpoiltCounts,
    /// Hand-over claims the collector refused (a service's claim that did not match what it
    /// published, or was not believed).
    #[serde(default)]
    pub refused_handovers: Vec<RefusedHandover>,
}

/// `spoilt` of a survey's status: cohorts left out because someone in them sent invalid data,
/// and the invitations reopened so that their participants can answer again (issue 20 §8).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct SpoiltCounts {
    /// Spoilt cohorts.
    #[serde(default)]
    pub cohorts: u64,
    /// Invitations reopened by them.
    #[serde(default)]
    pub reopened_invitations: u64,
}

/// `n` and the noun, singular or plural.
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl SpoiltCounts {
    /// One line for the survey team.
    pub fn summary(&self) -> String {
        if self.cohorts == 0 {
            return "No cohort was spoilt (none was left out for invalid data).".to_owned();
        }
        format!(
            "{} spoilt: left out of the release because someone in {} sent invalid data; {} \
             reopened so that {} participants can answer again in a new cohort.",
            counted(self.cohorts, "cohort", "cohorts"),
            if self.cohorts == 1 { "it" } else { "each" },
            counted(self.reopened_invitations, "invitation", "invitations"),
            if self.reopened_invitations == 1 {
                "its"
            } else {
                "their"
            }
        )
    }
}

/// One refused hand-over claim (`refused_handovers` of a survey's status).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct RefusedHandover {
    /// The cohort it was for.
    pub cohort: u64,
    /// The service that made it.
    pub service: String,
    /// Why the collector refused it.
    pub why: String,
    /// When (RFC 3339).
    pub at: String,
}

impl RefusedHandover {
    /// One line for the survey team.
    pub fn line(&self) -> String {
        format!(
            "{} — cohort {}, from {}: {}",
            self.at,
            self.cohort,
            self.service,
            self.why.lines().collect::<Vec<_>>().join(" ")
        )
    }
}

/// One cohort as the collector sees it (counts only, nothing of any participant).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct CohortStatus {
    /// Index.
    pub cohort: u64,
    /// Participants assigned so far.
    #[serde(default)]
    pub assigned: Option<i64>,
    /// State.
    pub status: CohortPhase,
    /// Records received.
    #[serde(default)]
    pub records: Option<i64>,
    /// Why it is as it is (a failure's reason, a too-small cohort).
    #[serde(default)]
    pub note: Option<String>,
    /// The QA check's result.
    #[serde(default)]
    pub qa: Option<Value>,
}

impl CohortStatus {
    /// Whether the team may still close it.
    pub fn closable(&self) -> bool {
        self.status == CohortPhase::Open
    }

    /// The QA result in words.
    pub fn qa_text(&self) -> Option<String> {
        let qa = self.qa.as_ref()?;
        Some(match qa.get("passed").and_then(Value::as_bool) {
            Some(true) => "passed".to_owned(),
            Some(false) => "FAILED".to_owned(),
            None => qa.to_string(),
        })
    }
}

/// A service's report, or why it could not be asked.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ServiceStatus {
    /// Which service.
    pub service: String,
    /// Its status of the survey.
    #[serde(default)]
    pub status: Option<Value>,
    /// Why it did not answer.
    #[serde(default)]
    pub error: Option<String>,
}

impl ServiceStatus {
    /// One line: the service's report or its error.
    pub fn summary(&self) -> String {
        match (&self.error, &self.status) {
            (Some(e), _) => format!("unreachable: {e}"),
            (None, Some(Value::Object(fields))) => fields
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{k}: {s}"),
                    other => format!("{k}: {other}"),
                })
                .collect::<Vec<_>>()
                .join("; "),
            (None, Some(other)) => other.to_string(),
            (None, None) => "no report".to_owned(),
        }
    }
}

/// How many invitations were issued, opened and used.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct InvitationCounts {
    /// Issued.
    #[serde(default)]
    pub issued: Option<u64>,
    /// Opened (the definition loaded).
    #[serde(default)]
    pub opened: Option<u64>,
    /// Used (an upload made).
    #[serde(default)]
    pub used: Option<u64>,
}

/// `POST /api/admin/surveys/{id}/invitations`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Invitations {
    /// The survey.
    pub survey: String,
    /// One per participant.
    pub invitations: Vec<Invitation>,
}

/// One invitation.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Invitation {
    /// The one-use token.
    pub token: String,
    /// The participant's link (the web app's form with the token).
    pub participant_url: String,
}

/// Read one of the admin API's answers.
///
/// # Errors
/// One line naming what could not be read.
pub fn parse<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("the collector's {what} is unreadable: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_reads_with_and_without_the_new_fields() {
        let l: SurveyList = parse(
            r#"{"surveys": [{"survey": "a", "status": "open", "created_at": "2026-01-01T00:00:00Z"},
                            {"survey": "b", "status": "released", "created_at": "x", "title": "B", "demonstration": true}]}"#,
            "list",
        )
        .unwrap();
        assert_eq!(l.surveys[0].title, None);
        assert_eq!(
            (l.surveys[1].title.as_deref(), l.surveys[1].demonstration),
            (Some("B"), Some(true))
        );
    }

    /// Issue 20 §8: how often cohorts were spoilt, and the refused hand-over claims, each as
    /// one line for the team page.
    #[test]
    fn spoilt_cohorts_and_refused_handovers_read_as_one_line_each() {
        let s: SurveyStatus = parse(
            r#"{"survey": "s", "status": "open",
                "cohorts": [{"cohort": 0, "assigned": 10, "status": "spoilt", "records": null, "note": "QA failed", "qa": {"passed": false}, "reopened": 10},
                            {"cohort": 1, "assigned": 2, "status": "open", "reopened": 0}],
                "spoilt": {"cohorts": 1, "reopened_invitations": 10},
                "refused_handovers": [{"cohort": 0, "service": "right-masking service 1", "why": "rows do not match\nthe published list", "at": "2026-05-01T10:00:00Z"}]}"#,
            "status",
        )
        .unwrap();
        assert_eq!(s.cohorts[0].status, CohortPhase::Spoilt);
        assert_eq!(s.cohorts[0].qa_text().as_deref(), Some("FAILED"));
        assert!(!s.cohorts[0].closable());
        assert_eq!(
            s.spoilt.summary(),
            "1 cohort spoilt: left out of the release because someone in it sent invalid data; 10 invitations reopened so that their participants can answer again in a new cohort."
        );
        assert_eq!(
            SpoiltCounts {
                cohorts: 2,
                reopened_invitations: 1
            }
            .summary(),
            "2 cohorts spoilt: left out of the release because someone in each sent invalid data; 1 invitation reopened so that its participants can answer again in a new cohort."
        );
        assert_eq!(
            SpoiltCounts::default().summary(),
            "No cohort was spoilt (none was left out for invalid data)."
        );
        assert_eq!(
            s.refused_handovers[0].line(),
            "2026-05-01T10:00:00Z — cohort 0, from right-masking service 1: rows do not match the published list"
        );
    }

    #[test]
    fn the_status_reads_into_typed_structs() {
        let s: SurveyStatus = parse(
            r#"{"survey": "s", "title": "T", "status": "released", "error": null, "cohort_size": 10,
                "min_cohort_size": 8, "share_services": 0, "current_cohort": 1,
                "cohorts": [{"cohort": 0, "assigned": 9, "status": "received", "records": 9, "note": null,
                             "qa": {"passed": true, "max_abs_error": 1e-12}},
                            {"cohort": 1, "assigned": 0, "status": "open", "records": null, "note": null, "qa": null}],
                "released_at": "2026-01-01T00:00:00Z", "release_csv_url": "http://c/api/surveys/s/release.csv",
                "manifest_url": "http://c/api/surveys/s/manifest.json",
                "services": [{"service": "the masking service provider", "status": {"state": "open", "uploads": 3}},
                             {"service": "right 0", "error": "connection refused"}],
                "invitations": {"issued": 10, "opened": 9, "used": 9}}"#,
            "status",
        )
        .unwrap();
        assert_eq!(s.cohorts.len(), 2);
        assert_eq!(s.cohorts[0].qa_text().as_deref(), Some("passed"));
        assert!(!s.cohorts[0].closable() && s.cohorts[1].closable());
        assert_eq!(s.services[0].summary(), "state: open; uploads: 3");
        assert_eq!(s.services[1].summary(), "unreachable: connection refused");
        assert_eq!(
            s.invitations,
            Some(InvitationCounts {
                issued: Some(10),
                opened: Some(9),
                used: Some(9)
            })
        );
        assert_eq!(s.spoilt, SpoiltCounts::default());
        assert!(s.refused_handovers.is_empty());
        // The public status has no services and no invitations.
        let s: SurveyStatus = parse(
            r#"{"survey": "s", "status": "open", "cohorts": []}"#,
            "status",
        )
        .unwrap();
        assert!(s.services.is_empty() && s.invitations.is_none() && s.released_at.is_none());
        assert!(
            parse::<SurveyStatus>("{}", "status")
                .unwrap_err()
                .starts_with("the collector's status is unreadable")
        );
    }
}
