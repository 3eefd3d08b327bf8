//! The HTTP handlers every accepting service shares: the masking service provider (basic
//! protocol) and the right-masking services (share mode) both take uploads, publish receipts and
//! inclusion proofs, and accept registrations and cohort openings/closings from the collector.
//! Each service implements [`IntakeService`], opens its state with [`open_intake`] and adds its
//! own routes to [`public_routes`] and [`peer_routes`].

use crate::error::{ApiError, ServerError, StoreError};
use crate::http::{ApiJson, ApiPath, json, require_bearer};
use crate::intake::{self, Registrations};
use crate::keys::KeyStore;
use crate::outbox::{self, PeerClient};
use crate::store::{ClosedSignal, Store};
use crate::wire::Registration;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{get, post, put};
use orthomask_survey::trust::CredentialError;
use orthomask_survey::upload::Upload;
use std::path::Path;

/// What an accepting service opens at start.
pub struct IntakeState {
    /// Its store, with the intake and outbox tables and its own.
    pub store: Store,
    /// Resolves when the store has closed cleanly.
    pub closed: ClosedSignal,
    /// Its survey keys.
    pub keys: KeyStore,
    /// The registered surveys.
    pub registrations: Registrations,
    /// The client it hands cohorts over with.
    pub client: PeerClient,
}

/// Open an accepting service's private data directory: the store `db_file` (intake and outbox
/// tables plus `schema_extra`), the key file `key_file` of `role`, and its registrations.
///
/// # Errors
/// [`ServerError`] when the directory, store or key file cannot be used.
pub async fn open_intake(
    data_dir: &Path,
    db_file: &str,
    schema_extra: &str,
    key_file: &str,
    role: &str,
    peer_token: &str,
) -> Result<IntakeState, ServerError> {
    crate::run::create_private_dir(data_dir)?;
    let schema = format!("{}{}{}", intake::SCHEMA, outbox::SCHEMA, schema_extra);
    let (store, closed) = Store::open(&data_dir.join(db_file), &schema)?;
    let keys = KeyStore::open(&data_dir.join(key_file), role)?;
    let registrations = Registrations::load(&store).await?;
    let client = PeerClient::new(peer_token.to_owned()).map_err(ServerError::Config)?;
    Ok(IntakeState {
        store,
        closed,
        keys,
        registrations,
        client,
    })
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
}

/// What the shared handlers need from a service.
pub trait IntakeService: Clone + Send + Sync + 'static {
    /// The service's store.
    fn store(&self) -> &Store;
    /// Registered surveys, kept in memory.
    fn registrations(&self) -> &Registrations;
    /// The service's survey keys.
    fn keys(&self) -> &KeyStore;
    /// The deployment's peer bearer token.
    fn peer_token(&self) -> &str;
    /// Wake the worker that masks and hands over closed cohorts.
    fn wake_worker(&self);
    /// Wake the outbox's delivery loop.
    fn wake_outbox(&self);
    /// The service's tables (each with a `survey` column) of data shaped by a survey's design:
    /// while one holds a row of the survey, a different registration is refused.
    const DATA_TABLES: &'static [&'static str];
    /// Refuse a registration this service cannot serve (role-specific checks).
    ///
    /// # Errors
    /// A 400 naming what does not fit.
    fn admit(&self, registration: &Registration) -> Result<(), ApiError>;

    /// Check the peer bearer token.
    ///
    /// # Errors
    /// 401 without the token.
    fn require_peer(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        require_bearer(headers, self.peer_token(), "peer token")
    }
}

/// Check an upload's credential against the survey's registration, before its values are used:
/// it must be signed by the collector that registered the survey, for this survey and cohort,
/// and not expired (`orthomask_survey::trust::UploadCredential::check`). Whether its nonce is
/// new is decided when the upload is stored ([`intake::accept`]), in the same transaction.
///
/// # Errors
/// 401 without a credential; 403 for a forged, foreign or expired one.
pub fn authorise(registration: &Registration, upload: &Upload) -> Result<(), ApiError> {
    let Some(credential) = &upload.credential else {
        return Err(ApiError::unauthorized(CredentialError::Missing.to_string()));
    };
    credential
        .check(
            &registration.collector_public_key,
            &registration.survey,
            upload.cohort,
            crate::time::unix_seconds(),
        )
        .map_err(|e| ApiError::forbidden(e.to_string()))
}

/// Store an already validated upload whose stored form is `blob`, and answer with its receipt
/// (`201` the first time, `200` for a retry with the same token and values).
///
/// # Errors
/// 409 for a used token with other values; cohort and store errors.
pub async fn store_upload<S: IntakeService>(
    service: &S,
    registration: Registration,
    upload: Upload,
    blob: Vec<u8>,
) -> Result<Response, ApiError> {
    let hash = upload.hash();
    let accepted = service
        .store()
        .run(move |c| intake::accept(c, &registration, &upload, &hash, &blob))
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

/// `PUT /api/peer/surveys/{survey}` (peer token): the collector registers a survey.
///
/// # Errors
/// 401 without the peer token; 400 for an invalid or unserviceable registration.
pub async fn register<S: IntakeService>(
    State(service): State<S>,
    headers: HeaderMap,
    ApiPath(survey): ApiPath<String>,
    ApiJson(registration): ApiJson<Registration>,
) -> Result<Response, ApiError> {
    service.require_peer(&headers)?;
    if registration.survey != survey {
        return Err(ApiError::bad_request(
            "the registration's survey differs from the URL's",
        ));
    }
    registration.validate().map_err(ApiError::bad_request)?;
    service.admit(&registration)?;
    service
        .keys()
        .get_or_create(&survey)
        .map_err(|e| ApiError::internal("creating the service's survey key", e))?;
    let stored = registration.clone();
    service
        .store()
        .run(move |c| intake::register(c, &stored, S::DATA_TABLES))
        .await?;
    service.registrations().insert(registration);
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"survey": survey, "registered": true}),
    ))
}

/// `POST …/cohorts/{cohort}/open` (peer token).
///
/// # Errors
/// 401 without the peer token; store errors.
pub async fn open_cohort<S: IntakeService>(
    State(service): State<S>,
    headers: HeaderMap,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
) -> Result<Response, ApiError> {
    service.require_peer(&headers)?;
    service
        .store()
        .run(move |c| intake::open_cohort(c, &survey, cohort))
        .await?;
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "open": true}),
    ))
}

/// `POST /api/peer/surveys/{survey}/outbox/requeue` (peer token): send the survey's rejected
/// hand-overs again (the collector's administrator asks, after fixing what made them fail).
///
/// # Errors
/// 401 without the peer token; 404 for a survey not registered here; store errors.
pub async fn requeue<S: IntakeService>(
    State(service): State<S>,
    headers: HeaderMap,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    service.require_peer(&headers)?;
    service.registrations().get(&survey)?;
    let s = survey.clone();
    let requeued = service
        .store()
        .run(move |c| outbox::requeue(c, &s).map_err(StoreError::from))
        .await?;
    service.wake_outbox();
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"survey": survey, "requeued": requeued}),
    ))
}

/// `POST …/cohorts/{cohort}/close` (peer token): close a cohort before it is full.
///
/// # Errors
/// 401 without the peer token; store errors.
pub async fn close_cohort<S: IntakeService>(
    State(service): State<S>,
    headers: HeaderMap,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
) -> Result<Response, ApiError> {
    service.require_peer(&headers)?;
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
