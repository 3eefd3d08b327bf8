//! A right-masking service of share mode (seed 000 §3.5).
//!
//! Each participant's device splits its padded record `x` into `K₁` additive shares and sends
//! share `i` here, to service `i`, which alone holds `Bᵢ`. The service masks each share on
//! arrival and stores only `xⁱ Bᵢ` (`RightProvider::mask_shares`). When the cohort closes it hands
//! the block `Xⁱ Bᵢ` to the left-masking provider, gets `A Xⁱ Bᵢ` back, removes `Bᵢ`
//! (`RightProvider::unmask`) and hands `A Xⁱ` to the collector, which sums the `K₁` parts. No
//! device ever holds a right mask, and no single service ever sees more than one share of a
//! record.

use crate::error::{ApiError, ServerError, StoreError};
use crate::http::{ApiJson, ApiPath, json};
use crate::intake;
use crate::intake_http::{self, IntakeCore, IntakeService};
use crate::outbox::{self, OutboxItem};
use crate::states::IntakeCohort;
use crate::store::{ClosedSignal, f64s_to_blob};
use crate::wire::{LeftMasked, Registration, ShareBlock, SharePart, WireMatrix};
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post, put};
use nalgebra::DMatrix;
use orthomask_core::key::StreamId;
use orthomask_core::protocol::collusion::RightProvider;
use orthomask_survey::merkle::sha256_hex;
use orthomask_survey::upload::Upload;
use rusqlite::OptionalExtension;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// Configuration of right-masking service `index`.
#[derive(Clone, Debug)]
pub struct RightConfig {
    /// Its index `i` (0-based): it receives share `i` of every record.
    pub index: u32,
    /// Its own data directory.
    pub data_dir: PathBuf,
    /// Base URL participants reach it at.
    pub public_url: String,
    /// Base URL of the left-masking provider.
    pub msp_url: String,
    /// Base URL of the collector.
    pub collector_url: String,
    /// Bearer secret of service-to-service calls.
    pub peer_token: String,
    /// Public limits.
    pub limits: crate::http::Limits,
    /// Origins allowed by CORS.
    pub allowed_origins: Vec<String>,
}

const SCHEMA_EXTRA: &str = "
CREATE TABLE IF NOT EXISTS left_masked (
    survey TEXT NOT NULL,
    cohort INTEGER NOT NULL,
    body_hash TEXT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (survey, cohort)
);
";

/// The database file name inside the data directory.
pub const DB_FILE: &str = "right.sqlite3";
/// The key file name inside the data directory.
pub const KEY_FILE: &str = "right-keys.json";

struct Inner {
    cfg: RightConfig,
    core: IntakeCore,
    providers: Mutex<HashMap<(String, u32), Arc<RightProvider>>>,
}

/// A right-masking service's shared state.
#[derive(Clone)]
pub struct Right(Arc<Inner>);

impl Right {
    /// Open the store and key file and start the background tasks.
    ///
    /// # Errors
    /// [`ServerError`] when the data directory, store or key file cannot be used.
    pub async fn start(
        cfg: RightConfig,
        shutdown: watch::Receiver<bool>,
    ) -> Result<(Self, Vec<tokio::task::JoinHandle<()>>, ClosedSignal), ServerError> {
        let opened = intake_http::open_intake(
            &intake_http::IntakeFiles {
                data_dir: &cfg.data_dir,
                db_file: DB_FILE,
                schema_extra: SCHEMA_EXTRA,
                key_file: KEY_FILE,
                role: &format!("right-{}", cfg.index),
            },
            &cfg.peer_token,
            Arc::new(delivered),
            shutdown.clone(),
        )
        .await?;
        let right = Self(Arc::new(Inner {
            cfg,
            core: opened.core,
            providers: Mutex::new(HashMap::new()),
        }));
        let tasks = vec![
            opened.outbox_task,
            intake_http::spawn_worker(&right, "right", shutdown, |right: Self| async move {
                intake_http::each_closed_cohort(&right.0.core.store, "right", |survey, cohort| {
                    let right = right.clone();
                    async move { right.hand_over(&survey, cohort).await }
                })
                .await
            }),
        ];
        Ok((right, tasks, opened.closed))
    }

    /// The HTTP routes: public and peer.
    pub fn router(&self) -> (Router, Router) {
        let public = intake_http::public_routes()
            .route("/api/surveys/{survey}/uploads", post(upload))
            .route("/api/health", get(health))
            .with_state(self.clone());
        let peer = intake_http::peer_routes()
            .route("/api/peer/surveys/{survey}/status", get(status))
            .route(
                "/api/peer/surveys/{survey}/cohorts/{cohort}/left-masked",
                put(left_masked),
            )
            .with_state(self.clone());
        (public, peer)
    }

    /// `Bᵢ` of one cohort: its own key's subkey for the cohort, stream `AttributeMask { i }`.
    fn provider(
        &self,
        survey: &str,
        cohort: u32,
        p: usize,
    ) -> Result<Arc<RightProvider>, ApiError> {
        let mut cache = self
            .0
            .providers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = cache.get(&(survey.to_owned(), cohort)) {
            return Ok(found.clone());
        }
        let key =
            self.0.core.keys.get(survey).ok_or_else(|| {
                ApiError::not_found(format!("there is no survey {survey:?} here"))
            })?;
        let cohort_key = key.derive(StreamId::RightMaskKey { cohort });
        let provider = Arc::new(
            RightProvider::new(&cohort_key, self.0.cfg.index, p)
                .map_err(|e| ApiError::internal("building the right mask", e))?,
        );
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert((survey.to_owned(), cohort), provider.clone());
        Ok(provider)
    }

    fn share_registration(&self, survey: &str) -> Result<Registration, ApiError> {
        let reg = self.0.core.regs.get(survey)?;
        if reg.share_services == 0 {
            return Err(ApiError::bad_request(format!(
                "survey {survey:?} does not use share mode; its uploads go to the masking service provider"
            )));
        }
        if self.0.cfg.index as usize >= reg.share_services {
            return Err(ApiError::bad_request(format!(
                "survey {survey:?} uses {} right-masking services; this is service {}",
                reg.share_services, self.0.cfg.index
            )));
        }
        Ok(reg)
    }

    /// Queue the closed cohort's block `Xⁱ Bᵢ` for the left-masking provider.
    async fn hand_over(&self, survey: &str, cohort: u32) -> Result<(), StoreError> {
        let reg = self
            .0
            .core
            .regs
            .get(survey)
            .map_err(|e| StoreError::Corrupt(e.message().to_owned()))?;
        let s = survey.to_owned();
        let intake::CohortRows { rows, tokens, .. } = self
            .0
            .core
            .store
            .run(move |c| intake::cohort_rows(c, &s, cohort))
            .await?;
        let p = reg.p();
        let flat: Vec<f64> = rows.into_iter().flatten().collect();
        let block = ShareBlock {
            survey: survey.to_owned(),
            cohort,
            index: self.0.cfg.index,
            rows: tokens.iter().map(|t| sha256_hex(t.as_bytes())).collect(),
            block: WireMatrix::from_matrix(&DMatrix::from_row_slice(tokens.len(), p, &flat)),
        };
        let body = serde_json::to_vec(&block).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let url = format!(
            "{}/api/peer/surveys/{survey}/cohorts/{cohort}/shares/{}",
            self.0.cfg.msp_url, self.0.cfg.index
        );
        let s = survey.to_owned();
        self.0
            .core
            .store
            .run(move |c| -> Result<(), StoreError> {
                let status: Option<IntakeCohort> = c
                    .query_row(
                        "SELECT status FROM cohorts WHERE survey = ?1 AND cohort = ?2",
                        (&s, cohort),
                        |r| r.get(0),
                    )
                    .optional()?;
                // Only a closed cohort is sent, once (a second pass finds it sent).
                if let Some(sent) = status.and_then(|s| s.sent().ok()) {
                    intake::set_status(c, &s, cohort, sent, None)?;
                    outbox::enqueue(c, "share-block", &s, cohort, 0, &url, &body)?;
                }
                Ok(())
            })
            .await?;
        self.0.core.wake_outbox();
        Ok(())
    }
}

impl IntakeService for Right {
    fn core(&self) -> &IntakeCore {
        &self.0.core
    }
    const DATA_TABLES: &'static [&'static str] = &["uploads"];
    fn admit(&self, registration: &Registration) -> Result<(), ApiError> {
        if (self.0.cfg.index as usize) >= registration.share_services {
            return Err(ApiError::bad_request(format!(
                "right-masking service {} is not among the {} services of this survey",
                self.0.cfg.index, registration.share_services
            )));
        }
        Ok(())
    }
}

/// After a hand-over: the shares are with the provider; keep only the hashes.
fn delivered(c: &rusqlite::Connection, item: &OutboxItem) -> rusqlite::Result<()> {
    if item.kind == "share-block" {
        intake::erase_vectors(c, &item.survey, item.cohort)?;
    }
    Ok(())
}

async fn health(State(right): State<Right>) -> Response {
    json(
        StatusCode::OK,
        &serde_json::json!({"role": "right-masking service", "index": right.0.cfg.index, "ok": true}),
    )
}

async fn upload(
    State(right): State<Right>,
    ApiPath(survey): ApiPath<String>,
    ApiJson(upload): ApiJson<Upload>,
) -> Result<Response, ApiError> {
    let reg = right.share_registration(&survey)?;
    // Who may upload is decided before anything else about the upload.
    intake_http::authorise(&reg, &upload)?;
    let p = reg.p();
    upload
        .validate(&survey, p)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let provider = right.provider(&survey, upload.cohort, p)?;
    let share = upload.values.clone();
    let masked = crate::compute::core_task(move || {
        provider.mask_shares(&DMatrix::from_row_slice(1, p, &share))
    })
    .await
    .map_err(|e| ApiError::internal("masking the share", e))?
    .map_err(|e| ApiError::internal("masking the share", e))?;
    let blob = f64s_to_blob(masked.as_slice());
    intake_http::store_upload(&right, reg, upload, blob).await
}

async fn status(
    State(right): State<Right>,
    headers: HeaderMap,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    right.require_peer(&headers)?;
    right.0.core.regs.get(&survey)?;
    let value = right
        .0
        .core
        .store
        .run(move |c| -> Result<serde_json::Value, StoreError> {
            Ok(serde_json::json!({
                "survey": survey,
                "cohorts": intake::statuses(c, &survey)?,
                "outbox": outbox::summary(c, &survey)?,
            }))
        })
        .await?;
    Ok(json(StatusCode::OK, &value))
}

async fn left_masked(
    State(right): State<Right>,
    headers: HeaderMap,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
    ApiJson(message): ApiJson<LeftMasked>,
) -> Result<Response, ApiError> {
    right.require_peer(&headers)?;
    let reg = right.share_registration(&survey)?;
    if message.survey != survey || message.cohort != cohort || message.index != right.0.cfg.index {
        return Err(ApiError::bad_request(
            "the block's survey, cohort or index differs from the URL's or this service's",
        ));
    }
    let block = message.block.to_matrix().map_err(ApiError::bad_request)?;
    if block.ncols() != reg.p() {
        return Err(ApiError::bad_request(format!(
            "the block has {} columns; the survey's records have {}",
            block.ncols(),
            reg.p()
        )));
    }
    let canonical = serde_json::to_vec(&message).map_err(|e| ApiError::internal("block", e))?;
    let body_hash = sha256_hex(&canonical);
    let s = survey.clone();
    let previous = right
        .0
        .core
        .store
        .run(move |c| -> Result<Option<String>, ApiError> {
            let status = intake::cohort_status(c, &s, cohort)?;
            let previous: Option<String> = c
                .query_row(
                    "SELECT body_hash FROM left_masked WHERE survey = ?1 AND cohort = ?2",
                    (&s, cohort),
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| ApiError::from(StoreError::from(e)))?;
            if previous.is_none()
                && let Err(refused) = status.unmasked()
            {
                return Err(ApiError::conflict(format!(
                    "cohort {cohort} of survey {s:?}: {refused}; it expects no left-masked block"
                )));
            }
            Ok(previous)
        })
        .await?;
    match previous {
        Some(h) if h == body_hash => {
            return Ok(json(
                StatusCode::OK,
                &serde_json::json!({"cohort": cohort, "received": true}),
            ));
        }
        Some(_) => {
            return Err(ApiError::conflict(format!(
                "a different left-masked block for cohort {cohort} was already received"
            )));
        }
        None => {}
    }
    let provider = right.provider(&survey, cohort, reg.p())?;
    let unmasked = crate::compute::core_task(move || provider.unmask(&block))
        .await
        .map_err(|e| ApiError::internal("removing the right mask", e))?
        .map_err(|e| ApiError::unprocessable(format!("removing the right mask: {e}")))?;
    let s = survey.clone();
    let index = right.0.cfg.index;
    let url = format!(
        "{}/api/peer/surveys/{survey}/cohorts/{cohort}/parts/{index}",
        right.0.cfg.collector_url
    );
    right
        .0
        .core
        .store
        .run(move |c| -> Result<(), ApiError> {
            let sql = |e: rusqlite::Error| ApiError::from(StoreError::from(e));
            let hashes = intake::hashes(c, &s, cohort).map_err(sql)?;
            let part = SharePart {
                survey: s.clone(),
                cohort,
                index,
                merkle_root: orthomask_survey::merkle::merkle_root(&hashes),
                uploads: hashes.len(),
                block: WireMatrix::from_matrix(&unmasked),
            };
            let body = serde_json::to_vec(&part).map_err(|e| ApiError::internal("part", e))?;
            c.execute(
                "INSERT INTO left_masked (survey, cohort, body_hash, received_at) VALUES (?1, ?2, ?3, ?4)",
                (&s, cohort, &body_hash, crate::time::now_rfc3339()),
            )
            .map_err(sql)?;
            intake::set_status(c, &s, cohort, IntakeCohort::Unmasked, None).map_err(sql)?;
            outbox::enqueue(c, "share-part", &s, cohort, index, &url, &body).map_err(sql)?;
            Ok(())
        })
        .await?;
    right.0.core.wake_outbox();
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "received": true}),
    ))
}
