//! Shared helpers of the service tests: start the services on loopback, act as an administrator
//! and as participants' browsers (the participant client the web app runs,
//! `orthomask_survey::client`), fit regressions.
#![allow(dead_code)]

pub mod tap;

use nalgebra::DMatrix;
use orthomask_core::key::Key;
use orthomask_core::mask::Mask;
use orthomask_core::protocol::share_handover::FixedMatrix;
use orthomask_core::protocol::tm2::right_mask_from_device_key;
use orthomask_server::Limits;
use orthomask_server::peers::{IDENTITY_KEY_FILE, Identity, Party, PeerKeys};
use orthomask_server::run::{AllConfig, AllRunning, start_all};
use orthomask_server::wire::{Registration, SharePart, WireFixed};
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use orthomask_stats::tolerance::RELEASE_REGRESSION_RELATIVE;
use orthomask_survey::client as device;
use orthomask_survey::coding::Answer;
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::draft::{Endpoints, SurveyDraft, hydrate, plan_survey};
use orthomask_survey::tolerance::SHOWS_ANSWER;
use orthomask_survey::trust::{
    CollectorSigningKey, DefinitionOffer, Deployment, NONCE_BYTES, UploadCredential,
};
use orthomask_survey::upload::{Receipt, Upload};
use serde_json::{Value, json};
use std::fmt::Display;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// Limits loose enough for many simulated participants on one loopback address.
pub fn loose_limits() -> Limits {
    Limits {
        rate_per_second: 10_000.0,
        rate_burst: 100_000,
        ..Limits::default()
    }
}

/// Start everything in one process on free loopback ports, without the live demonstrations
/// (the tests that count surveys see only their own).
pub async fn start(dir: &Path, rights: usize, web_dir: Option<&Path>) -> AllRunning {
    start_all(config(dir, rights, web_dir, false))
        .await
        .expect("services start")
}

/// Every service started in a fresh temporary directory (kept as long as the first item lives)
/// with `rights` right-masking services, and a client: what most tests begin with.
pub async fn started(rights: usize) -> (TempDir, AllRunning, reqwest::Client) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let all = start(dir.path(), rights, None).await;
    (dir, all, client())
}

/// [`started`] without right-masking services, every listener under `limits`.
pub async fn started_with_limits(limits: Limits) -> (TempDir, AllRunning, reqwest::Client) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let all = start_all(AllConfig {
        limits,
        ..config(dir.path(), 0, None, false)
    })
    .await
    .expect("services start");
    (dir, all, client())
}

/// What [`start`] runs; `demonstrations` as `orthomask serve all` has it by default.
pub fn config(
    dir: &Path,
    rights: usize,
    web_dir: Option<&Path>,
    demonstrations: bool,
) -> AllConfig {
    AllConfig {
        data_dir: dir.to_owned(),
        host: "127.0.0.1".into(),
        port: 0,
        right_services: rights,
        web_dir: web_dir.map(Path::to_owned),
        limits: loose_limits(),
        admin_token: None,
        demonstrations,
        accepted_builds: Vec::new(),
    }
}

/// An HTTP client.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(120))
        .build()
        .expect("client")
}

/// A request's status and JSON body (`Value::Null` when the body is not JSON).
pub async fn send(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<&Value>,
    bearer: Option<&str>,
) -> (u16, Value) {
    let mut request = client.request(method, url);
    if let Some(b) = body {
        request = request
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    if let Some(token) = bearer {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// What a participant holding `B_k` can make: its honest record padded, then `edit`ed on the
/// device's scale, masked with the cohort's `B_k`.
pub fn crafted(
    def: &SurveyDefinition,
    honest: &Upload,
    i: u64,
    edit: impl Fn(&mut Vec<f64>),
) -> Upload {
    let design = def.design().unwrap();
    let b = right_mask_from_device_key(&design, &def.right_mask_key().unwrap(), def.masking.cohort)
        .unwrap();
    let mut noise = Key::teaching(70_000 + i)
        .stream(orthomask_core::key::StreamId::ParticipantNoise { participant: 0 })
        .rng();
    let mut record = design
        .pad(&def.encode(&answers(i)).unwrap(), &mut noise)
        .unwrap();
    edit(&mut record);
    let mut m = DMatrix::from_row_slice(1, record.len(), &record);
    b.right_apply(&mut m).unwrap();
    Upload {
        values: m.iter().copied().collect(),
        ..honest.clone()
    }
}

/// `POST …/cohorts/{k}/fate` as a device asks it: with the nonce of the upload credential the
/// collector issued it for that cohort (`None`: a demonstration's, or an outsider's request).
pub async fn cohort_fate(
    client: &reqwest::Client,
    collector: &str,
    survey: &str,
    cohort: u32,
    nonce: Option<&str>,
) -> (u16, Value) {
    let body = match nonce {
        Some(n) => json!({"nonce": n}),
        None => json!({}),
    };
    send(
        client,
        reqwest::Method::POST,
        &format!("{collector}/api/surveys/{survey}/cohorts/{cohort}/fate"),
        Some(&body),
        None,
    )
    .await
}

/// A party's identity as a deployment laid out like `serve all`'s under `data` keeps it — what
/// that party alone holds: the tests that act as one party sign with it, and with nothing else.
pub fn identity_of(data: &Path, party: Party) -> Identity {
    let file = match party {
        Party::Collector => data
            .join("collector")
            .join(orthomask_server::collector::SIGNING_KEY_FILE),
        Party::Provider => data.join("msp").join(IDENTITY_KEY_FILE),
        Party::Right(i) => data.join(format!("right-{i}")).join(IDENTITY_KEY_FILE),
    };
    Identity::load_or_create(&file, party).expect("the party's identity key")
}

/// Send `body` (JSON) to `url` as a peer service sends it: signed as `from` (RFC 9421,
/// `orthomask_server::peer_auth`) and addressed to `to`. The status and the JSON answer.
pub async fn send_signed(
    client: &reqwest::Client,
    from: &Identity,
    to: Party,
    method: reqwest::Method,
    url: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    send_signed_bytes(client, from, to, method, url, bytes).await
}

/// [`send_signed`] with a body of raw bytes.
pub async fn send_signed_bytes(
    client: &reqwest::Client,
    from: &Identity,
    to: Party,
    method: reqwest::Method,
    url: &str,
    bytes: Vec<u8>,
) -> (u16, Value) {
    let headers = orthomask_server::peer_auth::sign(from, to, &method, url, &bytes)
        .await
        .expect("a signature");
    // Closed after the answer: a service refuses a peer it does not accept before reading the
    // body, and closes that connection; a pooled client reusing it would race (the services'
    // own outbox retries such a transport error with back-off).
    let request = client
        .request(method, url)
        .header("content-type", "application/json")
        .header("connection", "close");
    let response = orthomask_server::peer_auth::apply(request, &headers)
        .body(bytes)
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// POST `text` as a JSON body, byte for byte (malformed or oversized bodies), on a connection
/// closed after the answer: a service that refuses a body before reading it all (413) closes
/// the connection, and a pooled client that reused it for the next request would see a broken
/// pipe — a race of the test, not of the service. The status and the JSON body (`Value::Null`
/// when the body is not JSON).
pub async fn post_text(client: &reqwest::Client, url: &str, text: String) -> (u16, Value) {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("connection", "close")
        .body(text)
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The one line of a JSON error answer (`{"error": "…"}`); panics if `body` is not one.
pub fn one_line_error(body: &Value) -> &str {
    let e = body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("not a JSON error: {body}"));
    assert!(!e.is_empty() && !e.contains('\n'), "not one line: {e:?}");
    e
}

/// `answer` (as [`send`] returns it) is a refusal of `what` with `status` and one line of JSON
/// naming `naming`; returns the line.
pub fn refused<'a>(what: &str, answer: &'a (u16, Value), status: u16, naming: &str) -> &'a str {
    let (got, body) = answer;
    assert_eq!(*got, status, "{what}: {body}");
    let e = one_line_error(body);
    assert!(e.contains(naming), "{what}: expected {naming:?} in {e:?}");
    e
}

/// GET a text body.
pub async fn get_text(client: &reqwest::Client, url: &str) -> (u16, String) {
    let response = client.get(url).send().await.expect("request");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

/// The test survey: three predictors and a response, p₁ = 5.
pub fn draft(id: &str, cohort_size: usize, share_mode: bool, invitations: bool) -> Value {
    json!({
        "id": id,
        "title": "Health and income (test)",
        "consent": "Test consent.",
        "questions": [
            {"id": "smoker", "label": "Do you smoke?", "kind": "yes_no"},
            {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90},
            {"id": "income", "label": "Income", "kind": "number", "min": 0, "max": 250},
            {"id": "score", "label": "Wellbeing score", "kind": "number", "min": 0, "max": 100}
        ],
        "cohort_size": cohort_size,
        "share_mode": share_mode,
        "invitations": invitations
    })
}

/// Create a survey; panics with the answer if refused.
pub async fn create_survey(client: &reqwest::Client, all: &AllRunning, draft: &Value) -> Value {
    let (status, body) = send(
        client,
        reqwest::Method::POST,
        &format!("{}/api/admin/surveys", all.collector.url()),
        Some(draft),
        Some(&all.admin_token),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    body
}

/// A small deterministic generator (xorshift64*), for answers only.
pub struct Xorshift(u64);

impl Xorshift {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Generated answers of participant `i`: every number has full double precision, so a stored
/// copy could not hide among round values.
pub fn answers(i: u64) -> Vec<Answer> {
    let mut g = Xorshift::new(1000 + i);
    let smoker = g.uniform() < 0.3;
    let age = 18 + (g.uniform() * 72.0) as i64;
    let income = 10.0 + g.uniform() * 200.0;
    let score = (20.0 + 0.4 * age as f64 + 0.12 * income - 6.0 * f64::from(u8::from(smoker))
        + 8.0 * (g.uniform() - 0.5))
        .clamp(0.0, 100.0);
    vec![
        Answer::YesNo(smoker),
        Answer::Integer(age),
        Answer::Number(income),
        Answer::Number(score),
    ]
}

/// What one participant sent and got back.
pub struct Sent {
    pub url: String,
    pub upload: Upload,
    pub receipt: Receipt,
    /// The HTTP status of the upload's answer: 201 when stored, 200 for the same upload again.
    pub status: u16,
}

/// The idempotency token of participant `i`.
pub fn token(i: u64) -> String {
    format!("participant-token-{i:012}")
}

/// One participant's way in: `n` invitation links for an invitation survey (asked of the admin
/// API), or the survey's one open definition URL `n` times.
pub async fn links(
    client: &reqwest::Client,
    all: &AllRunning,
    created: &Value,
    n: usize,
) -> Vec<String> {
    links_at(client, all.collector.url(), &all.admin_token, created, n).await
}

/// [`links`] for a collector at `collector_url` with administrator token `admin_token`.
pub async fn links_at(
    client: &reqwest::Client,
    collector_url: &str,
    admin_token: &str,
    created: &Value,
    n: usize,
) -> Vec<String> {
    let survey = created["survey"].as_str().expect("survey id");
    if created["invitations"] != Value::Bool(true) {
        let url = created["definition_url"].as_str().expect("definition_url");
        return vec![url.to_owned(); n];
    }
    let (status, body) = send(
        client,
        reqwest::Method::POST,
        &format!("{collector_url}/api/admin/surveys/{survey}/invitations"),
        Some(&json!({ "count": n })),
        Some(admin_token),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let count = body["invitations"].as_array().expect("invitations").len();
    (0..count).map(|i| invitation_link(&body, i)).collect()
}

/// Take a place as the web app does (issue 20 §7): `POST` the definition address with the
/// invitation, if any, in a JSON body. A test's "link" is the definition URL with
/// `?invite=TOKEN` appended for an invitation; the token never travels in the request's URL.
pub async fn take_place(client: &reqwest::Client, link: &str) -> (u16, String) {
    let (url, body) = match link.split_once("?invite=") {
        Some((url, token)) => (url, json!({ "invite": token })),
        None => (link, json!({})),
    };
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    (status, response.text().await.expect("body"))
}

/// The collector's base URL in one of its definition URLs.
fn collector_base(definition_url: &str) -> &str {
    definition_url
        .split("/api/surveys/")
        .next()
        .expect("a definition URL")
}

/// Load a definition as the web app does: the signed offer, checked against the deployment the
/// collector publishes (signature, upload addresses, credential) before anything is masked.
pub async fn load(
    client: &reqwest::Client,
    definition_url: &str,
) -> (SurveyDefinition, UploadCredential) {
    let (status, text) = take_place(client, definition_url).await;
    assert_eq!(status, 200, "{text}");
    let offer: DefinitionOffer = serde_json::from_str(&text).expect("a definition offer");
    let (status, text) = get_text(
        client,
        &format!("{}/api/deployment", collector_base(definition_url)),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let deployment: Deployment = serde_json::from_str(&text).expect("a deployment");
    let def = deployment
        .accept(&offer, definition_url)
        .expect("the device accepts the collector's offer");
    (def, offer.credential)
}

/// Load the definition and prepare the uploads with the participant client the web app runs
/// (`orthomask_survey::client::Client`): encode, pad, mask with `B_k` — or split into shares —
/// and attach the upload credential. Participant `i`'s device noise is teaching key
/// `50 000 + i`, so runs are reproducible.
pub async fn prepare(
    client: &reqwest::Client,
    definition_url: &str,
    i: u64,
    answers: &[Answer],
) -> (SurveyDefinition, Vec<(String, Upload)>) {
    let (def, credential) = load(client, definition_url).await;
    let prepared = device::Client::new(&def)
        .expect("the client accepts the definition")
        .with_credential(credential)
        .prepare(answers, &token(i), &Key::teaching(50_000 + i))
        .expect("the client prepares the uploads");
    let uploads = prepared
        .destinations
        .into_iter()
        .map(|d| (d.url, d.upload))
        .collect();
    (def, uploads)
}

/// POST one upload; the receipt must acknowledge exactly it.
pub async fn post_upload(client: &reqwest::Client, url: &str, upload: &Upload) -> (u16, Value) {
    let body = serde_json::to_value(upload).unwrap();
    send(client, reqwest::Method::POST, url, Some(&body), None).await
}

/// A whole participant: load, prepare, upload everything; returns the raw record and what was
/// sent.
pub async fn participate(
    client: &reqwest::Client,
    definition_url: &str,
    i: u64,
) -> (Vec<f64>, Vec<Sent>) {
    let (_, raw, sent) = participate_with_definition(client, definition_url, i).await;
    (raw, sent)
}

/// [`participate`], also returning the definition the participant accepted.
pub async fn participate_with_definition(
    client: &reqwest::Client,
    definition_url: &str,
    i: u64,
) -> (SurveyDefinition, Vec<f64>, Vec<Sent>) {
    let a = answers(i);
    let (def, uploads) = prepare(client, definition_url, i, &a).await;
    let mut sent = Vec::new();
    for (url, upload) in uploads {
        let (status, body) = post_upload(client, &url, &upload).await;
        assert!(status == 201 || status == 200, "{status} {body}");
        let receipt: Receipt = serde_json::from_value(body).expect("a receipt");
        device::verify_receipt(&upload, &receipt).expect("the receipt acknowledges the upload");
        sent.push(Sent {
            url,
            upload,
            receipt,
            status,
        });
    }
    let raw = def.encode(&a).unwrap();
    (def, raw, sent)
}

/// Admin POST with an empty JSON object.
pub async fn admin_post(client: &reqwest::Client, all: &AllRunning, path: &str) -> (u16, Value) {
    admin(client, all, reqwest::Method::POST, path, Some(&json!({}))).await
}

/// A request to the collector's `path` with the administrator's token: the status and JSON
/// body, as [`send`] returns them.
pub async fn admin(
    client: &reqwest::Client,
    all: &AllRunning,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    send(
        client,
        method,
        &format!("{}{path}", all.collector.url()),
        body,
        Some(&all.admin_token),
    )
    .await
}

/// Await every future, each in its own task so that all are in flight at once (the test crate
/// has no `futures` dependency; `tokio::join!` takes a fixed number).
pub async fn join_all_spawned<F>(futures: Vec<F>) -> Vec<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.expect("the task finishes"));
    }
    out
}

/// Right-masking service `index`'s part for cohort 0 of `survey`, made up: six rows of `p1`
/// numbers, a root no list publishes, scale 1 — not a genuine part, so a cohort combined from
/// such parts fails QA, and one judged against the lists is not believed.
pub fn made_up_part(survey: &str, index: u32, p1: usize) -> SharePart {
    let mut g = Xorshift::new(u64::from(index) + 77);
    let values = DMatrix::from_fn(6, p1, |_, _| g.uniform());
    SharePart {
        survey: survey.into(),
        cohort: 0,
        index,
        merkle_root: format!("root-{index}"),
        uploads: 6,
        scale: 1.0,
        block: WireFixed::from_fixed(&FixedMatrix::encode(&values).expect("fixed point")),
    }
}

/// How long a wait for an event may last: a guard that turns a hang into a failure, never a
/// timing check (no test asserts a duration).
pub const HANG_GUARD: Duration = Duration::from_secs(90);

/// Between two looks of [`poll_until`].
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Ask `check` until it answers `Ok(value)`, and return the value. `Err(seen)` means "not yet"
/// and carries what was seen instead; once `within` has passed, the test fails naming `what` it
/// waited for and the last `seen`. `within` is only an upper bound that turns a hang into a
/// failure: nothing is asserted about how long the wait took.
pub async fn poll_until<T, S: Display, F: Future<Output = Result<T, S>>>(
    what: &str,
    within: Duration,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        let seen = match check().await {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        assert!(
            Instant::now() < deadline,
            "waited {} s for {what}; last seen: {seen}",
            within.as_secs()
        );
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// Poll until `release.csv` is published (or fail after `seconds`, a hang guard).
pub async fn wait_for_release(
    client: &reqwest::Client,
    base: &str,
    survey: &str,
    seconds: u64,
) -> (String, String) {
    let csv = poll_until(
        &format!("the release of {survey}"),
        Duration::from_secs(seconds),
        || async move {
            let (status, csv) =
                get_text(client, &format!("{base}/api/surveys/{survey}/release.csv")).await;
            if status == 200 {
                return Ok(csv);
            }
            assert_eq!(status, 404, "{csv}");
            // The 404 names the survey's state ("status failed" once nothing can be released).
            assert!(!csv.contains("status failed"), "{csv}");
            Err(csv)
        },
    )
    .await;
    let (s, manifest) = get_text(
        client,
        &format!("{base}/api/surveys/{survey}/manifest.json"),
    )
    .await;
    assert_eq!(s, 200);
    (csv, manifest)
}

/// Fit `score ~ smoker + age + income` on a table.
pub fn regression(names: Vec<String>, values: DMatrix<f64>) -> LinearRegression {
    let data = Dataset::new(names, values).expect("dataset");
    LinearRegression::fit(
        &data,
        "score",
        &["smoker", "age", "income"],
        Intercept::Included,
    )
    .expect("fit")
}

/// Relative difference, guarded for values near zero.
pub fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(1e-300)
}

/// The regression on the release equals the regression on the raw records (coefficients,
/// standard errors, R², σ) to 1e-9 relative — the issue's acceptance tolerance.
pub fn assert_same_regression(raw: &[Vec<f64>], release_csv: &str) {
    let names = vec![
        "smoker".to_owned(),
        "age".to_owned(),
        "income".to_owned(),
        "score".to_owned(),
    ];
    let n = raw.len();
    let raw_matrix = DMatrix::from_fn(n, 4, |i, j| raw[i][j]);
    let table = orthomask_formats::csv::parse_table(release_csv.as_bytes(), "release.csv")
        .expect("release parses");
    assert_eq!(table.headers().last().map(String::as_str), Some("QA"));
    assert_eq!(table.data().nrows(), n, "every record is released");
    let released = regression(table.headers().to_vec(), table.data().clone());
    let truth = regression(names, raw_matrix);
    for (a, b) in truth.coefficients().iter().zip(released.coefficients()) {
        assert_eq!(a.name(), b.name());
        assert!(
            relative(a.estimate(), b.estimate()) < RELEASE_REGRESSION_RELATIVE,
            "{}: {} vs {}",
            a.name(),
            a.estimate(),
            b.estimate()
        );
        assert!(
            relative(a.std_error(), b.std_error()) < RELEASE_REGRESSION_RELATIVE,
            "{}",
            a.name()
        );
    }
    assert!(relative(truth.r_squared(), released.r_squared()) < RELEASE_REGRESSION_RELATIVE);
    assert!(relative(truth.sigma(), released.sigma()) < RELEASE_REGRESSION_RELATIVE);
    // No released row is a raw row.
    for i in 0..n {
        for row in raw {
            let same = (0..4).all(|j| (table.data()[(i, j)] - row[j]).abs() < SHOWS_ANSWER);
            assert!(!same, "release row {i} is a raw record");
        }
    }
}

/// A survey registered straight with one accepting service, as its collector would register it
/// (the tests that run a provider or a right-masking service alone): planned from [`draft`]
/// with cohorts of `cohort_size`, signed by `signing`.
pub struct DirectSurvey {
    /// Survey id.
    pub id: String,
    /// The body of `PUT /api/peer/surveys/{id}`.
    pub registration: Value,
    /// The template every device of the survey accepts (its uploads name its digest).
    pub template: SurveyDefinition,
    /// Right-masking services (0: the basic protocol).
    pub share_services: usize,
    /// The collector key that signed it.
    pub signing: CollectorSigningKey,
}

/// Plan [`draft`] `id` with cohorts of `cohort_size` (share mode when `right_services` are
/// given) and make the registration its collector, holding `signing`, would send.
pub fn direct_survey(
    id: &str,
    cohort_size: usize,
    right_services: &[String],
    signing: CollectorSigningKey,
) -> DirectSurvey {
    let share = !right_services.is_empty();
    let draft: SurveyDraft =
        serde_json::from_value(draft(id, cohort_size, share, true)).expect("a draft");
    let planned = plan_survey(
        &draft,
        Endpoints {
            provider: "http://provider.invalid",
            right_services,
        },
    )
    .expect("the test survey plans");
    let registration = Registration::for_survey(&planned, &signing);
    DirectSurvey {
        id: id.to_owned(),
        registration: serde_json::to_value(&registration).expect("registration"),
        template: planned.template,
        share_services: planned.plan.share_services,
        signing,
    }
}

impl DirectSurvey {
    /// Participant `i`'s honest uploads to cohort `cohort` (one, or one share per service),
    /// prepared by the participant client with a credential for `nonce`, valid until 2100.
    /// The device key is a teaching key: the service under test never holds it.
    pub fn uploads(&self, i: u64, cohort: u32, nonce: [u8; NONCE_BYTES]) -> Vec<(String, Upload)> {
        let definition = hydrate(
            &self.template,
            self.share_services,
            cohort,
            &Key::teaching(7),
        );
        let credential =
            UploadCredential::issue(&self.signing, &self.id, cohort, nonce, FAR_FUTURE);
        device::Client::new(&definition)
            .expect("the client accepts the definition")
            .with_credential(credential)
            .prepare(&answers(i), &token(i), &Key::teaching(50_000 + i))
            .expect("the client prepares the uploads")
            .destinations
            .into_iter()
            .map(|d| (d.url, d.upload))
            .collect()
    }

    /// `base` (an honest upload of cohort 0, from [`DirectSurvey::uploads`]) with its signs
    /// flipped by the bits of `i`, another token and a credential for `nonce`: a distinct vector
    /// of exactly the same length, so it passes the provider's size check
    /// (`orthomask_survey::intake_bounds`) — for tests that need many uploads fast and never
    /// unmask them.
    pub fn opaque_upload(
        &self,
        base: &Upload,
        i: u64,
        token: String,
        nonce: [u8; NONCE_BYTES],
    ) -> Upload {
        let mut upload = base.clone();
        let mut g = Xorshift::new(i + 1);
        for v in &mut upload.values {
            if g.uniform() < 0.5 {
                *v = -*v;
            }
        }
        upload.token = token;
        upload.credential = Some(UploadCredential::issue(
            &self.signing,
            &self.id,
            0,
            nonce,
            FAR_FUTURE,
        ));
        upload
    }
}

/// The collector's own signing key, read from its data directory under `dir` (what
/// [`start`] runs): what an attacker does not have, used by the tests that must sign as the
/// collector does.
pub fn collector_signing_key(dir: &Path) -> CollectorSigningKey {
    let text = std::fs::read_to_string(dir.join("collector/collector-signing-key")).unwrap();
    CollectorSigningKey::from_secret_hex(&text).unwrap()
}

/// Valid until 2100-01-01 (seconds since 1970).
pub const FAR_FUTURE: u64 = 4_102_444_800;

/// The administrator's view of a survey (`GET /api/admin/surveys/{id}`).
pub async fn admin_view(client: &reqwest::Client, all: &AllRunning, survey: &str) -> Value {
    admin_view_at(client, all.collector.url(), &all.admin_token, survey).await
}

/// [`admin_view`] for a collector at `collector_url` with administrator token `admin_token`.
pub async fn admin_view_at(
    client: &reqwest::Client,
    collector_url: &str,
    admin_token: &str,
    survey: &str,
) -> Value {
    let (status, view) = send(
        client,
        reqwest::Method::GET,
        &format!("{collector_url}/api/admin/surveys/{survey}"),
        None,
        Some(admin_token),
    )
    .await;
    assert_eq!(status, 200, "{view}");
    view
}

/// Wait (at most [`HANG_GUARD`], never asserting a duration) until the administrator's view
/// of `survey` satisfies `done`; returns that view.
pub async fn wait_for_view(
    client: &reqwest::Client,
    all: &AllRunning,
    survey: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    wait_for_view_at(client, all.collector.url(), &all.admin_token, survey, done).await
}

/// [`wait_for_view`] for a collector at `collector_url` with administrator token `admin_token`.
pub async fn wait_for_view_at(
    client: &reqwest::Client,
    collector_url: &str,
    admin_token: &str,
    survey: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let done = &done;
    poll_until(
        &format!("the administrator's view of {survey} to reach the awaited state"),
        HANG_GUARD,
        || async move {
            let view = admin_view_at(client, collector_url, admin_token, survey).await;
            if done(&view) { Ok(view) } else { Err(view) }
        },
    )
    .await
}

/// The collector's view of a survey at the accepting service `service` at `base_url` — the
/// provider, or a right-masking service (`GET {base_url}/api/peer/surveys/{id}/status`, signed
/// as the collector `collector`): the answer's status and JSON body, as [`send`] returns them.
pub async fn peer_view(
    client: &reqwest::Client,
    base_url: &str,
    (collector, service): (&Identity, Party),
    survey: &str,
) -> (u16, Value) {
    send_signed(
        client,
        collector,
        service,
        reqwest::Method::GET,
        &format!("{base_url}/api/peer/surveys/{survey}/status"),
        None,
    )
    .await
}

/// Wait (at most [`HANG_GUARD`], never asserting a duration) until the [`peer_view`] of
/// `survey` at `base_url` satisfies `done`; returns that view.
pub async fn wait_for_peer_view(
    client: &reqwest::Client,
    base_url: &str,
    asker: (&Identity, Party),
    survey: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let done = &done;
    poll_until(
        &format!("the view of {survey} at {base_url} to reach the awaited state"),
        HANG_GUARD,
        || async move {
            let (_, view) = peer_view(client, base_url, asker, survey).await;
            if done(&view) { Ok(view) } else { Err(view) }
        },
    )
    .await
}

/// Invitation `i` of an answer of `POST …/invitations` as a test link ([`take_place`]).
pub fn invitation_link(list: &Value, i: usize) -> String {
    format!(
        "{}?invite={}",
        list["invitations"][i]["definition_url"]
            .as_str()
            .expect("definition_url"),
        list["invitations"][i]["token"].as_str().expect("token")
    )
}

/// The files in the service subdirectories of `data` (one subdirectory per service, as
/// [`start`] lays them out) whose path satisfies `keep`.
pub fn service_files(data: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for service in std::fs::read_dir(data).unwrap() {
        let service = service.unwrap().path();
        if !service.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&service).unwrap() {
            let path = entry.unwrap().path();
            if keep(&path.to_string_lossy()) {
                out.push(path);
            }
        }
    }
    out
}

/// The databases and write-ahead logs of every service under `data`.
pub fn store_files(data: &Path) -> Vec<PathBuf> {
    service_files(data, |path| path.contains(".sqlite3"))
}

/// Those of `files` whose bytes contain `needle` (a file that cannot be read holds nothing).
pub fn files_holding<P: AsRef<Path>>(files: impl IntoIterator<Item = P>, needle: &[u8]) -> Vec<P> {
    files
        .into_iter()
        .filter(|f| {
            std::fs::read(f)
                .unwrap_or_default()
                .windows(needle.len())
                .any(|w| w == needle)
        })
        .collect()
}

/// A provider and a collector started apart, each on its own loopback port with its own data
/// directory, as two hosts run them (the tests that stop, hang or starve one of them).
pub struct Apart {
    /// The provider.
    pub msp: orthomask_server::Running,
    /// The collector.
    pub collector: orthomask_server::Running,
    /// The provider's URL.
    pub msp_url: String,
    /// The collector's address and URL (to start it again there).
    pub collector_addr: std::net::SocketAddr,
    /// The collector's URL.
    pub collector_url: String,
    /// The collector's configuration (to start it again with the same store).
    pub collector_config: orthomask_server::CollectorConfig,
    /// The collector's identity (to ask the provider as the collector).
    pub collector_identity: Identity,
}

impl Apart {
    /// A basic-protocol survey `id` with cohorts of `n`, created at the collector, and its `n`
    /// invited participants ready to send ([`prepare_all`]).
    pub async fn invited(
        &self,
        client: &reqwest::Client,
        id: &str,
        n: usize,
    ) -> Vec<(Vec<f64>, Vec<(String, Upload)>)> {
        let admin = &self.collector_config.admin_token;
        let (status, created) = send(
            client,
            reqwest::Method::POST,
            &format!("{}/api/admin/surveys", self.collector_url),
            Some(&draft(id, n, false, true)),
            Some(admin),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let invited = links_at(client, &self.collector_url, admin, &created, n).await;
        prepare_all(client, &invited).await
    }
}

/// The identities of [`start_apart`]'s provider (in `msp_dir`) and collector (in
/// `collector_dir`), made when absent, and the keys each pins of the other.
pub fn apart_identities(msp_dir: &Path, collector_dir: &Path) -> (Identity, Identity, PeerKeys) {
    std::fs::create_dir_all(msp_dir).unwrap();
    std::fs::create_dir_all(collector_dir).unwrap();
    let msp = Identity::load_or_create(&msp_dir.join(IDENTITY_KEY_FILE), Party::Provider).unwrap();
    let collector = Identity::load_or_create(
        &collector_dir.join(orthomask_server::collector::SIGNING_KEY_FILE),
        Party::Collector,
    )
    .unwrap();
    let keys = PeerKeys {
        collector: Some(collector.public_key()),
        provider: Some(msp.public_key()),
        rights: Vec::new(),
    };
    (msp, collector, keys)
}

/// [`Apart`]: the provider in `msp_dir` with `msp_limits`, the collector in `collector_dir`.
pub async fn start_apart(msp_dir: &Path, collector_dir: &Path, msp_limits: Limits) -> Apart {
    use orthomask_server::run::{bind, start_collector, start_msp};
    let (_, collector_identity, keys) = apart_identities(msp_dir, collector_dir);
    let collector_listener = bind("127.0.0.1:0").await.unwrap();
    let collector_addr = collector_listener.local_addr().unwrap();
    let collector_url = format!("http://{collector_addr}");
    let msp_listener = bind("127.0.0.1:0").await.unwrap();
    let msp_url = format!("http://{}", msp_listener.local_addr().unwrap());
    let msp = start_msp(
        orthomask_server::MspConfig {
            data_dir: msp_dir.to_owned(),
            public_url: msp_url.clone(),
            collector_url: collector_url.clone(),
            right_urls: Vec::new(),
            peer_keys: keys.clone(),
            limits: msp_limits,
            allowed_origins: Vec::new(),
        },
        msp_listener,
    )
    .await
    .unwrap();
    let collector_config = orthomask_server::CollectorConfig {
        data_dir: collector_dir.to_owned(),
        public_url: collector_url.clone(),
        msp_url: msp_url.clone(),
        right_urls: Vec::new(),
        admin_token: "admin-token-of-services-apart-0123456789".into(),
        peer_keys: keys,
        web_dir: None,
        limits: loose_limits(),
        allowed_origins: Vec::new(),
        accepted_builds: Vec::new(),
    };
    let collector = start_collector(collector_config.clone(), collector_listener)
        .await
        .unwrap();
    Apart {
        msp,
        collector,
        collector_identity,
        msp_url,
        collector_addr,
        collector_url,
        collector_config,
    }
}

/// Participants `0..links.len()` take their places through `links` and prepare their uploads:
/// each one's raw record (as its device coded it) and uploads.
pub async fn prepare_all(
    client: &reqwest::Client,
    links: &[String],
) -> Vec<(Vec<f64>, Vec<(String, Upload)>)> {
    let mut prepared = Vec::new();
    for (i, link) in (0u64..).zip(links) {
        let a = answers(i);
        let (def, uploads) = prepare(client, link, i, &a).await;
        prepared.push((def.encode(&a).unwrap(), uploads));
    }
    prepared
}
