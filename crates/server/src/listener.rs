//! Serving HTTP with the listener's own defences (issue 10 §7, issue 24): a cap on the
//! connections served at once, a deadline for reading a request's headers, a deadline for
//! answering a request — and, above the cap, a fast refusal instead of a silent wait.
//!
//! Why not `axum::serve`: it sets none of these, so a client that opens connections and sends a
//! byte now and then (slowloris) holds them for ever, and enough such clients exhaust the
//! process's file descriptors. Here each connection is served by hyper's HTTP/1 connection with
//! a header-read timeout, and a request whose answer takes longer than the request timeout gets
//! a 503.
//!
//! Above the cap. The accept loop never stops accepting (a connection left in the kernel's
//! backlog is a participant whose SYN is retried after 1, 3 and 7 s, with no word of why). A
//! connection accepted while every place is taken is answered by a second, cheap server: it
//! reads the request (its body is read and dropped, so the client reads the answer rather than
//! a reset) and answers `503` with `Retry-After` and `Connection: close` — every client of the
//! services retries on exactly that. At most as many such answers are in flight as there are
//! places; beyond that a connection is closed at once. And the places held by idle keep-alive
//! connections are given back: when a connection finds no place, every connection that has
//! already answered a request is asked to close once it is idle (hyper's graceful shutdown
//! finishes a request in flight first).

use crate::error::ApiError;
use axum::Router;
use axum::extract::ConnectInfo;
use axum::response::IntoResponse;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tower_service::Service;

/// The limits every listener enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections served at once; one more is answered 503 with `Retry-After`
    /// ([`BUSY_RETRY_AFTER_S`]).
    pub max_connections: usize,
    /// Longest time to receive a request's headers once the request has begun (hyper's
    /// `header_read_timeout`); the connection is closed after it.
    pub header_read_timeout: Duration,
    /// Longest time from the headers to the whole answer, body reading included; the client gets
    /// a 503 after it. Long enough for the largest peer hand-over (512 MiB) on a slow link.
    pub request_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(600),
        }
    }
}

/// The `Retry-After` (seconds) of the answer to a connection over the cap: places free up as
/// fast as requests are answered, so a second is enough, and clients add their own jitter.
pub const BUSY_RETRY_AFTER_S: u64 = 1;

/// Longest a connection over the cap is kept: reading its request and sending the 503.
const BUSY_DEADLINE: Duration = Duration::from_secs(5);

/// Shortest interval between two calls on idle keep-alive connections to close: a burst of
/// connections over the cap wakes the served ones once, not once per connection.
const SHED_INTERVAL: Duration = Duration::from_millis(50);

/// Longest wait for open connections to finish once the service is stopping.
const DRAIN: Duration = Duration::from_secs(30);

/// Serve `app` on `listener` under `limits` until `stop` turns true, then let open connections
/// finish (for at most [`DRAIN`]).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) {
    let cap = limits.max_connections.max(1);
    let places = Arc::new(Semaphore::new(cap));
    let busy_places = Arc::new(Semaphore::new(cap));
    // Bumped when a connection finds no place: served, idle connections then close.
    let (shed, _) = watch::channel(0_u64);
    let mut last_shed: Option<Instant> = None;
    loop {
        let (stream, client) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    wait_after_accept_error(&e).await;
                    continue;
                }
            },
            () = stopped(&mut stop) => break,
        };
        if let Ok(place) = places.clone().try_acquire_owned() {
            let served = Served {
                app: app.clone(),
                limits,
                client,
                shed: shed.subscribe(),
                stop: stop.clone(),
            };
            tokio::spawn(served.run(stream, place));
            continue;
        }
        if last_shed.is_none_or(|t| t.elapsed() >= SHED_INTERVAL) {
            shed.send_modify(|n| *n += 1);
            last_shed = Some(Instant::now());
        }
        match busy_places.clone().try_acquire_owned() {
            Ok(place) => {
                tokio::spawn(answer_busy(stream, place, limits));
            }
            // Beyond both caps: closed at once, so descriptors stay bounded.
            Err(_) => drop(stream),
        }
    }
    drop(listener);
    // Every connection holds a place until it ends: holding them all means all have ended.
    let cap = u32::try_from(cap).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(DRAIN, async {
        let _ = places.acquire_many(cap).await;
        let _ = busy_places.acquire_many(cap).await;
    })
    .await;
}

/// One connection with a place.
struct Served {
    app: Router,
    limits: ConnectionLimits,
    client: std::net::SocketAddr,
    shed: watch::Receiver<u64>,
    stop: watch::Receiver<bool>,
}

impl Served {
    async fn run(mut self, stream: TcpStream, place: OwnedSemaphorePermit) {
        // Set once an answer has gone out: from then on the connection is a keep-alive one,
        // which gives its place back when others need it.
        let answered = Arc::new(AtomicBool::new(false));
        let (router, timeout, client) =
            (self.app.clone(), self.limits.request_timeout, self.client);
        let flag = answered.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            let (mut router, flag) = (router.clone(), flag.clone());
            async move {
                request.extensions_mut().insert(ConnectInfo(client));
                let request = request.map(axum::body::Body::new);
                let answer = match tokio::time::timeout(timeout, router.call(request)).await {
                    Ok(answer) => answer,
                    Err(_) => Ok(ApiError::unavailable(format!(
                        "the request took longer than {} s and was abandoned",
                        timeout.as_secs()
                    ))
                    .into_response()),
                };
                flag.store(true, Ordering::Release);
                Ok::<_, Infallible>(answer.unwrap_or_else(|never| match never {}))
            }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_read_timeout)
            .serve_connection(TokioIo::new(stream), service);
        tokio::pin!(connection);
        let mut closing = false;
        loop {
            tokio::select! {
                // Errors are the client's (reset, timed out, malformed): nothing to do but close.
                _ = connection.as_mut() => break,
                () = stopped(&mut self.stop), if !closing => {
                    connection.as_mut().graceful_shutdown();
                    closing = true;
                }
                changed = self.shed.changed(), if !closing => {
                    if changed.is_err() || answered.load(Ordering::Acquire) {
                        connection.as_mut().graceful_shutdown();
                        closing = true;
                    }
                }
            }
        }
        drop(place);
    }
}

/// A connection over the cap: its request is read (the body dropped as it comes) and answered
/// `503` with `Retry-After` and `Connection: close`, within [`BUSY_DEADLINE`].
async fn answer_busy(stream: TcpStream, place: OwnedSemaphorePermit, limits: ConnectionLimits) {
    let service = hyper::service::service_fn(|request: hyper::Request<Incoming>| async move {
        let mut body = request.into_body();
        while let Some(frame) = body.frame().await {
            if frame.is_err() {
                break;
            }
        }
        Ok::<_, Infallible>(
            ApiError::busy(
                format!(
                    "the service is serving as many connections as it may ({}); retry in {BUSY_RETRY_AFTER_S} s",
                    limits.max_connections
                ),
                BUSY_RETRY_AFTER_S,
            )
            .into_response(),
        )
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout.min(BUSY_DEADLINE))
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service);
    let _ = tokio::time::timeout(BUSY_DEADLINE, connection).await;
    drop(place);
}

/// Resolves when `stop` turns true (or its sender is gone). The `watch::Ref` is dropped inside,
/// so the serving future stays `Send`.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopping| *stopping).await;
}

/// After a failed `accept`: a client that went away is nothing; anything else (out of file
/// descriptors) is reported and waited out, as hyper's server did.
async fn wait_after_accept_error(e: &std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::warn!("accepting a connection failed: {e}");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
