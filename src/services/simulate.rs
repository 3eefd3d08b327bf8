//! Simulated participants for a live demonstration (issue 12 §1): each one opens the survey from
//! the collector exactly as a participant's link does ([`super::participation::open`]: the
//! deployment, then a place taken with `POST` — the signed offer, a cohort and an upload
//! credential), answers with
//! [`orthomask_survey::simulate::simulated_answers`], masks on this device and sends with the
//! same [`super::participation::prepare`] and [`super::participation::send`] as the form. Only
//! the page's own collector is reached, and only for surveys it lists as demonstrations.

use orthomask_core::key::StreamId;
use orthomask_survey::simulate::simulated_answers;

use super::http::get_text;
use super::participation::{open, prepare, send};
use super::random;
use crate::model::live_demonstrations::{self as live, public_status, status_path};
use crate::model::participation::Source;

/// How many places `cohort` of `survey` still has, from the collector's public status.
///
/// # Errors
/// One line: the status could not be fetched or read.
pub async fn places_left(survey: &str, cohort: u32) -> Result<usize, String> {
    let text = get_text(&status_path(survey)).await?;
    let status = public_status(&text).map_err(|e| e.to_string())?;
    Ok(live::places_left(&status, cohort))
}

/// Let `count` simulated participants take `survey`, one after another; `joined(k)` is told after
/// the k-th receipt was checked. Answers how many joined.
///
/// # Errors
/// One line naming the participant that failed and why; those before it have joined.
pub async fn join(survey: &str, count: usize, joined: &dyn Fn(usize)) -> Result<usize, String> {
    let source = Source::Collector {
        survey: survey.to_owned(),
        invite: None,
    };
    // A fresh key from the browser drives every simulated answer of this batch (its simulated-
    // participant stream; the key is used for nothing else).
    let mut rng = random::key()?
        .stream(StreamId::ParticipantNoise { participant: 0 })
        .rng();
    for k in 1..=count {
        let failed = |e: String| format!("simulated participant {k} of {count}: {e}");
        let opened = open(&source, None)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let answers = simulated_answers(&opened.survey, &mut rng);
        let prepared = prepare(&opened.survey, &opened.access, &answers).map_err(failed)?;
        send(&prepared.destinations, &|_| {})
            .await
            .map_err(|e| failed(e.to_string()))?;
        joined(k);
    }
    Ok(count)
}
