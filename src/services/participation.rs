//! Open the survey a participant link names (issue 10 §3): from the collector that served the
//! page — its deployment and its signed offer, both fetched by path from this origin and checked
//! by [`model::participation::accept`](crate::model::participation::accept) — or a bundled
//! demonstration from the app's own files. Never from an address taken from the link.

use orthomask_survey::client::{Client, Destination, Prepared};
use orthomask_survey::coding::Answer;
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::upload::Receipt;

use super::clock::unix_seconds;
use super::http::{RetryPolicy, SendError, get_text, send_upload};
use super::random;
use crate::model::participation::{
    self, Access, DEPLOYMENT_PATH, Source, definition_path, demonstration_path,
};

/// Fetch and check the survey `source` names.
///
/// # Errors
/// One line: the fetch that failed (with the collector's message), or why the offer is not
/// trusted. Nothing has been masked or sent when this fails.
pub async fn open(source: &Source) -> Result<(SurveyDefinition, Access), String> {
    match source {
        Source::Collector { survey, invite } => {
            let deployment = get_text(DEPLOYMENT_PATH).await?;
            let offer = get_text(&definition_path(survey, invite.as_deref())).await?;
            // Named without the invitation: the message may be shown or reported.
            let source_name = definition_path(survey, None);
            participation::accept(&deployment, &offer, survey, &source_name, unix_seconds())
                .map_err(|e| e.to_string())
        }
        Source::Demonstration { name } => {
            let path = demonstration_path(name);
            let text = get_text(&path).await?;
            participation::open_demonstration(&text, &path).map_err(|e| e.to_string())
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
