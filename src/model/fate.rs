//! What became of the participant's cohort after the receipt (issue 20 §8, issue 43 §3 and §6):
//! the collector's `POST /api/surveys/{id}/cohorts/{k}/fate`. The collector tells a cohort's
//! fate only to a holder of one of its credentials, so the request carries, in its JSON body
//! ([`fate_request`]), the nonce of the upload credential the collector issued to this device for
//! that cohort ([`credential_nonce`]) — in a body, never in the address; a demonstration, whose
//! fates are public, sends `{}`. Any other request is answered `404`, as for a cohort that does
//! not exist.
//!
//! Two fates ask the participant to answer again ([`AgainReason`]): a cohort is *spoilt* when
//! someone in it sent invalid data, and *regrouped* when it closed with too few records to be
//! masked while the survey still takes participants. Either way the collector releases nothing
//! of it and reopens its invitations, so a participant whose page still holds the answers sends
//! them again in a new cohort (`pages::participate`), and a page that kept only masked numbers
//! asks the participant to answer again (`pages::waiting_uploads`); the page says which of the
//! two happened.
//!
//! No I/O here: the path and the request's body, when to ask again ([`next_poll_ms`]: every 10
//! to 20 seconds with jitter, never before a `Retry-After`), and the answer as the typed value
//! both the collector and this page use (`orthomask_survey::fate`).

use orthomask_survey::client::Destination;

use super::participation::percent_encode;
use super::retry_after_ms;

/// Where the collector publishes the fate of cohort `cohort` of `survey` (same origin).
pub fn fate_path(survey: &str, cohort: u32) -> String {
    format!(
        "/api/surveys/{}/cohorts/{cohort}/fate",
        percent_encode(survey)
    )
}

pub use orthomask_survey::fate::{CohortFate, Fate, read_fate};

/// The JSON body of the fate request: `{"nonce": "…"}` with the nonce of the upload credential
/// the collector issued to this device for the cohort (its proof of holding a place there), or
/// `{}` without one (a demonstration, whose fates are public).
pub fn fate_request(nonce: Option<&str>) -> String {
    match nonce {
        Some(nonce) => serde_json::json!({ "nonce": nonce }).to_string(),
        None => "{}".to_owned(),
    }
}

/// The nonce of the upload credential a submission's uploads carry (every destination carries
/// the same one: `orthomask_survey::client`), or `None` for uploads without one (a
/// demonstration's).
pub fn credential_nonce(destinations: &[Destination]) -> Option<&str> {
    destinations
        .first()?
        .upload
        .credential
        .as_ref()
        .map(|c| c.nonce.as_str())
}

/// Why the participant answers again: the fate of their cohort, when it is one that asks so
/// ([`Fate::answer_again`]). The page's texts differ: nobody did anything wrong in a regrouped
/// cohort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgainReason {
    /// Someone in the cohort sent invalid data: it was left out of the results.
    Spoilt,
    /// Too few people had answered in the cohort for its answers to be masked while the survey
    /// still takes participants: nothing of it was used.
    Regrouped,
}

impl AgainReason {
    /// Why the participants of a cohort in `fate` answer again, or `None` when they do not:
    /// `Some` exactly when [`Fate::answer_again`] (every fate is named, so a new one must be
    /// placed here).
    pub fn of(fate: Fate) -> Option<Self> {
        match fate {
            Fate::Spoilt => Some(Self::Spoilt),
            Fate::Regrouped => Some(Self::Regrouped),
            Fate::Open
            | Fate::Processing
            | Fate::Included
            | Fate::Withheld
            | Fate::Empty
            | Fate::LeftOut
            | Fate::Other => None,
        }
    }
}

/// The shortest wait between two questions about one cohort's fate.
pub const POLL_MIN_MS: i32 = 10_000;
/// The jitter added to [`POLL_MIN_MS`] (so pages that got their receipts together do not ask
/// together).
pub const POLL_JITTER_MS: i32 = 10_000;
/// The longest wait a `Retry-After` may impose (a longer one is read as this).
pub const POLL_MAX_MS: i32 = 600_000;

/// How long to wait before asking again: [`POLL_MIN_MS`] plus `unit` (uniform in `[0, 1)`)
/// times [`POLL_JITTER_MS`], and at least the service's `Retry-After` (seconds) when it
/// answered 429 or 503 with one, at most [`POLL_MAX_MS`].
pub fn next_poll_ms(unit: f64, retry_after_s: Option<u32>) -> i32 {
    let jitter = (unit.clamp(0.0, 1.0) * f64::from(POLL_JITTER_MS)) as i32;
    (POLL_MIN_MS + jitter)
        .max(retry_after_ms(retry_after_s))
        .min(POLL_MAX_MS)
}

#[cfg(test)]
mod tests {
    use orthomask_survey::trust::UploadCredential;
    use orthomask_survey::upload::Upload;

    use super::*;

    /// The body the collector reads (`{"nonce": …}`, or `{}` for a demonstration), as JSON
    /// whatever the nonce holds.
    #[test]
    fn the_fate_request_carries_the_credential_nonce_or_nothing() {
        let nonce = "0123456789abcdef0123456789abcdef";
        let body: serde_json::Value = serde_json::from_str(&fate_request(Some(nonce))).unwrap();
        assert_eq!(body, serde_json::json!({ "nonce": nonce }));
        assert_eq!(fate_request(None), "{}");
        let odd: serde_json::Value = serde_json::from_str(&fate_request(Some("a\"b"))).unwrap();
        assert_eq!(odd["nonce"], "a\"b");
    }

    /// The nonce comes from the uploads' credential; uploads without one (a demonstration's)
    /// give none.
    #[test]
    fn the_nonce_is_the_uploads_credentials() {
        let destination = |credential: Option<&str>| Destination {
            url: "https://msp.example/api/surveys/s/uploads".into(),
            upload: Upload {
                survey: "s".into(),
                cohort: 2,
                token: "t".into(),
                values: vec![0.5],
                credential: credential.map(|nonce| UploadCredential {
                    survey: "s".into(),
                    cohort: 2,
                    nonce: nonce.into(),
                    expires_at: 1,
                    signature: String::new(),
                    key_digest: None,
                }),
                definition: String::new(),
                build: String::new(),
            },
        };
        let nonce = "00112233445566778899aabbccddeeff";
        assert_eq!(
            credential_nonce(&[destination(Some(nonce)), destination(Some(nonce))]),
            Some(nonce)
        );
        assert_eq!(credential_nonce(&[destination(None)]), None);
        assert_eq!(credential_nonce(&[]), None);
    }

    /// A participant answers again exactly when the collector says so, for the reason its word
    /// gives.
    #[test]
    fn the_reason_to_answer_again_is_the_fates() {
        for fate in [
            Fate::Open,
            Fate::Processing,
            Fate::Included,
            Fate::Withheld,
            Fate::Regrouped,
            Fate::Empty,
            Fate::Spoilt,
            Fate::LeftOut,
            Fate::Other,
        ] {
            assert_eq!(
                AgainReason::of(fate).is_some(),
                fate.answer_again(),
                "{fate:?}"
            );
        }
        assert_eq!(AgainReason::of(Fate::Spoilt), Some(AgainReason::Spoilt));
        assert_eq!(
            AgainReason::of(Fate::Regrouped),
            Some(AgainReason::Regrouped)
        );
    }

    #[test]
    fn the_fate_is_asked_at_the_collectors_path() {
        assert_eq!(
            fate_path("leaps-demo", 3),
            "/api/surveys/leaps-demo/cohorts/3/fate"
        );
    }

    /// Every 10 to 20 seconds, never before the service's `Retry-After`, never beyond ten
    /// minutes.
    #[test]
    fn the_next_question_waits_ten_to_twenty_seconds_or_the_retry_after() {
        assert_eq!(next_poll_ms(0.0, None), 10_000);
        assert_eq!(next_poll_ms(0.5, None), 15_000);
        assert!(next_poll_ms(0.999_999, None) < 20_000);
        assert_eq!(
            next_poll_ms(7.0, None),
            20_000,
            "a unit outside [0, 1) is clamped"
        );
        assert_eq!(next_poll_ms(0.0, Some(5)), 10_000);
        assert_eq!(next_poll_ms(0.0, Some(45)), 45_000);
        assert_eq!(next_poll_ms(0.2, Some(u32::MAX)), POLL_MAX_MS);
    }
}
