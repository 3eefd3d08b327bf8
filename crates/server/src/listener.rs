//! Serving HTTP with the listener's own defences (issue 10 §7): a cap on open connections, a
//! deadline for reading a request's headers, and a deadline for answering a request.
//!
//! Why not `axum::serve`: it sets none of the three, so a client that opens connections and sends
//! a byte now and then (slowloris) holds them for ever, and enough such clients exhaust the
//! process's file descriptors. Here each connection is served by hyper's HTTP/1 connection with
//! a header-read timeout; a request whose answer takes longer than the request timeout gets a
//! 503; and the accept loop waits for a free place before it accepts, so connections beyond the
//! cap wait in the kernel's backlog instead of costing memory and descriptors.

use crate::error::ApiError;
use axum::Router;
use axum::extract::ConnectInfo;
use axum::response::IntoResponse;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tower_service::Service;

/// The limits every listener enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections served at once; more wait in the kernel's backlog.
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
    let places = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    loop {
        let place = tokio::select! {
            place = places.clone().acquire_owned() => match place {
                Ok(place) => place,
                Err(_) => break,
            },
            () = stopped(&mut stop) => break,
        };
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
        let router = app.clone();
        let timeout = limits.request_timeout;
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            let mut router = router.clone();
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
                Ok::<_, Infallible>(answer.unwrap_or_else(|never| match never {}))
            }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // Errors are the client's (reset, timed out, malformed): nothing to do but close.
            let _ = connection.await;
            drop(place);
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
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
    eprintln!("orthomask-server: accepting a connection failed: {e}");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
