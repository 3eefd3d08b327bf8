//! Accepting participants' uploads: shared by the masking service provider (basic protocol,
//! `x·B_k`) and the right-masking services (share mode, one additive share each).
//!
//! An upload is validated (survey registered, cohort open, length `p`, finite values, token
//! format), stored with its hash and the time, and acknowledged with a receipt — exactly once per
//! idempotency token: the same token with the same values returns the stored receipt, with
//! other values a 409. A cohort closes itself when it holds `m` uploads; closed cohorts publish
//! their sorted list of upload hashes and its Merkle root.

use crate::error::{ApiError, StoreError};
use crate::states::IntakeCohort;
use crate::wire::{CohortStatus, Registered, Registration};
use axum::http::StatusCode;
use orthomask_formats::manifest::BuildCount;
use orthomask_survey::merkle::{InclusionProof, inclusion_proof, merkle_root};
use orthomask_survey::trust::CredentialError;
use orthomask_survey::upload::{Receipt, Upload};
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// Columns [`SCHEMA`] gained after data directories were made (`Store::open` adds them).
///
/// `right_masked` (issue 24) defaults to 1 because every vector stored before it existed
/// carries its right mask: the provider's `x·B_k`, and the shares the right-masking services
/// then masked on arrival. An older directory therefore hands those over as they are, and masks
/// at the hand-over only the shares stored since ([`StoredForm::Share`]).
pub const ADDED_COLUMNS: &[crate::store::AddedColumn] = &[
    crate::store::AddedColumn {
        table: "uploads",
        column: "build",
        declaration: "TEXT NOT NULL DEFAULT ''",
    },
    crate::store::AddedColumn {
        table: "uploads",
        column: "right_masked",
        declaration: "INTEGER NOT NULL DEFAULT 1",
    },
    crate::store::AddedColumn {
        table: "uploads",
        column: "device_key",
        declaration: "TEXT NOT NULL DEFAULT ''",
    },
];

/// The form in which an upload's values are stored (the `right_masked` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoredForm {
    /// Carrying its cohort's right mask: the provider's `x·B_k` as the device masked it (and a
    /// share an older right-masking service masked on arrival).
    RightMasked,
    /// A right-masking service's share `xⁱ` as uploaded: masked with `Bᵢ`, with the rest of its
    /// cohort in one blocked product, when the cohort is handed over (issue 24).
    Share,
}

impl StoredForm {
    fn right_masked(self) -> bool {
        self == Self::RightMasked
    }
}

/// Tables of an accepting service.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS surveys (
    id TEXT PRIMARY KEY,
    registration TEXT NOT NULL,
    registered_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cohorts (
    survey TEXT NOT NULL REFERENCES surveys(id),
    cohort INTEGER NOT NULL,
    status TEXT NOT NULL,
    uploads INTEGER NOT NULL DEFAULT 0,
    opened_at TEXT NOT NULL,
    closed_at TEXT,
    note TEXT,
    PRIMARY KEY (survey, cohort)
);
CREATE TABLE IF NOT EXISTS uploads (
    survey TEXT NOT NULL,
    token TEXT NOT NULL,
    cohort INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    upload_hash TEXT NOT NULL,
    received_at TEXT NOT NULL,
    masked BLOB,
    nonce TEXT NOT NULL,
    build TEXT NOT NULL DEFAULT '',
    right_masked INTEGER NOT NULL DEFAULT 1,
    device_key TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (survey, token),
    FOREIGN KEY (survey, cohort) REFERENCES cohorts(survey, cohort)
);
CREATE INDEX IF NOT EXISTS uploads_by_cohort ON uploads(survey, cohort, seq);
CREATE UNIQUE INDEX IF NOT EXISTS one_upload_per_credential ON uploads(survey, nonce);
";

/// Registrations kept in memory, checked ([`Registration::check`]), for validation before the
/// store is asked.
#[derive(Clone, Default)]
pub struct Registrations(Arc<RwLock<HashMap<String, Arc<Registered>>>>);

impl Registrations {
    /// Load every registration from the store, checking each again.
    ///
    /// # Errors
    /// Store errors, or a registration that no longer parses or passes its check.
    pub async fn load(store: &crate::store::Store) -> Result<Self, StoreError> {
        let all = store
            .run(|c| -> Result<Vec<Registered>, StoreError> {
                let mut stmt = c.prepare("SELECT registration FROM surveys")?;
                let texts = stmt
                    .query_map([], |r| r.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()?;
                texts
                    .iter()
                    .map(|t| {
                        let reg: Registration = serde_json::from_str(t)
                            .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                        reg.check().map_err(|e| {
                            StoreError::Corrupt(format!(
                                "the stored registration of survey {:?} no longer passes: {e}",
                                reg.survey
                            ))
                        })
                    })
                    .collect()
            })
            .await?;
        let map = all
            .into_iter()
            .map(|r| (r.survey.clone(), Arc::new(r)))
            .collect();
        Ok(Self(Arc::new(RwLock::new(map))))
    }

    /// The registration of `survey`.
    ///
    /// # Errors
    /// 404 naming the survey.
    pub fn get(&self, survey: &str) -> Result<Arc<Registered>, ApiError> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(survey)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("there is no survey {survey:?} here")))
    }

    /// Remember a checked registration.
    pub fn insert(&self, r: Registered) {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(r.survey.clone(), Arc::new(r));
    }
}

fn sql(e: rusqlite::Error) -> ApiError {
    ApiError::from(StoreError::from(e))
}

/// Register a survey (issue 43: a registered survey is never replaced). The same registration
/// again — the collector retrying a creation whose answer it lost — changes nothing; any other
/// registration under a taken id is refused, whatever the service holds of the survey: devices
/// may already hold the template it carries, and a replaced one would turn their uploads away
/// (or let another key's credentials in).
///
/// # Errors
/// 409 for a different registration of a registered survey; store errors.
pub fn register(conn: &Connection, reg: &Registration) -> Result<(), ApiError> {
    let text = serde_json::to_string(reg).map_err(|e| ApiError::internal("registration", e))?;
    let existing: Option<String> = conn
        .query_row(
            "SELECT registration FROM surveys WHERE id = ?1",
            [&reg.survey],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql)?;
    match existing {
        Some(old) if old == text => Ok(()),
        Some(_) => Err(ApiError::conflict(format!(
            "survey {:?} is already registered here with another registration, and a registered \
             survey is never replaced; create the survey under a new id",
            reg.survey
        ))),
        None => {
            conn.execute(
                "INSERT INTO surveys (id, registration, registered_at) VALUES (?1, ?2, ?3)",
                (&reg.survey, &text, crate::time::now_rfc3339()),
            )
            .map_err(sql)?;
            Ok(())
        }
    }
}

/// Open cohort `k` (idempotent while it is open).
///
/// # Errors
/// 404 for an unknown survey; 409 for a cohort already closed.
pub fn open_cohort(conn: &Connection, survey: &str, cohort: u32) -> Result<(), ApiError> {
    let known: Option<i64> = conn
        .query_row("SELECT 1 FROM surveys WHERE id = ?1", [survey], |r| {
            r.get(0)
        })
        .optional()
        .map_err(sql)?;
    if known.is_none() {
        return Err(ApiError::not_found(format!(
            "there is no survey {survey:?} here"
        )));
    }
    conn.execute(
        "INSERT OR IGNORE INTO cohorts (survey, cohort, status, opened_at) VALUES (?1, ?2, ?4, ?3)",
        (
            survey,
            cohort,
            crate::time::now_rfc3339(),
            IntakeCohort::Open,
        ),
    )
    .map_err(sql)?;
    // Opening an open cohort again is a retry; a closed one is never reopened (its receipt list
    // is published), and saying "open" of it would be false.
    if !cohort_status(conn, survey, cohort)?.takes_uploads() {
        return Err(ApiError::conflict(format!(
            "cohort {cohort} of survey {survey:?} is closed, and a closed cohort is never reopened"
        )));
    }
    Ok(())
}

/// Close cohort `k` if it is open; `true` when this call closed it.
///
/// # Errors
/// 404 for an unknown cohort.
pub fn close_cohort(conn: &Connection, survey: &str, cohort: u32) -> Result<bool, ApiError> {
    let status = cohort_status(conn, survey, cohort)?;
    if !status.takes_uploads() {
        return Ok(false);
    }
    conn.execute(
        "UPDATE cohorts SET status = ?4, closed_at = ?3 WHERE survey = ?1 AND cohort = ?2",
        (survey, cohort, crate::time::now_rfc3339(), status.close()?),
    )
    .map_err(sql)?;
    Ok(true)
}

/// The status of a cohort.
///
/// # Errors
/// 404 for an unknown cohort.
pub fn cohort_status(
    conn: &Connection,
    survey: &str,
    cohort: u32,
) -> Result<IntakeCohort, ApiError> {
    conn.query_row(
        "SELECT status FROM cohorts WHERE survey = ?1 AND cohort = ?2",
        (survey, cohort),
        |r| r.get(0),
    )
    .optional()
    .map_err(sql)?
    .ok_or_else(|| {
        ApiError::not_found(format!(
            "survey {survey:?} has no cohort {cohort} here (cohorts are opened by the collector \
             when it hands out their definitions)"
        ))
    })
}

/// Set a cohort's status (and an optional note).
///
/// # Errors
/// SQLite errors.
pub fn set_status(
    conn: &Connection,
    survey: &str,
    cohort: u32,
    status: IntakeCohort,
    note: Option<&str>,
) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE cohorts SET status = ?3, note = COALESCE(?4, note) WHERE survey = ?1 AND cohort = ?2",
        (survey, cohort, status, note),
    )?;
    Ok(())
}

/// The outcome of an accepted upload.
#[derive(Clone, Debug, PartialEq)]
pub struct Accepted {
    /// The receipt.
    pub receipt: Receipt,
    /// `false` when this was a retry of an upload already stored.
    pub created: bool,
    /// `true` when this upload filled the cohort and closed it.
    pub closed_cohort: bool,
}

/// Store an upload (already validated against the registration) exactly once; its values are
/// `stored_values`, in `form`.
///
/// # Errors
/// 404 unknown cohort, 409 cohort closed or full or token reused with other values.
pub fn accept(
    conn: &Connection,
    reg: &Registration,
    upload: &Upload,
    hash: &str,
    stored_values: &[u8],
    form: StoredForm,
) -> Result<Accepted, ApiError> {
    // Every statement here runs once per upload: prepared once per connection (cached).
    let existing: Option<(u32, String, String)> = conn
        .prepare_cached(
            "SELECT cohort, upload_hash, received_at FROM uploads WHERE survey = ?1 AND token = ?2",
        )
        .and_then(|mut s| {
            s.query_row((&upload.survey, &upload.token), |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
        })
        .optional()
        .map_err(sql)?;
    if let Some((cohort, stored_hash, received_at)) = existing {
        if stored_hash == hash {
            return Ok(Accepted {
                receipt: Receipt {
                    survey: upload.survey.clone(),
                    cohort,
                    upload_hash: stored_hash,
                    received_at,
                },
                created: false,
                closed_cohort: false,
            });
        }
        return Err(ApiError::conflict(
            "this idempotency token was already used for a different upload; a retry must send \
             exactly the same values, a new submission needs a new token",
        ));
    }
    // One upload per credential: the nonce of an upload already stored (under another token)
    // cannot bring in a second one. `authorise` has checked that a credential is present.
    let nonce = upload
        .credential
        .as_ref()
        .map(|c| c.nonce.clone())
        .ok_or_else(|| ApiError::unauthorized(CredentialError::Missing.to_string()))?;
    let reused: Option<i64> = conn
        .prepare_cached("SELECT 1 FROM uploads WHERE survey = ?1 AND nonce = ?2")
        .and_then(|mut s| s.query_row((&upload.survey, &nonce), |r| r.get(0)))
        .optional()
        .map_err(sql)?;
    if reused.is_some() {
        return Err(ApiError::forbidden(
            "this upload credential was already used for another upload; each invitation or \
             definition load allows one",
        ));
    }
    let (status, count): (IntakeCohort, usize) = conn
        .prepare_cached("SELECT status, uploads FROM cohorts WHERE survey = ?1 AND cohort = ?2")
        .and_then(|mut s| {
            s.query_row((&upload.survey, upload.cohort), |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
        })
        .optional()
        .map_err(sql)?
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "survey {:?} has no cohort {}; load the survey definition again",
                upload.survey, upload.cohort
            ))
        })?;
    if !status.takes_uploads() {
        return Err(ApiError::conflict(format!(
            "cohort {} of survey {:?} is closed and accepts no more uploads",
            upload.cohort, upload.survey
        )));
    }
    if count >= reg.cohort_size {
        return Err(ApiError::conflict(format!(
            "cohort {} of survey {:?} is full",
            upload.cohort, upload.survey
        )));
    }
    // Every upload of a cohort names the same device key (issue 43's adversarial review): a
    // collector that handed one participant a key of its own could find that row after the
    // provider's mask and read it, so a second key in one cohort is refused, whichever came first.
    let device_key = upload
        .credential
        .as_ref()
        .and_then(|c| c.key_digest.clone())
        .unwrap_or_default();
    let cohort_key: Option<String> = conn
        .prepare_cached("SELECT device_key FROM uploads WHERE survey = ?1 AND cohort = ?2 LIMIT 1")
        .and_then(|mut s| s.query_row((&upload.survey, upload.cohort), |r| r.get(0)))
        .optional()
        .map_err(sql)?;
    if cohort_key.is_some_and(|k| k != device_key) {
        return Err(ApiError::forbidden(
            "this upload was masked with another device key than the rest of its cohort: its \
             device was given another definition than the cohort's; it was refused and nothing \
             was stored",
        ));
    }
    let received_at = crate::time::now_rfc3339();
    conn.prepare_cached(
        "INSERT INTO uploads (survey, token, cohort, seq, upload_hash, received_at, masked, nonce,
                              build, right_masked, device_key)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )
    .and_then(|mut s| {
        s.execute((
            &upload.survey,
            &upload.token,
            upload.cohort,
            count,
            hash,
            &received_at,
            stored_values,
            &nonce,
            &upload.build,
            form.right_masked(),
            &device_key,
        ))
    })
    .map_err(sql)?;
    let closed_cohort = count + 1 >= reg.cohort_size;
    conn.prepare_cached(
        "UPDATE cohorts SET uploads = uploads + 1,
                status = CASE WHEN ?3 THEN ?5 ELSE status END,
                closed_at = CASE WHEN ?3 THEN ?4 ELSE closed_at END
         WHERE survey = ?1 AND cohort = ?2",
    )
    .and_then(|mut s| {
        s.execute((
            &upload.survey,
            upload.cohort,
            closed_cohort,
            &received_at,
            IntakeCohort::Closed,
        ))
    })
    .map_err(sql)?;
    Ok(Accepted {
        receipt: Receipt {
            survey: upload.survey.clone(),
            cohort: upload.cohort,
            upload_hash: hash.to_owned(),
            received_at,
        },
        created: true,
        closed_cohort,
    })
}

/// A closed cohort's published receipt list.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReceiptList {
    /// Survey.
    pub survey: String,
    /// Cohort.
    pub cohort: u32,
    /// When it closed.
    pub closed_at: Option<String>,
    /// Number of uploads.
    pub count: usize,
    /// RFC 6962 Merkle root over the sorted hashes (see `merkle.rs`).
    pub merkle_root: String,
    /// Every upload hash, sorted.
    pub upload_hashes: Vec<String>,
    /// The app builds the uploads named, with how many each (issue 27 §2), sorted by digest.
    pub builds: Vec<BuildCount>,
}

/// The upload hashes of a cohort.
///
/// # Errors
/// SQLite errors.
pub fn hashes(conn: &Connection, survey: &str, cohort: u32) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT upload_hash FROM uploads WHERE survey = ?1 AND cohort = ?2 ORDER BY upload_hash",
    )?;
    stmt.query_map((survey, cohort), |r| r.get(0))?.collect()
}

/// The receipt list of a closed cohort.
///
/// # Errors
/// 404 for an unknown survey or cohort and, alike, while it is open.
pub fn receipts(conn: &Connection, survey: &str, cohort: u32) -> Result<ReceiptList, ApiError> {
    // An open cohort is answered as one that does not exist (issue 43 §6): whether a survey
    // runs, and how far, is not told before its lists are published.
    let unpublished = || {
        ApiError::not_found(format!(
            "no receipt list of cohort {cohort} of survey {survey:?} is published here (lists \
             are published when a cohort closes)"
        ))
    };
    let status = match cohort_status(conn, survey, cohort) {
        Ok(status) => status,
        Err(e) if e.status() == StatusCode::NOT_FOUND => return Err(unpublished()),
        Err(e) => return Err(e),
    };
    if status.takes_uploads() {
        return Err(unpublished());
    }
    let closed_at: Option<String> = conn
        .query_row(
            "SELECT closed_at FROM cohorts WHERE survey = ?1 AND cohort = ?2",
            (survey, cohort),
            |r| r.get(0),
        )
        .map_err(sql)?;
    let upload_hashes = hashes(conn, survey, cohort).map_err(sql)?;
    let claimed: Vec<String> = conn
        .prepare("SELECT build FROM uploads WHERE survey = ?1 AND cohort = ?2")
        .and_then(|mut stmt| {
            stmt.query_map((survey, cohort), |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()
        })
        .map_err(sql)?;
    Ok(ReceiptList {
        builds: orthomask_survey::app_build::count(claimed.iter().map(String::as_str)),
        survey: survey.to_owned(),
        cohort,
        closed_at,
        count: upload_hashes.len(),
        merkle_root: merkle_root(&upload_hashes),
        upload_hashes,
    })
}

/// The inclusion proof of one upload hash in a closed cohort's list.
///
/// # Errors
/// As [`receipts`]; 404 when the hash is not in the list.
pub fn proof(
    conn: &Connection,
    survey: &str,
    cohort: u32,
    hash: &str,
) -> Result<InclusionProof, ApiError> {
    let list = receipts(conn, survey, cohort)?;
    inclusion_proof(&list.upload_hashes, hash).ok_or_else(|| {
        ApiError::not_found(format!(
            "upload hash {hash} is not among the {} receipts of cohort {cohort}",
            list.count
        ))
    })
}

/// Every cohort of a survey.
///
/// # Errors
/// SQLite errors.
pub fn statuses(conn: &Connection, survey: &str) -> rusqlite::Result<Vec<CohortStatus>> {
    let mut stmt = conn
        .prepare("SELECT cohort, status, uploads FROM cohorts WHERE survey = ?1 ORDER BY cohort")?;
    stmt.query_map([survey], |r| {
        Ok(CohortStatus {
            cohort: r.get(0)?,
            status: r.get(1)?,
            uploads: r.get(2)?,
        })
    })?
    .collect()
}

/// A cohort's stored uploads in arrival order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CohortRows {
    /// The stored vectors.
    pub rows: Vec<Vec<f64>>,
    /// Their idempotency tokens.
    pub tokens: Vec<String>,
    /// Their upload hashes.
    pub hashes: Vec<String>,
    /// Their upload credentials' nonces.
    pub nonces: Vec<String>,
    /// The form each vector is stored in.
    pub forms: Vec<StoredForm>,
}

/// The stored vectors of a cohort in arrival order, with their tokens, hashes and forms.
///
/// # Errors
/// Store errors; [`StoreError::Corrupt`] when a vector was already erased.
pub fn cohort_rows(conn: &Connection, survey: &str, cohort: u32) -> Result<CohortRows, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT masked, token, upload_hash, nonce, right_masked FROM uploads
         WHERE survey = ?1 AND cohort = ?2 ORDER BY seq",
    )?;
    let mut rows = Vec::new();
    let mut tokens = Vec::new();
    let mut hashes = Vec::new();
    let mut nonces = Vec::new();
    let mut forms = Vec::new();
    let mut query = stmt.query((survey, cohort))?;
    while let Some(r) = query.next()? {
        let blob: Option<Vec<u8>> = r.get(0)?;
        let blob = blob.ok_or_else(|| {
            StoreError::Corrupt(format!(
                "survey {survey} cohort {cohort}: a stored vector was already erased"
            ))
        })?;
        rows.push(crate::store::blob_to_f64s(&blob)?);
        tokens.push(r.get(1)?);
        hashes.push(r.get(2)?);
        nonces.push(r.get(3)?);
        forms.push(if r.get::<_, bool>(4)? {
            StoredForm::RightMasked
        } else {
            StoredForm::Share
        });
    }
    Ok(CohortRows {
        rows,
        tokens,
        hashes,
        nonces,
        forms,
    })
}

/// Erase the stored vectors of a cohort (after the next party has them); hashes stay for the
/// receipts.
///
/// # Errors
/// SQLite errors.
pub fn erase_vectors(conn: &Connection, survey: &str, cohort: u32) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE uploads SET masked = NULL WHERE survey = ?1 AND cohort = ?2",
        (survey, cohort),
    )?;
    Ok(())
}

/// Closed cohorts waiting for processing: `(survey, cohort)`.
///
/// # Errors
/// SQLite errors.
pub fn closed_cohorts(conn: &Connection) -> rusqlite::Result<Vec<(String, u32)>> {
    let mut stmt = conn
        .prepare("SELECT survey, cohort FROM cohorts WHERE status = ?1 ORDER BY survey, cohort")?;
    stmt.query_map([IntakeCohort::Closed], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect()
}

#[cfg(test)]
mod schema_tests {
    /// A provider or right-masking directory made before uploads named their build opens with
    /// the column added.
    #[test]
    fn an_older_directory_gains_the_added_columns() {
        crate::store::assert_upgrade_gives_fresh_columns(super::SCHEMA, super::ADDED_COLUMNS);
    }
}
