//! HTTP: fetch text (releases, manifests, the deployment, the admin API with its bearer token),
//! ask the collector for a place or a cohort's fate (`POST` JSON, [`post_json`]) and send uploads.
//!
//! Every request is made by one function (`send`): the method, an optional JSON body
//! (`Content-Type: application/json`) and an optional bearer token; [`fetch_text`] reads its
//! answer, [`send_upload`] its receipt.
//!
//! The upload contract (the masking service provider's API): `POST upload_url` with the JSON
//! `Upload {survey, cohort, token, values, credential}` (the collector's upload credential, the same
//! on every retry); `200`/`201` with a JSON `Receipt` whose
//! `upload_hash` equals `Upload::hash()`; `4xx`/`5xx` with `{"error": "one line"}`. A retry with
//! the same token returns the same receipt, so retrying after a lost response is safe.
//!
//! `gloo-net` sends the request (`fetch` from the page or a worker) and reads the response. The
//! request itself is built here, not with its `RequestBuilder` (gloo-net 0.5): the builder
//! rewrites the address — one with a query gets a `&` appended (`?a=1` becomes `?a=1&`), which
//! breaks signed data addresses the analyst view may be given — and its `header` throws
//! (`unwrap_throw`) on a value the browser refuses, where a pasted token with a line break must
//! be refused with one line ([`FetchError::Invalid`]).

use gloo_net::http::{Request, Response};
use orthomask_survey::client::verify_receipt;
use orthomask_survey::upload::{Receipt, Upload};

use super::clock::sleep;
use crate::model::retry_wait_ms;

async fn body_text(response: &Response, url: &str) -> Result<String, String> {
    response
        .text()
        .await
        .map_err(|_| format!("{url}: unreadable response body"))
}

/// Why a request got no usable answer.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FetchError {
    /// The request could not be made, so nothing was sent: an address the browser does not
    /// accept, or a token that cannot go in a header.
    #[error("{0}")]
    Invalid(String),
    /// Nothing reached the service: the device is offline or the network failed.
    #[error("{0}")]
    Unreachable(String),
    /// The service answered with a status other than 2xx: one line naming the URL, the status
    /// and the service's own reason (`{"error": "…"}`).
    #[error("{message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// `Retry-After` in seconds, when the service gave one (429, 503).
        retry_after_s: Option<u32>,
        /// The service's own reason (`{"error": "…"}`, on one line), when it gave one.
        reason: Option<String>,
        /// The line.
        message: String,
    },
}

impl FetchError {
    /// Whether the service asked to be asked again later (429 Too Many Requests or 503), and
    /// after how many seconds if it said.
    pub fn busy(&self) -> Option<Option<u32>> {
        match self {
            Self::Status {
                status: 429 | 503,
                retry_after_s,
                ..
            } => Some(*retry_after_s),
            _ => None,
        }
    }
}

/// `Retry-After` in seconds (the delay-seconds form; an HTTP date is not read).
fn retry_after(response: &Response) -> Option<u32> {
    response
        .headers()
        .get("Retry-After")
        .and_then(|v| v.trim().parse::<u32>().ok())
}

/// `method` `url`, once: with the JSON `body` (`Content-Type: application/json`) and
/// `Authorization: Bearer <token>` when given; the answer, whatever its status.
///
/// # Errors
/// [`FetchError::Invalid`] when the request cannot be made, [`FetchError::Unreachable`] when no
/// answer came.
async fn send(
    method: &str,
    url: &str,
    body: Option<&str>,
    token: Option<&str>,
) -> Result<Response, FetchError> {
    let unreachable = || {
        FetchError::Unreachable(format!(
            "{url}: could not connect (network error or the server refused the request)"
        ))
    };
    // A plain GET `index.html`'s bootstrap started while the module downloaded (the deployment,
    // for a survey link) is taken over instead of asked again.
    if method == "GET" && body.is_none() && token.is_none() {
        match super::early::take(url).await {
            Some(Ok(response)) => return Ok(Response::from(response)),
            Some(Err(())) => return Err(unreachable()),
            None => {}
        }
    }
    // No "offline" shortcut: the service worker answers the app's own files without a network.
    let init = web_sys::RequestInit::new();
    init.set_method(method);
    if let Some(body) = body {
        init.set_body(&body.into());
    }
    let request = web_sys::Request::new_with_str_and_init(url, &init)
        .map_err(|_| FetchError::Invalid(format!("{url}: not a valid URL")))?;
    if body.is_some() {
        let _ = request.headers().set("Content-Type", "application/json");
    }
    if let Some(token) = token {
        request
            .headers()
            .set("Authorization", &format!("Bearer {token}"))
            .map_err(|_| {
                FetchError::Invalid(
                    "the token cannot be sent in a header: paste it without line breaks".to_owned(),
                )
            })?;
    }
    Request::from(request)
        .send()
        .await
        .map_err(|_| unreachable())
}

/// `method` `url` (with a JSON `body` and a bearer `token` when given), as text.
///
/// # Errors
/// [`FetchError`]: the request could not be made, no connection, or a non-2xx status with the
/// service's reason.
pub async fn fetch_text(
    method: &str,
    url: &str,
    body: Option<&str>,
    token: Option<&str>,
) -> Result<String, FetchError> {
    let response = send(method, url, body, token).await?;
    if !response.ok() {
        // A service's refusal names its reason in `{"error": "…"}`: show it.
        let text = body_text(&response, url).await.unwrap_or_default();
        let reason = error_reason(&text);
        return Err(FetchError::Status {
            status: response.status(),
            retry_after_s: retry_after(&response),
            message: format!(
                "{url}: HTTP {} {}{}",
                response.status(),
                response.status_text(),
                reason
                    .as_ref()
                    .map_or_else(String::new, |m| format!(": {m}"))
            ),
            reason,
        });
    }
    body_text(&response, url)
        .await
        .map_err(FetchError::Unreachable)
}

/// GET `url` as text.
///
/// # Errors
/// One line naming the URL: network failure or a non-2xx status.
pub async fn get_text(url: &str) -> Result<String, String> {
    fetch_text("GET", url, None, None)
        .await
        .map_err(|e| e.to_string())
}

/// POST the JSON `body` to `url` (`Content-Type: application/json`), once; the answer as text.
///
/// # Errors
/// [`FetchError`].
pub async fn post_json(url: &str, body: &str) -> Result<String, FetchError> {
    fetch_text("POST", url, Some(body), None).await
}

/// How many times to try an upload and how long to wait between tries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in total.
    pub attempts: u32,
    /// Wait before the second attempt; doubled after each failure.
    pub first_delay_ms: i32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 4,
            first_delay_ms: 400,
        }
    }
}

/// The message of an error body `{"error": "…"}`, on one line.
fn error_reason(body: &str) -> Option<String> {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .map(|m| m.lines().collect::<Vec<_>>().join(" "))
}

/// The one-line message of an error body `{"error": "…"}`, or the status.
fn error_message(status: u16, body: &str) -> String {
    error_reason(body).map_or_else(
        || format!("HTTP {status}"),
        |m| format!("HTTP {status}: {m}"),
    )
}

/// Why an upload did not go through.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SendError {
    /// No connection: the browser is offline, or no attempt reached the service. The upload may
    /// wait on the device (`services::outbox`) and go out when the connection returns.
    #[error("{0}")]
    Unreachable(String),
    /// The service answered and refused, failed every attempt, or sent a receipt that does not
    /// match: the participant tries again or reads why.
    #[error("{0}")]
    Failed(String),
}

/// POST `upload` to `url`, retrying network errors, `5xx` answers and `429 Too Many Requests`
/// (a rate limit shared by participants behind one address) with exponential backoff — waiting
/// at least the service's `Retry-After` — and check that the receipt acknowledges exactly this
/// upload.
/// `on_attempt` is told the number of each attempt.
///
/// # Errors
/// [`SendError::Unreachable`] when the browser is offline or no attempt reached the service;
/// otherwise [`SendError::Failed`], one line: a refusal (`4xx`, with the service's message), a
/// receipt that does not match, or the last failure after every attempt.
pub async fn send_upload(
    url: &str,
    upload: &Upload,
    policy: RetryPolicy,
    on_attempt: &dyn Fn(u32),
) -> Result<Receipt, SendError> {
    use SendError::{Failed, Unreachable};
    let body = serde_json::to_string(upload)
        .map_err(|e| Failed(format!("could not encode the upload: {e}")))?;
    let mut delay = policy.first_delay_ms;
    let mut last = String::new();
    let mut reached = false;
    for attempt in 1..=policy.attempts.max(1) {
        let mut retry_after_s = None;
        // Offline for certain: no attempt can reach anything, so do not make the participant
        // wait through the retries.
        if !super::browser::is_online() {
            return Err(Unreachable(format!("{url}: this device is offline")));
        }
        on_attempt(attempt);
        match send("POST", url, Some(&body), None).await {
            Err(FetchError::Invalid(e)) => return Err(Failed(e)),
            // No answer (`send` reads no status).
            Err(network) => last = network.to_string(),
            Ok(response) => {
                reached = true;
                let status = response.status();
                let text = body_text(&response, url).await.unwrap_or_default();
                if status == 200 || status == 201 {
                    let receipt: Receipt = serde_json::from_str(&text).map_err(|e| {
                        Failed(format!("{url}: the service's receipt is malformed: {e}"))
                    })?;
                    verify_receipt(upload, &receipt).map_err(|e| Failed(e.to_string()))?;
                    return Ok(receipt);
                }
                let message = format!("{url}: {}", error_message(status, &text));
                if status < 500 && status != 429 {
                    return Err(Failed(message));
                }
                // Busy (rate limit, or every connection taken): its Retry-After is the least wait.
                if status == 429 || status == 503 {
                    retry_after_s = retry_after(&response);
                }
                last = message;
            }
        }
        if attempt < policy.attempts {
            sleep(retry_wait_ms(delay, retry_after_s, super::random::unit())).await;
            delay = delay.saturating_mul(2);
        }
    }
    let message = format!(
        "the upload did not go through after {} attempts ({last}); nothing was lost: your answers are still on this page, try again",
        policy.attempts
    );
    Err(if reached {
        Failed(message)
    } else {
        Unreachable(message)
    })
}
