//! Starting and stopping the services: each binds its own listener, opens its own store and key
//! file in its own data directory, and stops gracefully (in-flight requests finish, background
//! tasks end). `start_all` runs the collector, the provider and `K₁` right-masking services in
//! one process on loopback — still with separate directories, stores, key files and HTTP
//! listeners, talking to each other over HTTP exactly as separate machines would.

use crate::collector::{Collector, CollectorConfig, Demonstration};
use crate::error::ServerError;
use crate::http::{self, Bearer, Limits, RateLimit};
use crate::intake_http::IntakeService;
use crate::keys::{SecretSource, load_secret};
use crate::msp::{Msp, MspConfig};
use crate::peer_auth::PeerAuth;
use crate::peers::{IDENTITY_KEY_FILE, Identity, Party, PeerKeys, Peers};
use crate::ratelimit::RateLimiter;
use crate::right::{Right, RightConfig};
use crate::store::ClosedSignal;
use crate::web::{WebApp, origin};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Bind a TCP listener on the first of `address`'s resolutions that can be bound, with a queue
/// of [`LISTEN_BACKLOG`](crate::listener::LISTEN_BACKLOG) connections not yet accepted.
///
/// # Errors
/// [`ServerError::Io`] naming the address.
pub async fn bind(address: &str) -> Result<TcpListener, ServerError> {
    let failed = |e| ServerError::io(format!("listening on {address}"), e);
    let mut last = None;
    for addr in tokio::net::lookup_host(address).await.map_err(failed)? {
        match listen_on(addr) {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(failed(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::AddrNotAvailable,
            "the address resolves to nothing",
        )
    })))
}

fn listen_on(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As `TcpListener::bind` does: a restarted service binds its port again at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(crate::listener::LISTEN_BACKLOG)
}

/// The `http://` URL of a bound listener.
///
/// # Errors
/// [`ServerError::Io`] when the socket has no address.
pub fn url_of(listener: &TcpListener) -> Result<String, ServerError> {
    let addr = listener
        .local_addr()
        .map_err(|e| ServerError::io("reading the listening address", e))?;
    Ok(format!("http://{addr}"))
}

/// A running service.
pub struct Running {
    name: String,
    url: String,
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    closed: ClosedSignal,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("name", &self.name)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Running {
    /// What it is, e.g. `masking service provider`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its base URL (`http://addr`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop: refuse new connections, finish in-flight requests, end background tasks, close the
    /// store (its write-ahead log checkpointed).
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
        let closed = self.closed;
        let done =
            tokio::task::spawn_blocking(move || closed.wait(std::time::Duration::from_secs(30)))
                .await
                .unwrap_or(false);
        if !done {
            tracing::warn!("{}: the store did not close in time", self.name);
        }
    }
}

struct Parts {
    public: Router,
    /// Admin routes and the admin token.
    admin: Option<(Router, String)>,
    peer: Router,
    web: Option<WebApp>,
}

/// Who a service is and whom it pins, for its peer routes.
struct PeerSide {
    own: Party,
    peers: Arc<Peers>,
}

fn assemble(
    parts: Parts,
    limits: &Limits,
    peer_side: PeerSide,
    origins: &[String],
) -> Result<Router, ServerError> {
    let limiter = RateLimit {
        limiter: Arc::new(RateLimiter::new(limits.rate_per_second, limits.rate_burst)),
        trust_forwarded: limits.trust_forwarded,
    };
    // The 405 answer must be set before the layers: set afterwards it would replace the
    // layered fallback and bypass CORS preflight handling.
    let mut public = parts
        .public
        .method_not_allowed_fallback(http::method_not_allowed)
        .layer(DefaultBodyLimit::max(limits.max_body_bytes));
    if !origins.is_empty() {
        public = public.layer(http::cors(origins).map_err(ServerError::Config)?);
    }
    let mut open = Router::new().merge(public);
    if let Some((admin, token)) = parts.admin {
        open = open.merge(
            admin
                .method_not_allowed_fallback(http::method_not_allowed)
                .route_layer(axum::middleware::from_fn_with_state(
                    Bearer {
                        secret: token,
                        which: "admin token",
                    },
                    http::bearer_auth,
                ))
                .layer(DefaultBodyLimit::max(limits.max_body_bytes)),
        );
    }
    open = match parts.web {
        Some(web) => open.fallback(move |request: axum::extract::Request| {
            let web = web.clone();
            async move { web.serve(request).await }
        }),
        None => open.fallback(http::not_found),
    };
    // Everything a client may call is rate-limited per address; the peer routes are not — a
    // peer's hand-overs come in bursts from one address — but every request there is checked
    // for a pinned peer's signature before its body is read, and one that fails costs its
    // address a request of the same limit (`peer_auth::authenticate`).
    let open = open.layer(axum::middleware::from_fn_with_state(
        limiter.clone(),
        http::rate_limit,
    ));
    let auth = PeerAuth::new(peer_side.own, peer_side.peers, limiter);
    let peer = parts
        .peer
        .method_not_allowed_fallback(http::method_not_allowed)
        .route_layer(axum::middleware::from_fn_with_state(
            auth,
            crate::peer_auth::authenticate,
        ));
    Ok(open
        .merge(peer)
        .layer(axum::middleware::from_fn(http::security_headers)))
}

fn launch(
    name: &str,
    listener: TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: watch::Sender<bool>,
    mut tasks: Vec<JoinHandle<()>>,
    closed: ClosedSignal,
) -> Result<Running, ServerError> {
    let addr = listener
        .local_addr()
        .map_err(|e| ServerError::io("reading the listening address", e))?;
    let stop = shutdown.subscribe();
    let connections = limits.connections.clone();
    tasks.push(tokio::spawn(crate::listener::serve(
        listener,
        app,
        connections,
        stop,
    )));
    Ok(Running {
        name: name.to_owned(),
        url: format!("http://{addr}"),
        addr,
        shutdown,
        tasks,
        closed,
    })
}

/// The app of an accepting service: public and peer routes, no administrator, no web app.
fn intake_app<S: IntakeService>(
    service: &S,
    (public, peer): (Router, Router),
    own: Party,
    limits: &Limits,
    allowed_origins: &[String],
) -> Result<Router, ServerError> {
    assemble(
        Parts {
            public,
            admin: None,
            peer,
            web: None,
        },
        limits,
        PeerSide {
            own,
            peers: service.core().peers.clone(),
        },
        allowed_origins,
    )
}

/// Start a masking service provider on `listener`.
///
/// # Errors
/// [`ServerError`] when its directory, store, key file or configuration is unusable.
pub async fn start_msp(cfg: MspConfig, listener: TcpListener) -> Result<Running, ServerError> {
    let (tx, rx) = watch::channel(false);
    let (msp, tasks, closed) = Msp::start(cfg.clone(), rx).await?;
    let app = intake_app(
        &msp,
        msp.router(),
        Party::Provider,
        &cfg.limits,
        &cfg.allowed_origins,
    )?;
    launch(
        "masking service provider",
        listener,
        app,
        &cfg.limits,
        tx,
        tasks,
        closed,
    )
}

/// Start right-masking service `cfg.index` on `listener`.
///
/// # Errors
/// [`ServerError`] when its directory, store, key file or configuration is unusable.
pub async fn start_right(cfg: RightConfig, listener: TcpListener) -> Result<Running, ServerError> {
    let (tx, rx) = watch::channel(false);
    let (right, tasks, closed) = Right::start(cfg.clone(), rx).await?;
    let app = intake_app(
        &right,
        right.router(),
        Party::Right(cfg.index),
        &cfg.limits,
        &cfg.allowed_origins,
    )?;
    launch(
        &format!("right-masking service {}", cfg.index),
        listener,
        app,
        &cfg.limits,
        tx,
        tasks,
        closed,
    )
}

/// Start a data collector on `listener`.
///
/// # Errors
/// [`ServerError`] when its directory, store, key file or configuration is unusable.
pub async fn start_collector(
    cfg: CollectorConfig,
    listener: TcpListener,
) -> Result<Running, ServerError> {
    Ok(launch_collector(cfg, listener).await?.0)
}

/// [`start_collector`], keeping a handle on the collector (`start_all` creates the
/// demonstrations through it).
async fn launch_collector(
    cfg: CollectorConfig,
    listener: TcpListener,
) -> Result<(Running, Collector), ServerError> {
    let (tx, rx) = watch::channel(false);
    let (collector, tasks, closed) = Collector::start(cfg.clone(), rx).await?;
    let (public, admin, peer) = collector.router();
    let mut connect: Vec<String> = std::iter::once(&cfg.msp_url)
        .chain(&cfg.right_urls)
        .map(|u| origin(u))
        .collect();
    connect.dedup();
    let web = cfg.web_dir.clone().map(|dir| WebApp::new(dir, connect));
    let app = assemble(
        Parts {
            public,
            admin: Some((admin, cfg.admin_token.clone())),
            peer,
            web,
        },
        &cfg.limits,
        PeerSide {
            own: Party::Collector,
            peers: collector.peers(),
        },
        &cfg.allowed_origins,
    )?;
    let running = launch(
        "data collector",
        listener,
        app,
        &cfg.limits,
        tx,
        tasks,
        closed,
    )?;
    Ok((running, collector))
}

/// Everything in one process (`orthomask serve all`).
#[derive(Clone, Debug)]
pub struct AllConfig {
    /// Parent directory: `collector/`, `msp/`, `right-<i>/` below it (each with its own identity
    /// key), plus `admin-token` and `services.json`.
    pub data_dir: PathBuf,
    /// Address to listen on (loopback by default).
    pub host: String,
    /// The collector's port; the provider takes the next, right-masking service `i` the one
    /// after that plus `i`. 0: any free ports.
    pub port: u16,
    /// Right-masking services to run (0, or at least
    /// `orthomask_survey::policy::MIN_SHARE_SERVICES` for share mode).
    pub right_services: usize,
    /// The built web app.
    pub web_dir: Option<PathBuf>,
    /// Public limits.
    pub limits: Limits,
    /// The administrator's token (default: read or create `<data_dir>/admin-token`).
    pub admin_token: Option<SecretSource>,
    /// Create the live demonstration surveys once the services run (issue 12 §1; see
    /// `collector::demonstrations`): each one still taking participants is kept, otherwise the
    /// next of its family is created.
    pub demonstrations: bool,
    /// Earlier app builds the collector still accepts uploads from
    /// (`CollectorConfig::accepted_builds`).
    pub accepted_builds: Vec<String>,
}

/// The services of `start_all`.
#[derive(Debug)]
pub struct AllRunning {
    /// The collector.
    pub collector: Running,
    /// The provider.
    pub msp: Running,
    /// The right-masking services.
    pub rights: Vec<Running>,
    /// The administrator's token.
    pub admin_token: String,
    /// The demonstrations created or kept (empty unless [`AllConfig::demonstrations`]).
    pub demonstrations: Vec<Demonstration>,
}

impl AllRunning {
    /// Stop every service.
    pub async fn stop(self) {
        self.collector.stop().await;
        for r in self.rights {
            r.stop().await;
        }
        self.msp.stop().await;
    }
}

fn port_after(port: u16, offset: usize) -> Result<u16, ServerError> {
    if port == 0 {
        return Ok(0);
    }
    u16::try_from(usize::from(port) + offset)
        .map_err(|_| ServerError::Config(format!("port {port} + {offset} is out of range")))
}

/// The data directories of `serve all`'s services.
struct AllDirs {
    collector: PathBuf,
    msp: PathBuf,
    rights: Vec<PathBuf>,
}

impl AllDirs {
    fn of(data_dir: &std::path::Path, right_services: usize) -> Self {
        Self {
            collector: data_dir.join("collector"),
            msp: data_dir.join("msp"),
            rights: (0..right_services)
                .map(|i| data_dir.join(format!("right-{i}")))
                .collect(),
        }
    }

    /// Every service's identity key, made in its directory when absent; the public halves,
    /// which every service pins.
    fn identities(&self) -> Result<PeerKeys, ServerError> {
        let identity = |dir: &PathBuf, file: &str, party: Party| {
            crate::keys::create_private_dir(dir)?;
            Identity::load_or_create(&dir.join(file), party).map(|i| i.public_key())
        };
        Ok(PeerKeys {
            collector: Some(identity(
                &self.collector,
                crate::collector::SIGNING_KEY_FILE,
                Party::Collector,
            )?),
            provider: Some(identity(&self.msp, IDENTITY_KEY_FILE, Party::Provider)?),
            rights: (0u32..)
                .zip(&self.rights)
                .map(|(i, dir)| identity(dir, IDENTITY_KEY_FILE, Party::Right(i)))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// The identity keys of a deployment laid out as `serve all` lays it out under `data_dir`
/// (`collector/`, `msp/`, `right-<i>/`), each made when absent: the public halves, which every
/// service of the deployment pins. For deployments started service by service on that layout
/// (the tests that put recording proxies between the parties).
///
/// # Errors
/// [`ServerError`] for a directory or key file that cannot be made or read.
pub fn identities_in(
    data_dir: &std::path::Path,
    right_services: usize,
) -> Result<PeerKeys, ServerError> {
    AllDirs::of(data_dir, right_services).identities()
}

/// Start the collector, the provider and the right-masking services on one host.
///
/// # Errors
/// [`ServerError`] for unusable directories, ports or secrets.
pub async fn start_all(cfg: AllConfig) -> Result<AllRunning, ServerError> {
    let fewest = orthomask_survey::policy::MIN_SHARE_SERVICES;
    if cfg.right_services > 0 && cfg.right_services < fewest {
        return Err(ServerError::Config(format!(
            "share mode needs at least {fewest} right-masking services (or none): with fewer, the \
             collector and one service together read yes/no answers (docs/threat-model.md)"
        )));
    }
    crate::keys::create_private_dir(&cfg.data_dir)?;
    // Each service's identity, made in its own directory before any service starts, so that
    // each can be started pinning the others' public keys: one command still sets up a
    // deployment whose parties authenticate one another (issue 43).
    let dirs = AllDirs::of(&cfg.data_dir, cfg.right_services);
    let keys = dirs.identities()?;
    let admin_source = cfg
        .admin_token
        .clone()
        .unwrap_or_else(|| SecretSource::GenerateInto(cfg.data_dir.join("admin-token")));
    let admin_token = load_secret(&admin_source, "admin token")?;
    let host = &cfg.host;
    let address = |port: u16| {
        if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        }
    };
    let collector_listener = bind(&address(cfg.port)).await?;
    let msp_listener = bind(&address(port_after(cfg.port, 1)?)).await?;
    let mut right_listeners = Vec::new();
    for i in 0..cfg.right_services {
        right_listeners.push(bind(&address(port_after(cfg.port, 2 + i)?)).await?);
    }
    let collector_url = url_of(&collector_listener)?;
    let msp_url = url_of(&msp_listener)?;
    let right_urls = right_listeners
        .iter()
        .map(url_of)
        .collect::<Result<Vec<_>, _>>()?;
    let msp = start_msp(
        MspConfig {
            data_dir: dirs.msp.clone(),
            public_url: msp_url.clone(),
            collector_url: collector_url.clone(),
            right_urls: right_urls.clone(),
            peer_keys: keys.clone(),
            limits: cfg.limits.clone(),
            allowed_origins: vec![collector_url.clone()],
        },
        msp_listener,
    )
    .await?;
    let mut rights = Vec::new();
    for (i, listener) in right_listeners.into_iter().enumerate() {
        rights.push(
            start_right(
                RightConfig {
                    index: u32::try_from(i).unwrap_or(u32::MAX),
                    data_dir: dirs.rights[i].clone(),
                    public_url: right_urls[i].clone(),
                    msp_url: msp_url.clone(),
                    collector_url: collector_url.clone(),
                    right_urls: right_urls.clone(),
                    peer_keys: keys.clone(),
                    limits: cfg.limits.clone(),
                    allowed_origins: vec![collector_url.clone()],
                },
                listener,
            )
            .await?,
        );
    }
    let (collector, handle) = launch_collector(
        CollectorConfig {
            data_dir: dirs.collector.clone(),
            public_url: collector_url.clone(),
            msp_url: msp_url.clone(),
            right_urls: right_urls.clone(),
            admin_token: admin_token.clone(),
            peer_keys: keys.clone(),
            web_dir: cfg.web_dir.clone(),
            limits: cfg.limits.clone(),
            allowed_origins: Vec::new(),
            accepted_builds: cfg.accepted_builds.clone(),
        },
        collector_listener,
    )
    .await?;
    // Every service listens by now, so registering a survey at them cannot wait on itself.
    // Done before `services.json` is written: scripts wait for that file, so once it exists the
    // demonstrations are listed.
    let demonstrations = if cfg.demonstrations {
        match handle.ensure_demonstrations().await {
            Ok(d) => d,
            Err(e) => {
                let all = AllRunning {
                    collector,
                    msp,
                    rights,
                    admin_token,
                    demonstrations: Vec::new(),
                };
                all.stop().await;
                return Err(ServerError::Demonstration(e.message().to_owned()));
            }
        }
    } else {
        Vec::new()
    };
    let identities = serde_json::json!({
        "collector": keys.collector.map(|k| k.to_hex()),
        "msp": keys.provider.map(|k| k.to_hex()),
        "rights": keys.rights.iter().map(|k| k.to_hex()).collect::<Vec<_>>(),
    });
    let services = serde_json::json!({
        "collector": collector_url,
        "msp": msp_url,
        "rights": right_urls,
        "identities": identities,
        "admin_token_file": match &admin_source {
            SecretSource::File(p) | SecretSource::GenerateInto(p) => Some(p.display().to_string()),
            SecretSource::Value(_) => None,
        },
    });
    crate::keys::write_private_atomically(
        &cfg.data_dir.join("services.json"),
        format!("{services:#}\n").as_bytes(),
    )?;
    Ok(AllRunning {
        collector,
        msp,
        rights,
        admin_token,
        demonstrations,
    })
}

/// Ctrl-C or SIGTERM, listened for from the moment it is made.
///
/// Why a value and not just a future: a supervisor (a test, systemd, a shell script) may send
/// SIGTERM as soon as it reads "listening on". If the handler were registered only when the wait
/// starts, a signal arriving in between would take the default action and kill the process
/// without the clean stop. So [`serve_blocking`] makes this before it announces anything.
pub struct ShutdownSignal {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl ShutdownSignal {
    /// Start listening for SIGTERM now (Ctrl-C is registered by tokio on first use, which
    /// [`ShutdownSignal::wait`] does at once). Must be called inside a tokio runtime.
    #[must_use]
    pub fn listen() -> Self {
        Self {
            #[cfg(unix)]
            term: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok(),
        }
    }

    /// Wait until Ctrl-C or SIGTERM arrives (or has arrived since [`ShutdownSignal::listen`]).
    pub async fn wait(self) {
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        #[cfg(unix)]
        let term = async move {
            match self.term {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let term = std::future::pending::<()>();
        tokio::select! {
            () = ctrl_c => {}
            () = term => {}
        }
    }
}

/// What `orthomask serve` runs.
#[derive(Clone, Debug)]
pub enum ServePlan {
    /// A masking service provider on an address.
    Msp(MspConfig, String),
    /// A data collector on an address.
    Collector(CollectorConfig, String),
    /// A right-masking service on an address.
    Right(RightConfig, String),
    /// Everything on one host.
    All(AllConfig),
}

impl ServePlan {
    /// The listeners the plan opens: one per service.
    fn listeners(&self) -> usize {
        match self {
            Self::Msp(..) | Self::Collector(..) | Self::Right(..) => 1,
            Self::All(cfg) => 2 + cfg.right_services,
        }
    }

    /// The limits every listener of the plan serves under.
    fn limits_mut(&mut self) -> &mut Limits {
        match self {
            Self::Msp(cfg, _) => &mut cfg.limits,
            Self::Collector(cfg, _) => &mut cfg.limits,
            Self::Right(cfg, _) => &mut cfg.limits,
            Self::All(cfg) => &mut cfg.limits,
        }
    }
}

/// A descriptor count for the operator (`RLIM_INFINITY` read as `u64::MAX`).
fn count(descriptors: u64) -> String {
    if descriptors == u64::MAX {
        "unlimited".to_owned()
    } else {
        descriptors.to_string()
    }
}

/// Raise the process's open-file limit to its hard limit
/// ([`listener::raise_descriptor_limit`](crate::listener::raise_descriptor_limit)) and give
/// `plan`'s listeners the places that limit allows
/// ([`listener::place_split`](crate::listener::place_split)): each its own, and a pool they
/// share; with it, the line that tells the operator both. Where the limit cannot be read the
/// plan's own cap is kept.
fn fit_to_descriptor_limit(mut plan: ServePlan) -> (ServePlan, String) {
    use crate::listener::{
        RESERVED_DESCRIPTORS, SharedPlaces, descriptor_limit, place_split, raise_descriptor_limit,
    };
    let listeners = plan.listeners();
    let (soft, how) = match raise_descriptor_limit() {
        Ok(limit) if limit.soft > limit.before => (
            limit.soft,
            format!("raised from {} to the hard limit", count(limit.before)),
        ),
        Ok(limit) if limit.soft == limit.hard => (limit.soft, "the hard limit".to_owned()),
        Ok(limit) => (
            limit.soft,
            format!(
                "the system keeps it below the hard limit of {}",
                count(limit.hard)
            ),
        ),
        Err(e) => match descriptor_limit() {
            Ok((soft, hard)) => (
                soft,
                format!("not raised to the hard limit of {}: {e}", count(hard)),
            ),
            Err(e) => {
                let cap = plan.limits_mut().connections.max_connections;
                return (
                    plan,
                    format!(
                        "open files: the limit could not be read ({e}); up to {cap} connections \
                         at once per service"
                    ),
                );
            }
        },
    };
    let split = place_split(soft, listeners);
    let connections = &mut plan.limits_mut().connections;
    connections.max_connections = split.own;
    // One pool, cloned into every service of the plan: they all draw on it.
    connections.shared = (split.shared > 0).then(|| SharedPlaces::new(split.shared));
    let places = if split.shared > 0 {
        format!(
            "up to {} connections at once per service: {} of its own and {} shared",
            split.most(),
            split.own,
            split.shared
        )
    } else {
        format!("up to {} connections at once per service", split.own)
    };
    let line = format!(
        "open files: {} ({how}); {places} ({listeners} listening, {RESERVED_DESCRIPTORS} \
         descriptors kept for the stores, logs and outgoing connections)",
        count(soft)
    );
    (plan, line)
}

/// Say which identity key a started service signs with: what its peers' operators pin.
fn announce_identity(file: &std::path::Path, party: Party) -> Result<(), ServerError> {
    let key = Identity::load_or_create(file, party)?.public_key();
    crate::log::announce(format_args!(
        "{party} identity key {key} (its peers pin it; kept in {})",
        file.display()
    ));
    Ok(())
}

/// Run a plan until Ctrl-C or SIGTERM, printing where each service listens. First the process's
/// open-file limit is raised to its hard limit and every listener's connection cap set from it
/// (whatever cap the plan carried), and a line after the addresses says both.
///
/// # Errors
/// [`ServerError`] when a service cannot start.
pub fn serve_blocking(plan: ServePlan) -> Result<(), ServerError> {
    let (plan, descriptors) = fit_to_descriptor_limit(plan);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| ServerError::io("starting the async runtime", e))?;
    runtime.block_on(async move {
        // Listen before announcing: see `ShutdownSignal`.
        let shutdown = ShutdownSignal::listen();
        let announce = |r: &Running| {
            crate::log::announce(format_args!("{} listening on {}", r.name(), r.url()))
        };
        match plan {
            ServePlan::Msp(cfg, address) => {
                let dir = cfg.data_dir.clone();
                let running = start_msp(cfg, bind(&address).await?).await?;
                announce(&running);
                announce_identity(&dir.join(IDENTITY_KEY_FILE), Party::Provider)?;
                crate::log::announce(format_args!("{descriptors}"));
                shutdown.wait().await;
                running.stop().await;
            }
            ServePlan::Right(cfg, address) => {
                let (dir, party) = (cfg.data_dir.clone(), Party::Right(cfg.index));
                let running = start_right(cfg, bind(&address).await?).await?;
                announce(&running);
                announce_identity(&dir.join(IDENTITY_KEY_FILE), party)?;
                crate::log::announce(format_args!("{descriptors}"));
                shutdown.wait().await;
                running.stop().await;
            }
            ServePlan::Collector(cfg, address) => {
                let web = cfg.web_dir.clone();
                let dir = cfg.data_dir.clone();
                let running = start_collector(cfg, bind(&address).await?).await?;
                announce(&running);
                announce_identity(
                    &dir.join(crate::collector::SIGNING_KEY_FILE),
                    Party::Collector,
                )?;
                crate::log::announce(format_args!("{descriptors}"));
                if let Some(dir) = web {
                    crate::log::announce(format_args!(
                        "web app from {} at {}/",
                        dir.display(),
                        running.url()
                    ));
                }
                shutdown.wait().await;
                running.stop().await;
            }
            ServePlan::All(cfg) => {
                let dir = cfg.data_dir.clone();
                let all = start_all(cfg).await?;
                announce(&all.collector);
                announce(&all.msp);
                for r in &all.rights {
                    announce(r);
                }
                crate::log::announce(format_args!("{descriptors}"));
                for d in &all.demonstrations {
                    crate::log::announce(format_args!("{d}"));
                }
                crate::log::announce(format_args!(
                    "admin token in {}; service URLs in {}",
                    dir.join("admin-token").display(),
                    dir.join("services.json").display()
                ));
                shutdown.wait().await;
                all.stop().await;
            }
        }
        crate::log::announce(format_args!("stopped"));
        Ok(())
    })
}
