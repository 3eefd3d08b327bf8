//! What became of the participant's cohort after the receipt (issue 20 §8): the collector's
//! public `GET /api/surveys/{id}/cohorts/{k}/fate`. A cohort is *spoilt* when someone in it sent
//! invalid data: the collector leaves the whole cohort out of the release and reopens its
//! invitations, so a participant whose page still holds the answers sends them again in a new
//! cohort (`pages::participate`), and a page that kept only masked numbers asks the participant
//! to answer again (`pages::waiting_uploads`).
//!
//! No I/O here: the path, the answer as a typed value, and when to ask again
//! ([`next_poll_ms`]: every 10 to 20 seconds with jitter, never before a `Retry-After`).

use serde::Deserialize;

use super::participation::percent_encode;

/// Where the collector publishes the fate of cohort `cohort` of `survey` (same origin).
pub fn fate_path(survey: &str, cohort: u32) -> String {
    format!(
        "/api/surveys/{}/cohorts/{cohort}/fate",
        percent_encode(survey)
    )
}

/// A cohort's fate, in the collector's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// Still collecting.
    Open,
    /// Closed; its hand-over is not settled yet.
    Processing,
    /// Its records will be in the release.
    Included,
    /// Too few records: nothing of it is released.
    Withheld,
    /// Closed without records.
    Empty,
    /// Someone in it sent invalid data: it was left out and its invitations were reopened.
    Spoilt,
    /// Left out by the survey team (a hand-over that never came): nothing to do.
    LeftOut,
    /// A word this page does not know (a newer collector): settled, nothing to do.
    #[serde(other)]
    Other,
}

impl Fate {
    /// Whether the collector may still change it (the page keeps asking).
    pub fn pending(self) -> bool {
        matches!(self, Self::Open | Self::Processing)
    }
}

/// The collector's answer.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct CohortFate {
    /// The survey.
    pub survey: String,
    /// The cohort.
    pub cohort: u32,
    /// Its fate.
    pub fate: Fate,
    /// Whether its participants should answer again (exactly when it is spoilt).
    pub answer_again: bool,
}

/// Why an answer is not the fate of the cohort asked about.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FateError {
    /// Not the collector's JSON.
    #[error("the cohort's fate is unreadable: {0}")]
    Malformed(String),
    /// The fate of another survey or cohort.
    #[error(
        "the collector answered for survey {survey:?} cohort {cohort}, not the one asked about"
    )]
    Other {
        /// The survey it named.
        survey: String,
        /// The cohort it named.
        cohort: u32,
    },
}

/// Read the fate of cohort `cohort` of `survey` from the collector's answer.
///
/// # Errors
/// [`FateError`]: not the JSON of a fate, or the fate of another cohort.
pub fn read_fate(text: &str, survey: &str, cohort: u32) -> Result<CohortFate, FateError> {
    let fate: CohortFate =
        serde_json::from_str(text).map_err(|e| FateError::Malformed(e.to_string()))?;
    if fate.survey != survey || fate.cohort != cohort {
        return Err(FateError::Other {
            survey: fate.survey,
            cohort: fate.cohort,
        });
    }
    Ok(fate)
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
    let wait = retry_after_s.map_or(0, |s| {
        i32::try_from(s).unwrap_or(i32::MAX).saturating_mul(1000)
    });
    (POLL_MIN_MS + jitter).max(wait).min(POLL_MAX_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fate_is_read_for_the_cohort_asked_about() {
        let spoilt = read_fate(
            r#"{"survey": "s", "cohort": 2, "fate": "spoilt", "answer_again": true}"#,
            "s",
            2,
        )
        .unwrap();
        assert_eq!(spoilt.fate, Fate::Spoilt);
        assert!(spoilt.answer_again && !spoilt.fate.pending());
        for (word, fate, pending) in [
            ("open", Fate::Open, true),
            ("processing", Fate::Processing, true),
            ("included", Fate::Included, false),
            ("withheld", Fate::Withheld, false),
            ("empty", Fate::Empty, false),
            ("left_out", Fate::LeftOut, false),
            ("archived", Fate::Other, false),
        ] {
            let text = format!(
                r#"{{"survey": "s", "cohort": 0, "fate": "{word}", "answer_again": false}}"#
            );
            let f = read_fate(&text, "s", 0).unwrap();
            assert_eq!((f.fate, f.fate.pending()), (fate, pending), "{word}");
        }
        assert!(matches!(
            read_fate(
                r#"{"survey": "t", "cohort": 0, "fate": "spoilt", "answer_again": true}"#,
                "s",
                0
            ),
            Err(FateError::Other { .. })
        ));
        let e = read_fate("<html>", "s", 0).unwrap_err().to_string();
        assert!(
            e.starts_with("the cohort's fate is unreadable") && !e.contains('\n'),
            "{e}"
        );
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
