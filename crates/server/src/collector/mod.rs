//! The data collector (seed 000 §2 steps 1 and 4; seed 003 §3.1 steps 1 and 4).
//!
//! It plans surveys from an administrator's draft (`orthomask_survey::draft`), keeps one key per survey (from
//! which it derives each cohort's device key, `B_k`, and `A₁`), hands out survey definitions —
//! assigning each participant a cohort, optionally against a one-use invitation — receives
//! `A₂,k X_k B_k` from the provider, removes `B_k` and checks QA (`DataCollector::unmask_cohort`),
//! or in share mode sums the right-masking services' `A Xⁱ` (`combine_shares`), and once the
//! survey is closed and every cohort is in, publishes `A₁ A₂ X₁` (`DataCollector::release`) as
//! `release.csv` with its `manifest.json`. It never receives a participant's row: uploads go to
//! the provider (or the right-masking services), and what reaches the collector is always
//! left-masked.
//!
//! Read `participants.rs` (definitions and cohort places), `handover.rs` (what the provider and
//! the right-masking services hand over), `release.rs`, `admin.rs`, then `demonstrations.rs`
//! (the live demonstrations `serve all` creates and the public list of them).

mod admin;
mod claims;
mod demonstrations;
mod handover;
mod memo;
mod participants;
mod release;

use crate::error::{ApiError, ServerError, StoreError};
use crate::http::{json, require_bearer};
use crate::outbox::{PeerClient, PeerError};
use crate::peers::{Party, PeerKeys};
use crate::states::{CohortStep, SurveyState};
use crate::store::{ClosedSignal, Store};
use crate::wire::Registration;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post, put};
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::draft::SurveyPlan;
use orthomask_survey::trust::{CollectorSigningKey, Deployment};
use rusqlite::{Connection, OptionalExtension};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::watch;

pub use demonstrations::Demonstration;

use admin::{
    admin_status, close_one_cohort, close_survey, cohort_fate, create_survey, invitations,
    leave_out, list_surveys, public_status, requeue,
};
use demonstrations::list_demonstrations;
use handover::{cohort_result, share_part};
use participants::definition;
use release::{datapackage_json, manifest_json, release_csv};

/// Configuration of a data collector.
#[derive(Clone, Debug)]
pub struct CollectorConfig {
    /// Its own data directory.
    pub data_dir: PathBuf,
    /// Base URL participants and administrators reach it at.
    pub public_url: String,
    /// Base URL of the masking service provider.
    pub msp_url: String,
    /// Base URLs of the right-masking services, by index (share mode).
    pub right_urls: Vec<String>,
    /// Bearer secret of the administrator.
    pub admin_token: String,
    /// The identity keys it pins: the provider's and each right-masking service's
    /// (`crate::peers`). Its own identity is its signing key ([`SIGNING_KEY_FILE`]), the key
    /// devices verify.
    pub peer_keys: PeerKeys,
    /// The built web app (`dist/`), if served.
    pub web_dir: Option<PathBuf>,
    /// Public limits.
    pub limits: crate::http::Limits,
    /// Origins allowed by CORS besides its own (a web app hosted elsewhere).
    pub allowed_origins: Vec<String>,
    /// Earlier app build digests whose uploads the survey team still accepts, besides the build
    /// served from `web_dir` (issue 27 §2): published in the deployment's `builds`.
    pub accepted_builds: Vec<String>,
}

/// The database file name inside the data directory.
pub const DB_FILE: &str = "collector.sqlite3";
/// The key file name inside the data directory.
pub const KEY_FILE: &str = "collector-keys.json";
/// The file of the collector's Ed25519 signing key inside the data directory.
pub const SIGNING_KEY_FILE: &str = "collector-signing-key";

/// Columns [`SCHEMA`] gained after data directories were made (`Store::open` adds them).
const ADDED_COLUMNS: &[crate::store::AddedColumn] = &[crate::store::AddedColumn {
    table: "receipt_roots",
    column: "builds",
    declaration: "TEXT NOT NULL DEFAULT '[]'",
}];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS surveys (
    id TEXT PRIMARY KEY,
    template TEXT NOT NULL,
    registration TEXT NOT NULL,
    plan TEXT NOT NULL,
    status TEXT NOT NULL,
    current_cohort INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    closed_at TEXT,
    error TEXT
);
CREATE TABLE IF NOT EXISTS cohorts (
    survey TEXT NOT NULL REFERENCES surveys(id),
    cohort INTEGER NOT NULL,
    assigned INTEGER NOT NULL DEFAULT 0,
    opened INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    records INTEGER,
    data BLOB,
    qa TEXT,
    merkle_root TEXT,
    result_hash TEXT,
    note TEXT,
    reopened INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (survey, cohort)
);
CREATE TABLE IF NOT EXISTS refused_handovers (
    survey TEXT NOT NULL,
    cohort INTEGER NOT NULL,
    service TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    why TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (survey, cohort, body_hash)
);
CREATE TABLE IF NOT EXISTS share_parts (
    survey TEXT NOT NULL,
    cohort INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    body_hash TEXT NOT NULL,
    nrows INTEGER NOT NULL,
    ncols INTEGER NOT NULL,
    data BLOB,
    merkle_root TEXT NOT NULL,
    scale REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (survey, cohort, idx)
);
CREATE TABLE IF NOT EXISTS receipt_roots (
    survey TEXT NOT NULL,
    cohort INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    service TEXT NOT NULL,
    count INTEGER NOT NULL,
    merkle_root TEXT NOT NULL,
    builds TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (survey, cohort, idx)
);
CREATE TABLE IF NOT EXISTS invitations (
    token_hash TEXT PRIMARY KEY,
    survey TEXT NOT NULL REFERENCES surveys(id),
    created_at TEXT NOT NULL,
    opened_at TEXT,
    used_at TEXT,
    cohort INTEGER,
    nonce TEXT,
    reopened INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS invitations_by_cohort ON invitations(survey, cohort);
CREATE INDEX IF NOT EXISTS invitations_by_nonce ON invitations(survey, nonce);
CREATE TABLE IF NOT EXISTS credentials (
    survey TEXT NOT NULL REFERENCES surveys(id),
    cohort INTEGER NOT NULL,
    nonce TEXT NOT NULL,
    PRIMARY KEY (survey, nonce)
);
CREATE TABLE IF NOT EXISTS releases (
    survey TEXT PRIMARY KEY REFERENCES surveys(id),
    csv TEXT NOT NULL,
    manifest TEXT NOT NULL,
    released_at TEXT NOT NULL,
    erased_at TEXT
);
";

/// A stored share part.
struct StoredPart {
    rows: usize,
    cols: usize,
    /// The fixed-point entries as stored (`FixedMatrix::to_le_bytes`).
    data: Vec<u8>,
    merkle_root: String,
    /// The sending service's rounding scale.
    scale: f64,
}

struct Inner {
    cfg: CollectorConfig,
    store: Store,
    keys: crate::keys::KeyStore,
    /// Signs definitions and upload credentials (`orthomask_survey::trust`).
    signing: CollectorSigningKey,
    client: PeerClient,
    /// The peers it pins, whose signed requests it believes (`crate::peer_auth`).
    peers: Arc<crate::peers::Peers>,
    /// Held while a cohort is opened at the services (`participants::open_cohort`) and while
    /// cohorts are closed there (`admin`), so an opening never follows a close.
    opening: tokio::sync::Mutex<()>,
    /// Each cohort's signed definition, made once (`participants::Collector::offer`): it is
    /// the same for every participant of the cohort (Ed25519 signatures are deterministic), and
    /// deriving the cohort's device key, hydrating and signing it for every place was most of a
    /// place request's work in a burst (issue 24). A once-cell each: the requests that waited
    /// for their cohort to open all ask for it at once, and one of them makes it for all (in a
    /// burst of 5 000, 799 made it before the cell, the whole of each of the first cohorts).
    signed: memo::Memo<(String, u32), Arc<tokio::sync::OnceCell<participants::CohortDefinition>>>,
    /// The cohorts known to be open at the services (`participants::Collector::open_cohort`):
    /// a burst's place requests find their cohort not yet open when they take their places,
    /// and without this each then queued behind the opening lock for a store read of its own,
    /// one after another (issue 24: 4 600 of a burst of 5 000, up to a second each).
    opened: memo::Memo<(String, u32), ()>,
    /// Each survey's plan, parsed once (`participants::place_survey`): fixed when the survey is
    /// created, read by every place request.
    plans: memo::Memo<String, Arc<SurveyPlan>>,
    /// The build digest of the web app served from `cfg.web_dir`, read at start-up
    /// (`crate::web::local_build`): published in the deployment for auditors to compare.
    build: Option<String>,
}

/// The collector's shared state.
#[derive(Clone)]
pub struct Collector(Arc<Inner>);

/// The survey team, proven by the admin token. A handler that takes an `Admin` runs only for a
/// request that carries the token (401 naming it otherwise): the check is in the handler's
/// signature, so no admin endpoint can forget it, and it runs before the body is read.
pub(super) struct Admin(());

impl axum::extract::FromRequestParts<Collector> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        col: &Collector,
    ) -> Result<Self, ApiError> {
        col.admin_of(&parts.headers)
    }
}

/// A survey as stored.
struct SurveyRow {
    template: SurveyDefinition,
    registration: Registration,
    plan: SurveyPlan,
    status: SurveyState,
    current_cohort: u32,
    error: Option<String>,
}

fn sql(e: rusqlite::Error) -> ApiError {
    ApiError::from(StoreError::from(e))
}

/// Percent-encode everything but RFC 3986's unreserved characters.
pub fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn load_survey(c: &Connection, survey: &str) -> Result<SurveyRow, ApiError> {
    let row: Option<(String, String, String, SurveyState, u32, Option<String>)> = c
        .query_row(
            "SELECT template, registration, plan, status, current_cohort, error FROM surveys WHERE id = ?1",
            [survey],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
        )
        .optional()
        .map_err(sql)?;
    let (template, registration, plan, status, current_cohort, error) =
        row.ok_or_else(|| ApiError::not_found(format!("there is no survey {survey:?}")))?;
    let parse = |what: &str, e: serde_json::Error| corrupt_row(survey, what, &e);
    Ok(SurveyRow {
        template: serde_json::from_str(&template).map_err(|e| parse("template", e))?,
        registration: serde_json::from_str(&registration).map_err(|e| parse("registration", e))?,
        plan: serde_json::from_str(&plan).map_err(|e| parse("plan", e))?,
        status,
        current_cohort,
        error,
    })
}

/// A survey's row that cannot be read back: `what` of it is not what the collector wrote.
fn corrupt_row(survey: &str, what: &str, e: &dyn std::fmt::Display) -> ApiError {
    ApiError::from(StoreError::Corrupt(format!("survey {survey}: {what}: {e}")))
}

/// The deployment's accepted builds: the one it serves, then the earlier ones the team accepts,
/// each once, lowercase. Earlier builds without a served one are published all the same (the
/// team serves the app from elsewhere).
fn accepted_builds(served: Option<&str>, earlier: &[String]) -> Vec<String> {
    let mut builds: Vec<String> = Vec::new();
    for b in served.into_iter().chain(earlier.iter().map(String::as_str)) {
        let b = b.trim().to_ascii_lowercase();
        if !b.is_empty() && !builds.contains(&b) {
            builds.push(b);
        }
    }
    builds
}

/// How the collector names the masking service provider (in refused hand-overs and errors).
pub(super) const PROVIDER: &str = "the masking service provider";

impl Collector {
    /// Open the store and key file; finish any release interrupted by a crash.
    ///
    /// # Errors
    /// [`ServerError`] when the data directory, store or key file cannot be used.
    pub async fn start(
        cfg: CollectorConfig,
        _shutdown: watch::Receiver<bool>,
    ) -> Result<(Self, Vec<tokio::task::JoinHandle<()>>, ClosedSignal), ServerError> {
        crate::keys::create_private_dir(&cfg.data_dir)?;
        let (store, closed) = Store::open(&cfg.data_dir.join(DB_FILE), SCHEMA, ADDED_COLUMNS)?;
        let keys = crate::keys::KeyStore::open(&cfg.data_dir.join(KEY_FILE), "collector")?;
        let signing =
            crate::keys::load_or_create_signing_key(&cfg.data_dir.join(SIGNING_KEY_FILE))?;
        // The same file as `signing`: the collector's identity towards its peers is the key its
        // participants' devices verify (`crate::peers`).
        let (identity, peers) = crate::peers::open(
            &cfg.data_dir.join(SIGNING_KEY_FILE),
            Party::Collector,
            None,
            Some(&cfg.msp_url),
            &cfg.right_urls,
            &cfg.peer_keys,
        )?;
        let client = PeerClient::new(identity, peers.clone(), cfg.limits.peer_answer_timeout)
            .map_err(ServerError::Config)?;
        // An app directory without a built app is served as "not built" (`crate::web`), and
        // the deployment then names no build.
        let build = cfg.web_dir.as_deref().and_then(|dir| {
            crate::web::local_build(dir)
                .map(|files| orthomask_survey::app_build::build_digest(&files))
                .inspect_err(|e| tracing::warn!("collector: no build digest for the web app: {e}"))
                .ok()
        });
        let collector = Self(Arc::new(Inner {
            cfg,
            store,
            keys,
            signing,
            client,
            peers,
            opening: tokio::sync::Mutex::new(()),
            signed: memo::Memo::new(participants::MEMO_ENTRIES),
            opened: memo::Memo::new(participants::MEMO_ENTRIES),
            plans: memo::Memo::new(participants::MEMO_ENTRIES),
            build,
        }));
        let closing = collector
            .0
            .store
            .run(|c| -> Result<Vec<String>, StoreError> {
                let mut stmt = c.prepare("SELECT id FROM surveys WHERE status = ?1")?;
                Ok(stmt
                    .query_map([SurveyState::Closing], |r| r.get(0))?
                    .collect::<Result<_, _>>()?)
            })
            .await?;
        let sweeper = collector.clone();
        let tasks = vec![tokio::spawn(async move {
            if let Err(e) = handover::resume_combining(&sweeper).await {
                tracing::warn!("collector: resuming interrupted combining: {e}");
            }
            for survey in closing {
                if let Err(e) = sweeper.maybe_release(&survey).await {
                    tracing::warn!("collector: releasing {survey}: {e}");
                }
            }
            if let Err(e) = sweeper.erase_released().await {
                tracing::warn!("collector: erasing after a release: {e}");
            }
        })];
        Ok((collector, tasks, closed))
    }

    /// The peers this collector pins.
    pub fn peers(&self) -> Arc<crate::peers::Peers> {
        self.0.peers.clone()
    }

    /// The HTTP routes: public (participants, analysts), admin and peer.
    pub fn router(&self) -> (Router, Router, Router) {
        let public = Router::new()
            .route("/api/deployment", get(deployment))
            .route("/api/surveys", get(list_demonstrations))
            .route("/api/surveys/{survey}/definition", post(definition))
            .route("/api/surveys/{survey}/status", get(public_status))
            .route(
                "/api/surveys/{survey}/cohorts/{cohort}/fate",
                post(cohort_fate),
            )
            .route("/api/surveys/{survey}/release.csv", get(release_csv))
            .route("/api/surveys/{survey}/manifest.json", get(manifest_json))
            .route(
                "/api/surveys/{survey}/datapackage.json",
                get(datapackage_json),
            )
            .route("/api/health", get(health))
            .with_state(self.clone());
        let admin = Router::new()
            .route("/api/admin/surveys", post(create_survey).get(list_surveys))
            .route("/api/admin/xlsform", post(admin::import_xlsform))
            .route("/api/admin/surveys/{survey}", get(admin_status))
            .route("/api/admin/surveys/{survey}/invitations", post(invitations))
            .route("/api/admin/surveys/{survey}/close", post(close_survey))
            .route("/api/admin/surveys/{survey}/requeue", post(requeue))
            .route(
                "/api/admin/surveys/{survey}/cohorts/{cohort}/close",
                post(close_one_cohort),
            )
            .route(
                "/api/admin/surveys/{survey}/cohorts/{cohort}/leave-out",
                post(leave_out),
            )
            .with_state(self.clone());
        let peer = Router::new()
            .route(
                "/api/peer/surveys/{survey}/cohorts/{cohort}/result",
                put(cohort_result),
            )
            .route(
                "/api/peer/surveys/{survey}/cohorts/{cohort}/parts/{index}",
                put(share_part),
            )
            .with_state(self.clone());
        (public, admin, peer)
    }

    /// The services of this deployment and the key definitions are signed with.
    fn deployment(&self) -> Deployment {
        Deployment {
            collector_public_key: self.0.signing.public_key(),
            collector: self.0.cfg.public_url.clone(),
            msp: self.0.cfg.msp_url.clone(),
            rights: self.0.cfg.right_urls.clone(),
            build: self.0.build.clone(),
            builds: accepted_builds(self.0.build.as_deref(), &self.0.cfg.accepted_builds),
        }
    }

    fn admin(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        require_bearer(headers, &self.0.cfg.admin_token, "admin token")
    }

    /// The administrator, when the request carries the admin token.
    fn admin_of(&self, headers: &HeaderMap) -> Result<Admin, ApiError> {
        self.admin(headers).map(|()| Admin(()))
    }

    /// The services that hold a survey's uploads: the provider, or the right-masking services.
    ///
    /// # Errors
    /// 503 when this collector was restarted with fewer right-masking services (`--right`) than
    /// the survey was planned with: it cannot reach them all.
    fn upload_services(&self, share_services: usize) -> Result<Vec<(String, String)>, ApiError> {
        if share_services == 0 {
            return Ok(vec![(PROVIDER.to_owned(), self.0.cfg.msp_url.clone())]);
        }
        let known = self.0.cfg.right_urls.len();
        let urls = self.0.cfg.right_urls.get(..share_services).ok_or_else(|| {
            ApiError::unavailable(format!(
                "this survey uses {share_services} right-masking services but this collector \
                 is configured with {known}; restart it with every --right service"
            ))
        })?;
        Ok(urls
            .iter()
            .enumerate()
            .map(|(i, u)| (format!("right-masking service {i}"), u.clone()))
            .collect())
    }

    /// Every service that holds a survey's data and hand-overs: the services taking its uploads
    /// and, in share mode, the provider that lines the shares up too.
    ///
    /// # Errors
    /// As [`Collector::upload_services`].
    fn handover_services(&self, share_services: usize) -> Result<Vec<(String, String)>, ApiError> {
        let mut services = self.upload_services(share_services)?;
        if share_services > 0 {
            services.push((PROVIDER.to_owned(), self.0.cfg.msp_url.clone()));
        }
        Ok(services)
    }

    async fn call_peer(
        &self,
        name: &str,
        method: reqwest::Method,
        url: String,
        body: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, ApiError> {
        self.0
            .client
            .send(method, &url, body)
            .await
            .map_err(|e| match e {
                PeerError::Retry(m, _) => ApiError::unavailable(format!(
                    "{name} did not take the request ({m}); try again"
                )),
                PeerError::Rejected(m) => ApiError::bad_gateway(format!("{name} refused: {m}")),
            })
    }

    /// Open (or close) cohort `k` at every service that takes its uploads.
    async fn cohort_call(
        &self,
        survey: &str,
        cohort: u32,
        share_services: usize,
        step: CohortStep,
    ) -> Result<(), ApiError> {
        let action = step.path();
        for (name, url) in self.upload_services(share_services)? {
            self.call_peer(
                &name,
                reqwest::Method::POST,
                format!("{url}/api/peer/surveys/{survey}/cohorts/{cohort}/{action}"),
                None,
            )
            .await?;
        }
        Ok(())
    }

    fn definition_url(&self, survey: &str) -> String {
        format!("{}/api/surveys/{survey}/definition", self.0.cfg.public_url)
    }

    /// The web app's participant page for `survey` (and an invitation): the page loads the
    /// definition from its own origin only and checks the collector's signature.
    fn participant_url(&self, survey: &str, invite: Option<&str>) -> String {
        let invite = invite.map_or(String::new(), |t| format!("&invite={}", percent_encode(t)));
        format!(
            "{}/#/participate?survey={}{invite}",
            self.0.cfg.public_url,
            percent_encode(survey)
        )
    }
}

/// `GET /api/deployment`: where devices of this deployment may send, and the collector's public
/// key. Served from the same origin as the web app, so the page trusts only its own collector.
async fn deployment(State(col): State<Collector>) -> Response {
    json(StatusCode::OK, &col.deployment())
}

async fn health() -> Response {
    json(
        StatusCode::OK,
        &serde_json::json!({"role": "data collector", "ok": true, "log_lines_dropped": crate::log::dropped()}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A collector directory made before receipt lists counted builds opens with the column
    /// added.
    #[test]
    fn an_older_directory_gains_the_added_columns() {
        crate::store::assert_upgrade_gives_fresh_columns(SCHEMA, ADDED_COLUMNS);
    }

    /// A hand-over settles its cohort's invitations by nonce and by cohort (`handover.rs`):
    /// found through an index, not by reading every invitation of the survey once per upload.
    #[test]
    fn invitations_are_found_by_nonce_and_by_cohort_through_an_index() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        for condition in ["survey = ?1 AND nonce = ?2", "survey = ?1 AND cohort = ?2"] {
            let plan: Vec<String> = conn
                .prepare(&format!(
                    "EXPLAIN QUERY PLAN SELECT token_hash FROM invitations WHERE {condition}"
                ))
                .unwrap()
                .query_map(("survey", "value"), |r| r.get(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(
                plan.iter()
                    .all(|step| step.starts_with("SEARCH invitations USING INDEX")),
                "{condition}: {plan:?}"
            );
        }
    }

    #[test]
    fn percent_encoding_keeps_unreserved_only() {
        assert_eq!(
            percent_encode("http://a:1/x?invite=ab"),
            "http%3A%2F%2Fa%3A1%2Fx%3Finvite%3Dab"
        );
        assert_eq!(percent_encode("A-z_0.~"), "A-z_0.~");
    }
}
