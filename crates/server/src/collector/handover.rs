//! Hand-overs from the provider (`A₂,k X_k B_k`, or a share-mode cohort's outcome) and, in share
//! mode, the right-masking services' parts: the claim is judged against the published receipt
//! lists ([`super::claims`]), a believed claim settles the cohort through its state
//! ([`CollectorCohort::settle`]) after the content checks (unmasking, QA, summing the parts), and
//! a refused one is recorded and changes nothing (issue 20 §5).
//!
//! A cohort whose believed hand-over fails the content checks is **spoilt**: someone sent data
//! no honest device makes, and which upload it was cannot be told (after `A₂,k` every row mixes
//! every upload). The cohort is left out and its invitations are reopened, so its participants
//! get a place in a new cohort and answer again ([`reopen_invitations`]; issue 20 §8). The
//! unmasked data of a spoilt cohort are never stored: a new cohort's Gram matrix differenced
//! against a stored old one would give the records of whoever did not answer again.

use super::claims::{self, Claim, Nonces};
use super::{Collector, PROVIDER, StoredPart, SurveyRow, load_survey, sql};
use crate::error::ApiError;
use crate::http::{ApiPath, json};
use crate::peer_auth::Peer;
use crate::peers::Party;
use crate::states::CollectorCohort;
use crate::states::Settlement;
use crate::wire::{CohortResult, MaskingOutcome, PeerBodyLimits, SharePart};
use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use orthomask_core::protocol::qa::QaReport;
use orthomask_core::protocol::share_handover::{FixedMatrix, combine_parts};
use orthomask_core::protocol::tm2::DataCollector;
use orthomask_formats::manifest::ReceiptRoot;
use orthomask_survey::api::QaCheck;
use orthomask_survey::cohort_check::CohortCheck;
use orthomask_survey::floors::Floors;
use orthomask_survey::inclusion::PublishedList;
use orthomask_survey::intake_bounds::UploadBounds;
use orthomask_survey::merkle::sha256_hex;
use orthomask_survey::padding_check::PaddingCheck;
use orthomask_survey::policy::MAX_REOPENINGS;
use rusqlite::{Connection, OptionalExtension};

/// The state of cohort `k`.
///
/// # Errors
/// 404 for a survey or cohort that does not exist; store errors.
pub(super) fn cohort_status(
    c: &Connection,
    survey: &str,
    cohort: u32,
) -> Result<CollectorCohort, ApiError> {
    before_hand_over(c, survey, cohort).map(|(status, _)| status)
}

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

/// The cohort floor of a survey, from its template (`orthomask_survey::floors`): the rule the
/// provider applies to the same signed template.
fn cohort_floor(row: &SurveyRow) -> Result<usize, ApiError> {
    Floors::of(&row.template)
        .map(|f| f.cohort)
        .map_err(|e| ApiError::internal("the survey's floors", e))
}

/// What a believed hand-over brings, after the content checks ([`checked_content`]).
struct Content {
    settlement: Settlement,
    records: usize,
    /// `A₂,k X₁,k` (or `A X₁` in share mode), row by row; only for a received cohort.
    data: Option<Vec<u8>>,
    /// The QA check (`orthomask_survey::api::QaCheck` as JSON); only for a received cohort.
    qa: Option<String>,
    note: Option<String>,
}

impl Content {
    /// Nothing to store: an empty, withheld or spoilt cohort (with `note` saying why).
    fn nothing(settlement: Settlement, records: usize, note: Option<String>) -> Self {
        Self {
            settlement,
            records,
            data: None,
            qa: None,
            note,
        }
    }

    /// Unmasked records that passed their checks, to be stored with their QA result.
    fn received(data: &nalgebra::DMatrix<f64>, qa: Option<&QaReport>) -> Result<Self, ApiError> {
        Ok(Self {
            settlement: Settlement::Received,
            records: data.nrows(),
            data: Some(crate::store::matrix_to_blob(data)),
            qa: qa
                .map(|q| serde_json::to_string(&QaCheck::from(q)))
                .transpose()
                .map_err(|e| ApiError::internal("QA", e))?,
            note: None,
        })
    }
}

/// What settles a cohort: its content and the hand-over that brought it.
struct Outcome {
    content: Content,
    merkle_root: String,
    result_hash: String,
}

/// Settle a cohort once by a believed hand-over, and settle its invitations: used up by a
/// received, withheld or empty cohort, reopened by a spoilt one. `nonces` are the credentials
/// the hand-over names (basic protocol), `None` in share mode. Checked again here, where it is
/// written, because another request may have settled the cohort while this one judged its
/// claim: the same hand-over again (a retry, or two combines of the same parts) changes
/// nothing, a different one is refused (409). Returns the state the cohort holds.
///
/// # Errors
/// [`ApiError::conflict`] for a different hand-over of a settled cohort; store errors.
fn settle(
    c: &Connection,
    survey: &str,
    cohort: u32,
    o: Outcome,
    nonces: Option<&[String]>,
) -> Result<CollectorCohort, ApiError> {
    let (current, previous) = before_hand_over(c, survey, cohort)?;
    if is_retry(previous.as_deref(), &o.result_hash, cohort, current, || {
        format!("cohort {cohort} already has a different result")
    })? {
        return Ok(current);
    }
    let Outcome {
        content: o,
        merkle_root,
        result_hash,
    } = o;
    let next = current
        .settle(o.settlement)
        .map_err(|e| ApiError::conflict(e.to_string()))?;
    c.execute(
        "UPDATE cohorts SET status = ?3, records = ?4, data = ?5, qa = ?6, merkle_root = ?7,
                result_hash = ?8, note = ?9
         WHERE survey = ?1 AND cohort = ?2",
        (
            survey,
            cohort,
            next,
            o.records,
            o.data,
            o.qa,
            merkle_root,
            result_hash,
            o.note,
        ),
    )
    .map_err(sql)?;
    match next {
        CollectorCohort::Spoilt => reopen_invitations(c, survey, cohort, nonces)?,
        CollectorCohort::Withheld => free_invitations(c, survey, cohort)?,
        _ => settle_invitations(c, survey, cohort, nonces)?,
    }
    Ok(next)
}

/// After cohort `k`'s believed hand-over: the invitations whose nonces arrived are used up; those
/// of the cohort whose upload never came may join a later cohort (issue 10 §4). In share mode
/// the parts do not say which credentials they hold (`nonces` is `None`), so every invitation
/// that joined the cohort is used up: a no-show then needs a new invitation, but nobody can
/// answer twice.
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
    // The cohort's no-shows take a place in a later one.
    free_invitations(c, survey, cohort)
}

/// A withheld cohort (too few records to mask, issue 43 §3): nothing of it is released, so no
/// invitation of it is used up — each gets a place in a new cohort at its next load, without
/// counting as reopened (nobody misbehaved). While the survey takes participants its devices are
/// told so (`Fate::Regrouped`, [`cohort_fate_of`]) and answer again from the answers still in
/// their page; once it is closed, the survey team's status shows them as not answered. A spent
/// invitation thus always leads to a released answer or a fresh place, whoever closed the cohort.
fn free_invitations(c: &Connection, survey: &str, cohort: u32) -> Result<(), ApiError> {
    c.execute(
        "UPDATE invitations SET cohort = NULL, nonce = NULL
         WHERE survey = ?1 AND cohort = ?2 AND used_at IS NULL",
        (survey, cohort),
    )
    .map_err(sql)?;
    Ok(())
}

/// What cohort `cohort`'s participants are told of it: its state's fate, except that a withheld
/// cohort of a survey that still takes participants is regrouped — its participants answer
/// again in a new cohort ([`free_invitations`]).
///
/// # Errors
/// 404 for a survey or cohort that does not exist; store errors.
pub(super) fn cohort_fate_of(
    c: &Connection,
    survey: &str,
    cohort: u32,
) -> Result<orthomask_survey::fate::Fate, ApiError> {
    let status = cohort_status(c, survey, cohort)?;
    if status != CollectorCohort::Withheld {
        return Ok(status.fate());
    }
    let open: bool = c
        .query_row("SELECT status FROM surveys WHERE id = ?1", [survey], |r| {
            r.get::<_, crate::states::SurveyState>(0)
        })
        .map_err(sql)?
        .takes_participants();
    Ok(if open {
        orthomask_survey::fate::Fate::Regrouped
    } else {
        orthomask_survey::fate::Fate::Withheld
    })
}

/// A spoilt cohort (issue 20 §8, the fallback): every invitation of the cohort gets a place in a
/// new cohort at its next load — the participants whose uploads were in it (the hand-over's
/// nonces; in share mode everyone of the cohort) count as reopened, at most
/// [`MAX_REOPENINGS`] times each (then the invitation is used up: a participant who keeps
/// sending invalid data spoils at most that many cohorts), the others were no-shows anyway.
/// The number reopened is kept with the cohort for the survey team's status.
fn reopen_invitations(
    c: &Connection,
    survey: &str,
    cohort: u32,
    nonces: Option<&[String]>,
) -> Result<(), ApiError> {
    let now = crate::time::now_rfc3339();
    // A set: a cohort may hold thousands of invitations and as many nonces.
    let batch: Option<std::collections::HashSet<&str>> =
        nonces.map(|list| list.iter().map(String::as_str).collect());
    let in_batch = |nonce: &Option<String>| match (&batch, nonce) {
        (None, _) => true,
        (Some(set), Some(n)) => set.contains(n.as_str()),
        (Some(_), None) => false,
    };
    let mut stmt = c
        .prepare(
            "SELECT token_hash, nonce, reopened FROM invitations
             WHERE survey = ?1 AND cohort = ?2 AND used_at IS NULL",
        )
        .map_err(sql)?;
    let held: Vec<(String, Option<String>, u32)> = stmt
        .query_map((survey, cohort), |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    let mut reopened = 0usize;
    for (token_hash, nonce, times) in held {
        if !in_batch(&nonce) {
            c.prepare_cached(
                "UPDATE invitations SET cohort = NULL, nonce = NULL WHERE token_hash = ?1",
            )
            .and_then(|mut u| u.execute([&token_hash]))
            .map_err(sql)?;
        } else if (times as usize) < MAX_REOPENINGS {
            c.prepare_cached(
                "UPDATE invitations SET cohort = NULL, nonce = NULL, reopened = reopened + 1
                 WHERE token_hash = ?1",
            )
            .and_then(|mut u| u.execute([&token_hash]))
            .map_err(sql)?;
            reopened += 1;
        } else {
            c.prepare_cached("UPDATE invitations SET used_at = ?2 WHERE token_hash = ?1")
                .and_then(|mut u| u.execute((&token_hash, &now)))
                .map_err(sql)?;
        }
    }
    c.execute(
        "UPDATE cohorts SET reopened = ?3 WHERE survey = ?1 AND cohort = ?2",
        (survey, cohort, reopened),
    )
    .map_err(sql)?;
    Ok(())
}

/// What the collector's records say of a basic hand-over's credential nonces.
fn nonce_evidence(
    c: &Connection,
    survey: &str,
    cohort: u32,
    nonces: &[String],
) -> Result<Nonces, ApiError> {
    let distinct: std::collections::BTreeSet<&String> = nonces.iter().collect();
    let mut stmt = c
        .prepare_cached(
            "SELECT 1 FROM credentials WHERE survey = ?1 AND cohort = ?2 AND nonce = ?3",
        )
        .map_err(sql)?;
    let mut unknown = 0;
    for n in nonces {
        if !stmt.exists((survey, cohort, n.as_str())).map_err(sql)? {
            unknown += 1;
        }
    }
    Ok(Nonces {
        named: nonces.len(),
        distinct: distinct.len(),
        unknown,
    })
}

/// Record service `idx`'s receipt list of a cohort as believed. The release copies the entries
/// of its cohorts into the manifest, and names every left-out cohort whose lists were not empty.
pub(super) fn store_receipt_root(
    c: &Connection,
    survey: &str,
    idx: u32,
    root: &ReceiptRoot,
) -> Result<(), ApiError> {
    c.execute(
        "INSERT OR REPLACE INTO receipt_roots (survey, cohort, idx, service, count, merkle_root,
                                               builds)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        (
            survey,
            root.cohort,
            idx,
            &root.service,
            root.count,
            &root.merkle_root,
            serde_json::to_string(&root.builds).unwrap_or_default(),
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
            "SELECT idx, service, count, merkle_root, builds FROM receipt_roots
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
                builds: serde_json::from_str(&r.get::<_, String>(4)?).map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(
                        4,
                        rusqlite::types::Type::Text,
                        Box::new(e),
                    )
                })?,
            },
        ))
    })
    .map_err(sql)?
    .collect::<Result<Vec<_>, _>>()
    .map_err(sql)
}

/// A refused claim before: the reason it was refused, if this exact body was.
fn refused_before(
    c: &Connection,
    survey: &str,
    cohort: u32,
    body_hash: &str,
) -> Result<Option<String>, ApiError> {
    c.query_row(
        "SELECT why FROM refused_handovers WHERE survey = ?1 AND cohort = ?2 AND body_hash = ?3",
        (survey, cohort, body_hash),
        |r| r.get(0),
    )
    .optional()
    .map_err(sql)
}

/// Record a refused claim (the survey team's status lists them) and answer 422. The cohort is
/// not touched: it waits for the genuine hand-over.
async fn refuse(
    col: &Collector,
    survey: &str,
    cohort: u32,
    service: &str,
    body_hash: String,
    why: String,
) -> Result<Response, ApiError> {
    let (s, name, w) = (survey.to_owned(), service.to_owned(), why.clone());
    col.0
        .store
        .run(move |c| -> Result<(), ApiError> {
            c.execute(
                "INSERT OR IGNORE INTO refused_handovers (survey, cohort, service, body_hash, why, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                (&s, cohort, &name, &body_hash, &w, crate::time::now_rfc3339()),
            )
            .map_err(sql)?;
            Ok(())
        })
        .await?;
    Err(ApiError::unprocessable(why))
}

/// The receipt list that `name` (at base URL `base`) published for `cohort`, fetched for the
/// check of a hand-over (issue 10 §5).
///
/// # Errors
/// 503 whenever the list cannot be had — the service is down, answers an error, or sends
/// something that is not a list: the hand-over is then neither believed (never unchecked) nor
/// refused, and the sender's outbox tries again.
pub(super) async fn published_list(
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
             ({why}); a hand-over is believed only once it is checked against it, try again"
        ))
    };
    let body = col
        .call_peer(name, reqwest::Method::GET, url, None)
        .await
        .map_err(|e| unavailable(e.message().to_owned()))?;
    serde_json::from_slice(&body).map_err(|e| unavailable(format!("not a receipt list: {e}")))
}

/// The answer to a believed hand-over: the state its cohort holds.
fn received(cohort: u32, state: CollectorCohort) -> Response {
    json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "received": true, "settled": state.as_sql()}),
    )
}

/// What the provider's hand-over claims, to be judged against the published receipt lists.
fn claim_of(result: &CohortResult) -> Claim<'_> {
    match &result.outcome {
        MaskingOutcome::Masked { batch } => Claim::Masked {
            rows: batch.rows,
            uploads: result.uploads,
            merkle_root: &result.merkle_root,
        },
        MaskingOutcome::Empty => Claim::Empty,
        MaskingOutcome::Withheld { .. } => Claim::Withheld {
            uploads: result.uploads,
        },
    }
}

/// The content checks of a believed hand-over: a masked batch is unmasked (`B_k` removed, the
/// noise columns dropped) and checked — its QA column, its statistics against the declared
/// ranges (`cohort_check`), its padding's law (`padding_check`: the provider's mask must be
/// orthogonal); one that fails is **spoilt** and its unmasked values are dropped here, never
/// stored. An empty or withheld cohort brings nothing.
///
/// # Errors
/// 400 for a batch that is not a matrix; 500 when the survey's key or design is missing.
async fn checked_content(
    col: &Collector,
    row: &SurveyRow,
    survey: &str,
    cohort: u32,
    outcome: MaskingOutcome,
    uploads: usize,
) -> Result<Content, ApiError> {
    let batch = match outcome {
        MaskingOutcome::Empty => return Ok(Content::nothing(Settlement::Empty, 0, None)),
        MaskingOutcome::Withheld { reason } => {
            return Ok(Content::nothing(
                Settlement::Withheld,
                uploads,
                Some(reason),
            ));
        }
        MaskingOutcome::Masked { batch } => batch.to_matrix().map_err(ApiError::bad_request)?,
    };
    let n = batch.nrows();
    let key = col
        .0
        .keys
        .get(survey)
        .ok_or_else(|| ApiError::internal("unmasking", "the survey key is missing"))?;
    let design = row
        .template
        .design()
        .map_err(|e| ApiError::internal("unmasking", e))?;
    let check = cohort_check(row)?;
    let padding = PaddingCheck::new(&design, orthomask_survey::policy::UPLOAD_FALSE_REFUSAL);
    let unmasked = crate::compute::core_task(move || {
        // The scale of the unmasking's rounding: the masked rows' largest length.
        let scale = orthomask_core::protocol::qa::max_row_norm(&batch);
        let collector = DataCollector::new(key, design)?;
        let leading = collector.unmask_leading(cohort, &batch)?;
        let padding = padding.map(|p| p.check(&batch, &leading));
        collector.unscale_cohort(cohort, leading, &batch).map(|u| {
            // Checked, and — what passes — with its exact identities snapped, so that a `δ`
            // below the allowances reaches no release (issue 43's adversarial review).
            let honest = check.snap(&u.data, scale).map(|(data, _)| data);
            (u, honest, padding)
        })
    })
    .await
    .map_err(|e| ApiError::internal("unmasking", e))?;
    // The checks in order, the first that fails naming the spoilt cohort's note: QA (seed 003
    // §3.1), the cohort's statistics (which name a column), the padding's law (the batch as a
    // whole). Every note says which condition, never a number of the cohort's.
    match unmasked {
        Ok((u, Ok(snapped), None | Some(Ok(_)))) => Content::received(&snapped, u.qa.as_ref()),
        // Statistics no cohort of honest records has: a liar inside the upload bounds (issue 43
        // §5). Spoilt like a failed QA check.
        Ok((_, Err(refusal), _)) => Ok(Content::nothing(
            Settlement::Spoilt,
            n,
            Some(refusal.public_note()),
        )),
        // A batch that is not an orthogonal mask of honest records: a provider's `M` that copies,
        // drops or stretches rows, or a device's missing padding (issue 43's adversarial review).
        Ok((_, Ok(_), Some(Err(refusal)))) => Ok(Content::nothing(
            Settlement::Spoilt,
            n,
            Some(refusal.public_note()),
        )),
        // QA failed (someone sent invalid data) or the batch could not be unmasked.
        Err(e) => Ok(Content::nothing(Settlement::Spoilt, n, Some(e.to_string()))),
    }
}

/// The check a cohort's unmasked statistics must pass (`orthomask_survey::cohort_check`): that
/// some cohort of honest records, in their declared ranges and codings, has them. A false
/// refusal (an honest cohort refused, with device-side DP) is as rare as a refused honest upload
/// (`policy::UPLOAD_FALSE_REFUSAL`, per cohort here).
fn cohort_check(row: &SurveyRow) -> Result<CohortCheck, ApiError> {
    CohortCheck::new(
        &row.template,
        orthomask_survey::policy::UPLOAD_FALSE_REFUSAL,
    )
    .map_err(|e| ApiError::internal("the survey's cohort check", e))
}

impl Collector {
    /// The largest peer bodies `survey`'s design allows (`PeerBodyLimits`), read before a
    /// hand-over's body is.
    ///
    /// # Errors
    /// 404 for a survey that does not exist; store errors.
    async fn peer_body_limits(&self, survey: &str) -> Result<PeerBodyLimits, ApiError> {
        let s = survey.to_owned();
        self.0
            .store
            .run(move |c| load_survey(c, &s).map(|row| row.registration.body_limits()))
            .await
    }
}

/// `PUT /api/peer/surveys/{id}/cohorts/{k}/result`: the provider's hand-over of a cohort.
pub(super) async fn cohort_result(
    State(col): State<Collector>,
    peer: Peer,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
    body: Body,
) -> Result<Response, ApiError> {
    peer.require(Party::Provider, "handing a cohort to the collector")?;
    let limit = col.peer_body_limits(&survey).await?.cohort_result;
    let (result, _held): (CohortResult, _) = peer
        .read_json(body, limit, "the cohort's hand-over")
        .await?;
    if result.survey != survey || result.cohort != cohort {
        return Err(ApiError::bad_request(
            "the result's survey or cohort differs from the URL's",
        ));
    }
    let canonical = serde_json::to_vec(&result).map_err(|e| ApiError::internal("result", e))?;
    let hash = sha256_hex(&canonical);
    let (s, h) = (survey.clone(), hash.clone());
    let (row, status, previous, refused) = col
        .0
        .store
        .run(move |c| -> Result<_, ApiError> {
            let row = load_survey(c, &s)?;
            let (status, previous) = before_hand_over(c, &s, cohort)?;
            Ok((row, status, previous, refused_before(c, &s, cohort, &h)?))
        })
        .await?;
    if let Some(why) = refused {
        return Err(ApiError::unprocessable(why));
    }
    if is_retry(previous.as_deref(), &hash, cohort, status, || {
        format!("cohort {cohort} already has a different result")
    })? {
        return Ok(received(cohort, status));
    }
    let claim = claim_of(&result);
    let floor = cohort_floor(&row)?;
    let share = row.plan.share_services;
    let services = col.upload_services(share)?;
    let mut lists = Vec::new();
    for (name, base) in &services {
        lists.push((
            name.clone(),
            published_list(&col, name, base, &survey, cohort).await?,
        ));
    }
    let verdict = if share == 0 {
        let (s, n) = (survey.clone(), result.nonces.clone());
        let nonces = col
            .0
            .store
            .run(move |c| nonce_evidence(c, &s, cohort, &n))
            .await?;
        let (name, list) = &lists[0];
        claims::judge_basic(claim, list, &survey, cohort, name, nonces, floor)
    } else {
        claims::judge_share_outcome(claim, &lists, &survey, cohort, floor)
    };
    if let Err(why) = verdict {
        // The hand-over comes from the provider in either protocol.
        return refuse(&col, &survey, cohort, PROVIDER, hash, why).await;
    }
    let content =
        checked_content(&col, &row, &survey, cohort, result.outcome, result.uploads).await?;
    let s = survey.clone();
    let root = result.merkle_root.clone();
    let nonces = result.nonces;
    let roots: Vec<(u32, ReceiptRoot)> = lists
        .iter()
        .enumerate()
        .map(|(i, (_, list))| (i as u32, receipt_root(&row, i, cohort, list)))
        .collect();
    let state = col
        .0
        .store
        .run(move |c| {
            for (i, r) in &roots {
                store_receipt_root(c, &s, *i, r)?;
            }
            let known = (share == 0).then_some(nonces.as_slice());
            settle(
                c,
                &s,
                cohort,
                Outcome {
                    content,
                    merkle_root: root,
                    result_hash: hash,
                },
                known,
            )
        })
        .await?;
    col.maybe_release(&survey).await?;
    Ok(received(cohort, state))
}

/// What the manifest records of the receipt list service `i` published for `cohort`.
pub(super) fn receipt_root(
    row: &SurveyRow,
    i: usize,
    cohort: u32,
    list: &PublishedList,
) -> ReceiptRoot {
    ReceiptRoot {
        cohort,
        service: service_url(row, i),
        count: list.count,
        merkle_root: list.merkle_root.clone(),
        builds: list.builds.clone(),
    }
}

/// The upload address of the service with index `i` (the provider in the basic protocol), as a
/// receipt names it.
pub(super) fn service_url(row: &SurveyRow, i: usize) -> String {
    match &row.template.masking.share_mode {
        Some(share) => share.providers.get(i).cloned().unwrap_or_default(),
        None => row.template.upload_url.clone(),
    }
}

/// `PUT /api/peer/surveys/{id}/cohorts/{k}/parts/{i}`: right-masking service `i`'s part.
pub(super) async fn share_part(
    State(col): State<Collector>,
    peer: Peer,
    ApiPath((survey, cohort, index)): ApiPath<(String, u32, u32)>,
    body: Body,
) -> Result<Response, ApiError> {
    peer.require(
        Party::Right(index),
        &format!("handing the collector part {index}"),
    )?;
    let limit = col.peer_body_limits(&survey).await?.share_part;
    let (part, _held): (SharePart, _) = peer.read_json(body, limit, "the share part").await?;
    if part.survey != survey || part.cohort != cohort || part.index != index {
        return Err(ApiError::bad_request(
            "the part's survey, cohort or index differs from the URL's",
        ));
    }
    let block = part.block.to_fixed().map_err(ApiError::bad_request)?;
    if !(part.scale.is_finite() && part.scale >= 0.0) {
        return Err(ApiError::bad_request(
            "the part's scale must be finite and not negative",
        ));
    }
    let canonical = serde_json::to_vec(&part).map_err(|e| ApiError::internal("part", e))?;
    let hash = sha256_hex(&canonical);
    let (s, h) = (survey.clone(), hash.clone());
    let (row, status, existing, refused) = col
        .0
        .store
        .run(move |c| -> Result<_, ApiError> {
            let row = load_survey(c, &s)?;
            let (status, _) = before_hand_over(c, &s, cohort)?;
            let existing = stored_part(c, &s, cohort, index)?;
            Ok((row, status, existing, refused_before(c, &s, cohort, &h)?))
        })
        .await?;
    let k = row.plan.share_services;
    if k == 0 || index as usize >= k {
        return Err(ApiError::bad_request(format!(
            "survey {survey:?} has no right-masking service {index}"
        )));
    }
    if let Some(why) = refused {
        return Err(ApiError::unprocessable(why));
    }
    if block.ncols() != row.registration.p1() {
        return Err(ApiError::bad_request(format!(
            "the part has {} columns; the survey's data columns are {}",
            block.ncols(),
            row.registration.p1()
        )));
    }
    // The QA tolerance grows with the rounding scale the part reports: one larger than any
    // honest service can report for these rows would let a forged part pass QA.
    let largest = UploadBounds::of(&row.template)
        .map_err(|e| ApiError::internal("the survey's upload bounds", e))?
        .largest_part_scale(block.nrows());
    if part.scale > largest {
        return Err(ApiError::bad_request(format!(
            "the part's rounding scale {:.3e} is larger than any honest service can report for \
             {} rows of this survey ({largest:.3e})",
            part.scale,
            block.nrows()
        )));
    }
    if is_retry(existing.as_deref(), &hash, cohort, status, || {
        different_part(index, cohort)
    })? {
        // A retry of a part already stored may be the only chance to combine the cohort: the
        // last part may have been stored by a request that failed (crash, store error) before
        // combining. So a retry combines whenever every part is in and the cohort is not
        // settled yet (issue 10 §6).
        let s = survey.clone();
        let complete = col
            .0
            .store
            .run(move |c| parts_stored(c, &s, cohort))
            .await?
            == k;
        if complete && !status.is_settled() {
            combine(&col, &survey, cohort, row).await?;
            col.maybe_release(&survey).await?;
        }
        return Ok(part_received(cohort, index));
    }
    // The part's claim — its service's uploads — is checked against that service's list before
    // it is stored, so a part that is not believed never blocks the genuine one.
    let services = col.upload_services(k)?;
    let (name, base) = &services[index as usize];
    let list = published_list(&col, name, base, &survey, cohort).await?;
    if let Err(why) = claims::judge_share_part(
        &list,
        &survey,
        cohort,
        name,
        &part.merkle_root,
        part.uploads,
        block.nrows(),
    ) {
        return refuse(&col, &survey, cohort, name, hash, why).await;
    }
    let (nrows, ncols) = (block.nrows(), block.ncols());
    let blob = block.to_le_bytes();
    let scale = part.scale;
    let root = receipt_root(&row, index as usize, cohort, &list);
    let s = survey.clone();
    let complete = col
        .0
        .store
        .run(move |c| -> Result<bool, ApiError> {
            // Checked again where it is written: another request may have stored this service's
            // part, or settled the cohort, while this one fetched and judged the list.
            let (status, _) = before_hand_over(c, &s, cohort)?;
            let stored = stored_part(c, &s, cohort, index)?;
            if !is_retry(stored.as_deref(), &hash, cohort, status, || {
                different_part(index, cohort)
            })? {
                c.execute(
                    "INSERT INTO share_parts (survey, cohort, idx, body_hash, nrows, ncols, data, merkle_root, scale)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    (&s, cohort, index, &hash, nrows, ncols, &blob, &root.merkle_root, scale),
                )
                .map_err(sql)?;
                store_receipt_root(c, &s, index, &root)?;
            }
            Ok(!status.is_settled() && parts_stored(c, &s, cohort)? == k)
        })
        .await?;
    if complete {
        combine(&col, &survey, cohort, row).await?;
        col.maybe_release(&survey).await?;
    }
    Ok(part_received(cohort, index))
}

/// The hash of the part service `index` stored for cohort `cohort`, if it did.
fn stored_part(
    c: &Connection,
    survey: &str,
    cohort: u32,
    index: u32,
) -> Result<Option<String>, ApiError> {
    c.query_row(
        "SELECT body_hash FROM share_parts WHERE survey = ?1 AND cohort = ?2 AND idx = ?3",
        (survey, cohort, index),
        |r| r.get(0),
    )
    .optional()
    .map_err(sql)
}

fn different_part(index: u32, cohort: u32) -> String {
    format!("right-masking service {index} already sent a different part for cohort {cohort}")
}

fn part_received(cohort: u32, index: u32) -> Response {
    json(
        StatusCode::OK,
        &serde_json::json!({"cohort": cohort, "index": index, "received": true}),
    )
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

/// Combine every cohort whose parts are all stored but which was never settled (the collector
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

/// Sum the `K₁` believed parts of a cohort modulo `2¹²⁸` — their cancelling masks telescope —
/// into `A X_{p₁}`, and check QA (`orthomask_core::protocol::share_handover::combine_parts`):
/// the cohort is received, or spoilt when the sum fails (fewer rows than the floor, parts of
/// different shapes, QA).
///
/// # Errors
/// Store errors.
async fn combine(
    col: &Collector,
    survey: &str,
    cohort: u32,
    row: SurveyRow,
) -> Result<(), ApiError> {
    let s = survey.to_owned();
    let parts = col
        .0
        .store
        .run(move |c| -> Result<Vec<StoredPart>, ApiError> {
            let mut stmt = c
                .prepare(
                    "SELECT nrows, ncols, data, merkle_root, scale FROM share_parts
                     WHERE survey = ?1 AND cohort = ?2 ORDER BY idx",
                )
                .map_err(sql)?;
            let mut q = stmt.query((&s, cohort)).map_err(sql)?;
            let mut out = Vec::new();
            while let Some(r) = q.next().map_err(sql)? {
                let blob: Option<Vec<u8>> = r.get(2).map_err(sql)?;
                out.push(StoredPart {
                    rows: r.get(0).map_err(sql)?,
                    cols: r.get(1).map_err(sql)?,
                    data: blob.unwrap_or_default(),
                    merkle_root: r.get(3).map_err(sql)?,
                    scale: r.get(4).map_err(sql)?,
                });
            }
            Ok(out)
        })
        .await?;
    let roots: Vec<String> = parts.iter().map(|p| p.merkle_root.clone()).collect();
    let design = row
        .template
        .design()
        .map_err(|e| ApiError::internal("combining", e))?;
    let floor = cohort_floor(&row)?;
    let check = cohort_check(&row)?;
    let combined = crate::compute::core_task(move || {
        let n = parts.first().map_or(0, |p| p.rows);
        if let Some(why) = orthomask_survey::floors::withheld_reason(n, floor) {
            return Err(format!("the parts should have been withheld: {why}"));
        }
        let fixed = parts
            .iter()
            .map(|p| FixedMatrix::from_le_bytes(p.rows, p.cols, &p.data))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let scale: f64 = parts.iter().map(|p| p.scale).sum();
        let (data, qa) = combine_parts(&design, &fixed, scale).map_err(|e| e.to_string())?;
        // Statistics no cohort of honest records has: a liar inside the share bounds (issue 43
        // §5); the note names the condition, never a number of the cohort's. What passes is
        // stored with its exact identities snapped, so a service's `δ` below the allowances on
        // one share reaches no release (issue 43's adversarial review).
        let (data, _) = check
            .snap(&data, scale)
            .map_err(|refusal| refusal.public_note())?;
        Ok((data, qa))
    })
    .await
    .map_err(|e| ApiError::internal("combining", e))?;
    let content = match combined {
        Ok((data, qa)) => Content::received(&data, qa.as_ref())?,
        Err(why) => Content::nothing(Settlement::Spoilt, 0, Some(why)),
    };
    let outcome = Outcome {
        content,
        merkle_root: roots.join(","),
        result_hash: sha256_hex(roots.join(",").as_bytes()),
    };
    let s = survey.to_owned();
    col.0
        .store
        .run(move |c| -> Result<(), ApiError> {
            settle(c, &s, cohort, outcome, None)?;
            c.execute(
                "UPDATE share_parts SET data = NULL WHERE survey = ?1 AND cohort = ?2",
                (&s, cohort),
            )
            .map_err(sql)?;
            Ok(())
        })
        .await?;
    // Each part alone is `A Xⁱ`: out of the files now, not at the next automatic checkpoint.
    col.0.store.checkpoint().await.map_err(ApiError::from)?;
    Ok(())
}

/// Whether a hand-over (or part) whose content hashes to `hash` repeats the one already
/// received (`previous`): a retry, answered as before. A different one is refused (409,
/// `different` says what), and so is a first one for a cohort already settled.
///
/// # Errors
/// [`ApiError::conflict`] as above.
fn is_retry(
    previous: Option<&str>,
    hash: &str,
    cohort: u32,
    status: CollectorCohort,
    different: impl FnOnce() -> String,
) -> Result<bool, ApiError> {
    match previous {
        Some(h) if h == hash => Ok(true),
        Some(_) => Err(ApiError::conflict(different())),
        None if status.is_settled() => Err(ApiError::conflict(format!(
            "cohort {cohort} is already {status}"
        ))),
        None => Ok(false),
    }
}
