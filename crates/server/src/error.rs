//! Errors at the HTTP boundary: every failure leaves a service as a status code and one line of
//! JSON, `{"error": "…"}`, never as a panic or an HTML page.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A failure of the store (SQLite or its writer thread).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite refused an operation.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The writer thread has stopped (the service is shutting down).
    #[error("the store is closed")]
    Closed,
    /// A stored value could not be decoded (a bug or a corrupted file).
    #[error("corrupt stored value: {0}")]
    Corrupt(String),
    /// A job panicked (a bug); its changes were rolled back and the store goes on.
    #[error("an internal error interrupted this change; nothing of it was stored")]
    JobPanicked,
    /// The transaction of the batch this change was in could not be committed (or the log not
    /// checkpointed after it); told to every change of the batch.
    #[error("database error: {reason}")]
    NotCommitted {
        /// SQLite's reason.
        reason: String,
        /// Whether it was for want of space ([`disk_full`]).
        disk_full: bool,
    },
}

/// Whether SQLite could not write for want of space (or the disk under it failed a write): the
/// change was rolled back whole, and the same request can succeed once there is room.
pub fn disk_full(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DiskFull | rusqlite::ErrorCode::SystemIoFailure)
    )
}

/// A failure starting or running a service.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A file or socket operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, naming the path or address.
        what: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A configuration value is unusable.
    #[error("configuration: {0}")]
    Config(String),
    /// A demonstration survey could not be created at start-up (`serve all`).
    #[error("demonstrations: {0}")]
    Demonstration(String),
    /// A key file is unreadable or malformed.
    #[error("{path}: {reason}")]
    KeyFile {
        /// The key file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl ServerError {
    /// An I/O error with context.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            source,
        }
    }
}

/// An error answer: a status and a one-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    retry_after: Option<u64>,
}

impl ApiError {
    /// An error with any status.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        let message: String = message.into();
        Self {
            status,
            // One line, always: clients show it as is.
            message: message.replace(['\n', '\r'], " "),
            retry_after: None,
        }
    }

    /// 400.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 401.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }

    /// 403.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, message)
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    /// 409.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    /// 422.
    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }

    /// 429 with a `Retry-After` in seconds.
    pub fn too_many_requests(retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("too many requests from this address; retry in {retry_after} s"),
            )
        }
    }

    /// 502: a peer service failed.
    pub fn bad_gateway(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_GATEWAY, message)
    }

    /// 503.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, message)
    }

    /// 503 with `Retry-After`: the service is at a limit and will take the request later.
    pub fn busy(message: impl Into<String>, retry_after: u64) -> Self {
        Self {
            retry_after: Some(retry_after),
            ..Self::unavailable(message)
        }
    }

    /// 500 with a message safe to show; the details go to the log.
    pub fn internal(context: &str, detail: impl std::fmt::Display) -> Self {
        tracing::error!("internal error: {context}: {detail}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("internal error: {context}; nothing was changed, try again"),
        )
    }

    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

/// A step the state machine refuses (`crate::states`) is a conflict with the current state.
impl From<crate::states::TransitionRefused> for ApiError {
    fn from(refused: crate::states::TransitionRefused) -> Self {
        Self::conflict(refused.to_string())
    }
}

impl ServerError {
    /// Whether a file could not be written for want of space (a key file on a full disk).
    pub fn cannot_write_now(&self) -> bool {
        matches!(self, Self::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull)
    }
}

impl ApiError {
    /// 503 with `Retry-After`: the disk is full, nothing of the request was stored.
    fn disk_full() -> Self {
        Self::busy(
            format!(
                "the service cannot store anything now: its disk is full; nothing of this request \
                 was stored, retry in {STORE_FULL_RETRY_AFTER_S} s"
            ),
            STORE_FULL_RETRY_AFTER_S,
        )
    }

    /// The answer for a service's own failure while `context`: 503 with `Retry-After` when the
    /// disk is full (the request can succeed once there is room), else 500.
    pub fn failed(context: &str, e: &ServerError) -> Self {
        if e.cannot_write_now() {
            tracing::warn!("{context}: {e}");
            Self::disk_full()
        } else {
            Self::internal(context, e)
        }
    }
}

/// Seconds a client is told to wait when the store cannot write (a full disk): long enough for
/// an operator to notice, short enough that the waiting clients and outboxes carry on unaided.
pub const STORE_FULL_RETRY_AFTER_S: u64 = 10;

impl StoreError {
    /// Whether the change was refused for want of space ([`disk_full`]), so that the same
    /// request can succeed once there is room.
    pub fn cannot_write_now(&self) -> bool {
        match self {
            Self::Sqlite(e) => disk_full(e),
            Self::NotCommitted { disk_full, .. } => *disk_full,
            _ => false,
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Closed => Self::unavailable("the service is shutting down; try again"),
            // Issue 30 §1: a full disk is the service's state, not the request's fault: 503 with
            // Retry-After, which every client and outbox honours.
            full if full.cannot_write_now() => {
                tracing::warn!("the store cannot write: {full}");
                Self::disk_full()
            }
            other => Self::internal("the store failed", other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message }).to_string();
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
