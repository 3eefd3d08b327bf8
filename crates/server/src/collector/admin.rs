//! The administrator's API: creating surveys, invitations, closing cohorts, status views.

use super::participants::advance;
use super::{Admin, Collector, PROVIDER, SurveyRow, claims, load_survey, sql};
use crate::error::ApiError;
use crate::http::{ApiJson, ApiPath, json};
use crate::states::{CohortStep, CollectorCohort, SurveyState};
use crate::wire::{PeerRequeued, Registration};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use orthomask_survey::api::{
    CohortPhase, CohortStatus, Invitation, InvitationCounts, InvitationRequest, Invitations,
    QaCheck, RefusedHandover, Requeued, ServiceRequeued, ServiceStatus, SpoiltCounts,
    SurveyCreated, SurveyList, SurveyStatus, SurveySummary, XlsformDraft, XlsformUpload,
};
use orthomask_survey::draft::{Endpoints, SurveyDraft, plan_survey};
use orthomask_survey::merkle::sha256_hex;
use rusqlite::{Connection, OptionalExtension};

/// `POST /api/admin/surveys`: plan the draft and create the survey ([`Collector::create`]).
pub(super) async fn create_survey(
    State(col): State<Collector>,
    _admin: Admin,
    ApiJson(draft): ApiJson<SurveyDraft>,
) -> Result<Response, ApiError> {
    Ok(json(StatusCode::CREATED, &col.create(&draft).await?))
}

impl Collector {
    /// Plan a draft, register the survey at the services that take its uploads, open cohort 0
    /// and store it; answers what `POST /api/admin/surveys` answers. The administrator's API
    /// and the demonstrations of `serve all` (`super::demonstrations`) both create surveys
    /// here, so a demonstration is planned and registered exactly as any survey.
    ///
    /// # Errors
    /// 400 with the plan's one-line reason, 409 when the id is taken, 502/503 when a service
    /// refuses or cannot be reached.
    pub(super) async fn create(&self, draft: &SurveyDraft) -> Result<SurveyCreated, ApiError> {
        let col = self;
        let planned = plan_survey(
            draft,
            Endpoints {
                provider: &col.0.cfg.msp_url,
                right_services: &col.0.cfg.right_urls,
            },
        )
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let registration = Registration {
            builds: col.deployment().builds,
            ..Registration::for_survey(&planned, &col.0.signing)
        };
        registration.check().map_err(ApiError::bad_request)?;
        let id = draft.id.clone();
        let s = id.clone();
        let exists = col
            .0
            .store
            .run(move |c| -> Result<bool, ApiError> {
                c.query_row("SELECT 1 FROM surveys WHERE id = ?1", [&s], |_| Ok(()))
                    .optional()
                    .map(|r| r.is_some())
                    .map_err(sql)
            })
            .await?;
        if exists {
            return Err(ApiError::conflict(format!("survey {id:?} already exists")));
        }
        col.0
            .keys
            .get_or_create(&id)
            .map_err(|e| ApiError::failed("creating the survey key", &e))?;
        let reg = &registration;
        let body = serde_json::to_vec(reg).map_err(|e| ApiError::internal("registration", e))?;
        // A service that took the registration keeps it (a registered survey is never
        // replaced), so a creation that fails half way is retried with the same draft.
        let partly = |e: ApiError| {
            ApiError::new(
                e.status(),
                format!(
                    "{}; the survey was not created, and a service that already took its \
                     registration keeps it: create it again with the same draft, or under a new id",
                    e.message()
                ),
            )
        };
        if body.len() as u64 > crate::wire::MAX_REGISTRATION_BYTES {
            return Err(ApiError::bad_request(format!(
                "the survey's definition makes a registration of {} bytes, more than the {} the \
                 services read; shorten its texts or translations",
                body.len(),
                crate::wire::MAX_REGISTRATION_BYTES
            )));
        }
        let share = reg.share_services;
        if share > 0 {
            // The left-masking provider must know the survey before the right-masking services
            // can hand it blocks.
            col.call_peer(
                PROVIDER,
                reqwest::Method::PUT,
                format!("{}/api/peer/surveys/{id}", col.0.cfg.msp_url),
                Some(body.clone()),
            )
            .await
            .map_err(partly)?;
        }
        for (name, url) in col.upload_services(share)? {
            col.call_peer(
                &name,
                reqwest::Method::PUT,
                format!("{url}/api/peer/surveys/{id}"),
                Some(body.clone()),
            )
            .await
            .map_err(partly)?;
        }
        col.cohort_call(&id, 0, share, CohortStep::Open).await?;
        let template = serde_json::to_string(&planned.template)
            .map_err(|e| ApiError::internal("template", e))?;
        let registration =
            String::from_utf8(body).map_err(|e| ApiError::internal("registration", e))?;
        let plan =
            serde_json::to_string(&planned.plan).map_err(|e| ApiError::internal("plan", e))?;
        let s = id.clone();
        col.0
        .store
        .run(move |c| -> Result<(), ApiError> {
            let inserted = c
                .execute(
                    "INSERT OR IGNORE INTO surveys (id, template, registration, plan, status, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?6, ?5)",
                    (
                        &s,
                        &template,
                        &registration,
                        &plan,
                        crate::time::now_rfc3339(),
                        SurveyState::Open,
                    ),
                )
                .map_err(sql)?;
            if inserted == 0 {
                return Err(ApiError::conflict(format!("survey {s:?} already exists")));
            }
            c.execute(
                "INSERT INTO cohorts (survey, cohort, opened, status) VALUES (?1, 0, 1, ?2)",
                (&s, CollectorCohort::Open),
            )
            .map_err(sql)?;
            Ok(())
        })
        .await?;
        let definition_url = col.definition_url(&id);
        let p = &planned.plan;
        let accuracy = p
            .masking
            .release_accuracy(planned.template.share_split())
            .ok();
        let base = &col.0.cfg.public_url;
        Ok(SurveyCreated {
            definition_url,
            participant_url: (!p.invitations).then(|| col.participant_url(&id, None)),
            p1: p.masking.p1,
            p2: p.masking.p2,
            sigma: p.masking.sigma,
            x_max: p.masking.x_max,
            cohort_size: p.cohort_size,
            min_cohort_size: p.min_cohort_size,
            share_services: p.share_services,
            invitations: p.invitations,
            appendix_c: p.masking.appendix_c.clone(),
            expected_digits_lost: accuracy.as_ref().map(|a| a.accuracy.expected_digits_lost()),
            accuracy_note: accuracy.and_then(|a| a.note),
            dp: p.masking.dp.clone(),
            release_csv_url: format!("{base}/api/surveys/{id}/release.csv"),
            manifest_url: format!("{base}/api/surveys/{id}/manifest.json"),
            demonstration: p.demonstration,
            survey: id,
        })
    }
}

pub(super) async fn list_surveys(
    State(col): State<Collector>,
    _admin: Admin,
) -> Result<Response, ApiError> {
    let list = col
        .0
        .store
        .run(|c| -> Result<Vec<SurveySummary>, ApiError> {
            let mut stmt = c
                .prepare("SELECT id, status, created_at FROM surveys ORDER BY created_at")
                .map_err(sql)?;
            let rows: Vec<(String, SurveyState, String)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(sql)?
                .collect::<Result<_, _>>()
                .map_err(sql)?;
            rows.into_iter()
                .map(|(id, status, created_at)| {
                    let row = load_survey(c, &id)?;
                    Ok(SurveySummary {
                        survey: id,
                        title: row.template.title,
                        status: status.into(),
                        created_at,
                        demonstration: row.plan.demonstration,
                    })
                })
                .collect()
        })
        .await?;
    Ok(json(StatusCode::OK, &SurveyList { surveys: list }))
}

/// The collector's view of a survey (no keys, no data).
pub(super) async fn survey_view(col: &Collector, survey: &str) -> Result<SurveyStatus, ApiError> {
    let s = survey.to_owned();
    let (row, cohorts, (released, erased), refused) = col
        .0
        .store
        .run(move |c| -> Result<_, ApiError> {
            let row = load_survey(c, &s)?;
            let mut stmt = c
                .prepare(
                    "SELECT cohort, assigned, status, records, note, qa, reopened FROM cohorts
                     WHERE survey = ?1 ORDER BY cohort",
                )
                .map_err(sql)?;
            let cohorts: Vec<CohortStatus> = stmt
                .query_map([&s], |r| {
                    let qa: Option<String> = r.get(5)?;
                    Ok(CohortStatus {
                        cohort: r.get(0)?,
                        assigned: r.get(1)?,
                        status: r.get::<_, CollectorCohort>(2)?.into(),
                        records: r.get(3)?,
                        note: r.get(4)?,
                        // Stored by this service from the same type; an unreadable one (a
                        // damaged store) is shown as no result rather than failing the view.
                        qa: qa.and_then(|t| serde_json::from_str::<QaCheck>(&t).ok()),
                        reopened: r.get(6)?,
                    })
                })
                .map_err(sql)?
                .collect::<Result<_, _>>()
                .map_err(sql)?;
            let mut stmt = c
                .prepare(
                    "SELECT cohort, service, why, at FROM refused_handovers WHERE survey = ?1
                     ORDER BY at, cohort",
                )
                .map_err(sql)?;
            let refused: Vec<RefusedHandover> = stmt
                .query_map([&s], |r| {
                    Ok(RefusedHandover {
                        cohort: r.get(0)?,
                        service: r.get(1)?,
                        why: r.get(2)?,
                        at: r.get(3)?,
                    })
                })
                .map_err(sql)?
                .collect::<Result<_, _>>()
                .map_err(sql)?;
            let (released, erased): (Option<String>, Option<String>) = c
                .query_row(
                    "SELECT released_at, erased_at FROM releases WHERE survey = ?1",
                    [&s],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(sql)?
                .unwrap_or((None, None));
            Ok((row, cohorts, (released, erased), refused))
        })
        .await?;
    let spoilt = cohorts.iter().filter(|c| c.status == CohortPhase::Spoilt);
    let spoilt = SpoiltCounts {
        cohorts: spoilt.clone().count(),
        reopened_invitations: spoilt.map(|c| c.reopened).sum(),
    };
    let base = &col.0.cfg.public_url;
    Ok(SurveyStatus {
        survey: survey.to_owned(),
        title: row.template.title,
        demonstration: row.plan.demonstration,
        status: row.status.into(),
        error: row.error,
        cohort_size: row.plan.cohort_size,
        min_cohort_size: row.plan.min_cohort_size,
        share_services: row.plan.share_services,
        current_cohort: row.current_cohort,
        cohorts,
        spoilt,
        refused_handovers: refused,
        release_csv_url: released
            .as_ref()
            .map(|_| format!("{base}/api/surveys/{survey}/release.csv")),
        manifest_url: released
            .as_ref()
            .map(|_| format!("{base}/api/surveys/{survey}/manifest.json")),
        datapackage_url: released
            .as_ref()
            .map(|_| format!("{base}/api/surveys/{survey}/datapackage.json")),
        released_at: released,
        erased_at: erased,
        services: None,
        invitations: None,
    })
}

/// `GET /api/surveys/{id}/status`: a live demonstration's progress for anyone (the survey
/// chooser and the simulated participants read it); a real survey's per-cohort counts and notes
/// only with the admin token (issue 20 §7). Without the token a real survey is answered exactly
/// as one that does not exist (issue 43 §6: no oracle of which surveys run).
pub(super) async fn public_status(
    State(col): State<Collector>,
    headers: HeaderMap,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    let admin = col.admin(&headers).is_ok();
    let s = survey.clone();
    let public = col
        .0
        .store
        .run(move |c| match load_survey(c, &s) {
            Ok(row) => Ok(admin || row.plan.demonstration),
            Err(e) if e.status() == StatusCode::NOT_FOUND => Ok(false),
            Err(e) => Err(e),
        })
        .await?;
    if !public {
        return Err(no_public_survey(&survey));
    }
    Ok(json(StatusCode::OK, &survey_view(&col, &survey).await?))
}

/// The one answer an outsider gets for a survey that does not exist and for a real one it may
/// not see.
pub(super) fn no_public_survey(survey: &str) -> ApiError {
    ApiError::not_found(format!(
        "there is no public survey {survey:?} (a survey by invitation is shown to its team only)"
    ))
}

/// `POST /api/surveys/{id}/cohorts/{k}/fate`: the body of a request for a cohort's fate — the
/// credential nonce the collector issued to the asking device for that cohort (its proof of
/// holding a place there; absent for a demonstration, whose fates are public).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FateRequest {
    #[serde(default)]
    nonce: Option<String>,
}

/// `POST /api/surveys/{id}/cohorts/{k}/fate`: what became of one cohort, for the devices of its
/// participants — its state word only, no counts (issue 20 §8). `answer_again` tells a device
/// whose cohort was spoilt or regrouped to take a new place and send its answers again. Told
/// only to a device holding a credential of that cohort (issue 43 §6): any other request is
/// answered as for a cohort that does not exist. A POST, so the nonce never sits in a URL.
pub(super) async fn cohort_fate(
    State(col): State<Collector>,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
    ApiJson(request): ApiJson<FateRequest>,
) -> Result<Response, ApiError> {
    // Every device of the cohort polls this: indexed rows, nothing of the survey parsed.
    let s = survey.clone();
    let fate = col
        .0
        .store
        .run(move |c| -> Result<Option<orthomask_survey::fate::Fate>, ApiError> {
            // The plan's `demonstration` flag, read by SQLite's JSON functions (absent in plans
            // stored before demonstrations existed: not one).
            let demonstration: Option<Option<bool>> = c
                .prepare_cached(
                    "SELECT json_extract(plan, '$.demonstration') FROM surveys WHERE id = ?1",
                )
                .and_then(|mut q| q.query_row([&s], |r| r.get(0)).optional())
                .map_err(sql)?;
            let Some(demonstration) = demonstration else {
                return Ok(None);
            };
            let holder = match &request.nonce {
                Some(nonce) => c
                    .prepare_cached(
                        "SELECT 1 FROM credentials WHERE survey = ?1 AND cohort = ?2 AND nonce = ?3",
                    )
                    .and_then(|mut q| q.exists((&s, cohort, nonce)))
                    .map_err(sql)?,
                None => false,
            };
            if !(holder || demonstration == Some(true)) {
                return Ok(None);
            }
            match super::handover::cohort_fate_of(c, &s, cohort) {
                Ok(fate) => Ok(Some(fate)),
                Err(e) if e.status() == StatusCode::NOT_FOUND => Ok(None),
                Err(e) => Err(e),
            }
        })
        .await?;
    let fate = fate.ok_or_else(|| {
        ApiError::not_found(format!(
            "no cohort {cohort} of survey {survey:?} is known to this device's credential"
        ))
    })?;
    Ok(json(
        StatusCode::OK,
        &orthomask_survey::fate::CohortFate::of(&survey, cohort, fate),
    ))
}

/// `POST /api/admin/surveys/{id}/cohorts/{k}/leave-out`: the survey team leaves out a closed
/// cohort whose hand-over never came or was never believed (`super::claims`), so that the
/// release can go ahead; the manifest names it and any receipts it had.
pub(super) async fn leave_out(
    State(col): State<Collector>,
    _admin: Admin,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
) -> Result<Response, ApiError> {
    let s = survey.clone();
    let row = col
        .0
        .store
        .run(move |c| -> Result<SurveyRow, ApiError> {
            let row = load_survey(c, &s)?;
            // Refused before any list is fetched when the cohort cannot be left out.
            super::handover::cohort_status(c, &s, cohort)?
                .leave_out()
                .map_err(|e| ApiError::conflict(e.to_string()))?;
            Ok(row)
        })
        .await?;
    // What the services published for the cohort, for the manifest's warning (issue 20 §5): a
    // participant holding a receipt of it learns that the upload is not in the release. A
    // service that cannot be reached (the reason a cohort is left out may be that it is gone)
    // or publishes an unsound list does not block leaving it out; the note says whose receipts
    // are unknown.
    let mut roots = Vec::new();
    let mut unknown = Vec::new();
    for (i, (name, base)) in col
        .upload_services(row.plan.share_services)?
        .iter()
        .enumerate()
    {
        match super::handover::published_list(&col, name, base, &survey, cohort).await {
            Ok(list) if claims::list_is_sound(&list, &survey, cohort, name).is_ok() => {
                roots.push((
                    i as u32,
                    super::handover::receipt_root(&row, i, cohort, &list),
                ))
            }
            _ => unknown.push(name.clone()),
        }
    }
    let note = if unknown.is_empty() {
        "its hand-over never came or was never believed".to_owned()
    } else {
        format!(
            "its hand-over never came or was never believed; the receipts {} published could \
             not be read",
            unknown.join(" and ")
        )
    };
    let s = survey.clone();
    col.0
        .store
        .run(move |c| -> Result<(), ApiError> {
            // Checked again where it is written: a hand-over may have settled the cohort while
            // the lists were fetched.
            let next = super::handover::cohort_status(c, &s, cohort)?
                .leave_out()
                .map_err(|e| ApiError::conflict(e.to_string()))?;
            for (i, root) in &roots {
                super::handover::store_receipt_root(c, &s, *i, root)?;
            }
            c.execute(
                "UPDATE cohorts SET status = ?3, note = ?4 WHERE survey = ?1 AND cohort = ?2",
                (&s, cohort, next, &note),
            )
            .map_err(sql)?;
            Ok(())
        })
        .await?;
    col.maybe_release(&survey).await?;
    Ok(json(StatusCode::OK, &survey_view(&col, &survey).await?))
}

/// `POST /api/admin/surveys/{survey}/requeue`: every service that holds the survey's hand-overs
/// sends the ones its peer refused again (after the administrator fixed the cause, e.g. a proxy's
/// body limit or a peer's pinned key). Answers how many each service put back in its queue.
pub(super) async fn requeue(
    State(col): State<Collector>,
    _admin: Admin,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    let s = survey.clone();
    let row = col.0.store.run(move |c| load_survey(c, &s)).await?;
    let share = row.plan.share_services;
    let targets = col.handover_services(share)?;
    let mut services = Vec::new();
    for (name, url) in targets {
        let answer = col
            .call_peer(
                &name,
                reqwest::Method::POST,
                format!("{url}/api/peer/surveys/{survey}/outbox/requeue"),
                None,
            )
            .await?;
        let answer: PeerRequeued = serde_json::from_slice(&answer)
            .map_err(|e| ApiError::bad_gateway(format!("{name}: {e}")))?;
        services.push(ServiceRequeued {
            service: name,
            requeued: answer.requeued,
        });
    }
    Ok(json(StatusCode::OK, &Requeued { survey, services }))
}

pub(super) async fn admin_status(
    State(col): State<Collector>,
    _admin: Admin,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    let mut view = survey_view(&col, &survey).await?;
    let share = view.share_services;
    let mut services = Vec::new();
    let targets = col.handover_services(share)?;
    for (name, url) in targets {
        let answer = col
            .call_peer(
                &name,
                reqwest::Method::GET,
                format!("{url}/api/peer/surveys/{survey}/status"),
                None,
            )
            .await;
        services.push(match answer {
            Ok(body) => ServiceStatus {
                service: name,
                status: Some(serde_json::from_slice(&body).unwrap_or_default()),
                error: None,
            },
            Err(e) => ServiceStatus {
                service: name,
                status: None,
                error: Some(e.message().to_owned()),
            },
        });
    }
    view.services = Some(services);
    view.invitations = Some(invitation_counts(&col, &survey).await?);
    Ok(json(StatusCode::OK, &view))
}

/// How many invitations of a survey were issued, opened (a definition was loaded with them) and
/// used (their upload was in a cohort's hand-over): counts only, nothing about any one
/// participant. `null` for a survey without invitations.
async fn invitation_counts(
    col: &Collector,
    survey: &str,
) -> Result<Option<InvitationCounts>, ApiError> {
    let s = survey.to_owned();
    col.0
        .store
        .run(move |c| -> Result<Option<InvitationCounts>, ApiError> {
            if !load_survey(c, &s)?.plan.invitations {
                return Ok(None);
            }
            let (issued, opened, used) = c
                .query_row(
                    "SELECT COUNT(*), COUNT(opened_at), COUNT(used_at) FROM invitations
                     WHERE survey = ?1",
                    [&s],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .map_err(sql)?;
            Ok(Some(InvitationCounts {
                issued,
                opened,
                used,
            }))
        })
        .await
}

pub(super) async fn invitations(
    State(col): State<Collector>,
    _admin: Admin,
    ApiPath(survey): ApiPath<String>,
    ApiJson(request): ApiJson<InvitationRequest>,
) -> Result<Response, ApiError> {
    if request.count == 0 || request.count > InvitationRequest::MAX {
        return Err(ApiError::bad_request(format!(
            "count must be 1 to {}",
            InvitationRequest::MAX
        )));
    }
    let mut tokens = Vec::with_capacity(request.count);
    for _ in 0..request.count {
        let key = crate::keys::fresh_key()
            .map_err(|e| ApiError::internal("generating invitations", e))?;
        // 128 random bits as 32 hex digits.
        tokens.push(key.to_hex()[..32].to_owned());
    }
    let hashes: Vec<String> = tokens.iter().map(|t| sha256_hex(t.as_bytes())).collect();
    let s = survey.clone();
    col.0
        .store
        .run(move |c| -> Result<(), ApiError> {
            let row = load_survey(c, &s)?;
            if !row.plan.invitations {
                return Err(ApiError::conflict(format!(
                    "survey {s:?} was created without invitations; anyone with its link may answer"
                )));
            }
            if !row.status.takes_participants() {
                return Err(ApiError::conflict(format!("survey {s:?} is closed")));
            }
            let now = crate::time::now_rfc3339();
            for h in &hashes {
                c.execute(
                    "INSERT INTO invitations (token_hash, survey, created_at) VALUES (?1, ?2, ?3)",
                    (h, &s, &now),
                )
                .map_err(sql)?;
            }
            Ok(())
        })
        .await?;
    let invitations = tokens
        .into_iter()
        .map(|token| Invitation {
            definition_url: col.definition_url(&survey),
            participant_url: col.participant_url(&survey, Some(&token)),
            token,
        })
        .collect();
    Ok(json(
        StatusCode::CREATED,
        &Invitations {
            survey,
            invitations,
        },
    ))
}

pub(super) async fn close_one_cohort(
    State(col): State<Collector>,
    _admin: Admin,
    ApiPath((survey, cohort)): ApiPath<(String, u32)>,
) -> Result<Response, ApiError> {
    // No opening of this cohort runs between reading whether it is open and closing it
    // (`participants::open_cohort` holds the same lock).
    let opening = col.0.opening.lock().await;
    let s = survey.clone();
    let (share, opened, status) = col
        .0
        .store
        .run(
            move |c| -> Result<(usize, bool, CollectorCohort), ApiError> {
                let row = load_survey(c, &s)?;
                let (opened, status): (bool, CollectorCohort) = c
                    .query_row(
                        "SELECT opened, status FROM cohorts WHERE survey = ?1 AND cohort = ?2",
                        (&s, cohort),
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()
                    .map_err(sql)?
                    .ok_or_else(|| {
                        ApiError::not_found(format!("survey {s:?} has no cohort {cohort}"))
                    })?;
                Ok((row.plan.share_services, opened, status))
            },
        )
        .await?;
    if status.takes_participants() && opened {
        col.cohort_call(&survey, cohort, share, CohortStep::Close)
            .await?;
    }
    let s = survey.clone();
    col.0
        .store
        .run(move |c| -> Result<(), ApiError> {
            close_locally(c, &s, cohort)?;
            let row = load_survey(c, &s)?;
            if row.status.takes_participants() {
                advance(c, &s, cohort)?;
            }
            Ok(())
        })
        .await?;
    drop(opening);
    col.maybe_release(&survey).await?;
    Ok(json(StatusCode::OK, &survey_view(&col, &survey).await?))
}

/// Record that cohort `k` is closed at the services (or, never opened there, empty). A cohort
/// closed already is left as it is (a retried close).
fn close_locally(c: &Connection, survey: &str, k: u32) -> Result<(), ApiError> {
    let (opened, status): (bool, CollectorCohort) = c
        .query_row(
            "SELECT opened, status FROM cohorts WHERE survey = ?1 AND cohort = ?2",
            (survey, k),
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(sql)?;
    if !status.takes_participants() {
        return Ok(());
    }
    c.execute(
        "UPDATE cohorts SET status = ?3, records = CASE WHEN ?4 THEN records ELSE 0 END
         WHERE survey = ?1 AND cohort = ?2",
        (survey, k, status.close(opened)?, opened),
    )
    .map_err(sql)?;
    Ok(())
}

pub(super) async fn close_survey(
    State(col): State<Collector>,
    _admin: Admin,
    ApiPath(survey): ApiPath<String>,
) -> Result<Response, ApiError> {
    // No cohort is opened at the services between reading which are open and closing them, and
    // none after (`participants::open_cohort` holds the same lock and skips a closed cohort).
    let opening = col.0.opening.lock().await;
    let s = survey.clone();
    let (share, open) = col
        .0
        .store
        .run(move |c| -> Result<(usize, Vec<(u32, bool)>), ApiError> {
            let row = load_survey(c, &s)?;
            // No new participants from here on (closing a closing survey again is a retry).
            if let Ok(closing) = row.status.close() {
                c.execute(
                    "UPDATE surveys SET status = ?3, closed_at = ?2 WHERE id = ?1",
                    (&s, crate::time::now_rfc3339(), closing),
                )
                .map_err(sql)?;
            }
            let mut stmt = c
                .prepare("SELECT cohort, opened FROM cohorts WHERE survey = ?1 AND status = ?2")
                .map_err(sql)?;
            let open = stmt
                .query_map((&s, CollectorCohort::Open), |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(sql)?
                .collect::<Result<_, _>>()
                .map_err(sql)?;
            Ok((row.plan.share_services, open))
        })
        .await?;
    for (cohort, opened) in open {
        if opened {
            col.cohort_call(&survey, cohort, share, CohortStep::Close)
                .await?;
        }
        let s = survey.clone();
        col.0
            .store
            .run(move |c| close_locally(c, &s, cohort))
            .await?;
    }
    drop(opening);
    col.maybe_release(&survey).await?;
    Ok(json(StatusCode::OK, &survey_view(&col, &survey).await?))
}

/// `POST /api/admin/xlsform`: the draft a team's XLSForm workbook becomes (issue 29 §1), not yet
/// created — the team's page puts it in its editor. Read here rather than in the page so that
/// the app every participant downloads carries no xlsx reader; the mapping and every refusal
/// are `orthomask_xlsform`'s, the same as `orthomask survey import`.
///
/// # Errors
/// 400 with one line: the bytes are not base64, or the import's refusal naming the file, sheet
/// and row.
pub(super) async fn import_xlsform(
    _admin: Admin,
    ApiJson(upload): ApiJson<XlsformUpload>,
) -> Result<Response, ApiError> {
    use base64::Engine as _;
    let XlsformUpload {
        name,
        workbook_base64,
    } = upload;
    // The refusals start with the file's name; a request without one still names something.
    let name = match name.trim() {
        "" => "the workbook".to_owned(),
        given => given.to_owned(),
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(workbook_base64.trim())
        .map_err(|e| {
            ApiError::bad_request(format!("{name}: workbook_base64 is not base64: {e}"))
        })?;
    // Unzipping and reading a workbook is CPU work: off the request threads.
    let imported = tokio::task::spawn_blocking(move || {
        orthomask_xlsform::import(&bytes, &name).map_err(|e| format!("{name}: {e}"))
    })
    .await
    .map_err(|e| ApiError::internal("reading an XLSForm", e))?
    .map_err(ApiError::bad_request)?;
    Ok(json(
        StatusCode::OK,
        &XlsformDraft {
            draft: imported.draft,
            left_out: imported.ignored.iter().map(ToString::to_string).collect(),
        },
    ))
}
