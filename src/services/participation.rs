//! Open the survey a participant link names (issue 10 §3): from the collector that served the
//! page — its deployment, and a place taken with `POST` (the invitation in the JSON body, issue
//! 20 §7), both from this origin and checked by
//! [`model::participation::accept`](crate::model::participation::accept) — or a bundled
//! demonstration from the app's own files. Never from an address taken from the link.

use orthomask_survey::client::{Client, Destination, Prepared};
use orthomask_survey::coding::Answer;
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::upload::Receipt;

use super::clock::{sleep, unix_seconds};
use super::http::{
    FetchError, RetryPolicy, SendError, fetch_text, get_text, post_json, send_upload,
};
use super::random;
use crate::model::participation::{
    self, Access, DEPLOYMENT_PATH, Source, Unopened, definition_path, demonstration_path,
    place_request,
};

/// The longest `Retry-After` the page waits through while taking a place (a longer one is shown
/// as the collector's refusal, and the participant opens the link again later).
const LONGEST_WAIT_S: u32 = 30;

/// Take a place in `survey` (`POST` [`definition_path`] with [`place_request`]): the collector's
/// signed offer, as text. While the collector is busy (429, 503) it is asked again, at most
/// [`RetryPolicy::default`]'s attempts, after its `Retry-After` — a refused request took no
/// place, and an invitation keeps its place across requests anyway.
///
/// # Errors
/// [`FetchError`] of the last attempt.
pub async fn take_place(survey: &str, invite: Option<&str>) -> Result<String, FetchError> {
    let (path, body) = (definition_path(survey), place_request(invite));
    let policy = RetryPolicy::default();
    let mut delay = policy.first_delay_ms;
    let mut attempt = 1;
    loop {
        match post_json(&path, &body).await {
            Err(e) if attempt < policy.attempts => match e.busy() {
                Some(after) if after.unwrap_or(0) <= LONGEST_WAIT_S => {
                    let after_ms = i32::try_from(after.unwrap_or(0) * 1000).unwrap_or(i32::MAX);
                    sleep(delay.max(after_ms)).await;
                    delay = delay.saturating_mul(2);
                    attempt += 1;
                }
                _ => return Err(e),
            },
            answer => return answer,
        }
    }
}

fn unopened(e: FetchError) -> Unopened {
    match e {
        FetchError::Unreachable(_) => Unopened::NeedsConnection,
        status @ FetchError::Status { .. } => Unopened::Refused(status.to_string()),
    }
}

/// Fetch and check the survey `source` names (for a collector's survey: take a place in it).
///
/// # Errors
/// [`Unopened`]: no connection, a weak plan, or one line — the request that failed (with the
/// collector's message) or why the offer is not trusted. Nothing has been masked or sent when
/// this fails.
pub async fn open(source: &Source) -> Result<(SurveyDefinition, Access), Unopened> {
    match source {
        Source::Collector { survey, invite } => {
            let deployment = fetch_text("GET", DEPLOYMENT_PATH, None)
                .await
                .map_err(unopened)?;
            let offer = take_place(survey, invite.as_deref())
                .await
                .map_err(unopened)?;
            participation::accept(
                &deployment,
                &offer,
                survey,
                &definition_path(survey),
                unix_seconds(),
            )
            .map_err(Unopened::from)
        }
        Source::Demonstration { name } => {
            let path = demonstration_path(name);
            let text = get_text(&path).await.map_err(Unopened::Refused)?;
            participation::open_demonstration(&text, &path)
                .map_err(|e| Unopened::Refused(e.to_string()))
        }
    }
}

/// Mask `answers` on this device for `survey`: a fresh idempotency token and a fresh device key
/// from the browser, the collector's credential on every upload of a collector's survey. What a
/// participant's form and a simulated participant ([`super::simulate`]) both send.
///
/// # Errors
/// One line: the browser gave no random numbers, or the answers do not fit the survey.
pub fn prepare(
    survey: &SurveyDefinition,
    access: &Access,
    answers: &[Answer],
) -> Result<Prepared, String> {
    let token = random::token()?;
    let key = random::key()?;
    let client = Client::new(survey).map_err(|e| e.to_string())?;
    let client = match access {
        Access::Collector(credential) => client.with_credential(credential.clone()),
        Access::Demonstration => client,
    };
    client
        .prepare(answers, &token, &key)
        .map_err(|e| e.to_string())
}

/// Send every upload of a prepared submission (one, or one share per right-masking service) in
/// turn with retries, each receipt checked against its upload. `attempt(n)` is told of each
/// attempt. The form sends through [`super::outbox::deliver`], which also forgets a submission
/// that waited offline.
///
/// # Errors
/// [`SendError`] from [`send_upload`]; uploads already sent stay sent (a retry with the same
/// token returns the same receipt).
pub async fn send(
    destinations: &[Destination],
    attempt: &dyn Fn(u32),
) -> Result<Vec<(String, Receipt)>, SendError> {
    let mut receipts = Vec::with_capacity(destinations.len());
    for dest in destinations {
        let receipt = send_upload(&dest.url, &dest.upload, RetryPolicy::default(), attempt).await?;
        receipts.push((dest.url.clone(), receipt));
    }
    Ok(receipts)
}
