//! Pure logic behind the views: no browser API, no I/O, testable natively.
//!
//! Each module turns the workspace crates' results into the data-transfer types the views show
//! (serde lives here, at the edge, never in the core). Errors are typed enums per module; they
//! become text only in the data-transfer types the page shows (which cross the worker boundary
//! as JSON). The participant's side — answer coding, masking, receipts, signature checks — is not
//! here: it is `orthomask_survey` (`coding`, `client`, `trust`), which the services' tests run
//! too; [`participation`] only decides which of its checks a route gets.
//!
//! * [`format`] — numbers as the pages print them;
//! * [`participation`] — which survey the participant page may open, and whether to trust it;
//! * [`own_build`] — the build the participant page runs, and whether it may send from it;
//! * [`fate`] — what became of the participant's cohort after the receipt, asked with its
//!   credential's nonce (left out when spoilt or regrouped, so the answers go again);
//! * [`analysis`] — regression, contingency tables, logistic regression, diagnostics, exports;
//! * [`contingency_summary`] — a contingency table as the view shows it (counts, χ², Fisher);
//! * [`exports`] — the CSV, JSON, R and Python exports of an analysis;
//! * [`script_names`] — how the exported scripts write column names and strings;
//! * [`exact_exports`] — the exact tests in the R and Python exports, by R's and statsmodels'
//!   own functions;
//! * [`labels`] — the contingency tables and exports with a release's data package's labels;
//! * [`audit`] — the audit checks of `orthomask_stats::audit` on a release and its manifest;
//! * [`audit_builds`] — which app builds produced a release's records, against `builds.json`;
//! * [`classroom`] — the LEAPS walk-through: every party's view, the attack, collusion, Table 6;
//! * [`residual_lesson`] — the classroom's "this is why": skewed raw residuals, normal-looking
//!   released ones;
//! * [`live_demonstrations`] — the collector's live demonstrations and their cohorts' free places;
//! * [`dp`] — σ under settings A and B against ε (seed 004 Table 1);
//! * [`bench`] — the benchmarked operations, shared by the browser and the native bench;
//! * [`jobs`] — the job protocol between the page and the Web Worker;
//! * [`admin`] — the survey team's page: builder, JSON editor, plan preview, status, links.

pub mod format;

pub mod live_demonstrations;
pub mod outbox;
pub mod own_build;
pub mod participation;

pub mod fate;

pub mod analysis;
pub mod audit;
pub mod audit_builds;
pub mod contingency_summary;
pub mod exact_exports;
pub mod exports;
pub mod labels;
pub mod script_names;

pub mod classroom;
pub mod dp;
pub mod residual_lesson;

pub mod bench;
pub mod jobs;

pub mod admin;

/// A result as the page shows it: the value, or the error's one-line text. The data-transfer
/// types that cross the worker boundary hold errors this way; everything before them is typed.
pub(crate) fn shown<T, E: std::fmt::Display>(result: Result<T, E>) -> Result<T, String> {
    result.map_err(|e| e.to_string())
}

/// A service's `Retry-After` (seconds, when it gave one) as the milliseconds to wait at least:
/// 0 without one, saturating at `i32::MAX` (what `services::clock::sleep` takes). The one
/// conversion of the upload's backoff, the place's and the fate's polling.
pub fn retry_after_ms(seconds: Option<u32>) -> i32 {
    seconds.map_or(0, |s| {
        i32::try_from(s).unwrap_or(i32::MAX).saturating_mul(1000)
    })
}

/// The wait before asking a busy or unreachable service again, in the milliseconds
/// `services::clock::sleep` takes (saturating): `orthomask_survey::policy::retry_wait`.
pub fn retry_wait_ms(backoff_ms: i32, retry_after_s: Option<u32>, unit: f64) -> i32 {
    let ms = |ms: i32| std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    let wait = orthomask_survey::policy::retry_wait(
        ms(backoff_ms),
        retry_after_s.map(|_| ms(retry_after_ms(retry_after_s))),
        unit,
    );
    i32::try_from(wait.as_millis()).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::{retry_after_ms, retry_wait_ms};

    #[test]
    fn retry_after_is_read_as_milliseconds_without_overflow() {
        assert_eq!(retry_after_ms(None), 0);
        assert_eq!(retry_after_ms(Some(0)), 0);
        assert_eq!(retry_after_ms(Some(30)), 30_000);
        assert_eq!(retry_after_ms(Some(3_000_000)), i32::MAX);
        assert_eq!(retry_after_ms(Some(u32::MAX)), i32::MAX);
    }

    /// By hand: the larger of back-off and Retry-After, then up to half again.
    #[test]
    fn the_wait_honours_retry_after_and_spreads_a_burst() {
        assert_eq!(retry_wait_ms(400, None, 0.0), 400);
        assert_eq!(retry_wait_ms(400, None, 0.5), 500);
        assert_eq!(retry_wait_ms(400, Some(1), 0.0), 1000);
        assert_eq!(retry_wait_ms(400, Some(1), 0.999_999), 1499);
        assert_eq!(retry_wait_ms(3200, Some(1), 1.0), 4800);
        // Out-of-range units are clamped; a huge Retry-After saturates instead of overflowing.
        assert_eq!(retry_wait_ms(400, Some(1), 7.0), 1500);
        assert_eq!(retry_wait_ms(400, Some(u32::MAX), 0.9), i32::MAX);
    }
}
