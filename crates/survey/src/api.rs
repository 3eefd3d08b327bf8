//! The collector's survey-team API as types: the requests and answers of `/api/admin/…` and of
//! the public survey list and status (`docs/openapi.yaml`'s components of the same names). The
//! services serialise these, the web app deserialises them, so a field renamed on one side is a
//! compile error on the other, not a page that silently shows nothing.
//!
//! The states are the API's words, written here only: the services' survey and cohort states
//! (`orthomask_server::states`, with their transitions) are mapped to these variant by variant
//! both ways and stored under these words, so a state the services gain must be given its word
//! here before they compile.
//!
//! The published contract is checked against these types in both directions: the examples in
//! `docs/api-examples.json` read into each type and write back unchanged (nothing the type lacks,
//! nothing it adds; this module's tests), and `scripts/check_schemas.py` validates the same examples against
//! the OpenAPI component, whose schemas admit no other property.

use orthomask_core::protocol::qa::QaReport;
use orthomask_formats::manifest::{AppendixC, DpNoise};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Declares a state as the API words it, with [`word`](SurveyPhase::word) and `Display`.
macro_rules! api_words {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant),+
        }

        impl $name {
            /// Every state, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

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

api_words!(
    /// A survey's state at the collector.
    SurveyPhase {
        /// Taking participants.
        Open = "open",
        /// Closed to participants; its cohorts are being handed over.
        Closing = "closing",
        /// Published.
        Released = "released",
        /// Stopped by an error the survey's `error` names.
        Failed = "failed",
    }
);

api_words!(
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurveyList {
    /// The surveys, oldest first.
    pub surveys: Vec<SurveySummary>,
}

/// One survey of the list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurveySummary {
    /// Id.
    pub survey: String,
    /// Title.
    pub title: String,
    /// State.
    pub status: SurveyPhase,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// A live demonstration (`orthomask serve all`).
    pub demonstration: bool,
}

/// `GET /api/surveys`: the live demonstrations anyone may open (a real survey's existence is not
/// public).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demonstrations {
    /// The open demonstrations.
    pub surveys: Vec<Demonstration>,
}

/// One live demonstration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Demonstration {
    /// Its id.
    pub survey: String,
    /// Its title.
    pub title: String,
    /// Its introduction.
    pub description: Option<String>,
    /// Whether each record is split over the right-masking services.
    pub share_mode: bool,
    /// Participants per cohort.
    pub cohort_size: usize,
    /// Always open: a closed demonstration is not listed.
    pub status: SurveyPhase,
    /// The web app's form for it (no invitation needed).
    pub participant_url: String,
}

/// `POST /api/admin/surveys/{id}/invitations`'s body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvitationRequest {
    /// How many one-use invitations to issue (1 to [`InvitationRequest::MAX`]).
    pub count: usize,
}

impl InvitationRequest {
    /// The most invitations one request issues: a team that needs more asks again, and no
    /// request holds the store for long.
    pub const MAX: usize = 10_000;
}

/// `POST /api/admin/xlsform`: a team's XLSForm workbook (issue 29 §1), to be read as a draft.
/// The collector reads it (`orthomask_xlsform`) so that the page every participant downloads
/// does not carry an xlsx reader: the team's page only sends the file's bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XlsformUpload {
    /// The file's name, for the one-line refusals (`form.xlsx: survey sheet, row 7: …`).
    pub name: String,
    /// The workbook's bytes, base64 (RFC 4648, with padding).
    pub workbook_base64: String,
}

/// `POST /api/admin/xlsform`'s answer: the draft the workbook becomes, not yet created.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XlsformDraft {
    /// The draft, as `POST /api/admin/surveys` takes it.
    pub draft: crate::draft::SurveyDraft,
    /// What the import left out on purpose (`start`/`end` metadata, …), one line each with its
    /// row.
    pub left_out: Vec<String>,
}

/// `POST /api/admin/surveys/{id}/invitations`'s answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Invitations {
    /// The survey.
    pub survey: String,
    /// One per participant.
    pub invitations: Vec<Invitation>,
}

/// One invitation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Invitation {
    /// The one-use token (128 random bits, 32 hexadecimal digits).
    pub token: String,
    /// The definition's address with the token.
    pub definition_url: String,
    /// The participant's link (the web app's form with the token).
    pub participant_url: String,
}

/// `POST /api/admin/surveys/{id}/requeue`'s answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requeued {
    /// The survey.
    pub survey: String,
    /// What each service that holds the survey's hand-overs put back in its queue.
    pub services: Vec<ServiceRequeued>,
}

/// One service's part of [`Requeued`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceRequeued {
    /// Which service.
    pub service: String,
    /// Hand-overs it will send again.
    pub requeued: usize,
}

/// `POST /api/admin/surveys`'s answer: the survey and what the collector decided for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurveyCreated {
    /// Id.
    pub survey: String,
    /// Where participants' devices load the signed definition.
    pub definition_url: String,
    /// The web app's form for it; `None` with invitations (each invitation has its own).
    pub participant_url: Option<String>,
    /// Answer columns and the QA column.
    pub p1: usize,
    /// Noise columns.
    pub p2: usize,
    /// Noise σ.
    pub sigma: f64,
    /// The largest absolute value of a record's entries the plan assumes.
    pub x_max: f64,
    /// Participants per cohort.
    pub cohort_size: usize,
    /// Fewest records for which a cohort is masked and released.
    pub min_cohort_size: usize,
    /// Right-masking services (0: the basic protocol).
    pub share_services: usize,
    /// Whether loading the definition needs a one-use invitation.
    pub invitations: bool,
    /// The Appendix C bound of the largest cohort, where it applies.
    pub appendix_c: Option<AppendixC>,
    /// Significant digits masking is expected to cost a regression coefficient, when known.
    pub expected_digits_lost: Option<f64>,
    /// Why the expected loss exceeds the target, when it does.
    pub accuracy_note: Option<String>,
    /// Device-side DP as planned (σ on the [−1, 1] scale, per column, and its guarantee).
    pub dp: Option<DpNoise>,
    /// The release's address once published.
    pub release_csv_url: String,
    /// The manifest's address once published.
    pub manifest_url: String,
    /// A labelled demonstration.
    pub demonstration: bool,
}

/// `GET /api/admin/surveys/{id}` (and the answers of the operations that change a survey), and
/// the public `GET /api/surveys/{id}/status` of a demonstration, which has no `services` and no
/// `invitations`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurveyStatus {
    /// Id.
    pub survey: String,
    /// Title.
    pub title: String,
    /// A labelled demonstration (open to anyone, its key handed to everyone).
    pub demonstration: bool,
    /// State.
    pub status: SurveyPhase,
    /// Why the survey failed, if it did.
    pub error: Option<String>,
    /// Participants per cohort.
    pub cohort_size: usize,
    /// Fewest records released per cohort.
    pub min_cohort_size: usize,
    /// Right-masking services (0: the basic protocol).
    pub share_services: usize,
    /// The cohort new participants join.
    pub current_cohort: u32,
    /// Every cohort so far.
    pub cohorts: Vec<CohortStatus>,
    /// How often cohorts were spoilt.
    pub spoilt: SpoiltCounts,
    /// Hand-over claims the collector refused (a claim that did not match what the service
    /// published), oldest first.
    pub refused_handovers: Vec<RefusedHandover>,
    /// When the release was published.
    pub released_at: Option<String>,
    /// When every service confirmed it erased the survey's vectors and keys (issue 20 §1).
    pub erased_at: Option<String>,
    /// The release's address, once published.
    pub release_csv_url: Option<String>,
    /// The manifest's address, once published.
    pub manifest_url: Option<String>,
    /// The data package's address (`datapackage.json`: the release's Table Schema, codebook and
    /// labelled factors, `crate::datapackage`), once published; absent from collectors older
    /// than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datapackage_url: Option<String>,
    /// Admin view only: each service's own status of the survey.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<Vec<ServiceStatus>>,
    /// Admin view only: invitation counts (`Some(None)`, written `null`, for a survey without
    /// invitations; `None`, not written, in the public status).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub invitations: Option<Option<InvitationCounts>>,
}

/// One cohort as the collector sees it: counts only, nothing of any participant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CohortStatus {
    /// Index.
    pub cohort: u32,
    /// Places handed out (definitions given for this cohort).
    pub assigned: usize,
    /// State.
    pub status: CohortPhase,
    /// Records received.
    pub records: Option<usize>,
    /// Why it is as it is (a failure's reason, a too-small cohort).
    pub note: Option<String>,
    /// The QA check of its unmasked records, once they arrived.
    pub qa: Option<QaCheck>,
    /// Invitations reopened when the cohort was spoilt.
    pub reopened: usize,
}

/// The QA check of a cohort (seed 000 §2.2's constant column, recovered after unmasking).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QaCheck {
    /// The constant every honest device puts in its QA column.
    pub constant: f64,
    /// The largest deviation of the recovered column from it.
    pub max_deviation: f64,
    /// The deviation still taken as rounding.
    pub tolerance: f64,
    /// The row of the largest deviation.
    pub worst: usize,
}

impl QaCheck {
    /// Whether every recovered QA entry is within the tolerance of the constant (the core's
    /// rule, [`QaReport::passed`]).
    pub fn passed(&self) -> bool {
        QaReport::from(*self).passed()
    }
}

impl From<&QaReport> for QaCheck {
    fn from(q: &QaReport) -> Self {
        Self {
            constant: q.constant,
            max_deviation: q.max_deviation,
            tolerance: q.tolerance,
            worst: q.worst,
        }
    }
}

impl From<QaCheck> for QaReport {
    fn from(q: QaCheck) -> Self {
        Self {
            constant: q.constant,
            max_deviation: q.max_deviation,
            tolerance: q.tolerance,
            worst: q.worst,
        }
    }
}

/// `spoilt` of a survey's status: cohorts left out because someone in them sent invalid data,
/// and the invitations reopened so that their participants can answer again (issue 20 §8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpoiltCounts {
    /// Spoilt cohorts.
    pub cohorts: usize,
    /// Invitations reopened by them.
    pub reopened_invitations: usize,
}

/// One refused hand-over claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusedHandover {
    /// The cohort it was for.
    pub cohort: u32,
    /// The service that made it.
    pub service: String,
    /// Why the collector refused it.
    pub why: String,
    /// When (RFC 3339).
    pub at: String,
}

/// A service's report of a survey (its own words: cohorts, hand-overs, errors), or why it could
/// not be asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceStatus {
    /// Which service.
    pub service: String,
    /// Its report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
    /// Why it did not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How many invitations were issued, opened (a definition loaded with them) and used (their
/// upload was in a cohort's hand-over): counts only, nothing about any one participant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvitationCounts {
    /// Issued.
    pub issued: u64,
    /// Opened.
    pub opened: u64,
    /// Used.
    pub used: u64,
}

impl CohortStatus {
    /// Whether the survey team may still close it.
    pub fn closable(&self) -> bool {
        self.status == CohortPhase::Open
    }

    /// The QA check's result in a word, once the records arrived.
    pub fn qa_text(&self) -> Option<&'static str> {
        self.qa
            .map(|q| if q.passed() { "passed" } else { "FAILED" })
    }
}

/// `n` and the noun, singular or plural.
fn counted(n: usize, one: &str, many: &str) -> String {
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

impl RefusedHandover {
    /// One line for the survey team (the reason's lines joined).
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

impl ServiceStatus {
    /// One line: the service's report (its fields, `name: value`) or why it was not asked.
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

impl InvitationCounts {
    /// One line: "30 issued, 23 opened, 20 used".
    pub fn summary(&self) -> String {
        format!(
            "{} issued, {} opened, {} used",
            self.issued, self.opened, self.used
        )
    }
}

/// A field that is there, even as `null`: `Some` of what it holds (serde alone reads `null` as
/// absent for a doubled `Option`).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// Read one of the API's answers.
///
/// # Errors
/// One line naming what could not be read and serde's reason (with line and column).
pub fn parse<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("the collector's {what} is unreadable: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;

    /// The published examples, one or more per component (`docs/api-examples.json`).
    fn examples() -> serde_json::Map<String, Value> {
        let text = include_str!("../../../docs/api-examples.json");
        match serde_json::from_str(text).expect("docs/api-examples.json is JSON") {
            Value::Object(m) => m,
            other => panic!("docs/api-examples.json is not an object: {other}"),
        }
    }

    /// Every example of `component` reads into `T` and writes back as the same JSON: the type
    /// has every field the example shows and no other (each example shows every field the type
    /// writes). Returns how many examples were read.
    fn round_trips<T: DeserializeOwned + Serialize>(component: &str) -> usize {
        let all = examples();
        let list = all[component]
            .as_array()
            .unwrap_or_else(|| panic!("no examples of {component}"));
        for (i, example) in list.iter().enumerate() {
            let value: T = serde_json::from_value(example.clone())
                .unwrap_or_else(|e| panic!("{component} example {i} does not read: {e}"));
            assert_eq!(
                &serde_json::to_value(&value).unwrap(),
                example,
                "{component} example {i} does not write back unchanged"
            );
        }
        list.len()
    }

    #[test]
    fn every_component_reads_its_published_examples_and_writes_them_back() {
        let counted = [
            round_trips::<SurveyList>("SurveyList"),
            round_trips::<Demonstrations>("Demonstrations"),
            round_trips::<InvitationRequest>("InvitationRequest"),
            round_trips::<Invitations>("Invitations"),
            round_trips::<Requeued>("Requeued"),
            round_trips::<SurveyCreated>("SurveyCreated"),
            round_trips::<SurveyStatus>("SurveyStatus"),
            round_trips::<XlsformDraft>("XlsformDraft"),
            round_trips::<XlsformUpload>("XlsformUpload"),
        ];
        assert!(counted.iter().all(|&n| n >= 1));
        // No example stands for a component nothing reads.
        let names: Vec<String> = examples().keys().cloned().collect();
        assert_eq!(
            names,
            [
                "Demonstrations",
                "InvitationRequest",
                "Invitations",
                "Requeued",
                "SurveyCreated",
                "SurveyList",
                "SurveyStatus",
                "XlsformDraft",
                "XlsformUpload"
            ]
        );
    }

    #[test]
    fn a_field_the_type_does_not_have_is_refused_with_its_name() {
        let e = parse::<SurveyList>(r#"{"surveys": [], "extra": 1}"#, "survey list").unwrap_err();
        assert!(
            e.starts_with("the collector's survey list is unreadable: unknown field `extra`"),
            "{e}"
        );
        let e = parse::<SurveyStatus>("{}", "status").unwrap_err();
        assert!(e.contains("missing field `survey`"), "{e}");
    }

    #[test]
    fn the_admin_view_and_the_public_status_differ_only_in_services_and_invitations() {
        let all = examples();
        let statuses: Vec<SurveyStatus> =
            serde_json::from_value(all["SurveyStatus"].clone()).unwrap();
        let admin = statuses.iter().find(|s| s.services.is_some()).unwrap();
        let public = statuses.iter().find(|s| s.services.is_none()).unwrap();
        assert!(admin.invitations.is_some() && public.invitations.is_none());
        // A survey without invitations says so with `null`, which is not the same as absent.
        let uninvited = statuses
            .iter()
            .find(|s| s.invitations == Some(None))
            .unwrap();
        assert_eq!(
            serde_json::to_value(uninvited).unwrap()["invitations"],
            Value::Null
        );
        let written = serde_json::to_value(public).unwrap();
        assert!(written.get("services").is_none() && written.get("invitations").is_none());
    }

    #[test]
    fn the_words_are_the_published_ones() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            SurveyPhase::ALL
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            words(&["open", "closing", "released", "failed"])
        );
        assert_eq!(
            CohortPhase::ALL
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            words(&[
                "open", "closed", "empty", "received", "withheld", "spoilt", "failed"
            ])
        );
    }

    /// Issue 20 §8: how often cohorts were spoilt, and the refused hand-over claims, each as
    /// one line for the team page; the services' reports and the QA result as words.
    #[test]
    fn the_team_page_lines_read_as_written() {
        let all = examples();
        let statuses: Vec<SurveyStatus> =
            serde_json::from_value(all["SurveyStatus"].clone()).unwrap();
        let s = &statuses[0];
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
        let refused = RefusedHandover {
            why: "rows do not match\nthe published list".into(),
            ..s.refused_handovers[0].clone()
        };
        assert_eq!(
            refused.line(),
            "2026-11-26T09:12:00Z — cohort 1, from the masking service provider: rows do not match the published list"
        );
        let services = s.services.as_ref().unwrap();
        assert_eq!(services[0].summary(), "cohorts: []; survey: health-2026");
        assert_eq!(services[1].summary(), "unreachable: connection refused");
        assert_eq!(
            s.invitations.unwrap().unwrap().summary(),
            "30 issued, 23 opened, 20 used"
        );
        let words: Vec<_> = s.cohorts.iter().map(CohortStatus::qa_text).collect();
        assert_eq!(words, [Some("passed"), None, None]);
        let closable: Vec<_> = statuses[2]
            .cohorts
            .iter()
            .map(CohortStatus::closable)
            .collect();
        assert_eq!((s.cohorts[0].closable(), closable), (false, vec![true]));
        let failing = CohortStatus {
            qa: Some(QaCheck {
                max_deviation: 4.5,
                ..s.cohorts[0].qa.unwrap()
            }),
            ..s.cohorts[0].clone()
        };
        assert_eq!(failing.qa_text(), Some("FAILED"));
    }

    #[test]
    fn a_qa_check_passes_within_its_tolerance() {
        let qa = |max_deviation| QaCheck {
            constant: 1.0,
            max_deviation,
            tolerance: 1e-6,
            worst: 0,
        };
        assert!(qa(0.0).passed() && qa(1e-6).passed());
        assert!(!qa(2e-6).passed());
    }
}
