//! Load benchmark (not a test): N participants reach running services at once.
//!
//! `scripts/load.sh` starts `orthomask serve all` and runs this against it:
//!
//! ```text
//! cargo bench -p orthomask-server --bench load -- --services DIR \
//!     [--endpoint provider|definition|right|health] [--participants 200] [--p 1000] \
//!     [--services-pid PID]
//! ```
//!
//! It creates a survey whose records have exactly `p` values (answer columns and cohort size
//! chosen so that the collector's own plan makes `p₁ + p₂ = p`) with one invitation per
//! participant, then sends one burst — every participant at once — to one endpoint:
//!
//! * `definition`: the collector's definition endpoint (`POST /api/surveys/{id}/definition` with
//!   the participant's invitation), the request with which a participant's page takes its place
//!   and gets the signed definition. Every answer must be an offer the participant's device
//!   accepts (`Deployment::accept`: signature, floors, destinations, credential), every
//!   credential different, and the collector must count each invitation opened and each place
//!   taken exactly once.
//! * `provider`: masked uploads to the masking service provider (the basic protocol).
//! * `right`: a share-mode survey's uploads to the right-masking services: each participant
//!   sends one share to every service, in turn, as the participant's page does.
//! * `health`: the provider's `GET /api/health`, which does no work — the listener, this client
//!   and the machine alone: the floor against which the others are read (no survey is made).
//!
//! For the two upload endpoints every participant first loads a definition and masks a record
//! with the participant client the web app runs (`orthomask_survey::client`, one set-up device
//! per cohort: deriving `B_k` is the costly part); after the burst every receipt must acknowledge
//! its upload, and the survey is closed and released: the release must hold every participant's
//! record exactly once (`n` = participants) and pass QA. The release is timed too (the
//! provider's `A₂`, the hand-over, the collector's unmasking, QA and `A₁`).
//!
//! In every burst a busy answer (503 over a connection cap or 429, with `Retry-After`) or a
//! refused connection is sent again after the service's `Retry-After` (at least the back-off),
//! with jitter, as every client of the services does, and counted by reason (the service's
//! message, or the connection's fate); any other answer than the endpoint's success fails the
//! run. A participant's latency runs from its first attempt to the
//! answer of its last request.
//!
//! With `--services-pid` (the process serving the services, which `scripts/load.sh` passes) the
//! report also gives the CPU time the services and this client used during the burst
//! (`orthomask_server::process_cpu`): the client shares the machine's cores with the services,
//! and the services' CPU time is the part of the wall time no client can be blamed for.

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use orthomask_core::key::Key;
use orthomask_server::listener::raise_descriptor_limit;
use orthomask_server::process_cpu::cpu_time;
use orthomask_survey::client::{Client, verify_receipt};
use orthomask_survey::coding::Answer;
use orthomask_survey::draft::{Endpoints, SurveyDraft, plan_survey};
use orthomask_survey::policy::retry_wait;
use orthomask_survey::trust::{DefinitionOffer, Deployment};
use orthomask_survey::upload::{Receipt, Upload};
use std::time::{Duration, Instant};

fn argument(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// Where a burst goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    /// The collector's definition endpoint.
    Definition,
    /// The masking service provider's uploads.
    Provider,
    /// The right-masking services' uploads of a share-mode survey.
    Right,
    /// The provider's health check: the listener and the client with no work to do, the floor
    /// the other bursts are measured against.
    Health,
}

impl Endpoint {
    fn parse(name: &str) -> Option<Self> {
        match name {
            "definition" => Some(Self::Definition),
            "provider" => Some(Self::Provider),
            "right" => Some(Self::Right),
            "health" => Some(Self::Health),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Definition => "definition",
            Self::Provider => "provider",
            Self::Right => "right",
            Self::Health => "health",
        }
    }

    /// The status every request of the burst must end with.
    fn success(self) -> u16 {
        match self {
            Self::Definition | Self::Health => 200,
            Self::Provider | Self::Right => 201,
        }
    }
}

/// The draft the benchmark creates: `answers` number questions in 0–100, cohorts of `m`, one
/// invitation per participant; share mode for the right-masking services.
fn load_draft(answers: usize, m: usize, share_mode: bool) -> serde_json::Value {
    let questions: Vec<serde_json::Value> = (0..answers)
        .map(|j| serde_json::json!({"id": format!("x{j}"), "label": format!("Value {j}"), "kind": "number", "min": 0, "max": 100}))
        .collect();
    serde_json::json!({
        "id": "load", "title": "Load test", "consent": "Load test.", "questions": questions,
        "cohort_size": m, "invitations": true, "share_mode": share_mode,
    })
}

/// The record length `p₁ + p₂` the collector plans for [`load_draft`] — by the collector's own
/// planner (`orthomask_survey::draft::plan_survey`), so the benchmark's records are the ones a
/// real survey of that shape gets (noise columns for the accuracy target included). `rights`:
/// the right-masking services' URLs (share mode when there are any).
fn planned_p(answers: usize, m: usize, rights: &[String]) -> Option<usize> {
    let draft: SurveyDraft =
        serde_json::from_value(load_draft(answers, m, !rights.is_empty())).ok()?;
    let endpoints = Endpoints {
        provider: "http://127.0.0.1:9",
        right_services: rights,
    };
    let planned = plan_survey(&draft, endpoints).ok()?;
    Some(planned.plan.masking.p1 + planned.plan.masking.p2)
}

/// Answer columns `a` (5–39) and cohort size `m` (20–2000) whose planned records have exactly
/// `p` values, the largest `m` first. `p` grows with `m` for a fixed `a`, so each `a` is a
/// binary search.
fn design_for(p: usize, rights: &[String]) -> Option<(usize, usize)> {
    (5..=39).find_map(|answers| {
        let (mut lo, mut hi) = (20_usize, 2000_usize);
        while lo <= hi {
            let m = lo + (hi - lo) / 2;
            match planned_p(answers, m, rights) {
                Some(q) if q == p => return Some((answers, m)),
                Some(q) if q < p => lo = m + 1,
                _ => hi = m.checked_sub(1)?,
            }
        }
        None
    })
}

/// The first `p` of `candidates` some design gives, as text ("none" if there is none).
fn first_possible(mut candidates: impl Iterator<Item = usize>, rights: &[String]) -> String {
    candidates
        .find(|&q| design_for(q, rights).is_some())
        .map_or_else(|| "none".to_owned(), |q| q.to_string())
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    let k = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[k.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// One request of a participant: where it goes, and the body it posts (none: a `GET`).
struct Request {
    url: String,
    body: Option<Bytes>,
}

/// How one exchange failed before an answer came.
enum Failure {
    /// No connection: refused, or the system's limit.
    Connect(std::io::Error),
    /// The connection was closed or reset before the answer was read.
    Exchange(hyper::Error),
    /// No answer within [`EXCHANGE_TIMEOUT`].
    TimedOut,
}

/// Longest one exchange may take: far above any burst's, so that only a service that stopped
/// answering ends one.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(300);

/// `http://host:port/path` as the address to connect to (also the `Host` header) and the path.
fn split_url(url: &str) -> (&str, &str) {
    let rest = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("the services are reached over plain HTTP on loopback: {url}"));
    rest.find('/').map_or((rest, "/"), |i| rest.split_at(i))
}

/// One request on a connection of its own, as a participant's device opens one (no connection
/// carries another participant's request): its status, `Retry-After` and text. It drives
/// hyper's HTTP/1 client connection itself, without a client's pool, resolver and connection
/// task: the load client runs on the services' cores, and every microsecond it spends a
/// request is taken from them.
async fn exchange(request: &Request) -> Result<(u16, Option<u64>, String), Failure> {
    let (authority, path) = split_url(&request.url);
    let stream = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(Failure::Connect)?;
    stream.set_nodelay(true).map_err(Failure::Connect)?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(Failure::Exchange)?;
    let built = hyper::Request::builder()
        .uri(path)
        .header(hyper::header::HOST, authority);
    let built = match &request.body {
        Some(body) => built
            .method(hyper::Method::POST)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(body.clone())),
        None => built
            .method(hyper::Method::GET)
            .body(Full::new(Bytes::new())),
    }
    .expect("a request of a known method, path and headers");
    // The answer is read while the connection is driven; the sender is dropped with the
    // answer, which lets the connection end.
    let answer = async move {
        let response = sender.send_request(built).await?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(hyper::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        let body = response.into_body().collect().await?.to_bytes();
        Ok((
            status,
            retry_after,
            String::from_utf8_lossy(&body).into_owned(),
        ))
    };
    let both = async {
        match tokio::join!(answer, connection) {
            // The connection's own error names the system's word (reset, broken pipe); the
            // answer's only says that the connection ended.
            (Err(_), Err(cause)) => Err(cause),
            (answered, _) => answered,
        }
    };
    match tokio::time::timeout(EXCHANGE_TIMEOUT, both).await {
        Ok(answered) => answered.map_err(Failure::Exchange),
        Err(_) => Err(Failure::TimedOut),
    }
}

/// What a burst gave: each participant's answers (in its requests' order), its latency and
/// whether any of its requests was answered busy first; why requests were turned away (the
/// service's message, or the connection's fate) and how often; the burst's wall time.
struct Burst {
    answers: Vec<Vec<String>>,
    latencies: Vec<Duration>,
    retried: usize,
    turned_away: std::collections::BTreeMap<String, usize>,
    requests: usize,
    wall: Duration,
    cpu: CpuUse,
}

/// The CPU time the services (when their process is known, `--services-pid`) and this client
/// used from the burst's start to its last answer: on one machine the client's work is taken
/// from the services' cores, and the services' own time bounds the wall time of the same burst
/// on any number of such cores ([`orthomask_server::process_cpu`]).
#[derive(Clone, Copy)]
struct CpuUse {
    services: Option<Duration>,
    client: Option<Duration>,
}

impl CpuUse {
    /// The CPU time used so far by the services and by this client.
    fn so_far(services_pid: Option<u32>) -> Self {
        let read = |pid: u32| {
            cpu_time(pid)
                .inspect_err(|e| eprintln!("load: {e}; the table gives no CPU time for it"))
                .ok()
        };
        Self {
            services: services_pid.and_then(read),
            client: read(std::process::id()),
        }
    }

    /// What was used since `self`.
    fn since(self, services_pid: Option<u32>) -> Self {
        let now = Self::so_far(services_pid);
        let used = |a: Option<Duration>, b: Option<Duration>| Some(b?.saturating_sub(a?));
        Self {
            services: used(self.services, now.services),
            client: used(self.client, now.client),
        }
    }
}

/// Why a busy answer turned a request away: its `error` message with the numbers taken out (so
/// that one reason is counted once), or the answer's text.
fn busy_reason(status: u16, text: &str) -> String {
    let message = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_owned))
        .unwrap_or_else(|| text.chars().take(80).collect());
    let general: String = message
        .chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect();
    format!("{status}: {general}")
}

/// Send `request` until it is answered other than busy: its answer's text. A busy answer (429,
/// or 503 from a service at its connection limit) or a refused connection is asked again after
/// the service's Retry-After (at least the back-off), stretched by a random up to half of
/// itself, as every client of the services does. Any other answer than `success` fails the run.
async fn send_until_answered(
    request: &Request,
    success: u16,
    turned_away: &mut Vec<String>,
) -> String {
    let mut backoff = Duration::from_millis(250);
    loop {
        let retry_after = match exchange(request).await {
            Ok((status @ (429 | 503), retry_after, text)) => {
                turned_away.push(busy_reason(status, &text));
                retry_after
            }
            Ok((status, _, text)) => {
                assert_eq!(status, success, "{} refused: {text}", request.url);
                return text;
            }
            // Refused, or closed or reset before an answer (the listener closes none within its
            // address's share, and the load client's address, the host's own, has none): try
            // again.
            Err(Failure::Connect(e)) => {
                turned_away.push(format!("no connection ({e})"));
                None
            }
            Err(Failure::Exchange(e)) => {
                // The innermost cause (the system's word: reset, broken pipe…).
                let mut cause: &dyn std::error::Error = &e;
                while let Some(inner) = cause.source() {
                    cause = inner;
                }
                turned_away.push(format!(
                    "connection closed or reset before an answer ({cause})"
                ));
                None
            }
            Err(Failure::TimedOut) => panic!(
                "{} gave no answer within {} s",
                request.url,
                EXCHANGE_TIMEOUT.as_secs()
            ),
        };
        assert!(
            turned_away.len() <= 60,
            "{} still turned away after 60 attempts: {turned_away:?}",
            request.url
        );
        let unit = getrandom::u32().map_or(0.5, |v| f64::from(v) / 4_294_967_296.0);
        tokio::time::sleep(retry_wait(
            backoff,
            retry_after.map(Duration::from_secs),
            unit,
        ))
        .await;
        backoff = (backoff * 2).min(Duration::from_secs(30));
    }
}

/// Every participant at once, each sending its requests in turn.
async fn burst(participants: Vec<Vec<Request>>, success: u16, services_pid: Option<u32>) -> Burst {
    let requests = participants.iter().map(Vec::len).sum();
    let cpu = CpuUse::so_far(services_pid);
    let started = Instant::now();
    let tasks: Vec<_> = participants
        .into_iter()
        .map(|requests| {
            tokio::spawn(async move {
                let t = Instant::now();
                let mut turned_away = Vec::new();
                let mut answers = Vec::with_capacity(requests.len());
                for request in &requests {
                    answers.push(send_until_answered(request, success, &mut turned_away).await);
                }
                (answers, t.elapsed(), turned_away)
            })
        })
        .collect();
    let mut out = Burst {
        answers: Vec::with_capacity(tasks.len()),
        latencies: Vec::with_capacity(tasks.len()),
        retried: 0,
        turned_away: std::collections::BTreeMap::new(),
        requests,
        wall: Duration::ZERO,
        cpu,
    };
    for task in tasks {
        let (answers, latency, turned_away) = task.await.expect("a participant's task failed");
        out.answers.push(answers);
        out.latencies.push(latency);
        out.retried += usize::from(!turned_away.is_empty());
        for reason in turned_away {
            *out.turned_away.entry(reason).or_default() += 1;
        }
    }
    out.wall = started.elapsed();
    out.cpu = cpu.since(services_pid);
    out
}

/// A figure to `decimals` places, or `-` where it could not be measured.
fn figure(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

/// Print the burst's line and the machine-readable `RESULT` line scripts/load.sh reads.
fn report(endpoint: Endpoint, burst: &mut Burst) {
    let participants = burst.latencies.len();
    let wall = burst.wall.as_secs_f64();
    let rate = burst.requests as f64 / wall;
    let latencies = &mut burst.latencies;
    latencies.sort();
    let (p50, p90, p99, max) = (
        percentile(latencies, 0.5),
        percentile(latencies, 0.9),
        percentile(latencies, 0.99),
        *latencies.last().expect("a participant"),
    );
    println!(
        "{}: {participants} participants, {} requests, every one answered in {wall:.2} s \
         ({rate:.0} requests/s), {} participants after a busy answer; latency p50 {}, p90 {}, \
         p99 {}, max {}",
        endpoint.name(),
        burst.requests,
        burst.retried,
        ms(p50),
        ms(p90),
        ms(p99),
        ms(max)
    );
    let seconds = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
    let per_request_us =
        |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e6 / burst.requests as f64);
    let (services_s, services_us) = (
        seconds(burst.cpu.services),
        per_request_us(burst.cpu.services),
    );
    let (client_s, client_us) = (seconds(burst.cpu.client), per_request_us(burst.cpu.client));
    println!(
        "  CPU during the burst: the services {} s ({} µs a request), this client {} s ({} µs a \
         request)",
        figure(services_s, 2),
        figure(services_us, 0),
        figure(client_s, 2),
        figure(client_us, 0)
    );
    for (reason, times) in &burst.turned_away {
        println!("  turned away {times} times: {reason}");
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "RESULT endpoint={} participants={participants} requests={} wall_s={wall:.2} rate={rate:.0} \
         retried={} p50_ms={:.0} p90_ms={:.0} p99_ms={:.0} max_ms={:.0} services_cpu_s={} \
         services_us={} client_us={}",
        endpoint.name(),
        burst.requests,
        burst.retried,
        ms(p50),
        ms(p90),
        ms(p99),
        ms(max),
        figure(services_s, 2),
        figure(services_us, 0),
        figure(client_us, 0),
    );
}

/// The running services, as `serve all` lists them in `services.json`.
struct Services {
    collector: String,
    msp: String,
    rights: Vec<String>,
    admin: String,
}

impl Services {
    fn read(dir: &std::path::Path) -> Self {
        let services: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("services.json")).expect("services.json"),
        )
        .expect("services.json is JSON");
        let admin = std::fs::read_to_string(dir.join("admin-token")).expect("admin-token");
        Self {
            collector: services["collector"]
                .as_str()
                .expect("collector URL")
                .to_owned(),
            msp: services["msp"].as_str().expect("provider URL").to_owned(),
            rights: services["rights"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|u| u.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            admin: admin.trim().to_owned(),
        }
    }

    /// An administrator's request to the collector with a JSON body; the answer's status and
    /// JSON.
    async fn admin(
        &self,
        http: &reqwest::Client,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let mut request = http
            .request(method, format!("{}{path}", self.collector))
            .bearer_auth(&self.admin);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let answer = request.send().await.expect("the collector answers");
        let status = answer.status().as_u16();
        let text = answer.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
        )
    }
}

/// Stop with one line when no survey has records of `p` values.
fn no_design(p: usize, rights: &[String]) -> ! {
    let smallest = planned_p(5, 20, rights).unwrap_or(0);
    if p < smallest {
        eprintln!(
            "load: no survey has records of p = {p} values: the smallest the collector plans \
             (5 answer columns, cohorts of 20) has {smallest}"
        );
    } else {
        eprintln!(
            "load: no survey has records of p = {p} values (answer columns 5-39 and a cohort of \
             20-2000, as the collector plans them); the nearest possible are {} below and {} \
             above",
            first_possible((p.saturating_sub(200)..p).rev(), rights),
            first_possible(p + 1..p + 200, rights),
        );
    }
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let Some(dir) = argument("--services") else {
        eprintln!(
            "usage: load --services DIR [--endpoint provider|definition|right|health] \
             [--participants N] [--p P] [--services-pid PID]  (see scripts/load.sh)"
        );
        std::process::exit(2);
    };
    let number = |name: &str, default: usize| -> usize {
        argument(name).map_or(default, |v| {
            v.parse().unwrap_or_else(|_| {
                eprintln!("load: {name} must be a whole number, not {v:?}");
                std::process::exit(2)
            })
        })
    };
    let participants = number("--participants", 200);
    let p = number("--p", 1000);
    // The process serving the services, whose CPU time the report gives (scripts/load.sh).
    let services_pid = argument("--services-pid").map(|v| {
        v.parse::<u32>().unwrap_or_else(|_| {
            eprintln!("load: --services-pid must be a process id, not {v:?}");
            std::process::exit(2)
        })
    });
    let endpoint = argument("--endpoint").map_or(Endpoint::Provider, |name| {
        Endpoint::parse(&name).unwrap_or_else(|| {
            eprintln!("load: --endpoint is provider, definition, right or health, not {name:?}");
            std::process::exit(2)
        })
    });
    // A burst holds as many connections as there are participants, each its own descriptor.
    if let Err(e) = raise_descriptor_limit() {
        eprintln!("load: the open-file limit could not be raised ({e})");
    }
    let services = Services::read(std::path::Path::new(&dir));
    let share = endpoint == Endpoint::Right;
    if share && services.rights.len() < 2 {
        eprintln!(
            "load: --endpoint right needs a share-mode deployment (serve all --right-services 2 \
             or more); these services have {} right-masking services",
            services.rights.len()
        );
        std::process::exit(2);
    }
    let rights: &[String] = if share { &services.rights } else { &[] };
    // For the set-up, the participants' definition loads before an upload burst and the checks
    // after it (a burst's own requests go through `exchange`). Every participant is a device of
    // its own: no connection is kept for another participant's request (a kept one would spare
    // the services the connection a real device opens).
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(300))
        .build()
        .expect("client");

    if endpoint == Endpoint::Health {
        let url = format!("{}/api/health", services.msp);
        let health = (0..participants)
            .map(|_| {
                vec![Request {
                    url: url.clone(),
                    body: None,
                }]
            })
            .collect();
        let mut burst = burst(health, endpoint.success(), services_pid).await;
        report(endpoint, &mut burst);
        return;
    }

    // No survey for the floor: the design is needed from here on only.
    let Some((answers, m)) = design_for(p, rights) else {
        no_design(p, rights)
    };
    let (status, created) = services
        .admin(
            &http,
            reqwest::Method::POST,
            "/api/admin/surveys",
            Some(load_draft(answers, m, share)),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let mut places: Vec<Request> = Vec::with_capacity(participants);
    while places.len() < participants {
        // The collector issues at most 10 000 invitations a request.
        let count = (participants - places.len()).min(10_000);
        let (status, invitations) = services
            .admin(
                &http,
                reqwest::Method::POST,
                "/api/admin/surveys/load/invitations",
                Some(serde_json::json!({ "count": count })),
            )
            .await;
        assert_eq!(status, 201, "{invitations}");
        places.extend(
            invitations["invitations"]
                .as_array()
                .expect("invitations")
                .iter()
                .map(|i| Request {
                    url: i["definition_url"]
                        .as_str()
                        .expect("definition_url")
                        .to_owned(),
                    // A place is taken by POST, the invitation in the body (issue 20 §7).
                    body: Some(Bytes::from(
                        serde_json::json!({ "invite": i["token"].as_str().expect("token") })
                            .to_string(),
                    )),
                }),
        );
    }
    let deployment: Deployment = serde_json::from_str(
        &http
            .get(format!("{}/api/deployment", services.collector))
            .send()
            .await
            .expect("deployment")
            .text()
            .await
            .unwrap(),
    )
    .expect("a deployment");
    println!(
        "survey: p = {} (p1 = {}, p2 = {}), cohorts of m = {m}{}; {participants} participants; \
         burst to the {} endpoint",
        created["p1"].as_u64().unwrap() + created["p2"].as_u64().unwrap(),
        created["p1"],
        created["p2"],
        if share {
            format!(", share mode over {} right-masking services", rights.len())
        } else {
            String::new()
        },
        endpoint.name()
    );

    if endpoint == Endpoint::Definition {
        let urls: Vec<String> = places.iter().map(|r| r.url.clone()).collect();
        let mut burst = burst(
            places.into_iter().map(|r| vec![r]).collect(),
            endpoint.success(),
            services_pid,
        )
        .await;
        report(endpoint, &mut burst);
        check_places(&services, &http, &deployment, &urls, &burst.answers).await;
        return;
    }

    // Each participant loads the definition and masks a record on its own "device".
    let started = Instant::now();
    let mut load_latency = Vec::new();
    let mut uploads: Vec<Vec<Upload>> = Vec::new();
    let mut requests: Vec<Vec<Request>> = Vec::new();
    let mut devices: std::collections::HashMap<u32, Client> = std::collections::HashMap::new();
    for (i, place) in places.iter().enumerate() {
        let t = Instant::now();
        let text = http
            .post(&place.url)
            .header("content-type", "application/json")
            .body(place.body.clone().unwrap_or_default())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        load_latency.push(t.elapsed());
        let offer: DefinitionOffer = serde_json::from_str(&text).expect("a definition offer");
        let def = deployment
            .accept(&offer, &place.url)
            .expect("the device accepts the collector's offer");
        let device = devices
            .entry(def.masking.cohort)
            .or_insert_with(|| Client::new(&def).expect("a usable definition"));
        device.set_credential(offer.credential);
        let record: Vec<Answer> = (0..answers)
            .map(|j| Answer::Number(((i * 37 + j * 11) % 100) as f64 + 0.5))
            .collect();
        let ready = device
            .prepare(
                &record,
                &format!("load-test-participant-{i:06}"),
                &Key::teaching(i as u64),
            )
            .expect("the client masks the record");
        assert_eq!(ready.share_mode, share);
        requests.push(
            ready
                .destinations
                .iter()
                .map(|d| Request {
                    url: d.url.clone(),
                    body: Some(Bytes::from(serde_json::to_string(&d.upload).unwrap())),
                })
                .collect(),
        );
        uploads.push(ready.destinations.into_iter().map(|d| d.upload).collect());
    }
    load_latency.sort();
    println!(
        "{participants} definitions loaded one at a time (p50 {}, p99 {}) and records masked \
         client-side in {:.2} s",
        ms(percentile(&load_latency, 0.5)),
        ms(percentile(&load_latency, 0.99)),
        started.elapsed().as_secs_f64()
    );

    let mut burst = burst(requests, endpoint.success(), services_pid).await;
    // Every receipt acknowledges exactly its upload.
    for (sent, answers) in uploads.iter().zip(&burst.answers) {
        assert_eq!(sent.len(), answers.len());
        for (upload, text) in sent.iter().zip(answers) {
            let receipt: Receipt = serde_json::from_str(text).expect("a receipt");
            verify_receipt(upload, &receipt).expect("the receipt acknowledges the upload");
        }
    }
    report(endpoint, &mut burst);
    release(&services, &http, participants).await;
}

/// After a burst of definition loads: every answer is an offer the participant's device accepts,
/// no two with the same credential, and the collector counts each invitation opened and each
/// place taken exactly once.
async fn check_places(
    services: &Services,
    http: &reqwest::Client,
    deployment: &Deployment,
    urls: &[String],
    answers: &[Vec<String>],
) {
    let mut nonces = std::collections::HashSet::new();
    for (url, answer) in urls.iter().zip(answers) {
        let offer: DefinitionOffer = serde_json::from_str(&answer[0]).expect("a definition offer");
        deployment
            .accept(&offer, url)
            .expect("the device accepts the collector's offer");
        assert!(
            nonces.insert(offer.credential.nonce.clone()),
            "one credential handed out twice"
        );
    }
    let (status, view) = services
        .admin(http, reqwest::Method::GET, "/api/admin/surveys/load", None)
        .await;
    assert_eq!(status, 200, "{view}");
    let taken: i64 = view["cohorts"]
        .as_array()
        .expect("cohorts")
        .iter()
        .map(|c| c["assigned"].as_i64().expect("assigned"))
        .sum();
    let opened = view["invitations"]["opened"].as_i64();
    assert_eq!(taken, answers.len() as i64, "places taken");
    assert_eq!(opened, Some(answers.len() as i64), "invitations opened");
    println!(
        "{} offers accepted by the devices, {} different credentials; the collector counts {taken} \
         places taken and {} invitations opened",
        answers.len(),
        nonces.len(),
        answers.len()
    );
}

/// Close the survey and wait for its release, which must hold every participant's record once
/// and pass QA.
async fn release(services: &Services, http: &reqwest::Client, participants: usize) {
    let close = Instant::now();
    let (status, closed) = services
        .admin(
            http,
            reqwest::Method::POST,
            "/api/admin/surveys/load/close",
            Some(serde_json::json!({})),
        )
        .await;
    assert_eq!(status, 200, "{closed}");
    loop {
        let r = http
            .get(format!(
                "{}/api/surveys/load/manifest.json",
                services.collector
            ))
            .send()
            .await
            .unwrap();
        if r.status().as_u16() == 200 {
            let manifest: serde_json::Value =
                serde_json::from_str(&r.text().await.unwrap()).unwrap();
            assert_eq!(manifest["n"].as_u64(), Some(participants as u64));
            assert_eq!(manifest["qa"]["passed"], true);
            println!(
                "close → release of {participants} records, each once, QA passed, in {} cohorts: \
                 {:.2} s (hand-overs, unmasking, QA, A1)",
                manifest["cohorts"]["sizes"].as_array().map_or(0, Vec::len),
                close.elapsed().as_secs_f64()
            );
            break;
        }
        assert!(close.elapsed() < Duration::from_secs(600), "no release");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
