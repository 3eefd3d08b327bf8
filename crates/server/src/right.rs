//! A right-masking service of share mode (seed 000 §3.5).
//!
//! Each participant's device splits its padded record `x` into `K₁` additive shares and sends
//! share `i` here, to service `i`, which alone holds `Bᵢ`. The service stores each share as it
//! arrives (durably, group-committed, like the provider's uploads) and acknowledges it. When the
//! cohort closes it masks the cohort's shares in one blocked product (`RightProvider::mask_shares`
//! on the whole block), hands `Xⁱ Bᵢ` to the left-masking provider and erases the shares, gets
//! `A Xⁱ Bᵢ` back, removes `Bᵢ` from its leading columns (`share_handover`) and hands its part to
//! the collector, which sums the `K₁` parts. No device ever holds a right mask, and no single
//! service ever sees more than one share of a record.
//!
//! # Why the shares are masked at the hand-over, not on arrival (issue 24)
//! A keyed `Bᵢ` is a stream of `p − 1` Householder reflectors regenerated from the key whenever
//! it is applied. Masking one share on arrival therefore drew `p²/2` normals and applied them to
//! one row: about 4 ms at `p = 1 000` on one core (three quarters of it generating the
//! reflectors), which held two cores to a few hundred shares a second. Applied to a cohort's
//! block, the reflectors are generated once and applied in panels of
//! [`PANEL`](orthomask_core::mask::PANEL) as `I − Y T Yᵀ` by matrix products: 16–24 ms for 126
//! shares, 0.1–0.2 ms a share, and an upload costs what a provider's upload costs. What this
//! service keeps at rest until the hand-over is the share `xⁱ` instead of `xⁱ Bᵢ`; the threat
//! model (`docs/threat-model.md`, stores) says what that changes.

use crate::error::{ApiError, ServerError, StoreError};
use crate::http::{ApiJson, ApiPath, json};
use crate::intake::{self, StoredForm};
use crate::intake_http::{self, IntakeCore, IntakeService};
use crate::outbox::{self, OutboxItem};
use crate::peer_auth::Peer;
use crate::peers::{IDENTITY_KEY_FILE, Party, PeerKeys};
use crate::states::{IntakeCohort, OutboxKind};
use crate::store::{ClosedSignal, f64s_to_blob};
use crate::wire::{
    HandOn, LeftMasked, Registered, Registration, ShareBlock, SharePart, WireFixed, WireMatrix,
};
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post, put};
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::collusion::RightProvider;
use orthomask_core::protocol::share_handover::{
    UnmaskingKey, masked_part, masks_parts, ring_seed, unmasker_of,
};
use orthomask_survey::merkle::sha256_hex;
use orthomask_survey::upload::Upload;
use rusqlite::OptionalExtension;
use std::path::PathBuf;
use std::sync::Arc;
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
    /// Base URLs of every right-masking service of the deployment, by index (its own among
    /// them): share mode hands each cohort's unmasking key on to the next service.
    pub right_urls: Vec<String>,
    /// The identity keys it pins: the collector's, the provider's and every right-masking
    /// service's in index order, its own included (`crate::peers`). Its own identity is
    /// `identity-key` in its data directory.
    pub peer_keys: PeerKeys,
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
CREATE TABLE IF NOT EXISTS hand_ons (
    survey TEXT NOT NULL,
    cohort INTEGER NOT NULL,
    from_idx INTEGER NOT NULL,
    body_hash TEXT NOT NULL,
    key BLOB,
    seed TEXT,
    PRIMARY KEY (survey, cohort, from_idx)
);
";

/// The database file name inside the data directory.
pub const DB_FILE: &str = "right.sqlite3";
/// The key file name inside the data directory.
pub const KEY_FILE: &str = "right-keys.json";

struct Inner {
    cfg: RightConfig,
    core: IntakeCore,
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
        crate::keys::create_private_dir(&cfg.data_dir)?;
        let (identity, peers) = crate::peers::open(
            &cfg.data_dir.join(IDENTITY_KEY_FILE),
            Party::Right(cfg.index),
            Some(&cfg.collector_url),
            Some(&cfg.msp_url),
            &cfg.right_urls,
            &cfg.peer_keys,
        )?;
        let opened = intake_http::open_intake(
            &intake_http::IntakeFiles {
                data_dir: &cfg.data_dir,
                db_file: DB_FILE,
                schema_extra: SCHEMA_EXTRA,
                key_file: KEY_FILE,
                role: &format!("right-{}", cfg.index),
            },
            identity,
            peers,
            cfg.limits.peer_answer_timeout,
            Arc::new(delivered),
            shutdown.clone(),
        )
        .await?;
        let right = Self(Arc::new(Inner {
            cfg,
            core: opened.core,
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
            .route(
                "/api/peer/surveys/{survey}/cohorts/{cohort}/hand-on/{from}",
                put(hand_on),
            )
            .with_state(self.clone());
        (public, peer)
    }

    /// This service's partial unmasking key `Bᵀ[:, :p₁]` for `cohort` (`RightProvider::unmasking_key`),
    /// computed off the request threads.
    async fn own_unmasking_key(
        &self,
        survey: &str,
        cohort: u32,
        reg: &Registered,
    ) -> Result<UnmaskingKey, ApiError> {
        let provider = self.provider(survey, cohort, reg.p()).await?;
        let q = reg.p1();
        crate::compute::core_task(move || provider.unmasking_key(q))
            .await
            .map_err(|e| ApiError::internal("the unmasking key", e))?
            .map_err(|e| ApiError::internal("the unmasking key", e))
    }

    /// `Bᵢ` of `cohort`: the survey key's subkey for the cohort, stream `AttributeMask { i }`.
    /// Built on a blocking thread and not kept: building draws only the `p` signs of its
    /// reflectors (0.2 ms at `p = 1 000`); the reflectors themselves are generated from the key
    /// by each product that applies them, and it is needed only at the hand-over and the unmasking.
    async fn provider(
        &self,
        survey: &str,
        cohort: u32,
        p: usize,
    ) -> Result<RightProvider, ApiError> {
        let key =
            self.0.core.keys.get(survey).ok_or_else(|| {
                ApiError::not_found(format!("there is no survey {survey:?} here"))
            })?;
        let cohort_key = key.derive(StreamId::RightMaskKey { cohort });
        let index = self.0.cfg.index;
        crate::compute::core_task(move || RightProvider::new(&cohort_key, index, p))
            .await
            .map_err(|e| ApiError::internal("building the right mask", e))?
            .map_err(|e| ApiError::internal("building the right mask", e))
    }

    /// The cohort's block `Xⁱ Bᵢ`, rows in arrival order: the rows stored as shares
    /// ([`StoredForm::Share`]) masked with `Bᵢ` in one product — `RightProvider::mask_shares` on
    /// the block takes the core's blocked path (panels of reflectors as `I − Y T Yᵀ`, never a
    /// dense `p × p` matrix) — and the rows an older version masked on arrival as they are.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] for a stored row that is not `p` values long, or when the mask
    /// cannot be built or applied.
    async fn masked_block(
        &self,
        survey: &str,
        cohort: u32,
        p: usize,
        rows: Vec<Vec<f64>>,
        forms: &[StoredForm],
    ) -> Result<DMatrix<f64>, StoreError> {
        if let Some(bad) = rows.iter().position(|r| r.len() != p) {
            return Err(StoreError::Corrupt(format!(
                "survey {survey} cohort {cohort}: stored row {bad} holds {} values, not {p}",
                rows[bad].len()
            )));
        }
        let flat: Vec<f64> = rows.iter().flatten().copied().collect();
        let mut block = DMatrix::from_row_slice(rows.len(), p, &flat);
        let shares: Vec<usize> = (0..forms.len())
            .filter(|&i| forms[i] == StoredForm::Share)
            .collect();
        if shares.is_empty() {
            return Ok(block);
        }
        let failed = |e: &dyn std::fmt::Display| {
            StoreError::Corrupt(format!(
                "survey {survey} cohort {cohort}: masking the shares: {e}"
            ))
        };
        let provider = self
            .provider(survey, cohort, p)
            .await
            .map_err(|e| failed(&e.message()))?;
        crate::compute::core_task(move || {
            let masked = provider.mask_shares(&block.select_rows(shares.iter()))?;
            for (k, &i) in shares.iter().enumerate() {
                block.set_row(i, &masked.row(k));
            }
            Ok::<_, orthomask_core::protocol::ProtocolError>(block)
        })
        .await
        .map_err(|e| failed(&e))?
        .map_err(|e| failed(&e))
    }

    fn share_registration(&self, survey: &str) -> Result<Arc<Registered>, ApiError> {
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

    /// Queue the closed cohort's block `Xⁱ Bᵢ` ([`Self::masked_block`]) for the left-masking
    /// provider and erase the stored shares in the same transaction: from then on the block
    /// waiting in the outbox is this service's only copy (erased in turn at the release).
    async fn hand_over(&self, survey: &str, cohort: u32) -> Result<(), StoreError> {
        let reg = self
            .0
            .core
            .regs
            .get(survey)
            .map_err(|e| StoreError::Corrupt(e.message().to_owned()))?;
        let s = survey.to_owned();
        let intake::CohortRows {
            rows,
            tokens,
            forms,
            ..
        } = self
            .0
            .core
            .store
            .run(move |c| intake::cohort_rows(c, &s, cohort))
            .await?;
        let masked = self
            .masked_block(survey, cohort, reg.p(), rows, &forms)
            .await?;
        let block = ShareBlock {
            survey: survey.to_owned(),
            cohort,
            index: self.0.cfg.index,
            rows: tokens.iter().map(|t| sha256_hex(t.as_bytes())).collect(),
            block: WireMatrix::from_matrix(&masked),
        };
        let body = serde_json::to_vec(&block).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let url = format!(
            "{}/api/peer/surveys/{survey}/cohorts/{cohort}/shares/{}",
            self.0.cfg.msp_url, self.0.cfg.index
        );
        let hand_on = self
            .hand_on_for(&reg, survey, cohort)
            .await
            .map_err(|e| StoreError::Corrupt(e.message().to_owned()))?;
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
                    outbox::enqueue(c, OutboxKind::ShareBlock, &s, cohort, 0, &url, &body)?;
                    if let Some((to, url, body)) = &hand_on {
                        outbox::enqueue(c, OutboxKind::HandOn, &s, cohort, *to, url, body)?;
                    }
                    intake::erase_vectors(c, &s, cohort)?;
                }
                Ok(())
            })
            .await?;
        self.0.core.wake_outbox();
        Ok(())
    }
}

impl Right {
    /// The hand-on of this service's share of a cohort to the service that unmasks it
    /// (`share_handover`): `None` when this service unmasks its own share (two services); else
    /// the receiving service's index, address and the message — the partial key `Wᵢ` and, with
    /// three or more services, this service's ring seed for the cohort.
    async fn hand_on_for(
        &self,
        reg: &Registered,
        survey: &str,
        cohort: u32,
    ) -> Result<Option<(u32, String, Vec<u8>)>, ApiError> {
        let me = self.0.cfg.index;
        let k = reg.share_services;
        let to = unmasker_of(me, k);
        if to == me {
            return Ok(None);
        }
        let base = self.0.cfg.right_urls.get(to as usize).ok_or_else(|| {
            ApiError::unavailable(format!(
                "this right-masking service does not know the address of service {to}; restart \
                 it with every --right service"
            ))
        })?;
        let survey_key =
            self.0.core.keys.get(survey).ok_or_else(|| {
                ApiError::not_found(format!("there is no survey {survey:?} here"))
            })?;
        let key = self.own_unmasking_key(survey, cohort, reg).await?;
        let message = HandOn {
            survey: survey.to_owned(),
            cohort,
            from: me,
            key: WireMatrix::from_matrix(key.matrix()),
            seed: masks_parts(k).then(|| ring_seed(&survey_key, cohort).to_hex()),
        };
        let body = serde_json::to_vec(&message).map_err(|e| ApiError::internal("hand-on", e))?;
        Ok(Some((
            to,
            format!("{base}/api/peer/surveys/{survey}/cohorts/{cohort}/hand-on/{me}"),
            body,
        )))
    }
}

impl IntakeService for Right {
    fn core(&self) -> &IntakeCore {
        &self.0.core
    }
    fn collector_url(&self) -> &str {
        &self.0.cfg.collector_url
    }
    const VECTOR_COLUMNS: &'static [(&'static str, &'static str)] = &[
        ("uploads", "masked"),
        ("hand_ons", "key"),
        ("hand_ons", "seed"),
    ];
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
    match item.kind {
        // The shares are with the provider: keep only the hashes. (Erased already when the
        // block was queued, unless an older version queued it; the outbox then checkpoints the
        // write-ahead log, so the erased values leave the files too.)
        OutboxKind::ShareBlock => intake::erase_vectors(c, &item.survey, item.cohort),
        // The part is with the collector: the key and seed handed on for it are no longer
        // needed, and they are key material.
        OutboxKind::SharePart => {
            c.execute(
                "UPDATE hand_ons SET key = NULL, seed = NULL WHERE survey = ?1 AND cohort = ?2",
                (&item.survey, item.cohort),
            )?;
            Ok(())
        }
        OutboxKind::CohortResult | OutboxKind::LeftMasked | OutboxKind::HandOn => Ok(()),
    }
}

async fn health(State(right): State<Right>) -> Response {
    json(
        StatusCode::OK,
        &serde_json::json!({"role": "right-masking service", "index": right.0.cfg.index, "ok": true, "log_lines_dropped": crate::log::dropped()}),
    )
}

async fn upload(
    State(right): State<Right>,
    ApiPath(survey): ApiPath<String>,
    ApiJson(upload): ApiJson<Upload>,
) -> Result<Response, ApiError> {
    intake_http::registration_for_upload(&right.0.core.regs, &survey, &upload)?;
    let reg = right.share_registration(&survey)?;
    // Who may upload is decided before anything else about the upload; then whether the share
    // is one an honest device could have made (its QA entry, its padding, its size).
    intake_http::admit_upload(&reg, &survey, &upload)?;
    // Stored as uploaded, and masked with the rest of its cohort at the hand-over
    // (`Right::masked_block`; module documentation).
    let blob = f64s_to_blob(&upload.values);
    intake_http::store_upload(&right, reg, upload, blob, StoredForm::Share).await
}

async fn status(
    State(right): State<Right>,
    peer: Peer,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    peer.require(
        Party::Collector,
        "a survey's status at a right-masking service",
    )?;
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
    peer: Peer,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
    body: Body,
) -> Result<Response, ApiError> {
    peer.require(Party::Provider, "handing on a left-masked block")?;
    let reg = right.share_registration(&survey)?;
    let (message, _held): (LeftMasked, _) = peer
        .read_json(body, reg.body_limits().left_masked, "the left-masked block")
        .await?;
    let me = right.0.cfg.index;
    let k = reg.share_services;
    if message.survey != survey || message.cohort != cohort {
        return Err(ApiError::bad_request(
            "the block's survey or cohort differs from the URL's",
        ));
    }
    // The ring (`share_handover`): this service unmasks exactly one share, never its own when
    // there are three or more services.
    if message.index as usize >= k || unmasker_of(message.index, k) != me {
        return Err(ApiError::bad_request(format!(
            "service {me} does not unmask share {}; service {} does",
            message.index,
            unmasker_of(message.index.min(k as u32 - 1), k)
        )));
    }
    let block = message.block.to_matrix().map_err(ApiError::bad_request)?;
    if block.ncols() != reg.p() {
        return Err(ApiError::bad_request(format!(
            "the block has {} columns; the survey's records have {}",
            block.ncols(),
            reg.p()
        )));
    }
    // A cohort below the floor is never unmasked, whatever the provider sent (the floor is the
    // signed template's, `orthomask_survey::floors`).
    if let Some(why) = reg.withheld_reason(block.nrows()) {
        return Err(ApiError::unprocessable(format!(
            "the left-masked block should have been withheld: {why}"
        )));
    }
    let canonical = serde_json::to_vec(&message).map_err(|e| ApiError::internal("block", e))?;
    let body_hash = sha256_hex(&canonical);
    let s = survey.clone();
    let from = message.index;
    let (previous, hand_on) = right
        .0
        .core
        .store
        .run(move |c| -> Result<(Option<String>, Option<StoredHandOn>), ApiError> {
            let sql = |e: rusqlite::Error| ApiError::from(StoreError::from(e));
            let status = intake::cohort_status(c, &s, cohort)?;
            let previous: Option<String> = c
                .query_row(
                    "SELECT body_hash FROM left_masked WHERE survey = ?1 AND cohort = ?2",
                    (&s, cohort),
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql)?;
            if previous.is_none()
                && let Err(refused) = status.unmasked()
            {
                return Err(ApiError::conflict(format!(
                    "cohort {cohort} of survey {s:?}: {refused}; it expects no left-masked block"
                )));
            }
            let hand_on = c
                .query_row(
                    "SELECT key, seed FROM hand_ons WHERE survey = ?1 AND cohort = ?2 AND from_idx = ?3",
                    (&s, cohort, from),
                    |r| Ok((r.get::<_, Option<Vec<u8>>>(0)?, r.get::<_, Option<String>>(1)?)),
                )
                .optional()
                .map_err(sql)?;
            Ok((previous, hand_on))
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
    let survey_key = right
        .0
        .core
        .keys
        .get(&survey)
        .ok_or_else(|| ApiError::not_found(format!("there is no survey {survey:?} here")))?;
    let q = reg.p1();
    let p = reg.p();
    // The partial key of the share's own service: this service's own (two services), or the one
    // its ring predecessor handed on (three or more), with that service's seed.
    let (key, received_seed) = if from == me {
        (right.own_unmasking_key(&survey, cohort, &reg).await?, None)
    } else {
        let Some((Some(bytes), seed)) = hand_on else {
            return Err(ApiError::unavailable(format!(
                "right-masking service {from} has not handed on its unmasking key for cohort \
                 {cohort} yet; try again"
            )));
        };
        let values = crate::store::blob_to_f64s(&bytes)?;
        let key = UnmaskingKey::from_matrix(DMatrix::from_row_slice(p, q, &values))
            .map_err(|e| ApiError::internal("the stored unmasking key", e))?;
        let seed = seed
            .map(|h| Key::from_hex(&h))
            .transpose()
            .map_err(|e| ApiError::internal("the stored ring seed", e))?;
        (key, seed)
    };
    let own_seed = masks_parts(k).then(|| ring_seed(&survey_key, cohort));
    let part = crate::compute::core_task(move || {
        let scale = orthomask_core::protocol::qa::max_row_norm(&block);
        let y = key.unmask_leading(&block)?;
        Ok::<_, orthomask_core::protocol::ProtocolError>((
            masked_part(&y, received_seed.as_ref(), own_seed.as_ref())?,
            scale,
        ))
    })
    .await
    .map_err(|e| ApiError::internal("removing the right mask", e))?
    .map_err(|e| ApiError::unprocessable(format!("removing the right mask: {e}")))?;
    let (fixed, scale) = part;
    let s = survey.clone();
    let url = format!(
        "{}/api/peer/surveys/{survey}/cohorts/{cohort}/parts/{me}",
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
                index: me,
                merkle_root: orthomask_survey::merkle::merkle_root(&hashes),
                uploads: hashes.len(),
                scale,
                block: WireFixed::from_fixed(&fixed),
            };
            let body = serde_json::to_vec(&part).map_err(|e| ApiError::internal("part", e))?;
            c.execute(
                "INSERT INTO left_masked (survey, cohort, body_hash, received_at) VALUES (?1, ?2, ?3, ?4)",
                (&s, cohort, &body_hash, crate::time::now_rfc3339()),
            )
            .map_err(sql)?;
            intake::set_status(c, &s, cohort, IntakeCohort::Unmasked, None).map_err(sql)?;
            outbox::enqueue(c, OutboxKind::SharePart, &s, cohort, me, &url, &body)
                .map_err(sql)?;
            Ok(())
        })
        .await?;
    right.0.core.wake_outbox();
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "received": true}),
    ))
}

/// A stored hand-on: the partial key's values and the ring seed.
type StoredHandOn = (Option<Vec<u8>>, Option<String>);

/// `PUT /api/peer/surveys/{id}/cohorts/{k}/hand-on/{from}` (right-masking service `from`,
/// signed as itself): service `from` hands this service the partial key that unmasks its
/// share's leading columns, and its ring seed (`share_handover`). Only `from` itself may, and
/// only to its ring neighbour (the service that unmasks its share). Stored until this service's
/// part is delivered; the same hand-on again is a no-op, another one a conflict.
async fn hand_on(
    State(right): State<Right>,
    peer: Peer,
    ApiPath((survey, cohort, from)): ApiPath<(String, u32, u32)>,
    body: Body,
) -> Result<Response, ApiError> {
    peer.require(
        Party::Right(from),
        &format!("handing on the unmasking key of share {from}"),
    )?;
    let reg = right.share_registration(&survey)?;
    let (message, _held): (HandOn, _) = peer
        .read_json(body, reg.body_limits().hand_on, "the hand-on")
        .await?;
    let k = reg.share_services;
    let me = right.0.cfg.index;
    if message.survey != survey || message.cohort != cohort || message.from != from {
        return Err(ApiError::bad_request(
            "the hand-on's survey, cohort or service differs from the URL's",
        ));
    }
    if from as usize >= k || from == me || unmasker_of(from, k) != me {
        return Err(ApiError::bad_request(format!(
            "service {me} does not unmask the share of service {from}"
        )));
    }
    let key = message.key.to_matrix().map_err(ApiError::bad_request)?;
    if key.shape() != (reg.p(), reg.p1()) {
        return Err(ApiError::bad_request(format!(
            "the unmasking key is {}x{}; this survey's is {}x{}",
            key.nrows(),
            key.ncols(),
            reg.p(),
            reg.p1()
        )));
    }
    match (&message.seed, masks_parts(k)) {
        (Some(seed), true) => {
            Key::from_hex(seed).map_err(|e| ApiError::bad_request(format!("seed: {e}")))?;
        }
        (None, false) => {}
        _ => {
            return Err(ApiError::bad_request(
                "a hand-on carries a ring seed exactly when there are three or more services",
            ));
        }
    }
    let canonical = serde_json::to_vec(&message).map_err(|e| ApiError::internal("hand-on", e))?;
    let body_hash = sha256_hex(&canonical);
    let blob = crate::store::matrix_to_blob(&key);
    let seed = message.seed.clone();
    right
        .0
        .core
        .store
        .run(move |c| -> Result<(), ApiError> {
            let sql = |e: rusqlite::Error| ApiError::from(StoreError::from(e));
            let existing: Option<String> = c
                .query_row(
                    "SELECT body_hash FROM hand_ons WHERE survey = ?1 AND cohort = ?2 AND from_idx = ?3",
                    (&survey, cohort, from),
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql)?;
            match existing {
                Some(h) if h == body_hash => Ok(()),
                Some(_) => Err(ApiError::conflict(format!(
                    "service {from} already handed on a different key for cohort {cohort}"
                ))),
                None => {
                    c.execute(
                        "INSERT INTO hand_ons (survey, cohort, from_idx, body_hash, key, seed)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        (&survey, cohort, from, &body_hash, &blob, &seed),
                    )
                    .map_err(sql)?;
                    Ok(())
                }
            }
        })
        .await?;
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "from": from, "received": true}),
    ))
}
