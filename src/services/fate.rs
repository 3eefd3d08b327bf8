//! Watch the fate of the participant's cohort after a receipt (issue 20 §8, issue 43 §3 and §6):
//! ask the collector (`POST` [`fate_path`], with the JSON body [`fate_request`]: the nonce of the
//! upload credential it issued to this device for that cohort, or `{}` for a demonstration)
//! every 10 to 20 seconds with jitter, longer when it answers 429 or 503 with a `Retry-After`,
//! until the fate is settled or asks the participant to answer again (spoilt or regrouped:
//! `model::fate::AgainReason`). Stops, answering `None`, when the page lets go (`alive` false),
//! or when the collector answers that it has no such cohort for this credential (`404`: a wrong
//! nonce is answered as an unknown cohort), or has no such endpoint (a static host, an older
//! collector): nothing then changes for the participant.

use std::cell::Cell;

use super::clock::sleep;
use super::http::{FetchError, post_json};
use super::random;
use crate::model::fate::{CohortFate, fate_path, fate_request, next_poll_ms, read_fate};

/// Wait for cohort `cohort` of `survey` to be settled: its fate once it is no longer open or
/// processing (or its participants should answer again: `Fate::answer_again`, the one rule), or
/// `None` when watching stopped. `nonce`: the nonce of the upload credential the collector
/// issued to this device for that cohort (`model::fate::credential_nonce`); `None` only for a
/// demonstration.
pub async fn watch(
    survey: &str,
    cohort: u32,
    nonce: Option<&str>,
    alive: &Cell<bool>,
) -> Option<CohortFate> {
    let (path, body) = (fate_path(survey, cohort), fate_request(nonce));
    let mut retry_after = None;
    loop {
        sleep(next_poll_ms(random::unit(), retry_after)).await;
        if !alive.get() {
            return None;
        }
        retry_after = None;
        match post_json(&path, &body).await {
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
