//! The HTTP handlers every accepting service shares: the masking service provider (basic
//! protocol) and the right-masking services (share mode) both take uploads, publish receipts and
//! inclusion proofs, and accept registrations and cohort openings/closings from the collector.
//! Each service implements [`IntakeService`], opens its state with [`open_intake`] (which also
//! starts its outbox), runs its own step in [`worker_loop`] and adds its own routes to
//! [`public_routes`] and [`peer_routes`].

use crate::error::{ApiError, ServerError, StoreError};
use crate::http::{ApiPath, json};
use crate::intake::{self, Registrations};
use crate::keys::KeyStore;
use crate::outbox::{self, DeliveredHook, PeerClient};
use crate::peer_auth::Peer;
use crate::peers::{Identity, Party, Peers};
use crate::store::{ClosedSignal, Store};
use crate::wire::{MAX_REGISTRATION_BYTES, Registered, Registration};
use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post, put};
use orthomask_survey::trust::CredentialError;
use orthomask_survey::upload::Upload;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

/// What every accepting service holds besides its own configuration: its store, survey keys and
/// registrations, its identity and pinned peers, and the signals that wake its two background
/// tasks.
pub struct IntakeCore {
    /// Its store, with the intake and outbox tables and its own.
    pub store: Store,
    /// Its survey keys.
    pub keys: KeyStore,
    /// The registered surveys.
    pub regs: Registrations,
    /// Its own identity, which signs its requests to peers.
    pub identity: Arc<Identity>,
    /// The peers it pins (`crate::peers`).
    pub peers: Arc<Peers>,
    work: Arc<Notify>,
    outbox: Arc<Notify>,
}

impl IntakeCore {
    /// Wake the worker that masks and hands over closed cohorts.
    pub fn wake_worker(&self) {
        self.work.notify_one();
    }

    /// Wake the outbox's delivery loop.
    pub fn wake_outbox(&self) {
        self.outbox.notify_one();
    }
}

/// An accepting service, opened: its core, the outbox's delivery task (already running) and the
/// signal that its store has closed.
pub struct OpenedIntake {
    /// The shared state.
    pub core: IntakeCore,
    /// The outbox's delivery loop.
    pub outbox_task: JoinHandle<()>,
    /// Resolves when the store has closed cleanly.
    pub closed: ClosedSignal,
}

/// Where and as whom an accepting service keeps its state.
pub struct IntakeFiles<'a> {
    /// Its private data directory.
    pub data_dir: &'a Path,
    /// The store's file name.
    pub db_file: &'a str,
    /// Its own tables, after the intake and outbox tables.
    pub schema_extra: &'a str,
    /// The key file's name.
    pub key_file: &'a str,
    /// Its role, for the key file.
    pub role: &'a str,
}

/// Open an accepting service's private data directory (store, key file, registrations) and start
/// its outbox, which calls `delivered` in the transaction that marks an item delivered.
///
/// # Errors
/// [`ServerError`] when the directory, store, key file or peer client cannot be set up.
pub async fn open_intake(
    files: &IntakeFiles<'_>,
    identity: Arc<Identity>,
    peers: Arc<Peers>,
    peer_answer_timeout: std::time::Duration,
    delivered: DeliveredHook,
    shutdown: watch::Receiver<bool>,
) -> Result<OpenedIntake, ServerError> {
    crate::keys::create_private_dir(files.data_dir)?;
    let schema = format!("{}{}{}", intake::SCHEMA, outbox::SCHEMA, files.schema_extra);
    let (store, closed) = Store::open(
        &files.data_dir.join(files.db_file),
        &schema,
        intake::ADDED_COLUMNS,
    )?;
    let keys = KeyStore::open(&files.data_dir.join(files.key_file), files.role)?;
    let regs = Registrations::load(&store).await?;
    let client = PeerClient::new(identity.clone(), peers.clone(), peer_answer_timeout)
        .map_err(ServerError::Config)?;
    let outbox_signal = Arc::new(Notify::new());
    let outbox_task = tokio::spawn(outbox::run(
        store.clone(),
        client,
        outbox_signal.clone(),
        delivered,
        shutdown,
    ));
    Ok(OpenedIntake {
        core: IntakeCore {
            store,
            keys,
            regs,
            identity,
            peers,
            work: Arc::new(Notify::new()),
            outbox: outbox_signal,
        },
        outbox_task,
        closed,
    })
}

/// The worker of an accepting service: runs `step` (mask, or hand over, the closed cohorts) when
/// woken by [`IntakeCore::wake_worker`], at least every ten seconds, until shutdown or until the
/// store closes; other errors are logged with `role` and the loop goes on.
pub async fn worker_loop<F, Fut>(
    role: &'static str,
    work: Arc<Notify>,
    mut shutdown: watch::Receiver<bool>,
    mut step: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), StoreError>>,
{
    loop {
        if *shutdown.borrow() {
            return;
        }
        match step().await {
            Ok(()) => {}
            Err(StoreError::Closed) => return,
            Err(e) => tracing::warn!("{role}: {e}"),
        }
        tokio::select! {
            () = work.notified() => {}
            () = tokio::time::sleep(std::time::Duration::from_secs(10)) => {}
            _ = shutdown.changed() => {}
        }
    }
}

impl IntakeCore {
    /// The worker's wake-up signal, for [`worker_loop`].
    pub fn work_signal(&self) -> Arc<Notify> {
        self.work.clone()
    }
}

/// Spawn a service's worker: [`worker_loop`] running `step` on the service.
pub fn spawn_worker<S, F, Fut>(
    service: &S,
    role: &'static str,
    shutdown: watch::Receiver<bool>,
    step: F,
) -> JoinHandle<()>
where
    S: IntakeService,
    F: Fn(S) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), StoreError>> + Send + 'static,
{
    let service = service.clone();
    tokio::spawn(worker_loop(
        role,
        service.core().work_signal(),
        shutdown,
        move || step(service.clone()),
    ))
}

/// Run `step` on every closed cohort of a service, in order: a cohort whose step fails is logged
/// (with `role`) and the others go on; a closed store ends the pass.
///
/// # Errors
/// [`StoreError`] reading the closed cohorts, or [`StoreError::Closed`].
pub async fn each_closed_cohort<F, Fut>(
    store: &Store,
    role: &str,
    mut step: F,
) -> Result<(), StoreError>
where
    F: FnMut(String, u32) -> Fut,
    Fut: Future<Output = Result<(), StoreError>>,
{
    let closed = store
        .run(|c| -> Result<_, StoreError> { Ok(intake::closed_cohorts(c)?) })
        .await?;
    for (survey, cohort) in closed {
        if let Err(e) = step(survey.clone(), cohort).await {
            if matches!(e, StoreError::Closed) {
                return Err(e);
            }
            tracing::warn!("{role}: survey {survey} cohort {cohort}: {e}");
        }
    }
    Ok(())
}

/// The public routes every accepting service serves alike: receipt lists and inclusion proofs.
pub fn public_routes<S: IntakeService>() -> Router<S> {
    Router::new()
        .route(
            "/api/surveys/{survey}/cohorts/{cohort}/receipts",
            get(receipts::<S>),
        )
        .route(
            "/api/surveys/{survey}/cohorts/{cohort}/receipts/{hash}",
            get(proof::<S>),
        )
}

/// The peer routes every accepting service serves alike: registration, opening and closing.
pub fn peer_routes<S: IntakeService>() -> Router<S> {
    Router::new()
        .route("/api/peer/surveys/{survey}", put(register::<S>))
        .route(
            "/api/peer/surveys/{survey}/cohorts/{cohort}/open",
            post(open_cohort::<S>),
        )
        .route(
            "/api/peer/surveys/{survey}/cohorts/{cohort}/close",
            post(close_cohort::<S>),
        )
        .route(
            "/api/peer/surveys/{survey}/outbox/requeue",
            post(requeue::<S>),
        )
        .route("/api/peer/surveys/{survey}/released", post(released::<S>))
}

/// `POST /api/peer/surveys/{survey}/released` (signed by the pinned collector): the collector has published the
/// survey's release, so this service keeps nothing that another party's view could be combined
/// with (issue 20 §1): every stored vector of the survey ([`IntakeService::VECTOR_COLUMNS`]) and
/// every hand-over body left in the outbox are overwritten (`secure_delete`), the write-ahead
/// log is checkpointed and truncated, and the survey's key is removed from the key file. What
/// stays: the registration and the receipt lists (hashes), which participants and auditors
/// check. Idempotent.
///
/// # Errors
/// 401 unless signed by a pinned peer, 403 unless by the collector; 404 for a survey not
/// registered here; store or key-file errors.
pub async fn released<S: IntakeService>(
    State(service): State<S>,
    peer: Peer,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    peer.require(Party::Collector, "erasing a released survey")?;
    service.registrations().get(&survey)?;
    // A mistaken request cannot make this service erase a survey still running (which would
    // spoil it): the release must be published at the collector this service pins. This guards
    // against mistakes, not against the collector itself: a dishonest collector can serve a
    // manifest of its own making and have its survey erased early — ending a survey it already
    // decides the release of (`docs/threat-model.md`, the adversarial review).
    let core = service.core();
    let client = PeerClient::new(
        core.identity.clone(),
        core.peers.clone(),
        crate::outbox::PEER_ANSWER_TIMEOUT,
    )
    .map_err(|e| ApiError::internal("asking the collector whether the survey is released", e))?;
    let manifest = format!(
        "{}/api/surveys/{survey}/manifest.json",
        service.collector_url()
    );
    if let Err(e) = client.send(reqwest::Method::GET, &manifest, None).await {
        return Err(ApiError::conflict(format!(
            "survey {survey:?} is not released at the collector ({}); nothing was erased",
            e
        )));
    }
    let s = survey.clone();
    service
        .store()
        .run(move |c| -> Result<(), StoreError> {
            for (table, column) in S::VECTOR_COLUMNS {
                c.execute(
                    &format!("UPDATE {table} SET {column} = NULL WHERE survey = ?1"),
                    [&s],
                )?;
            }
            c.execute("UPDATE outbox SET body = NULL WHERE survey = ?1", [&s])?;
            Ok(())
        })
        .await?;
    service.store().checkpoint().await?;
    service
        .keys()
        .erase(&survey)
        .map_err(|e| ApiError::internal("erasing the survey's key", e))?;
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"survey": survey, "erased": true}),
    ))
}

/// What the shared handlers need from a service.
pub trait IntakeService: Clone + Send + Sync + 'static {
    /// The state every accepting service holds alike.
    fn core(&self) -> &IntakeCore;
    /// The service's store.
    fn store(&self) -> &Store {
        &self.core().store
    }
    /// The collector's base URL this service was configured with.
    fn collector_url(&self) -> &str;
    /// The columns that hold a survey's vectors (`(table, column)`, each table with a `survey`
    /// column), erased when the survey is released.
    const VECTOR_COLUMNS: &'static [(&'static str, &'static str)];
    /// Registered surveys, kept in memory.
    fn registrations(&self) -> &Registrations {
        &self.core().regs
    }
    /// The service's survey keys.
    fn keys(&self) -> &KeyStore {
        &self.core().keys
    }
    /// Wake the worker that masks and hands over closed cohorts.
    fn wake_worker(&self) {
        self.core().wake_worker();
    }
    /// Wake the outbox's delivery loop.
    fn wake_outbox(&self) {
        self.core().wake_outbox();
    }
    /// Refuse a registration this service cannot serve (role-specific checks).
    ///
    /// # Errors
    /// A 400 naming what does not fit.
    fn admit(&self, registration: &Registration) -> Result<(), ApiError>;
}

/// The registration an upload to `survey` is checked against. A survey not registered here is
/// answered as a credential that does not verify would be on a real one (issue 43 §6): an upload
/// cannot tell whether a survey exists — 401 without a credential, 403 with one.
///
/// # Errors
/// As above.
pub fn registration_for_upload(
    regs: &Registrations,
    survey: &str,
    upload: &Upload,
) -> Result<Arc<Registered>, ApiError> {
    regs.get(survey).map_err(|_| match upload.credential {
        None => ApiError::unauthorized(CredentialError::Missing.to_string()),
        Some(_) => ApiError::forbidden(CredentialError::Signature.to_string()),
    })
}

/// Everything an accepting service checks of an upload before its values are used or stored,
/// in this order:
/// 1. the credential: signed by the collector that registered the survey, for this survey and
///    cohort, not expired (`orthomask_survey::trust::UploadCredential::check`; whether its nonce
///    is new is decided when the upload is stored, [`intake::accept`], in the same transaction);
/// 2. the definition it was made for: the digest of the signed template this service registered
///    (issue 20 §2), so the cohort floor and the bounds below are the ones the device accepted;
/// 3. the app build it names: one the deployment published as accepted when the survey was
///    registered (`orthomask_survey::app_build::check_claimed`, issue 27 §2);
/// 4. its shape: survey, token, length `p`, finite values;
/// 5. its size: inside the bounds an honest upload of the survey keeps
///    (`orthomask_survey::intake_bounds`; issue 20 §8): garbage costs one refused upload, not a
///    cohort.
///
/// # Errors
/// 401 without a credential; 403 for a forged, foreign or expired one, another definition or a
/// build not accepted;
/// 400 for a bad shape; 422 outside the bounds. Nothing is stored in any of these cases.
pub fn admit_upload(
    registered: &Registered,
    survey: &str,
    upload: &Upload,
) -> Result<(), ApiError> {
    let Some(credential) = &upload.credential else {
        return Err(ApiError::unauthorized(CredentialError::Missing.to_string()));
    };
    credential
        .check(
            &registered.collector_public_key,
            &registered.survey,
            upload.cohort,
            crate::time::unix_seconds(),
        )
        .map_err(|e| match e {
            // What a credential that is not this survey's gets, whatever is wrong with it — as a
            // survey not registered here answers ([`registration_for_upload`]): a malformed field
            // or another survey's credential must not tell that this survey exists (issue 43 §6,
            // found by the adversarial review). Another cohort or an expiry is told only to a
            // holder of a credential this survey's collector signed.
            CredentialError::Malformed { .. }
            | CredentialError::Signature
            | CredentialError::WrongSurvey { .. } => {
                ApiError::forbidden(CredentialError::Signature.to_string())
            }
            other => ApiError::forbidden(other.to_string()),
        })?;
    if upload.definition != registered.digest {
        return Err(ApiError::forbidden(
            "the upload was made for another definition than the one the collector registered \
             for this survey; reload the survey and answer again",
        ));
    }
    orthomask_survey::app_build::check_claimed(&registered.builds, &upload.build)
        .map_err(|e| ApiError::forbidden(e.to_string()))?;
    upload
        .validate(survey, registered.p())
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    registered
        .bounds
        .check(&upload.values)
        .map_err(|e| ApiError::unprocessable(e.to_string()))
}

/// Store an already validated upload whose stored values are `blob`, in `form`, and answer with
/// its receipt (`201` the first time, `200` for a retry with the same token and values) once it
/// is durable.
///
/// # Errors
/// 409 for a used token with other values; cohort and store errors.
pub async fn store_upload<S: IntakeService>(
    service: &S,
    registration: Arc<Registered>,
    upload: Upload,
    blob: Vec<u8>,
    form: intake::StoredForm,
) -> Result<Response, ApiError> {
    let hash = upload.hash();
    let accepted = service
        .store()
        .run(move |c| intake::accept(c, &registration, &upload, &hash, &blob, form))
        .await?;
    if accepted.closed_cohort {
        service.wake_worker();
    }
    let status = if accepted.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(json(status, &accepted.receipt))
}

/// `GET …/cohorts/{cohort}/receipts`: the closed cohort's sorted upload hashes and Merkle root.
///
/// # Errors
/// 404 for an unknown cohort, 409 while it is open.
pub async fn receipts<S: IntakeService>(
    State(service): State<S>,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
) -> Result<Response, ApiError> {
    let list = service
        .store()
        .run(move |c| intake::receipts(c, &survey, cohort))
        .await?;
    Ok(json(StatusCode::OK, &list))
}

/// `GET …/cohorts/{cohort}/receipts/{hash}`: an inclusion proof for one receipt.
///
/// # Errors
/// 404 for an unknown cohort or hash, 409 while the cohort is open.
pub async fn proof<S: IntakeService>(
    State(service): State<S>,
    ApiPath((survey, cohort, hash)): ApiPath<(String, u32, String)>,
) -> Result<Response, ApiError> {
    let proof = service
        .store()
        .run(move |c| intake::proof(c, &survey, cohort, &hash))
        .await?;
    Ok(json(StatusCode::OK, &proof))
}

/// `PUT /api/peer/surveys/{survey}` (the collector): register a survey. Believed only when
/// signed by the pinned collector and carrying that same key as the key its template and its
/// participants' credentials are signed with (issue 43 §1); a registered survey is never
/// replaced ([`intake::register`]).
///
/// # Errors
/// 401 unless signed by a pinned peer, 403 unless by the collector or when the registration
/// names another key; 400 for an invalid or unserviceable registration; 409 for another
/// registration under a registered id; 413 for a body over [`MAX_REGISTRATION_BYTES`].
pub async fn register<S: IntakeService>(
    State(service): State<S>,
    peer: Peer,
    ApiPath(survey): ApiPath<String>,
    body: Body,
) -> Result<Response, ApiError> {
    peer.require(Party::Collector, "registering a survey")?;
    let (registration, _held): (Registration, _) = peer
        .read_json(body, MAX_REGISTRATION_BYTES, "the registration")
        .await?;
    let pinned = service
        .core()
        .peers
        .get(Party::Collector)
        .map(|p| p.key.to_hex())
        .ok_or_else(|| ApiError::forbidden("this service pins no collector"))?;
    if registration.collector_public_key.to_hex() != pinned {
        return Err(ApiError::forbidden(
            "the registration names another key than the collector's identity key this service \
             pins; nothing was registered",
        ));
    }
    if registration.survey != survey {
        return Err(ApiError::bad_request(
            "the registration's survey differs from the URL's",
        ));
    }
    let registered = registration.check().map_err(ApiError::bad_request)?;
    service.admit(&registration)?;
    service
        .keys()
        .get_or_create(&survey)
        .map_err(|e| ApiError::failed("creating the service's survey key", &e))?;
    let stored = registration.clone();
    service
        .store()
        .run(move |c| intake::register(c, &stored))
        .await?;
    service.registrations().insert(registered);
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"survey": survey, "registered": true}),
    ))
}

/// `POST …/cohorts/{cohort}/open` (the collector).
///
/// # Errors
/// 401 unless signed by a pinned peer, 403 unless by the collector; store errors.
pub async fn open_cohort<S: IntakeService>(
    State(service): State<S>,
    peer: Peer,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
) -> Result<Response, ApiError> {
    peer.require(Party::Collector, "opening a cohort")?;
    service
        .store()
        .run(move |c| intake::open_cohort(c, &survey, cohort))
        .await?;
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "open": true}),
    ))
}

/// `POST /api/peer/surveys/{survey}/outbox/requeue` (the collector): send the survey's rejected
/// hand-overs again (the collector's administrator asks, after fixing what made them fail).
///
/// # Errors
/// 401 unless signed by a pinned peer, 403 unless by the collector; 404 for a survey not
/// registered here; store errors.
pub async fn requeue<S: IntakeService>(
    State(service): State<S>,
    peer: Peer,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    peer.require(Party::Collector, "requeueing hand-overs")?;
    service.registrations().get(&survey)?;
    let s = survey.clone();
    let requeued = service
        .store()
        .run(move |c| outbox::requeue(c, &s).map_err(StoreError::from))
        .await?;
    service.wake_outbox();
    Ok(json(
        StatusCode::OK,
        &crate::wire::PeerRequeued { survey, requeued },
    ))
}

/// `POST …/cohorts/{cohort}/close` (the collector): close a cohort before it is full.
///
/// # Errors
/// 401 unless signed by a pinned peer, 403 unless by the collector; store errors.
pub async fn close_cohort<S: IntakeService>(
    State(service): State<S>,
    peer: Peer,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
) -> Result<Response, ApiError> {
    peer.require(Party::Collector, "closing a cohort")?;
    let closed = service
        .store()
        .run(move |c| intake::close_cohort(c, &survey, cohort))
        .await?;
    if closed {
        service.wake_worker();
    }
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "closed": true}),
    ))
}
