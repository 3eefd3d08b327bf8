//! Hand-overs from the provider (`A₂,k X_k B_k`) and, in share mode, the right-masking services
//! (`A Xⁱ`): unmasking, QA, summing the parts.

use super::*;
use orthomask_formats::manifest::ReceiptRoot;
use orthomask_survey::inclusion::PublishedList;

/// The state of cohort `k` before a hand-over is recorded: `Some(hash)` if one was.
fn before_hand_over(
    c: &Connection,
    survey: &str,
    cohort: u32,
) -> Result<(CollectorCohort, Option<String>), ApiError> {
    c.query_row(
        "SELECT status, result_hash FROM cohorts WHERE survey = ?1 AND cohort = ?2",
        (survey, cohort),
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()
    .map_err(sql)?
    .ok_or_else(|| ApiError::not_found(format!("survey {survey:?} has no cohort {cohort}")))
}

/// What became of a cohort at the collector.
struct Outcome {
    status: CollectorCohort,
    records: usize,
    /// `A₂,k X₁,k` (or `A X₁` in share mode), row by row.
    data: Option<Vec<u8>>,
    qa: Option<String>,
    merkle_root: String,
    result_hash: String,
    note: Option<String>,
}

/// Store a cohort's outcome (once).
fn record_outcome(c: &Connection, survey: &str, cohort: u32, o: Outcome) -> Result<(), ApiError> {
    let (current, _) = before_hand_over(c, survey, cohort)?;
    if current.is_settled() {
        return Ok(());
    }
    c.execute(
        "UPDATE cohorts SET status = ?3, records = ?4, data = ?5, qa = ?6, merkle_root = ?7,
                result_hash = ?8, note = ?9
         WHERE survey = ?1 AND cohort = ?2",
        (
            survey,
            cohort,
            o.status,
            o.records,
            o.data,
            o.qa,
            o.merkle_root,
            o.result_hash,
            o.note,
        ),
    )
    .map_err(sql)?;
    Ok(())
}

/// Check a basic-protocol hand-over's nonces against the credentials the collector issued for
/// the cohort: one nonce per record, none twice, each issued for this cohort. A provider that
/// duplicates an honest row or adds rows of its own cannot name a credential for them (issue 10
/// §5); `None` when the hand-over is consistent, else why not.
fn check_nonces(
    c: &Connection,
    survey: &str,
    cohort: u32,
    records: usize,
    nonces: &[String],
) -> Result<Option<String>, ApiError> {
    if nonces.len() != records {
        return Ok(Some(format!(
            "the hand-over has {records} records but names {} upload credentials",
            nonces.len()
        )));
    }
    let distinct: std::collections::BTreeSet<&String> = nonces.iter().collect();
    if distinct.len() != nonces.len() {
        return Ok(Some(
            "the hand-over names an upload credential twice (a duplicated record)".to_owned(),
        ));
    }
    let mut stmt = c
        .prepare_cached(
            "SELECT 1 FROM credentials WHERE survey = ?1 AND cohort = ?2 AND nonce = ?3",
        )
        .map_err(sql)?;
    let unknown = nonces
        .iter()
        .filter(|n| !stmt.exists((survey, cohort, n.as_str())).unwrap_or(false))
        .count();
    Ok((unknown > 0).then(|| {
        format!(
            "{unknown} of the hand-over's records carry no upload credential the collector issued \
             for cohort {cohort} (records the provider made up)"
        )
    }))
}

/// After cohort `k`'s hand-over: the invitations whose nonces arrived are used up; those of the
/// cohort whose upload never came may join a later cohort (issue 10 §4). In share mode the
/// parts do not say which credentials they hold (`nonces` is `None`), so every invitation that
/// joined the cohort is used up: a no-show then needs a new invitation, but nobody can answer
/// twice.
fn settle_invitations(
    c: &Connection,
    survey: &str,
    cohort: u32,
    nonces: Option<&[String]>,
) -> Result<(), ApiError> {
    let now = crate::time::now_rfc3339();
    let Some(nonces) = nonces else {
        c.execute(
            "UPDATE invitations SET used_at = ?3
             WHERE survey = ?1 AND cohort = ?2 AND used_at IS NULL",
            (survey, cohort, &now),
        )
        .map_err(sql)?;
        return Ok(());
    };
    for nonce in nonces {
        c.execute(
            "UPDATE invitations SET used_at = ?3 WHERE survey = ?1 AND nonce = ?2",
            (survey, nonce, &now),
        )
        .map_err(sql)?;
    }
    c.execute(
        "UPDATE invitations SET cohort = NULL, nonce = NULL
         WHERE survey = ?1 AND cohort = ?2 AND used_at IS NULL",
        (survey, cohort),
    )
    .map_err(sql)?;
    Ok(())
}

/// Record service `idx`'s receipt list of a cohort (`count` uploads under `merkle_root`): in
/// share mode what a part claims when it arrives, checked against the published list when the
/// cohort is combined; in the basic protocol the provider's list once checked. The release
/// copies the entries of its cohorts into the manifest.
fn store_receipt_root(
    c: &Connection,
    survey: &str,
    idx: u32,
    root: &ReceiptRoot,
) -> Result<(), ApiError> {
    c.execute(
        "INSERT OR REPLACE INTO receipt_roots (survey, cohort, idx, service, count, merkle_root)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        (
            survey,
            root.cohort,
            idx,
            &root.service,
            root.count,
            &root.merkle_root,
        ),
    )
    .map_err(sql)?;
    Ok(())
}

/// The receipt roots recorded for a cohort, by service index.
pub(super) fn receipt_roots(
    c: &Connection,
    survey: &str,
    cohort: u32,
) -> Result<Vec<(u32, ReceiptRoot)>, ApiError> {
    let mut stmt = c
        .prepare_cached(
            "SELECT idx, service, count, merkle_root FROM receipt_roots
             WHERE survey = ?1 AND cohort = ?2 ORDER BY idx",
        )
        .map_err(sql)?;
    stmt.query_map((survey, cohort), |r| {
        Ok((
            r.get(0)?,
            ReceiptRoot {
                cohort,
                service: r.get(1)?,
                count: r.get(2)?,
                merkle_root: r.get(3)?,
            },
        ))
    })
    .map_err(sql)?
    .collect::<Result<Vec<_>, _>>()
    .map_err(sql)
}

/// The receipt list that `name` (at base URL `base`) published for `cohort`, fetched for the
/// check of a hand-over (issue 10 §5).
///
/// # Errors
/// 503 whenever the list cannot be had — the service is down, answers an error, or sends
/// something that is not a list: the hand-over is then neither accepted (never unchecked) nor
/// refused, and the sender's outbox tries again.
async fn published_list(
    col: &Collector,
    name: &str,
    base: &str,
    survey: &str,
    cohort: u32,
) -> Result<PublishedList, ApiError> {
    let url = format!("{base}/api/surveys/{survey}/cohorts/{cohort}/receipts");
    let unavailable = |why: String| {
        ApiError::unavailable(format!(
            "the receipt list {name} published for cohort {cohort} could not be fetched \
             ({why}); a hand-over is accepted only once it is checked against it, try again"
        ))
    };
    let body = col
        .call_peer(name, reqwest::Method::GET, url, None)
        .await
        .map_err(|e| unavailable(e.message().to_owned()))?;
    serde_json::from_slice(&body).map_err(|e| unavailable(format!("not a receipt list: {e}")))
}

/// What a hand-over claims about one service's uploads of a cohort.
struct Claim<'a> {
    /// Who published the list (for the message).
    name: &'a str,
    /// The Merkle root the hand-over names.
    merkle_root: &'a str,
    /// The uploads the hand-over counts.
    uploads: usize,
    /// Rows handed over.
    rows: usize,
    /// Whether the rows may be fewer than the uploads (share mode: the provider keeps only the
    /// participants whose shares reached every right-masking service).
    rows_may_be_fewer: bool,
}

/// Issue 10 §5: `None` when the hand-over matches the list the service published, else why
/// not. What must match: the list is the one of this survey and cohort; its root is the RFC 6962
/// root of its hashes, recomputed here, and its count their number (no hash twice); the
/// hand-over's root is the list's; the hand-over's upload count is the list's; and the rows are
/// exactly the list's count (basic protocol: one row per upload, so dropped or duplicated rows
/// are refused) or at most it (share mode).
fn list_mismatch(list: &PublishedList, survey: &str, cohort: u32, claim: &Claim) -> Option<String> {
    let name = claim.name;
    if list.survey != survey || list.cohort != cohort {
        return Some(format!(
            "{name} published the receipt list of survey {:?} cohort {} for cohort {cohort}",
            list.survey, list.cohort
        ));
    }
    if !list.consistent() {
        return Some(format!(
            "the receipt list {name} published for cohort {cohort} is inconsistent: its root or \
             count is not that of its {} upload hashes",
            list.upload_hashes.len()
        ));
    }
    if claim.merkle_root != list.merkle_root {
        return Some(format!(
            "the hand-over's Merkle root {} is not the root {} of the {} receipts {name} \
             published for cohort {cohort}",
            claim.merkle_root, list.merkle_root, list.count
        ));
    }
    if claim.uploads != list.count {
        return Some(format!(
            "the hand-over counts {} uploads but {name} published {} receipts for cohort {cohort}",
            claim.uploads, list.count
        ));
    }
    let rows_fit = if claim.rows_may_be_fewer {
        claim.rows <= list.count
    } else {
        claim.rows == list.count
    };
    (!rows_fit).then(|| {
        format!(
            "the hand-over has {} rows but {name} published {} receipts for cohort {cohort} \
             (dropped or duplicated records)",
            claim.rows, list.count
        )
    })
}

pub(super) async fn cohort_result(
    State(col): State<Collector>,
    headers: HeaderMap,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
    ApiJson(result): ApiJson<CohortResult>,
) -> Result<Response, ApiError> {
    col.peer(&headers)?;
    if result.survey != survey || result.cohort != cohort {
        return Err(ApiError::bad_request(
            "the result's survey or cohort differs from the URL's",
        ));
    }
    let canonical = serde_json::to_vec(&result).map_err(|e| ApiError::internal("result", e))?;
    let hash = sha256_hex(&canonical);
    let s = survey.clone();
    let (row, (status, previous)) = col
        .0
        .store
        .run(move |c| -> Result<_, ApiError> {
            Ok((load_survey(c, &s)?, before_hand_over(c, &s, cohort)?))
        })
        .await?;
    let ok = || {
        json(
            StatusCode::OK,
            &serde_json::json!({"cohort": cohort, "received": true}),
        )
    };
    match previous {
        Some(h) if h == hash && status == CollectorCohort::Failed => {
            return Err(ApiError::unprocessable(format!(
                "cohort {cohort} was refused when this result first arrived; see the collector's status"
            )));
        }
        Some(h) if h == hash => return Ok(ok()),
        Some(_) => {
            return Err(ApiError::conflict(format!(
                "cohort {cohort} already has a different result"
            )));
        }
        None if status.is_settled() => {
            return Err(ApiError::conflict(format!(
                "cohort {cohort} is already {status}"
            )));
        }
        None => {}
    }
    let s = survey.clone();
    let nonces = result.nonces.clone();
    let rows = match &result.outcome {
        MaskingOutcome::Empty => 0,
        MaskingOutcome::Withheld { .. } => result.uploads,
        MaskingOutcome::Masked { batch } => batch.rows,
    };
    let mismatch = if row.plan.share_services == 0 {
        col.0
            .store
            .run(move |c| check_nonces(c, &s, cohort, rows, &nonces))
            .await?
    } else {
        None
    };
    let (new_status, records, data, qa, note, refusal) = match (mismatch, result.outcome) {
        (Some(why), _) => (
            CollectorCohort::Failed,
            rows,
            None,
            None,
            Some(why.clone()),
            Some(why),
        ),
        (None, outcome) => match outcome {
            MaskingOutcome::Empty => (CollectorCohort::Empty, 0, None, None, None, None),
            MaskingOutcome::Withheld { reason } => (
                CollectorCohort::Withheld,
                result.uploads,
                None,
                None,
                Some(reason),
                None,
            ),
            MaskingOutcome::Masked { batch } => {
                if row.plan.share_services > 0 {
                    return Err(ApiError::bad_request(
                        "a share-mode survey's cohorts arrive as parts from the right-masking services",
                    ));
                }
                let batch = batch.to_matrix().map_err(ApiError::bad_request)?;
                let n = batch.nrows();
                if n < row.plan.min_cohort_size {
                    let why = format!(
                        "the batch has {n} records, fewer than the minimum cohort size {}",
                        row.plan.min_cohort_size
                    );
                    (
                        CollectorCohort::Failed,
                        n,
                        None,
                        None,
                        Some(why.clone()),
                        Some(why),
                    )
                } else {
                    let key = col.0.keys.get(&survey).ok_or_else(|| {
                        ApiError::internal("unmasking", "the survey key is missing")
                    })?;
                    let design = row
                        .template
                        .design()
                        .map_err(|e| ApiError::internal("unmasking", e))?;
                    let unmasked = crate::compute::core_task(move || {
                        DataCollector::new(key, design)?.unmask_cohort(cohort, &batch)
                    })
                    .await
                    .map_err(|e| ApiError::internal("unmasking", e))?;
                    match unmasked {
                        Ok(u) => {
                            let values: Vec<f64> = (0..u.data.nrows())
                                .flat_map(|i| u.data.row(i).iter().copied().collect::<Vec<_>>())
                                .collect();
                            let qa =
                                u.qa.as_ref()
                                    .map(|q| serde_json::to_string(&StoredQa::from(q)))
                                    .transpose()
                                    .map_err(|e| ApiError::internal("QA", e))?;
                            (
                                CollectorCohort::Received,
                                n,
                                Some(f64s_to_blob(&values)),
                                qa,
                                None,
                                None,
                            )
                        }
                        Err(e) => (
                            CollectorCohort::Failed,
                            n,
                            None,
                            None,
                            Some(e.to_string()),
                            Some(e.to_string()),
                        ),
                    }
                }
            }
        },
    };
    // A refusal needs no evidence; an acceptance needs the provider's published receipt list
    // (basic protocol; in share mode the provider only reports empty or withheld cohorts, which
    // release nothing, and the parts are checked against the right-masking services' lists).
    let (new_status, records, data, qa, note, refusal, accepted_root) =
        if refusal.is_none() && row.plan.share_services == 0 {
            let (name, base) = col
                .upload_services(0)?
                .into_iter()
                .next()
                .ok_or_else(|| ApiError::internal("checking", "no provider URL"))?;
            let list = published_list(&col, &name, &base, &survey, cohort).await?;
            let claim = Claim {
                name: &name,
                merkle_root: &result.merkle_root,
                uploads: result.uploads,
                rows,
                rows_may_be_fewer: false,
            };
            match list_mismatch(&list, &survey, cohort, &claim) {
                Some(why) => (
                    CollectorCohort::Failed,
                    records,
                    None,
                    None,
                    Some(why.clone()),
                    Some(why),
                    None,
                ),
                None => (
                    new_status,
                    records,
                    data,
                    qa,
                    note,
                    None,
                    Some(ReceiptRoot {
                        cohort,
                        service: row.template.upload_url.clone(),
                        count: list.count,
                        merkle_root: list.merkle_root,
                    }),
                ),
            }
        } else {
            (new_status, records, data, qa, note, refusal, None)
        };
    let s = survey.clone();
    let root = result.merkle_root.clone();
    let nonces = result.nonces;
    let share_services = row.plan.share_services;
    col.0
        .store
        .run(move |c| {
            if let Some(r) = &accepted_root {
                store_receipt_root(c, &s, 0, r)?;
            }
            record_outcome(
                c,
                &s,
                cohort,
                Outcome {
                    status: new_status,
                    records,
                    data,
                    qa,
                    merkle_root: root,
                    result_hash: hash,
                    note,
                },
            )?;
            if new_status != CollectorCohort::Failed {
                let known = (share_services == 0).then_some(nonces.as_slice());
                settle_invitations(c, &s, cohort, known)?;
            }
            Ok::<(), ApiError>(())
        })
        .await?;
    col.maybe_release(&survey).await?;
    match refusal {
        Some(why) => Err(ApiError::unprocessable(why)),
        None => Ok(ok()),
    }
}

pub(super) async fn share_part(
    State(col): State<Collector>,
    headers: HeaderMap,
    ApiPath((survey, cohort, index)): ApiPath<(String, u32, u32)>,
    ApiJson(part): ApiJson<SharePart>,
) -> Result<Response, ApiError> {
    col.peer(&headers)?;
    if part.survey != survey || part.cohort != cohort || part.index != index {
        return Err(ApiError::bad_request(
            "the part's survey, cohort or index differs from the URL's",
        ));
    }
    let block = part.block.to_matrix().map_err(ApiError::bad_request)?;
    let canonical = serde_json::to_vec(&part).map_err(|e| ApiError::internal("part", e))?;
    let hash = sha256_hex(&canonical);
    let s = survey.clone();
    let values: Vec<f64> = (0..block.nrows())
        .flat_map(|i| block.row(i).iter().copied().collect::<Vec<_>>())
        .collect();
    let (nrows, ncols) = block.shape();
    let blob = f64s_to_blob(&values);
    let root = part.merkle_root.clone();
    let uploads = part.uploads;
    let (row, complete) = col
        .0
        .store
        .run(move |c| -> Result<(SurveyRow, bool), ApiError> {
            let row = load_survey(c, &s)?;
            let k = row.plan.share_services;
            if k == 0 || index as usize >= k {
                return Err(ApiError::bad_request(format!(
                    "survey {s:?} has no right-masking service {index}"
                )));
            }
            if ncols != row.registration.p() {
                return Err(ApiError::bad_request(format!(
                    "the part has {ncols} columns; the survey's records have {}",
                    row.registration.p()
                )));
            }
            let (status, _) = before_hand_over(c, &s, cohort)?;
            let existing: Option<String> = c
                .query_row(
                    "SELECT body_hash FROM share_parts WHERE survey = ?1 AND cohort = ?2 AND idx = ?3",
                    (&s, cohort, index),
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql)?;
            // A retry of a part already stored may be the only chance to combine the cohort: the
            // last part may have been stored by a request that failed (crash, store error)
            // before combining. So a retry combines whenever every part is in and the cohort is
            // not resolved yet (issue 10 §6).
            let all_parts_in = |c: &Connection| Ok::<_, ApiError>(parts_stored(c, &s, cohort)? == k);
            match existing {
                Some(h) if h == hash => {
                    let again = all_parts_in(c)? && !status.is_settled();
                    return Ok((row, again));
                }
                Some(_) => {
                    return Err(ApiError::conflict(format!(
                        "right-masking service {index} already sent a different part for cohort {cohort}"
                    )));
                }
                None if status.is_settled() => {
                    return Err(ApiError::conflict(format!("cohort {cohort} is already {status}")));
                }
                None => {}
            }
            c.execute(
                "INSERT INTO share_parts (survey, cohort, idx, body_hash, nrows, ncols, data, merkle_root)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                (&s, cohort, index, &hash, nrows, ncols, &blob, &root),
            )
            .map_err(sql)?;
            // What the part claims of its service's receipts; checked when the cohort combines.
            let service = row
                .template
                .masking
                .share_mode
                .as_ref()
                .and_then(|m| m.providers.get(index as usize))
                .cloned()
                .unwrap_or_default();
            store_receipt_root(
                c,
                &s,
                index,
                &ReceiptRoot {
                    cohort,
                    service,
                    count: uploads,
                    merkle_root: root.clone(),
                },
            )?;
            Ok((row, all_parts_in(c)?))
        })
        .await?;
    if complete {
        let refused = combine(&col, &survey, cohort, row).await?;
        col.maybe_release(&survey).await?;
        if let Some(why) = refused {
            return Err(ApiError::unprocessable(why));
        }
    }
    Ok(json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "index": index, "received": true}),
    ))
}

/// How many right-masking services' parts of cohort `cohort` are stored.
fn parts_stored(c: &Connection, survey: &str, cohort: u32) -> Result<usize, ApiError> {
    c.query_row(
        "SELECT COUNT(*) FROM share_parts WHERE survey = ?1 AND cohort = ?2",
        (survey, cohort),
        |r| r.get(0),
    )
    .map_err(sql)
}

/// Combine every cohort whose parts are all stored but which was never resolved (the collector
/// stopped between storing the last part and combining): run at start-up.
///
/// # Errors
/// Store errors; combining errors of a cohort.
pub(super) async fn resume_combining(col: &Collector) -> Result<(), ApiError> {
    let pending = col
        .0
        .store
        .run(|c| -> Result<Vec<(String, u32)>, ApiError> {
            let mut stmt = c
                .prepare(&format!(
                    "SELECT p.survey, p.cohort FROM share_parts p
                     JOIN cohorts k ON k.survey = p.survey AND k.cohort = p.cohort
                     WHERE k.status NOT IN ({})
                     GROUP BY p.survey, p.cohort",
                    CollectorCohort::settled_sql_list()
                ))
                .map_err(sql)?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(sql)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(sql)
        })
        .await?;
    for (survey, cohort) in pending {
        let s = survey.clone();
        let (row, complete) = col
            .0
            .store
            .run(move |c| -> Result<(SurveyRow, bool), ApiError> {
                let row = load_survey(c, &s)?;
                let k = row.plan.share_services;
                let complete = k > 0 && parts_stored(c, &s, cohort)? == k;
                Ok((row, complete))
            })
            .await?;
        if complete {
            combine(col, &survey, cohort, row).await?;
            col.maybe_release(&survey).await?;
        }
    }
    Ok(())
}

/// Sum the `K₁` parts `A Xⁱ` of a cohort, keep the `p₁` data columns and check QA; a cohort
/// that passes is accepted only if every part matches the receipt list its right-masking service
/// published (issue 10 §5). `Some(why)` when that check refused the cohort.
///
/// # Errors
/// Store errors; 503 when a published list cannot be fetched (nothing is recorded, a retry of
/// the part combines again).
async fn combine(
    col: &Collector,
    survey: &str,
    cohort: u32,
    row: SurveyRow,
) -> Result<Option<String>, ApiError> {
    let s = survey.to_owned();
    let parts = col
        .0
        .store
        .run(move |c| -> Result<Vec<StoredPart>, ApiError> {
            let mut stmt = c
                .prepare(
                    "SELECT nrows, ncols, data, merkle_root FROM share_parts
                     WHERE survey = ?1 AND cohort = ?2 ORDER BY idx",
                )
                .map_err(sql)?;
            let mut q = stmt.query((&s, cohort)).map_err(sql)?;
            let mut out = Vec::new();
            while let Some(r) = q.next().map_err(sql)? {
                let blob: Option<Vec<u8>> = r.get(2).map_err(sql)?;
                out.push((
                    r.get(0).map_err(sql)?,
                    r.get(1).map_err(sql)?,
                    blob_to_f64s(&blob.unwrap_or_default())?,
                    r.get(3).map_err(sql)?,
                ));
            }
            Ok(out)
        })
        .await?;
    let roots: Vec<String> = parts.iter().map(|p| p.3.clone()).collect();
    let rows: Vec<usize> = parts.iter().map(|p| p.0).collect();
    let services = col.upload_services(row.plan.share_services)?;
    let s = survey.to_owned();
    let claims = col
        .0
        .store
        .run(move |c| receipt_roots(c, &s, cohort))
        .await?;
    let design = row
        .template
        .design()
        .map_err(|e| ApiError::internal("combining", e))?;
    let min = row.plan.min_cohort_size;
    let combined = crate::compute::core_task(move || {
        let blocks: Vec<DMatrix<f64>> = parts
            .iter()
            .map(|(r, c, v, _)| DMatrix::from_row_slice(*r, *c, v))
            .collect();
        let n = blocks.first().map_or(0, DMatrix::nrows);
        if n < min {
            return Err(format!(
                "the parts have {n} records, fewer than the minimum cohort size {min}"
            ));
        }
        combine_shares(&design, &blocks).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| ApiError::internal("combining", e))?;
    let hash = sha256_hex(roots.join(",").as_bytes());
    let s = survey.to_owned();
    let root = roots.join(",");
    // A refusal needs no evidence; an acceptance needs every service's published list.
    let mut refused = None;
    if combined.is_ok() {
        for (i, ((name, base), rows)) in services.iter().zip(&rows).enumerate() {
            let list = published_list(col, name, base, survey, cohort).await?;
            let why = match claims.iter().find(|(idx, _)| *idx as usize == i) {
                Some((_, claim)) => list_mismatch(
                    &list,
                    survey,
                    cohort,
                    &Claim {
                        name,
                        merkle_root: &roots[i],
                        uploads: claim.count,
                        rows: *rows,
                        rows_may_be_fewer: true,
                    },
                ),
                None => Some(format!(
                    "the part of {name} for cohort {cohort} names no upload count"
                )),
            };
            if why.is_some() {
                refused = why;
                break;
            }
        }
    }
    let combined = match (&refused, combined) {
        (Some(why), _) => Err(why.clone()),
        (None, c) => c,
    };
    let outcome = match combined {
        Ok((data, qa)) => {
            let n = data.nrows();
            let values: Vec<f64> = (0..n)
                .flat_map(|i| data.row(i).iter().copied().collect::<Vec<_>>())
                .collect();
            let qa = qa
                .as_ref()
                .map(|q| serde_json::to_string(&StoredQa::from(q)))
                .transpose()
                .map_err(|e| ApiError::internal("QA", e))?;
            (
                CollectorCohort::Received,
                n,
                Some(f64s_to_blob(&values)),
                qa,
                None,
            )
        }
        Err(why) => (CollectorCohort::Failed, 0, None, None, Some(why)),
    };
    col.0
        .store
        .run(move |c| -> Result<(), ApiError> {
            let (status, records, data, qa, note) = outcome;
            record_outcome(
                c,
                &s,
                cohort,
                Outcome {
                    status,
                    records,
                    data,
                    qa,
                    merkle_root: root,
                    result_hash: hash,
                    note,
                },
            )?;
            c.execute(
                "UPDATE share_parts SET data = NULL WHERE survey = ?1 AND cohort = ?2",
                (&s, cohort),
            )
            .map_err(sql)?;
            settle_invitations(c, &s, cohort, None)?;
            Ok(())
        })
        .await?;
    // Each part alone is `A Xⁱ`: out of the files now, not at the next automatic checkpoint.
    col.0.store.checkpoint().await.map_err(ApiError::from)?;
    Ok(refused)
}
