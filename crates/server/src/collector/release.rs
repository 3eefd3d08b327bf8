//! The release: `A₁` over every received cohort, `release.csv` and `manifest.json` at stable URLs,
//! and `datapackage.json` beside them (`orthomask_survey::datapackage::build` from the stored
//! manifest and the survey's definition, made when asked: it is a function of the two).
//!
//! The manifest is `orthomask_survey::manifest::build` from the survey's stored plan, so it
//! records the plan's Appendix C bound (of a full cohort, where the bound binds) and agrees with
//! the manifest `orthomask pipeline` writes for the same design.

use super::{Collector, SurveyRow, load_survey, sql};
use crate::error::ApiError;
use crate::http::ApiPath;
use crate::states::{CollectorCohort, SurveyState};
use crate::store::blob_to_f64s;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use nalgebra::DMatrix;
use orthomask_core::protocol::qa::QaReport;
use orthomask_core::protocol::tm2::{DataCollector, UnmaskedCohort};
use orthomask_formats::csv::{Precision, write_table};
use orthomask_formats::manifest::ReceiptRoot;
use orthomask_formats::manifest::{Cohorts, Method};
use orthomask_survey::api::QaCheck;
use orthomask_survey::manifest::{Provenance, Released};
use rusqlite::{Connection, OptionalExtension};

impl Collector {
    /// Release the survey if it is closed and every cohort is in.
    pub(super) async fn maybe_release(&self, survey: &str) -> Result<(), ApiError> {
        type Received = Vec<(u32, usize, Vec<f64>, Option<String>)>;
        /// The survey, its received cohorts, the manifest's warnings and receipt roots.
        type Ready = (SurveyRow, Received, Vec<String>, Vec<ReceiptRoot>);
        let s = survey.to_owned();
        let ready = self
            .0
            .store
            .run(move |c| -> Result<Option<Ready>, ApiError> {
                let row = load_survey(c, &s)?;
                if row.status != SurveyState::Closing {
                    return Ok(None);
                }
                let mut stmt = c
                    .prepare(
                        "SELECT cohort, status, records, data, qa, note FROM cohorts
                         WHERE survey = ?1 ORDER BY cohort",
                    )
                    .map_err(sql)?;
                type Row = (
                    u32,
                    CollectorCohort,
                    Option<usize>,
                    Option<Vec<u8>>,
                    Option<String>,
                    Option<String>,
                );
                let rows: Vec<Row> = stmt
                    .query_map([&s], |r| {
                        Ok((
                            r.get(0)?,
                            r.get(1)?,
                            r.get(2)?,
                            r.get(3)?,
                            r.get(4)?,
                            r.get(5)?,
                        ))
                    })
                    .map_err(sql)?
                    .collect::<Result<_, _>>()
                    .map_err(sql)?;
                if rows.iter().any(|r| !r.1.is_settled()) {
                    return Ok(None);
                }
                let failed = row.status.finish(false)?;
                let fail = |c: &Connection, why: String| -> Result<(), ApiError> {
                    c.execute(
                        "UPDATE surveys SET status = ?3, error = ?2 WHERE id = ?1",
                        (&s, why, failed),
                    )
                    .map_err(sql)?;
                    Ok(())
                };
                // A cohort that failed its checks (QA after unmasking: a participant with a
                // valid credential who sent garbage, or a provider that tampered; or a
                // hand-over that does not match the credentials) is left out and named in
                // the manifest; the others are released. Their statistics are exactly those
                // of the records released — which cohorts those are is in the manifest, so
                // an analyst can judge whether leaving one out matters (issue 10 §1).
                let mut notes = Vec::new();
                let failures: Vec<String> = rows
                    .iter()
                    .filter_map(|r| {
                        let why = r.5.clone().unwrap_or_default();
                        match r.1 {
                            CollectorCohort::Spoilt => Some(format!(
                                "cohort {} was left out and its participants asked to answer \
                                 again in a new cohort: {why}",
                                r.0
                            )),
                            CollectorCohort::Failed => Some(format!(
                                "cohort {} was left out by the survey team: {why}",
                                r.0
                            )),
                            _ => None,
                        }
                    })
                    .collect();
                // Issue 20 §5: a cohort whose services published receipts but which gives no
                // rows is named, whatever the reason, so that a participant holding a receipt
                // of it knows their upload is not in the release.
                for (cohort, status, ..) in &rows {
                    if *status == CollectorCohort::Received {
                        continue;
                    }
                    for (_, root) in super::handover::receipt_roots(c, &s, *cohort)? {
                        if root.count > 0 {
                            notes.push(format!(
                                "cohort {cohort}: {} published {} receipts but the cohort \
                                 contributes no rows to this release ({status})",
                                root.service, root.count
                            ));
                        }
                    }
                }
                let mut received = Vec::new();
                for (cohort, status, records, data, qa, note) in rows {
                    match status {
                        CollectorCohort::Received => {
                            let values = blob_to_f64s(&data.unwrap_or_default())?;
                            received.push((cohort, records.unwrap_or(0), values, qa));
                        }
                        CollectorCohort::Withheld => notes.push(format!(
                            "cohort {cohort} was withheld: {}",
                            note.unwrap_or_default()
                        )),
                        _ => {}
                    }
                }
                if received.is_empty() {
                    let why = if failures.is_empty() {
                        "no cohort had enough participants to be released".to_owned()
                    } else {
                        format!("{}; nothing is released", failures.join("; "))
                    };
                    fail(c, why)?;
                    return Ok(None);
                }
                notes.extend(failures);
                // The receipt list of every released cohort at every accepting service, as
                // the hand-over was checked against it (issue 10 §5).
                let mut roots = Vec::new();
                for (cohort, records, _, _) in &received {
                    for (_, root) in super::handover::receipt_roots(c, &s, *cohort)? {
                        if root.count > *records {
                            notes.push(format!(
                                "cohort {cohort}: {records} records were released of the {} \
                                     uploads {} took (participants whose shares did not reach \
                                     every right-masking service are left out)",
                                root.count, root.service
                            ));
                        }
                        roots.push(root);
                    }
                }
                Ok(Some((row, received, notes, roots)))
            })
            .await?;
        let Some((row, received, notes, roots)) = ready else {
            return Ok(());
        };
        let key = self
            .0
            .keys
            .get(survey)
            .ok_or_else(|| ApiError::internal("releasing", "the survey's key is missing"))?;
        let (csv, manifest) =
            crate::compute::core_task(move || build_release(&row, key, received, notes, roots))
                .await
                .map_err(|e| ApiError::internal("releasing", e))??;
        let s = survey.to_owned();
        self.0
            .store
            .run(move |c| -> Result<(), ApiError> {
                let status: SurveyState = c
                    .query_row("SELECT status FROM surveys WHERE id = ?1", [&s], |r| r.get(0))
                    .map_err(sql)?;
                // Released once: a release finished twice (a retry after a crash) stores nothing.
                if let Ok(released) = status.finish(true) {
                    c.execute(
                        "INSERT INTO releases (survey, csv, manifest, released_at) VALUES (?1, ?2, ?3, ?4)",
                        (&s, &csv, &manifest, crate::time::now_rfc3339()),
                    )
                    .map_err(sql)?;
                    c.execute(
                        "UPDATE surveys SET status = ?2 WHERE id = ?1",
                        (&s, released),
                    )
                    .map_err(sql)?;
                    // Issue 20 §1: the per-cohort data go in the same transaction as the
                    // release appears, so there is no moment with both.
                    erase_cohort_data(c, &s)?;
                }
                Ok(())
            })
            .await?;
        if let Err(e) = self.erase_after_release(survey).await {
            // The release stands; the erasure is retried at the next start-up.
            tracing::warn!("collector: erasing {survey} after its release: {e}");
        }
        Ok(())
    }

    /// Issue 20 §1, shrinking the window: once a survey is released the collector keeps the
    /// release and its manifest and nothing that could be combined with another party's view —
    /// the per-cohort `A₂,k X₁,k` (or `A X₁`) and share parts are gone with the release itself
    /// ([`erase_cohort_data`]), the write-ahead log is checkpointed and truncated, the survey's
    /// key (from which `B_k` and `A₁` derive) leaves the key file, and every service that held
    /// the survey's data is told to erase its vectors and key (`POST …/released`). Done once
    /// every service confirmed (`releases.erased_at`); retried at start-up until then.
    ///
    /// # Errors
    /// Store or key-file errors; a service that cannot be reached (its erasure waits).
    pub(super) async fn erase_after_release(&self, survey: &str) -> Result<(), ApiError> {
        let s = survey.to_owned();
        let share = self
            .0
            .store
            .run(move |c| load_survey(c, &s).map(|row| row.plan.share_services))
            .await?;
        self.0.store.checkpoint().await.map_err(ApiError::from)?;
        self.0
            .keys
            .erase(survey)
            .map_err(|e| ApiError::internal("erasing the survey's key", e))?;
        for (name, url) in self.handover_services(share)? {
            self.call_peer(
                &name,
                reqwest::Method::POST,
                format!("{url}/api/peer/surveys/{survey}/released"),
                None,
            )
            .await?;
        }
        let s = survey.to_owned();
        self.0
            .store
            .run(move |c| -> Result<(), ApiError> {
                c.execute(
                    "UPDATE releases SET erased_at = ?2 WHERE survey = ?1",
                    (&s, crate::time::now_rfc3339()),
                )
                .map_err(sql)?;
                Ok(())
            })
            .await
    }

    /// [`erase_after_release`](Self::erase_after_release) for every release whose erasure has
    /// not been confirmed (run at start-up), each survey's per-cohort data first: a release
    /// stored before the data went in its transaction still holds them. A survey whose erasure
    /// fails (a service down) does not hold up the others; it is reported and retried at the
    /// next start-up.
    ///
    /// # Errors
    /// Store errors listing the pending releases.
    pub(super) async fn erase_released(&self) -> Result<(), ApiError> {
        let pending = self
            .0
            .store
            .run(|c| -> Result<Vec<String>, ApiError> {
                let mut stmt = c
                    .prepare("SELECT survey FROM releases WHERE erased_at IS NULL")
                    .map_err(sql)?;
                stmt.query_map([], |r| r.get(0))
                    .map_err(sql)?
                    .collect::<Result<_, _>>()
                    .map_err(sql)
            })
            .await?;
        for survey in pending {
            let s = survey.clone();
            self.0.store.run(move |c| erase_cohort_data(c, &s)).await?;
            if let Err(e) = self.erase_after_release(&survey).await {
                tracing::warn!("collector: erasing {survey} after its release: {e}");
            }
        }
        Ok(())
    }
}

/// Overwrite (with `secure_delete`) every per-cohort vector of a survey the collector holds.
fn erase_cohort_data(c: &Connection, survey: &str) -> Result<(), ApiError> {
    c.execute("UPDATE cohorts SET data = NULL WHERE survey = ?1", [survey])
        .map_err(sql)?;
    c.execute("DELETE FROM share_parts WHERE survey = ?1", [survey])
        .map_err(sql)?;
    Ok(())
}

/// The manifest's warning on a demonstration's release: in the basic protocol anyone who opened
/// it holds the device key; share mode has none, but anyone could send anything.
fn demonstration_warning(share_mode: bool) -> &'static str {
    if share_mode {
        "this is a demonstration open to anyone: its records are whatever anyone sent; do not \
         read it as a survey's data"
    } else {
        "this is a demonstration: its device key was handed to anyone who opened it, so \
         whoever holds that key and an upload can unmask the upload; do not read it as private \
         data"
    }
}

/// `A₁ · [A₂,1 X₁,1; …]` as `release.csv` and its manifest.
fn build_release(
    row: &SurveyRow,
    key: orthomask_core::key::Key,
    received: Vec<(u32, usize, Vec<f64>, Option<String>)>,
    notes: Vec<String>,
    receipt_roots: Vec<ReceiptRoot>,
) -> Result<(String, String), ApiError> {
    let design = row
        .template
        .design()
        .map_err(|e| ApiError::internal("the survey design", e))?;
    let p1 = row.plan.masking.p1;
    let mut cohorts = Vec::new();
    for (cohort, records, values, qa) in received {
        if values.len() != records * p1 {
            return Err(ApiError::internal(
                "releasing",
                format!(
                    "cohort {cohort} holds {} values for {records} records",
                    values.len()
                ),
            ));
        }
        let qa = match qa {
            Some(text) => Some(QaReport::from(
                serde_json::from_str::<QaCheck>(&text).map_err(|e| ApiError::internal("QA", e))?,
            )),
            None => None,
        };
        cohorts.push(UnmaskedCohort {
            cohort,
            data: DMatrix::from_row_slice(records, p1, &values),
            qa,
        });
    }
    let sizes: Vec<usize> = cohorts.iter().map(|c| c.data.nrows()).collect();
    // A demonstration handed its device key to anyone who opened it (issue 12 §1): whoever
    // holds a key and an upload can unmask it, exactly as with teaching keys, so the release
    // says so first.
    let mut warnings = Vec::new();
    if row.plan.demonstration {
        warnings.push(demonstration_warning(row.plan.share_services > 0).to_owned());
    }
    warnings.extend(notes);
    let collector =
        DataCollector::new(key, design).map_err(|e| ApiError::internal("collector", e))?;
    let release = collector
        .release(&cohorts)
        .map_err(|e| ApiError::internal("computing the release", e))?;
    let csv = write_table(&row.plan.columns, &release.data, Precision::RoundTrip);
    let manifest = orthomask_survey::manifest::build(
        &row.plan.masking,
        &Released {
            columns: &row.plan.columns,
            data: &release.data,
            qa: &release.qa,
            decimals: None,
        },
        Provenance {
            method: if row.plan.share_services > 0 {
                Method::Collusion
            } else {
                Method::Modified
            },
            warnings,
            teaching_keys: row.plan.demonstration,
            receipt_roots,
            share_view: orthomask_survey::share_view::one_service_view(&row.template)
                .map_err(|e| ApiError::internal("the share view", e))?,
            shares: row.template.share_split(),
            model_terms: row.template.terms.clone(),
            ..Provenance::modified(
                Cohorts {
                    size: Some(row.plan.cohort_size),
                    sizes,
                },
                row.plan.binary_columns.clone(),
            )
        },
    );
    Ok((csv, manifest.to_json()))
}

async fn stored_release(col: &Collector, survey: String, csv: bool) -> Result<String, ApiError> {
    {
        let s = survey.clone();
        let found = col
            .0
            .store
            .run(move |c| -> Result<Option<(String, String)>, ApiError> {
                c.query_row(
                    "SELECT csv, manifest FROM releases WHERE survey = ?1",
                    [&s],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(sql)
            })
            .await?;
        match found {
            Some((c, m)) => Ok(if csv { c } else { m }),
            // The same answer whether the survey exists or not (issue 43 §6): how far a real
            // survey has come is its team's to see (`GET …/status` with the admin token).
            None => Err(ApiError::not_found(format!(
                "there is no published release of survey {survey:?} (no such survey, or not \
                 released yet)"
            ))),
        }
    }
}

/// `GET /api/surveys/{id}/datapackage.json`: the release as a Frictionless Data Package, its
/// resources `release.csv` and `manifest.json` at the URLs beside it.
pub(super) async fn datapackage_json(
    State(col): State<Collector>,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    let manifest_text = stored_release(&col, survey.clone(), false).await?;
    let s = survey.clone();
    let template = col
        .0
        .store
        .run(move |c| load_survey(c, &s).map(|row| row.template))
        .await?;
    let manifest = orthomask_formats::manifest::Manifest::parse(&manifest_text, "manifest.json")
        .map_err(|e| ApiError::internal("the stored manifest", e))?;
    let package = orthomask_survey::datapackage::build(&orthomask_survey::datapackage::Sources {
        manifest: &manifest,
        definition: Some(&template),
        declared_ranges: &[],
    });
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        package.to_json(),
    )
        .into_response())
}

pub(super) async fn release_csv(
    State(col): State<Collector>,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    let body = stored_release(&col, survey, true).await?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/csv; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response())
}

pub(super) async fn manifest_json(
    State(col): State<Collector>,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    let body = stored_release(&col, survey, false).await?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response())
}
