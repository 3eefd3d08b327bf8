//! A deployment whose services talk to each other, and are reached by participants, only
//! through recording proxies ("taps"): each tap keeps every request its service received —
//! exactly the messages that party sees — and may be told to answer some requests itself (a
//! dishonest party's one lie, or a peer that is down). The tests of the coalitions and of the
//! hand-over claims read the parties' views here, together with their key files and stores.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use orthomask_server::run::{AllRunning, bind, start_collector, start_msp, start_right};
use orthomask_server::{CollectorConfig, MspConfig, RightConfig};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One request a service received through its tap.
#[derive(Clone, Debug)]
pub struct Seen {
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The body.
    pub body: Vec<u8>,
}

impl Seen {
    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// What a tap does with a request instead of forwarding it: `Some((status, body))` answers
/// it directly (the request is still recorded).
pub type Rule = Arc<dyn Fn(&str, &str) -> Option<(u16, String)> + Send + Sync>;

#[derive(Default)]
struct TapState {
    target: Mutex<String>,
    seen: Mutex<Vec<Seen>>,
    rule: Mutex<Option<Rule>>,
    /// Requests whose path contains the fragment wait until the gate opens (`hold_until`).
    gate: Mutex<Option<(String, tokio::sync::watch::Receiver<bool>)>>,
}

/// A recording proxy in front of one service.
#[derive(Clone)]
pub struct Tap {
    /// The address the other parties and the participants use.
    pub url: String,
    state: Arc<TapState>,
}

impl Tap {
    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }

    /// The requests whose method is `method` and whose path contains `fragment`.
    pub fn seen_matching(&self, method: &str, fragment: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == method && s.path.contains(fragment))
            .collect()
    }

    /// The first request matching `method` and `fragment`, once it came (a hang guard, not a
    /// timing check: it waits at most [`super::HANG_GUARD`]).
    pub async fn wait_seen(&self, method: &str, fragment: &str) -> Seen {
        super::poll_until(
            &format!("a {method} {fragment} request"),
            super::HANG_GUARD,
            || async move {
                match self.seen_matching(method, fragment).into_iter().next() {
                    Some(seen) => Ok(seen),
                    None => Err(format!("{} other requests", self.seen().len())),
                }
            },
        )
        .await
    }

    /// From now on, requests whose path contains `fragment` are held (recorded, not yet
    /// forwarded) until the returned sender sends `true`: a test orders two parties' requests
    /// without timing them.
    pub fn hold_until(&self, fragment: &str) -> tokio::sync::watch::Sender<bool> {
        let (open, gate) = tokio::sync::watch::channel(false);
        *self.state.gate.lock().unwrap() = Some((fragment.to_owned(), gate));
        open
    }

    /// Answer requests by `rule` (method, path → maybe an answer) from now on; `None` forwards
    /// everything again.
    pub fn set_rule(&self, rule: Option<Rule>) {
        *self.state.rule.lock().unwrap() = rule;
    }

    async fn start() -> Self {
        let state = Arc::new(TapState::default());
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { url, state }
    }

    fn point_at(&self, target: &str) {
        *self.state.target.lock().unwrap() = target.to_owned();
    }
}

async fn forward(
    State(state): State<Arc<TapState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned());
    state.seen.lock().unwrap().push(Seen {
        method: method.to_string(),
        path: path.clone(),
        body: body.to_vec(),
    });
    let gate = state.gate.lock().unwrap().clone();
    if let Some((fragment, mut open)) = gate
        && path.contains(&fragment)
    {
        let _ = open.wait_for(|open| *open).await;
    }
    let rule = state.rule.lock().unwrap().clone();
    if let Some((status, answer)) = rule.and_then(|r| r(method.as_str(), &path)) {
        return (
            StatusCode::from_u16(status).unwrap(),
            [("content-type", "application/json")],
            answer,
        )
            .into_response();
    }
    let target = state.target.lock().unwrap().clone();
    let client = reqwest::Client::new();
    let mut request = client.request(method, format!("{target}{path}"));
    for (name, value) in &headers {
        if name != "host" && name != "content-length" {
            request = request.header(name, value);
        }
    }
    match request.body(body).send().await {
        Ok(r) => {
            let status = r.status();
            let content_type = r
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/json")
                .to_owned();
            let bytes = r.bytes().await.unwrap_or_default();
            (status, [("content-type", content_type)], bytes).into_response()
        }
        Err(e) => (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    }
}

/// A rule that holds back every `PUT` whose path contains one of `fragments` (503: the sender's
/// outbox keeps retrying until the rule is lifted).
pub fn hold(fragments: &'static [&'static str]) -> Rule {
    Arc::new(move |method: &str, path: &str| {
        (method == "PUT" && fragments.iter().any(|f| path.contains(f)))
            .then(|| (503, r#"{"error": "held back by the test"}"#.to_owned()))
    })
}

/// The administrator's token of a tapped deployment.
pub const TAPPED_ADMIN_TOKEN: &str = "tapped-admin-token-0123456789";

/// The services of a tapped deployment, and the taps in front of them.
pub struct Tapped {
    /// The services (their own addresses; `admin_token` is [`TAPPED_ADMIN_TOKEN`]).
    pub all: AllRunning,
    /// In front of the collector.
    pub collector: Tap,
    /// In front of the provider.
    pub msp: Tap,
    /// In front of each right-masking service.
    pub rights: Vec<Tap>,
    /// The parent directory: `collector/`, `msp/`, `right-<i>/`.
    pub dir: PathBuf,
}

impl Tapped {
    /// The data directory of a party.
    pub fn data_dir(&self, party: &str) -> PathBuf {
        self.dir.join(party)
    }
}

/// Start the collector, the provider and `rights` right-masking services in `dir`, each behind
/// a tap: every address a party is configured with, and every address in a definition, is a
/// tap's.
pub async fn start_tapped(dir: &Path, rights: usize) -> Tapped {
    let collector_tap = Tap::start().await;
    let msp_tap = Tap::start().await;
    let mut right_taps = Vec::new();
    for _ in 0..rights {
        right_taps.push(Tap::start().await);
    }
    start_behind(dir, collector_tap, msp_tap, right_taps).await
}

/// The taps of a stopped tapped deployment ([`Tapped::stop`]), kept so that its services start
/// again behind the same addresses — the ones the signed templates name.
pub struct Taps {
    collector: Tap,
    msp: Tap,
    rights: Vec<Tap>,
    dir: PathBuf,
}

impl Tapped {
    /// Stop every service; the taps stay.
    pub async fn stop(self) -> Taps {
        self.all.stop().await;
        Taps {
            collector: self.collector,
            msp: self.msp,
            rights: self.rights,
            dir: self.dir,
        }
    }
}

impl Taps {
    /// Start the services again on their data directories, behind the same taps.
    pub async fn start(self) -> Tapped {
        start_behind(&self.dir, self.collector, self.msp, self.rights).await
    }
}

/// Start the services in `dir` behind the given taps.
async fn start_behind(
    dir: &Path,
    collector_tap: Tap,
    msp_tap: Tap,
    right_taps: Vec<Tap>,
) -> Tapped {
    let right_urls: Vec<String> = right_taps.iter().map(|t| t.url.clone()).collect();
    let limits = super::loose_limits();
    let keys = orthomask_server::run::identities_in(dir, right_taps.len()).unwrap();
    let msp = start_msp(
        MspConfig {
            data_dir: dir.join("msp"),
            public_url: msp_tap.url.clone(),
            collector_url: collector_tap.url.clone(),
            right_urls: right_urls.clone(),
            peer_keys: keys.clone(),
            limits: limits.clone(),
            allowed_origins: vec![collector_tap.url.clone()],
        },
        bind("127.0.0.1:0").await.unwrap(),
    )
    .await
    .unwrap();
    msp_tap.point_at(msp.url());
    let mut running_rights = Vec::new();
    for (i, tap) in right_taps.iter().enumerate() {
        let right = start_right(
            RightConfig {
                index: i as u32,
                data_dir: dir.join(format!("right-{i}")),
                public_url: tap.url.clone(),
                msp_url: msp_tap.url.clone(),
                collector_url: collector_tap.url.clone(),
                right_urls: right_urls.clone(),
                peer_keys: keys.clone(),
                limits: limits.clone(),
                allowed_origins: vec![collector_tap.url.clone()],
            },
            bind("127.0.0.1:0").await.unwrap(),
        )
        .await
        .unwrap();
        tap.point_at(right.url());
        running_rights.push(right);
    }
    let collector = start_collector(
        CollectorConfig {
            data_dir: dir.join("collector"),
            public_url: collector_tap.url.clone(),
            msp_url: msp_tap.url.clone(),
            right_urls,
            admin_token: TAPPED_ADMIN_TOKEN.into(),
            peer_keys: keys,
            web_dir: None,
            limits,
            allowed_origins: Vec::new(),
            accepted_builds: Vec::new(),
        },
        bind("127.0.0.1:0").await.unwrap(),
    )
    .await
    .unwrap();
    collector_tap.point_at(collector.url());
    Tapped {
        all: AllRunning {
            collector,
            msp,
            rights: running_rights,
            admin_token: TAPPED_ADMIN_TOKEN.into(),
            demonstrations: Vec::new(),
        },
        collector: collector_tap,
        msp: msp_tap,
        rights: right_taps,
        dir: dir.to_owned(),
    }
}
