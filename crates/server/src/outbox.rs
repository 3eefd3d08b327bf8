//! Durable hand-overs between services: the transactional outbox.
//!
//! A service that must hand something to a peer (the provider's `A₂,k X_k B_k` for the
//! collector, a right-masking service's block for the provider, …) writes it into its own
//! `outbox` table *in the same transaction* that records the state change. A background task
//! sends pending items with `PUT`, signed afresh at each attempt as this service
//! (`crate::peer_auth`), retrying with exponential back-off (0.25 s doubling up to 30 s, or the
//! peer's `Retry-After` when longer, each wait stretched by a random up to half of itself) for as long as the peer is down or answers 5xx, 408 or 429; a
//! service restarted after a crash resumes its pending items. Peers treat a repeated `PUT` of
//! the same body as a success, so a hand-over that was received but whose answer was lost is
//! simply sent again. Only an answer that judges the content — 400, 409, 422: the peer read the
//! hand-over and refused it (for instance a failed QA check) — is final: the item is marked
//! `rejected` with the peer's message and shown in the status endpoints, and the administrator can
//! put it back in the queue ([`requeue`]). Every other refusal (401 after a key change, 403,
//! 404 or 413 from a proxy in between, …) says nothing about the hand-over itself and is retried
//! with back-off until an operator fixes the deployment.

use crate::states::{OutboxKind, OutboxState};

use crate::error::StoreError;
use crate::store::Store;
use rusqlite::{Connection, OptionalExtension};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// The outbox table.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    survey TEXT NOT NULL,
    cohort INTEGER NOT NULL,
    part INTEGER NOT NULL,
    url TEXT NOT NULL,
    body BLOB,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at TEXT NOT NULL,
    done_at TEXT,
    UNIQUE (kind, survey, cohort, part)
);
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox(state, next_attempt_ms);
";

/// One hand-over.
#[derive(Clone, Debug)]
pub struct OutboxItem {
    /// Row id.
    pub id: i64,
    /// What it is.
    pub kind: OutboxKind,
    /// Survey.
    pub survey: String,
    /// Cohort.
    pub cohort: u32,
    /// Share index (0 when not applicable).
    pub part: u32,
    /// Where to `PUT` it.
    pub url: String,
    /// JSON body.
    pub body: Vec<u8>,
}

/// Queue a hand-over inside the caller's transaction. A second item with the same
/// `(kind, survey, cohort, part)` is ignored: each hand-over happens once.
///
/// # Errors
/// SQLite errors.
pub fn enqueue(
    conn: &Connection,
    kind: OutboxKind,
    survey: &str,
    cohort: u32,
    part: u32,
    url: &str,
    body: &[u8],
) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR IGNORE INTO outbox (kind, survey, cohort, part, url, body, created_at, state)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        (
            kind,
            survey,
            cohort,
            part,
            url,
            body,
            crate::time::now_rfc3339(),
            OutboxState::Pending,
        ),
    )?;
    Ok(())
}

/// A summary of the outbox for status pages.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OutboxSummary {
    /// Kind.
    pub kind: OutboxKind,
    /// Cohort.
    pub cohort: u32,
    /// Share index.
    pub part: u32,
    /// `pending`, `delivered` or `rejected`.
    pub state: OutboxState,
    /// Attempts so far.
    pub attempts: u32,
    /// The last error, if any.
    pub last_error: Option<String>,
}

/// The outbox items of one survey.
///
/// # Errors
/// SQLite errors.
pub fn summary(conn: &Connection, survey: &str) -> rusqlite::Result<Vec<OutboxSummary>> {
    let mut stmt = conn.prepare(
        "SELECT kind, cohort, part, state, attempts, last_error FROM outbox
         WHERE survey = ?1 ORDER BY id",
    )?;
    stmt.query_map([survey], |r| {
        Ok(OutboxSummary {
            kind: r.get(0)?,
            cohort: r.get(1)?,
            part: r.get(2)?,
            state: r.get(3)?,
            attempts: r.get(4)?,
            last_error: r.get(5)?,
        })
    })?
    .collect()
}

/// Why a request to a peer failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerError {
    /// Worth retrying: unreachable, timed out, or an answer that does not judge the content;
    /// with the peer's `Retry-After` (seconds) when a busy peer (429, 503) said when.
    Retry(String, Option<u64>),
    /// Final: the peer read the request and refused its content (400, 409, 422), with its
    /// message.
    Rejected(String),
}

/// Why a request got no answer, in words an operator can act on: the peer timed out (it took
/// the connection and did not answer in time — the status pages show this line), could not be
/// connected to, or the transport's own reason with its causes.
fn unanswered(e: &reqwest::Error, deadline: Duration) -> String {
    if e.is_timeout() {
        return format!(
            "timed out: no answer within {} s (the peer took the connection but did not answer)",
            deadline.as_secs()
        );
    }
    let mut line = if e.is_connect() {
        "cannot connect".to_owned()
    } else {
        e.to_string()
    };
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        line = format!("{line}: {c}");
        cause = c.source();
    }
    line
}

/// Whether an error status is the peer's verdict on the content of what was sent, so that
/// sending the same body again cannot succeed.
fn judges_the_content(status: reqwest::StatusCode) -> bool {
    matches!(status.as_u16(), 400 | 409 | 422)
}

/// Put a survey's rejected hand-overs back in the queue (the administrator fixed what made the
/// peer refuse them); returns how many.
///
/// # Errors
/// SQLite errors.
pub fn requeue(conn: &Connection, survey: &str) -> rusqlite::Result<usize> {
    // Every rejected item goes back to pending (OutboxState::requeue), in one statement.
    let requeued = OutboxState::Rejected
        .requeue()
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    conn.execute(
        "UPDATE outbox SET state = ?3, next_attempt_ms = 0, attempts = 0, done_at = NULL
         WHERE survey = ?1 AND state = ?2",
        (survey, OutboxState::Rejected, requeued),
    )
}

impl std::fmt::Display for PeerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Retry(m, _) | Self::Rejected(m) => f.write_str(m),
        }
    }
}

/// An HTTP client for service-to-service calls, carrying the peer bearer token.
#[derive(Clone)]
pub struct PeerClient {
    http: reqwest::Client,
    answer_timeout: Duration,
    identity: Arc<crate::peers::Identity>,
    peers: Arc<crate::peers::Peers>,
}

impl std::fmt::Debug for PeerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerClient")
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl PeerClient {
    /// A client that signs every request as `identity` (RFC 9421, `crate::peer_auth`) and sends
    /// only to the `peers` it pins, giving a peer `answer_timeout` to answer a request (plus the
    /// time its body takes at [`PEER_MIN_BYTES_PER_SECOND`]).
    ///
    /// # Errors
    /// When the TLS backend cannot initialise.
    pub fn new(
        identity: Arc<crate::peers::Identity>,
        peers: Arc<crate::peers::Peers>,
        answer_timeout: Duration,
    ) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        Ok(Self {
            http,
            answer_timeout,
            identity,
            peers,
        })
    }

    /// How long a request with a body of `bytes` may take: a peer that accepts the connection
    /// and never answers (issue 30 §4) is given up after this, and the item waits its back-off;
    /// one that keeps taking a large hand-over at the slowest rate allowed is not cut off.
    fn deadline(&self, bytes: usize) -> Duration {
        let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
        self.answer_timeout + Duration::from_secs(bytes / PEER_MIN_BYTES_PER_SECOND)
    }

    /// Send `body` (JSON) with `method` to the pinned peer whose base URL `url` extends, signed
    /// as this service and addressed to that peer, and return the answer's body.
    ///
    /// # Errors
    /// [`PeerError`] classifying the failure; a URL of no pinned peer is a
    /// [`PeerError::Rejected`] (nothing is sent where the configuration does not say).
    pub async fn send(
        &self,
        method: reqwest::Method,
        url: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, PeerError> {
        let to = self.peers.for_url(url).map(|p| p.party).ok_or_else(|| {
            PeerError::Rejected(format!(
                "{url}: not the address of a peer this service pins; nothing was sent"
            ))
        })?;
        let bytes = body.unwrap_or_default();
        let signature = crate::peer_auth::sign(&self.identity, to, &method, url, &bytes)
            .await
            .map_err(|e| PeerError::Retry(e, None))?;
        let mut request = self
            .http
            .request(method, url)
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        request = crate::peer_auth::apply(request, &signature);
        let deadline = self.deadline(bytes.len());
        // Always with its Content-Length, an empty body included: a peer reads a body only
        // within the size it announced (`Peer::read_json`).
        request = request.timeout(deadline).body(bytes);
        let response = request
            .send()
            .await
            .map_err(|e| PeerError::Retry(format!("{url}: {}", unanswered(&e, deadline)), None))?;
        let status = response.status();
        let retry_after = matches!(status.as_u16(), 429 | 503)
            .then(|| response.headers().get(reqwest::header::RETRY_AFTER))
            .flatten()
            .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
        let bytes = response
            .bytes()
            .await
            .map_err(|e| PeerError::Retry(format!("{url}: reading the answer: {e}"), None))?;
        if status.is_success() {
            return Ok(bytes.to_vec());
        }
        let message = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
            .unwrap_or_else(|| String::from_utf8_lossy(&bytes).chars().take(200).collect());
        let mut line = format!("{url}: {} {message}", status.as_u16());
        if matches!(status.as_u16(), 401 | 403) {
            // Most often a deployment whose operators pinned another key, or another role: say
            // which key this service signs with, so the peer's operator can pin it.
            line = format!(
                "{line} (this service signs as {} with the identity key {}: the peer's operator \
                 must pin that key for that role)",
                self.identity.party(),
                self.identity.public_key()
            );
        }
        if judges_the_content(status) {
            Err(PeerError::Rejected(line))
        } else {
            Err(PeerError::Retry(line, retry_after))
        }
    }
}

/// Called inside the transaction that marks an item delivered (e.g. to erase data the service
/// no longer needs).
pub type DeliveredHook =
    Arc<dyn Fn(&Connection, &OutboxItem) -> rusqlite::Result<()> + Send + Sync>;

/// How long a peer may take to answer a request, once it is sent, by default
/// ([`crate::Limits::peer_answer_timeout`]).
pub const PEER_ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// The slowest transfer a peer is allowed: a request with a body of `b` bytes gets `b / this`
/// seconds more than the answer timeout (a 512 MiB hand-over: 8.5 minutes).
pub const PEER_MIN_BYTES_PER_SECOND: u64 = 1 << 20;

/// Back-off before attempt `attempts + 1`.
fn backoff(attempts: u32) -> Duration {
    let ms = 250u64.saturating_mul(1u64 << attempts.min(16));
    Duration::from_millis(ms.min(30_000))
}

/// The wait before attempt `attempts + 1`: `orthomask_survey::policy::retry_wait` of the back-off
/// and the peer's `Retry-After`, at most [`LONGEST_WAIT`].
fn next_wait(attempts: u32, retry_after_s: Option<u64>, unit: f64) -> Duration {
    orthomask_survey::policy::retry_wait(
        backoff(attempts),
        retry_after_s.map(Duration::from_secs),
        unit,
    )
    .min(LONGEST_WAIT)
}

/// The longest wait the outbox sets before an attempt, whatever a peer's `Retry-After` asks.
const LONGEST_WAIT: Duration = Duration::from_secs(600);

/// A uniform number in `[0, 1)` from the operating system (0.5 if it gives none: jitter only).
fn jitter_unit() -> f64 {
    getrandom::u32().map_or(0.5, |v| f64::from(v) / 4_294_967_296.0)
}

/// Items sent at once per round.
const ROUND: usize = 4;

/// The pending items due at `now` (Unix milliseconds), at most [`ROUND`]: those whose next
/// attempt has come — and those scheduled further ahead than any wait the outbox sets
/// ([`LONGEST_WAIT`]), which only a clock that jumped backwards leaves behind (issue 30 §3):
/// without this, a clock set back an hour would hold every hand-over for that hour.
fn due_items(c: &Connection, now: i64) -> rusqlite::Result<Vec<OutboxItem>> {
    let longest = i64::try_from(LONGEST_WAIT.as_millis()).unwrap_or(i64::MAX);
    let mut stmt = c.prepare_cached(
        "SELECT id, kind, survey, cohort, part, url, body FROM outbox
         WHERE state = ?3 AND (next_attempt_ms <= ?1 OR next_attempt_ms > ?1 + ?4)
         ORDER BY id LIMIT ?2",
    )?;
    let rows = stmt.query_map((now, ROUND as i64, OutboxState::Pending, longest), |r| {
        Ok(OutboxItem {
            id: r.get(0)?,
            kind: r.get(1)?,
            survey: r.get(2)?,
            cohort: r.get(3)?,
            part: r.get(4)?,
            url: r.get(5)?,
            body: r.get::<_, Option<Vec<u8>>>(6)?.unwrap_or_default(),
        })
    })?;
    rows.collect()
}

/// Run the delivery loop until `shutdown` turns true.
pub async fn run(
    store: Store,
    client: PeerClient,
    wake: Arc<Notify>,
    hook: DeliveredHook,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        if *shutdown.borrow() {
            return;
        }
        let now = crate::time::unix_millis();
        let due = store
            .run(move |c| -> Result<Vec<OutboxItem>, StoreError> { Ok(due_items(c, now)?) })
            .await;
        let due = match due {
            Ok(d) => d,
            Err(StoreError::Closed) => return,
            Err(e) => {
                tracing::warn!("outbox: {e}");
                Vec::new()
            }
        };
        for item in &due {
            let result = client
                .send(reqwest::Method::PUT, &item.url, Some(item.body.clone()))
                .await;
            let item = item.clone();
            let hook = hook.clone();
            let recorded = store
                .run(move |c| -> Result<bool, StoreError> {
                    let now = crate::time::now_rfc3339();
                    // The items sent are the pending ones (selected above).
                    let step = |next: Result<OutboxState, _>| {
                        next.map_err(|e: crate::states::TransitionRefused| {
                            StoreError::Corrupt(e.to_string())
                        })
                    };
                    match result {
                        Ok(_) => {
                            c.execute(
                                "UPDATE outbox SET state = ?3, body = NULL, done_at = ?2,
                                 last_error = NULL WHERE id = ?1",
                                (item.id, now, step(OutboxState::Pending.deliver())?),
                            )?;
                            hook(c, &item)?;
                            return Ok(true);
                        }
                        Err(PeerError::Rejected(message)) => {
                            tracing::warn!(
                                "{} for survey {} cohort {} was refused: {message}",
                                item.kind,
                                item.survey,
                                item.cohort
                            );
                            c.execute(
                                "UPDATE outbox SET state = ?4, last_error = ?2,
                                 attempts = attempts + 1, done_at = ?3 WHERE id = ?1",
                                (item.id, message, now, step(OutboxState::Pending.reject())?),
                            )?;
                        }
                        Err(PeerError::Retry(message, retry_after)) => {
                            let attempts: u32 = c
                                .query_row(
                                    "SELECT attempts FROM outbox WHERE id = ?1",
                                    [item.id],
                                    |r| r.get(0),
                                )
                                .optional()?
                                .unwrap_or(0);
                            let wait = next_wait(attempts, retry_after, jitter_unit());
                            let wait = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
                            c.execute(
                                "UPDATE outbox SET attempts = attempts + 1, last_error = ?2,
                                 next_attempt_ms = ?3 WHERE id = ?1",
                                (item.id, message, crate::time::unix_millis() + wait),
                            )?;
                        }
                    }
                    Ok(false)
                })
                .await;
            match recorded {
                // The hook may have erased data: make the erasure reach the files now.
                Ok(true) => {
                    if let Err(e) = store.checkpoint().await {
                        tracing::warn!("outbox: checkpoint after erasing: {e}");
                    }
                }
                Ok(false) => {}
                Err(e) => tracing::warn!("outbox: recording a delivery: {e}"),
            }
        }
        if due.len() == ROUND {
            continue;
        }
        let next = store
            .run(|c| -> Result<Option<i64>, StoreError> {
                Ok(c.query_row(
                    "SELECT MIN(next_attempt_ms) FROM outbox WHERE state = ?1",
                    [OutboxState::Pending],
                    |r| r.get(0),
                )?)
            })
            .await
            .ok()
            .flatten();
        let wait = next.map_or(Duration::from_secs(30), |t| {
            Duration::from_millis(
                u64::try_from(t - crate::time::unix_millis())
                    .unwrap_or(0)
                    .min(30_000),
            )
        });
        tokio::select! {
            () = wake.notified() => {}
            () = tokio::time::sleep(wait) => {}
            _ = shutdown.changed() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_verdict_on_the_content_is_final() {
        for code in [400, 409, 422] {
            assert!(judges_the_content(
                reqwest::StatusCode::from_u16(code).unwrap()
            ));
        }
        for code in [401, 403, 404, 405, 408, 413, 429, 500, 502, 503] {
            assert!(
                !judges_the_content(reqwest::StatusCode::from_u16(code).unwrap()),
                "{code}"
            );
        }
    }

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff(0), Duration::from_millis(250));
        assert_eq!(backoff(3), Duration::from_millis(2000));
        assert_eq!(backoff(40), Duration::from_secs(30));
    }

    /// By hand: a busy peer's Retry-After floors the wait, and the stretch adds up to half.
    #[test]
    fn a_busy_peers_retry_after_is_honoured_and_spread() {
        assert_eq!(next_wait(0, None, 0.0), Duration::from_millis(250));
        assert_eq!(next_wait(0, Some(1), 0.0), Duration::from_secs(1));
        assert_eq!(next_wait(0, Some(1), 0.5), Duration::from_millis(1250));
        assert_eq!(next_wait(3, Some(1), 1.0), Duration::from_millis(3000));
        assert_eq!(next_wait(40, Some(120), 0.0), Duration::from_secs(120));
        assert_eq!(next_wait(0, None, -3.0), Duration::from_millis(250));
        let unit = jitter_unit();
        assert!((0.0..1.0).contains(&unit), "{unit}");
        // A Retry-After of a day is waited out for at most the longest wait.
        assert_eq!(next_wait(0, Some(86_400), 0.0), LONGEST_WAIT);
    }

    /// Issue 30 §3: an item is due when its time comes; and when the clock jumps backwards an
    /// hour after it was scheduled, it is due at once rather than an hour later.
    #[test]
    fn an_item_is_due_when_its_time_comes_or_the_clock_went_back() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(SCHEMA).unwrap();
        enqueue(
            &c,
            OutboxKind::CohortResult,
            "s",
            0,
            0,
            "http://peer",
            b"{}",
        )
        .unwrap();
        let scheduled = 1_800_000_000_000_i64;
        c.execute("UPDATE outbox SET next_attempt_ms = ?1", [scheduled])
            .unwrap();
        let due = |now: i64| due_items(&c, now).unwrap().len();
        assert_eq!(due(scheduled - 1_000), 0, "not yet");
        assert_eq!(due(scheduled), 1, "its time");
        assert_eq!(
            due(scheduled - 3_600_000 - 1_000),
            1,
            "the clock went back an hour"
        );
    }
}
