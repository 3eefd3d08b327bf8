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
//! The places follow the process's open-file limit (issue 24): `orthomask serve` raises the soft
//! `RLIMIT_NOFILE` to the hard limit at start ([`raise_descriptor_limit`]) and splits the places
//! it allows among its listeners ([`place_split`]): each keeps some of its own and draws on a
//! pool they share ([`SharedPlaces`]) once they are taken, so that a burst is served rather than
//! refused while descriptors are left unused, and no listener can drive the process out of
//! descriptors.

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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections served at once with places of the listener's own; once they are all taken,
    /// one more takes a place of [`Self::shared`], and beyond those it is answered 503 with
    /// `Retry-After` ([`BUSY_RETRY_AFTER_S`]). `orthomask serve` sets both from the open-file
    /// limit ([`place_split`]); the default is for services started in-process.
    pub max_connections: usize,
    /// The places the listeners of one process share, beyond their own (none: a listener has
    /// only its own). Every listener given a clone of the same [`SharedPlaces`] draws on one
    /// pool.
    pub shared: Option<SharedPlaces>,
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
            shared: None,
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

/// Places that the listeners of one process share (issue 24): a launch-day burst reaches one
/// service at a time (the collector's definitions first, then the provider's or the
/// right-masking services' uploads), so places kept idle at the others would turn its
/// participants away for a second each. Each listener keeps places of its own
/// ([`ConnectionLimits::max_connections`]), so a burst at one service never takes the last
/// places of another (the hand-overs between them, the survey team's page).
#[derive(Clone)]
pub struct SharedPlaces {
    places: Arc<Semaphore>,
    size: usize,
}

impl SharedPlaces {
    /// A pool of `size` places.
    #[must_use]
    pub fn new(size: usize) -> Self {
        Self {
            places: Arc::new(Semaphore::new(size)),
            size,
        }
    }

    /// How many places the pool has in all.
    #[must_use]
    pub fn size(&self) -> usize {
        self.size
    }
}

impl std::fmt::Debug for SharedPlaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SharedPlaces({} of {} free)",
            self.places.available_permits(),
            self.size
        )
    }
}

/// The same pool, not an equal one: listeners compare equal in what they share.
impl PartialEq for SharedPlaces {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.places, &other.places)
    }
}

impl Eq for SharedPlaces {}

/// Of a listener's even share of the places ([`connection_cap`]), the part it keeps its own
/// when listeners share a pool ([`place_split`]): a quarter.
pub const OWN_PART: usize = 4;

/// How a process's places are split among its listeners: each one's own, and the pool they
/// share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlaceSplit {
    /// Places each listener keeps for itself.
    pub own: usize,
    /// Places any listener may take once its own are taken.
    pub shared: usize,
}

impl PlaceSplit {
    /// The most connections one listener serves at once: its own places and the whole pool.
    #[must_use]
    pub fn most(&self) -> usize {
        self.own + self.shared
    }
}

/// The places of `listeners` listeners in a process allowed `descriptors` open files: of each
/// listener's even share `c =` [`connection_cap`]`(descriptors, listeners)`, it keeps
/// `own = max(1, ⌊c / OWN_PART⌋)` and lends the rest to a pool of
/// `shared = min(listeners · (c − own), MAX_CONNECTIONS − own)` places; a listener alone keeps
/// all of `c`. So the places in all, `listeners · own + shared`, are at most `listeners · c`,
/// which [`connection_cap`] fits in the limit (and each listener's busy answers,
/// [`busy_answers`] of its own places, at most those of `c`), and no listener serves more than
/// [`MAX_CONNECTIONS`] at once.
#[must_use]
pub fn place_split(descriptors: u64, listeners: usize) -> PlaceSplit {
    let even = connection_cap(descriptors, listeners);
    if listeners <= 1 {
        return PlaceSplit {
            own: even,
            shared: 0,
        };
    }
    let own = (even / OWN_PART).max(1);
    PlaceSplit {
        own,
        shared: listeners
            .saturating_mul(even - own)
            .min(MAX_CONNECTIONS - own),
    }
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
    let own = limits.max_connections.max(1);
    let places = Places::new(own, limits.shared.clone());
    let most = places.most;
    let busy = busy_answers(own);
    let busy_places = Arc::new(Semaphore::new(busy));
    // A busy answer waits for its request's headers at most until its own deadline.
    let busy_headers = limits.header_read_timeout.min(BUSY_DEADLINE);
    // One address's share is of every place the listener may serve, the pool's included.
    let shares = AddressShares::new(most);
    // The busy answers' reasons, the same for every connection of this listener.
    let over_cap: Arc<str> = format!(
        "the service is serving as many connections as it may ({most}); retry in {BUSY_RETRY_AFTER_S} s"
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
            header_read_timeout: limits.header_read_timeout,
            request_timeout: limits.request_timeout,
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
            let place = (busy_places.available_permits() > busy / 2)
                .then(|| busy_places.clone().try_acquire_owned().ok())
                .flatten();
            match place {
                Some(place) => {
                    tokio::spawn(answer_busy(stream, place, busy_headers, over_share.clone()));
                }
                None => drop(stream),
            }
            continue;
        };
        if let Some(place) = places.try_take() {
            tokio::spawn(served(&stop, claim).run(stream, place));
            continue;
        }
        if last_shed.is_none_or(|t| t.elapsed() >= SHED_INTERVAL) {
            shed.send_modify(|n| *n += 1);
            last_shed = Some(Instant::now());
        }
        if let Ok(place) = busy_places.clone().try_acquire_owned() {
            tokio::spawn(answer_busy(stream, place, busy_headers, over_cap.clone()));
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
            place = places.take() => place.map(Place::Served),
            place = busy_places.clone().acquire_owned() => place.map(Place::Busy),
        };
        match next {
            Ok(Place::Served(place)) => {
                tokio::spawn(served(&stop, claim).run(stream, place));
            }
            Ok(Place::Busy(place)) => {
                tokio::spawn(answer_busy(stream, place, busy_headers, over_cap.clone()));
            }
            // The semaphores are never closed; were one, the connection is closed unanswered.
            Err(_) => drop(stream),
        }
    }
    drop(listener);
    // Every connection holds a place until it ends: holding them all means all have ended.
    let all = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(DRAIN, async {
        let _ = places.served.acquire_many(all(most)).await;
        let _ = busy_places.acquire_many(all(busy)).await;
    })
    .await;
}

/// What a connection found once one was free: a place to be served, or a busy answer's.
enum Place {
    Served(HeldPlace),
    Busy(OwnedSemaphorePermit),
}

/// A listener's places: its own first, then the pool's it shares with the process's other
/// listeners ([`SharedPlaces`]).
struct Places {
    own: Arc<Semaphore>,
    shared: Option<SharedPlaces>,
    /// One permit for each connection this listener serves, `most` in all: a connection holds
    /// one of these as well as its place, so that the listener can wait for its own connections
    /// to end (holding them all) without holding the pool, which other listeners draw on.
    served: Arc<Semaphore>,
    /// Its own places and the whole pool: the most connections it serves at once.
    most: usize,
}

/// A served connection's place, given back (with its count among the served) when dropped.
struct HeldPlace {
    _place: OwnedSemaphorePermit,
    _served: OwnedSemaphorePermit,
}

impl Places {
    fn new(own: usize, shared: Option<SharedPlaces>) -> Self {
        let most = own + shared.as_ref().map_or(0, SharedPlaces::size);
        Self {
            own: Arc::new(Semaphore::new(own)),
            shared,
            served: Arc::new(Semaphore::new(most)),
            most,
        }
    }

    /// A place free now: one of its own, else one of the pool's.
    fn try_take(&self) -> Option<HeldPlace> {
        let served = self.served.clone().try_acquire_owned().ok()?;
        let place = self.own.clone().try_acquire_owned().ok().or_else(|| {
            let pool = self.shared.as_ref()?;
            pool.places.clone().try_acquire_owned().ok()
        })?;
        Some(HeldPlace {
            _place: place,
            _served: served,
        })
    }

    /// The first place to free: one of its own or one of the pool's.
    async fn take(&self) -> Result<HeldPlace, tokio::sync::AcquireError> {
        // Free whenever the listener serves fewer than `most`, so this waits only while it
        // holds its own places and the whole pool.
        let served = self.served.clone().acquire_owned().await?;
        let place = match &self.shared {
            None => self.own.clone().acquire_owned().await?,
            // Its own first when both are free, so the pool stays for the other listeners.
            Some(pool) => tokio::select! {
                biased;
                place = self.own.clone().acquire_owned() => place?,
                place = pool.places.clone().acquire_owned() => place?,
            },
        };
        Ok(HeldPlace {
            _place: place,
            _served: served,
        })
    }
}

/// One connection with a place.
struct Served {
    app: Router,
    header_read_timeout: Duration,
    request_timeout: Duration,
    client: std::net::SocketAddr,
    shed: watch::Receiver<u64>,
    stop: watch::Receiver<bool>,
    /// The place counted against the client's address, given back when the connection ends.
    _claim: AddressClaim,
}

impl Served {
    async fn run(mut self, stream: TcpStream, place: HeldPlace) {
        // Set once an answer has gone out: from then on the connection is a keep-alive one,
        // which gives its place back when others need it.
        let answered = Arc::new(AtomicBool::new(false));
        let (router, timeout, client) = (self.app.clone(), self.request_timeout, self.client);
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
            .header_read_timeout(self.header_read_timeout)
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
    header_read_timeout: Duration,
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
        .header_read_timeout(header_read_timeout)
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

    /// Hand-computed from [`place_split`]'s formula: a quarter of the even share kept, the rest
    /// of every listener's share pooled, a listener's own and the pool at most 16 384.
    #[test]
    fn each_listener_keeps_a_quarter_of_its_share_and_lends_the_rest_to_the_pool() {
        // `serve all` under a hard limit of 20 000: even shares of 4 424 (two listeners) keep
        // 1 106 and pool 2 · 3 318; of 1 956 (four) keep 489 and pool 4 · 1 467.
        let two = place_split(20_000, 2);
        assert_eq!((two.own, two.shared, two.most()), (1106, 6636, 7742));
        let four = place_split(20_000, 4);
        assert_eq!((four.own, four.shared, four.most()), (489, 5868, 6357));
        // Under Linux's 2²⁰ every share is the policy's 16 384: 4 096 kept, and the pool only
        // what brings one listener to 16 384.
        let five = place_split(1 << 20, 5);
        assert_eq!((five.own, five.shared, five.most()), (4096, 12_288, 16_384));
        // A listener alone has nothing to share.
        assert_eq!(
            place_split(1024, 1),
            PlaceSplit {
                own: 256,
                shared: 0
            }
        );
        // A share of one place is kept whole.
        assert_eq!(place_split(100, 3), PlaceSplit { own: 1, shared: 0 });
    }

    /// What the split promises: no more places in all than the even shares, whose descriptors
    /// fit in the limit; no more busy answers; no listener above the policy's maximum.
    #[test]
    fn the_split_takes_no_place_the_even_shares_do_not_have() {
        for descriptors in [100, 262, 1024, 3328, 4096, 20_000, 65_536, 200_000, 1 << 20] {
            for listeners in 1..=8 {
                let even = connection_cap(descriptors, listeners);
                let split = place_split(descriptors, listeners);
                let case = format!("{descriptors} descriptors, {listeners} listeners: {split:?}");
                assert!(
                    listeners * split.own + split.shared <= listeners * even,
                    "{case}"
                );
                assert!(busy_answers(split.own) <= busy_answers(even), "{case}");
                assert!((1..=MAX_CONNECTIONS).contains(&split.most()), "{case}");
                assert!(
                    split.most() >= even,
                    "{case}: a listener may serve less than before"
                );
            }
        }
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
