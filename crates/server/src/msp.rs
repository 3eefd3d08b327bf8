//! The masking service provider (seed 000 §2 step 3; seed 003 §3.1 step 3).
//!
//! It accepts participants' masked uploads `x·B_k` for open cohorts and, when a cohort is full
//! or closed by the collector, stacks them into `X_k B_k`, applies its own `A₂,k`
//! (`MaskingServiceProvider::mask_cohort`, keeping `1ₙ` fixed) and hands `A₂,k X_k B_k` to the
//! collector through its outbox. It holds only its own survey keys: never `B`, never `A₁`.
//! After the collector has the batch, the stored `x·B_k` are erased; the upload hashes stay for
//! the published receipt lists.
//!
//! In share mode (seed 000 §3.5) it is the left-masking provider: each right-masking service
//! sends it `Xⁱ Bᵢ`; it lines the `K₁` blocks up by participant, applies one `A` to each
//! (`LeftProvider::mask`) and sends `A Xⁱ Bᵢ` back to right-masking service `i`.

use crate::error::{ApiError, ServerError, StoreError};
use crate::http::{ApiJson, ApiPath, json};
use crate::intake;
use crate::intake_http::{self, IntakeCore, IntakeService};
use crate::outbox::{self, OutboxItem};
use crate::peer_auth::Peer;
use crate::peers::{IDENTITY_KEY_FILE, Party, PeerKeys};
use crate::states::{IntakeCohort, MaskingResult, OutboxKind, ShareCohort};
use crate::store::{ClosedSignal, blob_to_f64s, f64s_to_blob};
use crate::wire::{
    CohortResult, LeftMasked, MaskingOutcome, Registered, Registration, ShareBlock, WireMatrix,
};
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post, put};
use nalgebra::DMatrix;
use orthomask_core::key::StreamId;
use orthomask_core::protocol::collusion::LeftProvider;
use orthomask_core::protocol::share_handover::unmasker_of;
use orthomask_core::protocol::tm2::MaskingServiceProvider;
use orthomask_survey::merkle::sha256_hex;
use orthomask_survey::upload::Upload;
use rusqlite::OptionalExtension;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::watch;

/// Configuration of a masking service provider.
#[derive(Clone, Debug)]
pub struct MspConfig {
    /// Its own data directory (database and key file).
    pub data_dir: PathBuf,
    /// Base URL participants reach it at.
    pub public_url: String,
    /// Base URL of the collector it hands cohorts to.
    pub collector_url: String,
    /// Base URLs of the right-masking services, by index (share mode).
    pub right_urls: Vec<String>,
    /// The identity keys it pins: the collector's and each right-masking service's
    /// (`crate::peers`). Its own identity is `identity-key` in its data directory.
    pub peer_keys: PeerKeys,
    /// Public limits.
    pub limits: crate::http::Limits,
    /// Origins allowed by CORS (the web app's).
    pub allowed_origins: Vec<String>,
}

const SCHEMA_EXTRA: &str = "
CREATE TABLE IF NOT EXISTS share_cohorts (
    survey TEXT NOT NULL,
    cohort INTEGER NOT NULL,
    status TEXT NOT NULL,
    records INTEGER,
    note TEXT,
    PRIMARY KEY (survey, cohort)
);
CREATE TABLE IF NOT EXISTS share_blocks (
    survey TEXT NOT NULL,
    cohort INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    body_hash TEXT NOT NULL,
    row_ids TEXT NOT NULL,
    nrows INTEGER NOT NULL,
    block BLOB,
    received_at TEXT NOT NULL,
    PRIMARY KEY (survey, cohort, idx)
);
";

/// The database file name inside the data directory.
pub const DB_FILE: &str = "msp.sqlite3";
/// The key file name inside the data directory.
pub const KEY_FILE: &str = "msp-keys.json";

/// A stored share block: service index, row ids, values row by row.
type StoredBlock = (u32, Vec<String>, Vec<f64>);

struct Inner {
    cfg: MspConfig,
    core: IntakeCore,
}

/// The provider's shared state.
#[derive(Clone)]
pub struct Msp(Arc<Inner>);

impl Msp {
    /// Open the store and key file and start the background tasks.
    ///
    /// # Errors
    /// [`ServerError`] when the data directory, store or key file cannot be used.
    pub async fn start(
        cfg: MspConfig,
        shutdown: watch::Receiver<bool>,
    ) -> Result<(Self, Vec<tokio::task::JoinHandle<()>>, ClosedSignal), ServerError> {
        crate::keys::create_private_dir(&cfg.data_dir)?;
        let (identity, peers) = crate::peers::open(
            &cfg.data_dir.join(IDENTITY_KEY_FILE),
            Party::Provider,
            Some(&cfg.collector_url),
            None,
            &cfg.right_urls,
            &cfg.peer_keys,
        )?;
        let opened = intake_http::open_intake(
            &intake_http::IntakeFiles {
                data_dir: &cfg.data_dir,
                db_file: DB_FILE,
                schema_extra: SCHEMA_EXTRA,
                key_file: KEY_FILE,
                role: "msp",
            },
            identity,
            peers,
            cfg.limits.peer_answer_timeout,
            Arc::new(delivered),
            shutdown.clone(),
        )
        .await?;
        let msp = Self(Arc::new(Inner {
            cfg,
            core: opened.core,
        }));
        let tasks = vec![
            opened.outbox_task,
            intake_http::spawn_worker(&msp, "msp", shutdown, |msp: Self| async move {
                msp.process_pending().await
            }),
        ];
        Ok((msp, tasks, opened.closed))
    }

    /// The HTTP routes.
    pub fn router(&self) -> (Router, Router) {
        let public = intake_http::public_routes()
            .route("/api/surveys/{survey}/uploads", post(upload))
            .route("/api/health", get(health))
            .with_state(self.clone());
        let peer = intake_http::peer_routes()
            .route("/api/peer/surveys/{survey}/status", get(status))
            .route(
                "/api/peer/surveys/{survey}/cohorts/{cohort}/shares/{index}",
                put(share_block),
            )
            .with_state(self.clone());
        (public, peer)
    }

    async fn process_pending(&self) -> Result<(), StoreError> {
        intake_http::each_closed_cohort(&self.0.core.store, "msp", |survey, cohort| async move {
            self.process_basic(&survey, cohort).await
        })
        .await?;
        let collecting = self
            .0
            .core
            .store
            .run(|c| -> Result<Vec<(String, u32, usize)>, StoreError> {
                let mut stmt = c.prepare(
                    "SELECT s.survey, s.cohort, (SELECT COUNT(*) FROM share_blocks b
                        WHERE b.survey = s.survey AND b.cohort = s.cohort)
                     FROM share_cohorts s WHERE s.status = ?1",
                )?;
                let rows = stmt.query_map([ShareCohort::Collecting], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            })
            .await?;
        for (survey, cohort, blocks) in collecting {
            let Ok(reg) = self.0.core.regs.get(&survey) else {
                continue;
            };
            if blocks == reg.share_services
                && let Err(e) = self.process_shares(&reg, cohort).await
            {
                tracing::warn!("msp: survey {survey} cohort {cohort} (shares): {e}");
                if matches!(e, StoreError::Closed) {
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Mask one closed cohort of the basic protocol and queue it for the collector.
    async fn process_basic(&self, survey: &str, cohort: u32) -> Result<(), StoreError> {
        let reg = self
            .0
            .core
            .regs
            .get(survey)
            .map_err(|e| StoreError::Corrupt(e.message().to_owned()))?;
        let s = survey.to_owned();
        let intake::CohortRows {
            rows,
            hashes,
            mut nonces,
            ..
        } = self
            .0
            .core
            .store
            .run(move |c| intake::cohort_rows(c, &s, cohort))
            .await?;
        let n = rows.len();
        let outcome = if n == 0 {
            MaskingOutcome::Empty
        } else if let Some(reason) = reg.withheld_reason(n) {
            MaskingOutcome::Withheld { reason }
        } else {
            let key = self.0.core.keys.get(survey).ok_or_else(|| {
                StoreError::Corrupt(format!("no provider key for survey {survey}"))
            })?;
            let design = reg
                .design()
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let p = reg.p();
            let flat: Vec<f64> = rows.into_iter().flatten().collect();
            let masked = crate::compute::core_task(move || {
                let x = DMatrix::from_row_slice(n, p, &flat);
                MaskingServiceProvider::new(key, design).mask_cohort(cohort, &x)
            })
            .await
            .map_err(|e| StoreError::Corrupt(format!("masking task: {e}")))?
            .map_err(|e| StoreError::Corrupt(format!("masking: {e}")))?;
            MaskingOutcome::Masked {
                batch: WireMatrix::from_matrix(&masked),
            }
        };
        let result_of_masking = masking_result(&outcome);
        let note = match &outcome {
            MaskingOutcome::Withheld { reason } => Some(reason.clone()),
            _ => None,
        };
        let result = CohortResult {
            survey: survey.to_owned(),
            cohort,
            uploads: n,
            merkle_root: orthomask_survey::merkle::merkle_root(&hashes),
            // Sorted: the batch's rows are mixed by A₂,k, so the order would tell nothing anyway.
            nonces: {
                nonces.sort();
                nonces
            },
            outcome,
        };
        let body = serde_json::to_vec(&result).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let url = format!(
            "{}/api/peer/surveys/{survey}/cohorts/{cohort}/result",
            self.0.cfg.collector_url
        );
        let s = survey.to_owned();
        self.0
            .core
            .store
            .run(move |c| -> Result<(), StoreError> {
                let current: Option<IntakeCohort> = c
                    .query_row(
                        "SELECT status FROM cohorts WHERE survey = ?1 AND cohort = ?2",
                        (&s, cohort),
                        |r| r.get(0),
                    )
                    .optional()?;
                // Only a closed cohort is masked, once (a second pass finds it masked).
                if let Some(next) = current.and_then(|c| c.masked(result_of_masking).ok()) {
                    intake::set_status(c, &s, cohort, next, note.as_deref())?;
                    outbox::enqueue(c, OutboxKind::CohortResult, &s, cohort, 0, &url, &body)?;
                }
                Ok(())
            })
            .await?;
        self.0.core.wake_outbox();
        Ok(())
    }

    /// Line up the `K₁` share blocks of a cohort, left-mask each with the same `A`, and queue
    /// `A Xⁱ Bᵢ` for right-masking service `i` (or tell the collector the cohort is empty or
    /// withheld).
    async fn process_shares(&self, reg: &Registered, cohort: u32) -> Result<(), StoreError> {
        let survey = reg.survey.clone();
        let s = survey.clone();
        let blocks = self
            .0
            .core
            .store
            .run(move |c| -> Result<Vec<StoredBlock>, StoreError> {
                let mut stmt = c.prepare(
                    "SELECT idx, row_ids, block FROM share_blocks WHERE survey = ?1 AND cohort = ?2
                     ORDER BY idx",
                )?;
                let mut q = stmt.query((&s, cohort))?;
                let mut out = Vec::new();
                while let Some(r) = q.next()? {
                    let ids: Vec<String> = serde_json::from_str(&r.get::<_, String>(1)?)
                        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                    let blob: Option<Vec<u8>> = r.get(2)?;
                    let values = blob_to_f64s(&blob.unwrap_or_default())?;
                    out.push((r.get(0)?, ids, values));
                }
                Ok(out)
            })
            .await?;
        let mut common: BTreeSet<String> = blocks
            .first()
            .map(|b| b.1.iter().cloned().collect())
            .unwrap_or_default();
        for (_, ids, _) in &blocks[1.min(blocks.len())..] {
            let these: BTreeSet<&String> = ids.iter().collect();
            common.retain(|id| these.contains(id));
        }
        let n = common.len();
        let all: BTreeSet<&String> = blocks.iter().flat_map(|b| b.1.iter()).collect();
        let incomplete = all.len() - n;
        let p = reg.p();
        let key =
            self.0.core.keys.get(&survey).ok_or_else(|| {
                StoreError::Corrupt(format!("no provider key for survey {survey}"))
            })?;
        let mut deliveries: Vec<(OutboxKind, u32, String, Vec<u8>)> = Vec::new();
        let result_of_masking;
        let mut note = (incomplete > 0).then(|| {
            format!("{incomplete} participants' shares did not reach every right-masking service; they are left out")
        });
        let withheld = reg.withheld_reason(n);
        if n == 0 || withheld.is_some() {
            let outcome = match withheld {
                Some(reason) if n > 0 => MaskingOutcome::Withheld { reason },
                _ => MaskingOutcome::Empty,
            };
            result_of_masking = masking_result(&outcome);
            if let MaskingOutcome::Withheld { reason } = &outcome {
                note = Some(reason.clone());
            }
            let result = CohortResult {
                survey: survey.clone(),
                cohort,
                uploads: n,
                merkle_root: String::new(),
                nonces: Vec::new(),
                outcome,
            };
            deliveries.push((
                OutboxKind::CohortResult,
                0,
                format!(
                    "{}/api/peer/surveys/{survey}/cohorts/{cohort}/result",
                    self.0.cfg.collector_url
                ),
                serde_json::to_vec(&result).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            ));
        } else {
            result_of_masking = MaskingResult::Masked;
            let order: Vec<String> = common.into_iter().collect();
            let left_key = key.derive(StreamId::ProviderLeftMask { cohort });
            let right_urls = self.0.cfg.right_urls.clone();
            let s = survey.clone();
            let k = reg.share_services;
            deliveries = crate::compute::core_task(move || {
                let left = LeftProvider::new(left_key, 0);
                let mut out = Vec::new();
                for (index, ids, values) in blocks {
                    let position: HashMap<&String, usize> =
                        ids.iter().enumerate().map(|(i, id)| (id, i)).collect();
                    let mut aligned = DMatrix::zeros(order.len(), p);
                    for (row, id) in order.iter().enumerate() {
                        let from = position[id];
                        aligned
                            .row_mut(row)
                            .copy_from_slice(&values[from * p..(from + 1) * p]);
                    }
                    let masked = left
                        .mask(&aligned)
                        .map_err(|e| StoreError::Corrupt(format!("left mask: {e}")))?;
                    let message = LeftMasked {
                        survey: s.clone(),
                        cohort,
                        index,
                        block: WireMatrix::from_matrix(&masked),
                    };
                    // `A Xⁱ Bᵢ` goes to the service that unmasks share i: the next one on the
                    // ring with three or more services (`share_handover`), never back to the
                    // service that holds `Xⁱ`.
                    let unmasker = unmasker_of(index, k);
                    let url = right_urls.get(unmasker as usize).ok_or_else(|| {
                        StoreError::Corrupt(format!("no URL for right-masking service {unmasker}"))
                    })?;
                    out.push((
                        OutboxKind::LeftMasked,
                        index,
                        format!("{url}/api/peer/surveys/{s}/cohorts/{cohort}/left-masked"),
                        serde_json::to_vec(&message)
                            .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                    ));
                }
                Ok::<_, StoreError>(out)
            })
            .await
            .map_err(|e| StoreError::Corrupt(format!("masking task: {e}")))??;
        }
        let s = survey.clone();
        self.0
            .core
            .store
            .run(move |c| -> Result<(), StoreError> {
                let current: Option<ShareCohort> = c
                    .query_row(
                        "SELECT status FROM share_cohorts WHERE survey = ?1 AND cohort = ?2",
                        (&s, cohort),
                        |r| r.get(0),
                    )
                    .optional()?;
                // Settled once: a second pass over a settled cohort does nothing.
                let Some(next) = current.and_then(|c| c.settle(result_of_masking).ok()) else {
                    return Ok(());
                };
                c.execute(
                    "UPDATE share_cohorts SET status = ?3, records = ?4, note = ?5
                     WHERE survey = ?1 AND cohort = ?2",
                    (&s, cohort, next, n, note),
                )?;
                for (kind, part, url, body) in &deliveries {
                    outbox::enqueue(c, *kind, &s, cohort, *part, url, body)?;
                }
                Ok(())
            })
            .await?;
        self.0.core.wake_outbox();
        Ok(())
    }
}

fn masking_result(outcome: &MaskingOutcome) -> MaskingResult {
    match outcome {
        MaskingOutcome::Masked { .. } => MaskingResult::Masked,
        MaskingOutcome::Empty => MaskingResult::Empty,
        MaskingOutcome::Withheld { .. } => MaskingResult::Withheld,
    }
}

impl IntakeService for Msp {
    fn core(&self) -> &IntakeCore {
        &self.0.core
    }
    fn collector_url(&self) -> &str {
        &self.0.cfg.collector_url
    }
    const VECTOR_COLUMNS: &'static [(&'static str, &'static str)] =
        &[("uploads", "masked"), ("share_blocks", "block")];
    fn admit(&self, registration: &Registration) -> Result<(), ApiError> {
        if registration.share_services > self.0.cfg.right_urls.len() {
            return Err(ApiError::bad_request(format!(
                "share mode with {} right-masking services, but this provider knows only {} (its \
                 operator restarts it with every service's --right and --right-key)",
                registration.share_services,
                self.0.cfg.right_urls.len()
            )));
        }
        Ok(())
    }
}

/// After a hand-over: erase what the provider no longer needs.
fn delivered(c: &rusqlite::Connection, item: &OutboxItem) -> rusqlite::Result<()> {
    match item.kind {
        OutboxKind::CohortResult => intake::erase_vectors(c, &item.survey, item.cohort),
        OutboxKind::LeftMasked => {
            c.execute(
                "UPDATE share_blocks SET block = NULL WHERE survey = ?1 AND cohort = ?2
                 AND NOT EXISTS (SELECT 1 FROM outbox WHERE kind = ?3
                     AND survey = ?1 AND cohort = ?2 AND state = ?4)",
                (
                    &item.survey,
                    item.cohort,
                    OutboxKind::LeftMasked,
                    crate::states::OutboxState::Pending,
                ),
            )?;
            Ok(())
        }
        OutboxKind::ShareBlock | OutboxKind::SharePart | OutboxKind::HandOn => Ok(()),
    }
}

async fn health() -> Response {
    json(
        StatusCode::OK,
        &serde_json::json!({"role": "masking service provider", "ok": true, "log_lines_dropped": crate::log::dropped()}),
    )
}

async fn upload(
    State(msp): State<Msp>,
    ApiPath(survey): ApiPath<String>,
    ApiJson(upload): ApiJson<Upload>,
) -> Result<Response, ApiError> {
    let reg = intake_http::registration_for_upload(&msp.0.core.regs, &survey, &upload)?;
    // Who may upload is decided before anything else about the upload.
    intake_http::admit_upload(&reg, &survey, &upload)?;
    if reg.share_services > 0 {
        return Err(ApiError::bad_request(format!(
            "survey {survey:?} uses share mode: each share goes to its right-masking service \
             (masking.share_mode.providers), never to the provider"
        )));
    }
    let blob = f64s_to_blob(&upload.values);
    intake_http::store_upload(&msp, reg, upload, blob, intake::StoredForm::RightMasked).await
}

async fn status(
    State(msp): State<Msp>,
    peer: Peer,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    peer.require(Party::Collector, "a survey's status at the provider")?;
    msp.0.core.regs.get(&survey)?;
    let value = msp
        .0
        .core
        .store
        .run(move |c| -> Result<serde_json::Value, StoreError> {
            let mut stmt = c.prepare(
                "SELECT cohort, status, records, note FROM share_cohorts WHERE survey = ?1
                 ORDER BY cohort",
            )?;
            let shares: Vec<serde_json::Value> = stmt
                .query_map([&survey], |r| {
                    Ok(serde_json::json!({
                        "cohort": r.get::<_, u32>(0)?,
                        "status": r.get::<_, ShareCohort>(1)?,
                        "records": r.get::<_, Option<i64>>(2)?,
                        "note": r.get::<_, Option<String>>(3)?,
                    }))
                })?
                .collect::<Result<_, _>>()?;
            Ok(serde_json::json!({
                "survey": survey,
                "cohorts": intake::statuses(c, &survey)?,
                "share_cohorts": shares,
                "outbox": outbox::summary(c, &survey)?,
            }))
        })
        .await?;
    Ok(json(StatusCode::OK, &value))
}

async fn share_block(
    State(msp): State<Msp>,
    peer: Peer,
    ApiPath((survey, cohort, index)): ApiPath<(String, u32, u32)>,
    body: Body,
) -> Result<Response, ApiError> {
    // Service `i`'s block is service `i`'s to send: no other party can put rows in its place.
    peer.require(
        Party::Right(index),
        &format!("handing the provider share block {index}"),
    )?;
    let reg = msp.0.core.regs.get(&survey)?;
    let (block, _held): (ShareBlock, _) = peer
        .read_json(body, reg.body_limits().share_block, "the share block")
        .await?;
    if reg.share_services == 0 {
        return Err(ApiError::bad_request(format!(
            "survey {survey:?} does not use share mode"
        )));
    }
    if index as usize >= reg.share_services {
        return Err(ApiError::bad_request(format!(
            "survey {survey:?} has {} right-masking services; there is no service {index}",
            reg.share_services
        )));
    }
    if block.survey != survey || block.cohort != cohort || block.index != index {
        return Err(ApiError::bad_request(
            "the block's survey, cohort or index differs from the URL's",
        ));
    }
    let matrix = block.block.to_matrix().map_err(ApiError::bad_request)?;
    if matrix.ncols() != reg.p() || matrix.nrows() != block.rows.len() {
        return Err(ApiError::bad_request(format!(
            "the block is {}x{} with {} row ids; expected {} columns and one id per row",
            matrix.nrows(),
            matrix.ncols(),
            block.rows.len(),
            reg.p()
        )));
    }
    let canonical = serde_json::to_vec(&block).map_err(|e| ApiError::internal("block", e))?;
    let body_hash = sha256_hex(&canonical);
    let ids = serde_json::to_string(&block.rows).map_err(|e| ApiError::internal("block", e))?;
    let blob = crate::store::matrix_to_blob(&matrix);
    let k = reg.share_services;
    let complete = msp
        .0
        .core
        .store
        .run(move |c| -> Result<bool, ApiError> {
            let sql = |e: rusqlite::Error| ApiError::from(StoreError::from(e));
            c.execute(
                "INSERT OR IGNORE INTO share_cohorts (survey, cohort, status) VALUES (?1, ?2, ?3)",
                (&survey, cohort, ShareCohort::Collecting),
            )
            .map_err(sql)?;
            let existing: Option<String> = c
                .query_row(
                    "SELECT body_hash FROM share_blocks WHERE survey = ?1 AND cohort = ?2 AND idx = ?3",
                    (&survey, cohort, index),
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql)?;
            match existing {
                Some(h) if h == body_hash => return Ok(false),
                Some(_) => {
                    return Err(ApiError::conflict(format!(
                        "right-masking service {index} already handed over a different block for cohort {cohort}"
                    )));
                }
                None => {}
            }
            let status: ShareCohort = c
                .query_row(
                    "SELECT status FROM share_cohorts WHERE survey = ?1 AND cohort = ?2",
                    (&survey, cohort),
                    |r| r.get(0),
                )
                .map_err(sql)?;
            if !status.takes_blocks() {
                return Err(ApiError::conflict(format!(
                    "cohort {cohort} of survey {survey:?} was already left-masked without service {index}"
                )));
            }
            c.execute(
                "INSERT INTO share_blocks (survey, cohort, idx, body_hash, row_ids, nrows, block, received_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                (
                    &survey,
                    cohort,
                    index,
                    &body_hash,
                    &ids,
                    matrix.nrows(),
                    &blob,
                    crate::time::now_rfc3339(),
                ),
            )
            .map_err(sql)?;
            let count: usize = c
                .query_row(
                    "SELECT COUNT(*) FROM share_blocks WHERE survey = ?1 AND cohort = ?2",
                    (&survey, cohort),
                    |r| r.get(0),
                )
                .map_err(sql)?;
            Ok(count == k)
        })
        .await?;
    if complete {
        msp.0.core.wake_worker();
    }
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "index": index, "received": true}),
    ))
}
