//! Watch the fate of the participant's cohort after a receipt (issue 20 §8): ask the collector
//! (`GET` [`fate_path`]) every 10 to 20 seconds with jitter, longer when it answers 429 or 503
//! with a `Retry-After`, until the fate is settled. Stops, answering `None`, when the page lets
//! go (`alive` false), or when the collector has no such endpoint or cohort (a static host, an
//! older collector): nothing then changes for the participant.

use std::cell::Cell;

use super::clock::sleep;
use super::http::{FetchError, fetch_text};
use super::random;
use crate::model::fate::{CohortFate, fate_path, next_poll_ms, read_fate};

/// Wait for cohort `cohort` of `survey` to be settled: its fate once it is no longer open or
/// processing (or its participants should answer again: `Fate::answer_again`, the one rule), or
/// `None` when watching stopped.
pub async fn watch(survey: &str, cohort: u32, alive: &Cell<bool>) -> Option<CohortFate> {
    let path = fate_path(survey, cohort);
    let mut retry_after = None;
    loop {
        sleep(next_poll_ms(random::unit(), retry_after)).await;
        if !alive.get() {
            return None;
        }
        retry_after = None;
        match fetch_text("GET", &path, None, None).await {
            Ok(text) => match read_fate(&text, survey, cohort) {
                Ok(fate) if fate.fate.answer_again() || !fate.fate.pending() => return Some(fate),
                Ok(_) => {}
                Err(_) => return None,
            },
            // No connection now: ask again later, as before.
            Err(FetchError::Unreachable(_)) => {}
            Err(e) => match e.busy() {
                Some(after) => retry_after = after,
                None => return None,
            },
        }
    }
}
