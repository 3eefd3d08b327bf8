//! What became of the participant's cohort after the receipt (issue 20 §8): the collector's
//! public `GET /api/surveys/{id}/cohorts/{k}/fate`. A cohort is *spoilt* when someone in it sent
//! invalid data: the collector leaves the whole cohort out of the release and reopens its
//! invitations, so a participant whose page still holds the answers sends them again in a new
//! cohort (`pages::participate`), and a page that kept only masked numbers asks the participant
//! to answer again (`pages::waiting_uploads`).
//!
//! No I/O here: the path, when to ask again ([`next_poll_ms`]: every 10 to 20 seconds with
//! jitter, never before a `Retry-After`), and the answer as the typed value both the collector
//! and this page use (`orthomask_survey::fate`).

use super::participation::percent_encode;
use super::retry_after_ms;

/// Where the collector publishes the fate of cohort `cohort` of `survey` (same origin).
pub fn fate_path(survey: &str, cohort: u32) -> String {
    format!(
        "/api/surveys/{}/cohorts/{cohort}/fate",
        percent_encode(survey)
    )
}

pub use orthomask_survey::fate::{CohortFate, read_fate};

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
    use super::*;

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
