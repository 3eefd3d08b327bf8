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
//! services retries on exactly that. At most [`busy_answers`] such answers are in flight;
//! beyond that the listener takes the next connection once a place or a busy answer's frees
//! (milliseconds: an answer sent), so every connection is answered and descriptors stay
//! bounded — except one from an address over its share (below), which is closed at once beyond
//! half the busy answers, so that no single client can keep the listener waiting. And the
//! places held by idle keep-alive
//! connections are given back: when a connection finds no place, every connection that has
//! already answered a request is asked to close once it is idle (hyper's graceful shutdown
//! finishes a request in flight first).
//!
//! One client address may hold at most half of the places ([`crate::address_share`]): the
//! timeouts bound how long a connection holds a place, the share how many one client holds, so
//! a slowloris opening connections faster than they time out still leaves the other half free.
//!
//! The cap follows the process's open-file limit (issue 24): `orthomask serve` raises the soft
//! `RLIMIT_NOFILE` to the hard limit at start ([`raise_descriptor_limit`]) and gives each listener
//! the cap [`connection_cap`] computes from it, so that a burst is served rather than refused
//! while descriptors are left unused, and no listener can drive the process out of descriptors.

use crate::address_share::{AddressClaim, AddressShares};
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
    /// ([`BUSY_RETRY_AFTER_S`]). `orthomask serve` sets it from the open-file limit
    /// ([`connection_cap`]); the default is for services started in-process.
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

/// The policy's largest connection cap of one listener, whatever the descriptor limit allows.
/// A burst is best queued rather than turned away: a connection turned away is told to come
/// back in [`BUSY_RETRY_AFTER_S`] (HTTP's `Retry-After` counts whole seconds), so every
/// participant refused waits at least a second, while one held is answered as soon as the
/// uploads before it are stored (2 000–4 000 a second on two cores, README's load table). So the
/// cap lets a listener hold a launch-day burst of 10 000 participants at once (issue 24) with
/// room to spare. Memory grows with it: a held connection whose request waits costs the
/// service its connection state and read buffer (hyper's, 8 KiB to start; the body waits in the
/// kernel's socket buffer until the handler reads it); the load benchmark (`scripts/load.sh`)
/// reports the peak resident memory of a burst.
pub const MAX_CONNECTIONS: usize = 16_384;

/// Descriptors kept out of the listeners' share of the open-file limit ([`connection_cap`]): the
/// standard streams, the async runtime's own (epoll, wake-up and signal descriptors), the
/// listening sockets, each service's store (the database, its write-ahead log and shared-memory
/// file, the checkpointer's connection to them) and SQLite's temporary files, and the outgoing
/// connections the services' outboxes keep to their peers — a few dozen in all for `serve all`
/// with its right-masking services, kept with room to spare, since running out of descriptors
/// fails a commit or a hand-over, not just one connection.
pub const RESERVED_DESCRIPTORS: u64 = 256;

/// Descriptors one place of a listener may account for: the served connection, and one
/// descriptor its request may open while it is answered (a web app file read, a peer connection
/// its handler makes).
pub const DESCRIPTORS_PER_PLACE: u64 = 2;

/// Most answers over the cap a listener has in flight at once (each one descriptor, for at most
/// [`BUSY_DEADLINE`]): [`busy_answers`] of its cap; beyond them the next connection waits in
/// the kernel's queue until one is sent ([`serve`]).
pub const BUSY_ANSWERS: usize = 1024;

/// The answers over the cap a listener with `cap` places keeps in flight: as many as it has
/// places, up to [`BUSY_ANSWERS`].
#[must_use]
pub fn busy_answers(cap: usize) -> usize {
    cap.min(BUSY_ANSWERS)
}

/// The connection cap of each of `listeners` listeners in a process allowed `descriptors` open
/// files: the largest for which every listener's places (at [`DESCRIPTORS_PER_PLACE`] each) and
/// answers over the cap ([`busy_answers`]) fit in what is left of `descriptors` after
/// [`RESERVED_DESCRIPTORS`], shared evenly; at most [`MAX_CONNECTIONS`], at least 1.
///
/// # Formula
/// With `d = ⌊(descriptors − RESERVED_DESCRIPTORS) / listeners⌋` a listener's descriptors and
/// `B =` [`BUSY_ANSWERS`]: `cap = ⌊d / 3⌋` while `d < 3B` (a place and its busy answer,
/// three descriptors), else `cap = ⌊(d − B) / 2⌋` (the two agree at `d = 3B`); then
/// clamped to `1..=MAX_CONNECTIONS`. So `listeners · (2 · cap + min(cap, B)) +
/// RESERVED_DESCRIPTORS ≤ descriptors` whenever the limit leaves each listener a place.
#[must_use]
pub fn connection_cap(descriptors: u64, listeners: usize) -> usize {
    let listeners = u64::try_from(listeners.max(1)).unwrap_or(u64::MAX);
    let busy = u64::try_from(BUSY_ANSWERS).unwrap_or(u64::MAX);
    let own = descriptors.saturating_sub(RESERVED_DESCRIPTORS) / listeners;
    let with_busy = DESCRIPTORS_PER_PLACE + 1;
    let cap = if own < with_busy.saturating_mul(busy) {
        own / with_busy
    } else {
        (own - busy) / DESCRIPTORS_PER_PLACE
    };
    usize::try_from(cap)
        .unwrap_or(usize::MAX)
        .clamp(1, MAX_CONNECTIONS)
}

/// The process's open-file limit (`RLIMIT_NOFILE`) around [`raise_descriptor_limit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescriptorLimit {
    /// The soft limit the process started with.
    pub before: u64,
    /// The soft limit now: the descriptors the process may open.
    pub soft: u64,
    /// The hard limit, the most the soft limit may be raised to without privileges.
    pub hard: u64,
}

/// The process's soft and hard `RLIMIT_NOFILE` (`RLIM_INFINITY` as `u64::MAX`).
///
/// # Errors
/// The system's, when the limit cannot be read (or on a system without it).
pub fn descriptor_limit() -> std::io::Result<(u64, u64)> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the limit into the struct it is given, nothing else.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((as_count(limit.rlim_cur), as_count(limit.rlim_max)))
    }
    #[cfg(not(unix))]
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no RLIMIT_NOFILE on this system",
    ))
}

/// A limit as a count (`RLIM_INFINITY` as `u64::MAX`).
#[cfg(unix)]
// `rlim_t` is `u64` on 64-bit Linux and macOS, 32 bits on some other targets.
#[allow(clippy::unnecessary_cast)]
fn as_count(value: libc::rlim_t) -> u64 {
    if value == libc::RLIM_INFINITY {
        u64::MAX
    } else {
        value as u64
    }
}

/// Raise the process's soft open-file limit to its hard limit (no privilege needed), so the
/// listeners' caps ([`connection_cap`]) can follow the hard limit rather than a soft default of
/// 1 024. Where the hard limit is unlimited and the system refuses that as a soft limit (macOS
/// caps it at `OPEN_MAX`), the soft limit is left as it was.
///
/// # Errors
/// The system's, when the limit cannot be read or set.
pub fn raise_descriptor_limit() -> std::io::Result<DescriptorLimit> {
    let (before, hard) = descriptor_limit()?;
    #[cfg(unix)]
    if before < hard {
        // `hard` was read as an `rlim_t`, so it fits back in one.
        let hard_limit = if hard == u64::MAX {
            libc::RLIM_INFINITY
        } else {
            hard as libc::rlim_t
        };
        let raised = libc::rlimit {
            rlim_cur: hard_limit,
            rlim_max: hard_limit,
        };
        // SAFETY: setrlimit reads the struct it is given, nothing else.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const raised) } != 0
            && hard != u64::MAX
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    let (soft, hard) = descriptor_limit()?;
    Ok(DescriptorLimit { before, soft, hard })
}

/// Connections the kernel queues for a listener before they are accepted (`listen(2)`'s
/// backlog; Linux cuts it to `net.core.somaxconn`, 4 096 by default). `tokio`'s own bind asks
/// for 1 024: a burst of thousands of connections arriving within milliseconds overflowed it,
/// and each SYN dropped was retried by the client's kernel after 1, 3, 7 s — the slowest
/// participants of a 10 000-upload burst waited 8 s with no word from the service. The accept
/// loop takes every connection off the queue at once ([`serve`]), so the queue only needs to
/// absorb the arrivals of the moments in which that loop is not scheduled.
pub const LISTEN_BACKLOG: u32 = 65_535;

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
    let busy_places = Arc::new(Semaphore::new(busy_answers(cap)));
    let shares = AddressShares::new(cap);
    // The busy answers' reasons, the same for every connection of this listener.
    let over_cap: Arc<str> = format!(
        "the service is serving as many connections as it may ({cap}); retry in {BUSY_RETRY_AFTER_S} s"
    )
    .into();
    let over_share: Arc<str> = format!(
        "this address holds as many of the service's connections as one address may ({}); retry in {BUSY_RETRY_AFTER_S} s",
        shares.per_address()
    )
    .into();
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
        let served = |stop: &watch::Receiver<bool>, claim| Served {
            app: app.clone(),
            limits,
            client,
            shed: shed.subscribe(),
            stop: stop.clone(),
            _claim: claim,
        };
        // A place is the address's to take only within its share (`address_share`). Over it,
        // a connection is answered as one over the cap from the first half of the busy answers,
        // and closed at once beyond them instead of waiting for one: otherwise a single client
        // could hold every busy answer with slow requests and keep the listener waiting on its
        // next connection, while everyone else's waited in the queue behind it.
        let Some(claim) = shares.claim(client.ip()) else {
            let place = (busy_places.available_permits() > busy_answers(cap) / 2)
                .then(|| busy_places.clone().try_acquire_owned().ok())
                .flatten();
            match place {
                Some(place) => {
                    tokio::spawn(answer_busy(stream, place, limits, over_share.clone()));
                }
                None => drop(stream),
            }
            continue;
        };
        if let Ok(place) = places.clone().try_acquire_owned() {
            tokio::spawn(served(&stop, claim).run(stream, place));
            continue;
        }
        if last_shed.is_none_or(|t| t.elapsed() >= SHED_INTERVAL) {
            shed.send_modify(|n| *n += 1);
            last_shed = Some(Instant::now());
        }
        if let Ok(place) = busy_places.clone().try_acquire_owned() {
            tokio::spawn(answer_busy(stream, place, limits, over_cap.clone()));
            continue;
        }
        // Beyond both caps: this connection takes whichever frees first — a place (a request
        // answered, an idle connection shed) or a busy answer's (sent within BUSY_DEADLINE,
        // usually milliseconds) — and the listener accepts nothing meanwhile, so descriptors
        // stay bounded. The connections behind it wait those moments in the kernel's queue
        // (LISTEN_BACKLOG) and are answered in turn; none within its address's share is closed
        // unanswered.
        let next = tokio::select! {
            biased;
            () = stopped(&mut stop) => break,
            place = places.clone().acquire_owned() => place.map(Place::Served),
            place = busy_places.clone().acquire_owned() => place.map(Place::Busy),
        };
        match next {
            Ok(Place::Served(place)) => {
                tokio::spawn(served(&stop, claim).run(stream, place));
            }
            Ok(Place::Busy(place)) => {
                tokio::spawn(answer_busy(stream, place, limits, over_cap.clone()));
            }
            // The semaphores are never closed; were one, the connection is closed unanswered.
            Err(_) => drop(stream),
        }
    }
    drop(listener);
    // Every connection holds a place until it ends: holding them all means all have ended.
    let all = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(DRAIN, async {
        let _ = places.acquire_many(all(cap)).await;
        let _ = busy_places.acquire_many(all(busy_answers(cap))).await;
    })
    .await;
}

/// What a connection found once one was free: a place to be served, or a busy answer's.
enum Place {
    Served(OwnedSemaphorePermit),
    Busy(OwnedSemaphorePermit),
}

/// One connection with a place.
struct Served {
    app: Router,
    limits: ConnectionLimits,
    client: std::net::SocketAddr,
    shed: watch::Receiver<u64>,
    stop: watch::Receiver<bool>,
    /// The place counted against the client's address, given back when the connection ends.
    _claim: AddressClaim,
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
async fn answer_busy(
    stream: TcpStream,
    place: OwnedSemaphorePermit,
    limits: ConnectionLimits,
    why: Arc<str>,
) {
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let why = why.clone();
        async move {
            let mut body = request.into_body();
            while let Some(frame) = body.frame().await {
                if frame.is_err() {
                    break;
                }
            }
            Ok::<_, Infallible>(ApiError::busy(&*why, BUSY_RETRY_AFTER_S).into_response())
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed from the formula, `d = (descriptors − 256) / listeners` rounded down:
    /// `d / 3` up to 1 024 places, then `(d − 1 024) / 2`, within 1–16 384.
    #[test]
    fn the_cap_is_the_descriptors_left_after_the_reserve_shared_among_the_listeners() {
        // A soft limit of 1 024 left as it was: d = 768, 768 / 3 = 256; two listeners 384 / 3.
        assert_eq!(connection_cap(1024, 1), 256);
        assert_eq!(connection_cap(1024, 2), 128);
        // d = 3 072 is where the two branches meet: 1 024 either way.
        assert_eq!(connection_cap(3072 + 256, 1), 1024);
        assert_eq!(connection_cap(3072 + 256 + 2, 1), 1025);
        // A hard limit of 20 000: `serve all` without right-masking services (two listeners)
        // d = 9 872, (9 872 − 1 024) / 2 = 4 424; with three of them (five listeners) d = 3 948,
        // (3 948 − 1 024) / 2 = 1 462.
        assert_eq!(connection_cap(20_000, 2), 4424);
        assert_eq!(connection_cap(20_000, 5), 1462);
        // 65 536 (a common LimitNOFILE), two listeners: d = 32 640, 15 808 places each.
        assert_eq!(connection_cap(65_536, 2), 15_808);
        // Linux's usual hard limit of 2²⁰ is above the policy's maximum, even for five.
        assert_eq!(connection_cap(1 << 20, 5), MAX_CONNECTIONS);
        assert_eq!(MAX_CONNECTIONS, 16_384);
        assert_eq!(connection_cap(u64::MAX, 1), MAX_CONNECTIONS);
        // Just above the reserve: 262 − 256 = 6 descriptors, two places; below it, still one.
        assert_eq!(connection_cap(262, 1), 2);
        assert_eq!(connection_cap(100, 1), 1);
        // No listener counts as one.
        assert_eq!(connection_cap(1024, 0), 256);
    }

    /// What the cap promises: the listeners' places and the reserve fit in the limit.
    #[test]
    fn the_listeners_places_and_the_reserve_fit_in_the_limit() {
        for descriptors in [262, 1024, 3328, 3330, 4096, 20_000, 65_536, 200_000] {
            for listeners in 1..=8 {
                let cap = connection_cap(descriptors, listeners);
                if cap > 1 {
                    let per_listener =
                        cap as u64 * DESCRIPTORS_PER_PLACE + busy_answers(cap) as u64;
                    assert!(
                        listeners as u64 * per_listener + RESERVED_DESCRIPTORS <= descriptors,
                        "{descriptors} descriptors, {listeners} listeners: cap {cap}"
                    );
                }
            }
        }
    }
}
