//! Participants: handing out survey definitions, one cohort place (and one invitation) each.
//!
//! Every definition leaves signed by the collector's key, with an upload credential for one
//! upload to its cohort (`orthomask_survey::trust`): the provider and the right-masking services
//! take uploads only with a credential, each nonce once. An invitation keeps its cohort, key and
//! nonce: reloading it (a lost answer, a closed tab) hands out the same cohort and the same nonce
//! with a fresh expiry, so at most one upload ever counts for it (issue 10 §4). It is used up
//! when its nonce arrives in the cohort's hand-over; if the cohort closed without its upload,
//! the next load gives it a place in a new cohort.

use super::{Collector, corrupt_row, load_survey, sql};
use crate::error::ApiError;
use crate::http::{ApiJson, ApiPath, json};
use crate::states::{CohortStep, CollectorCohort, SurveyState};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use orthomask_core::protocol::tm2::DataCollector;
use orthomask_survey::draft::{SurveyPlan, hydrate};
use orthomask_survey::merkle::sha256_hex;
use orthomask_survey::policy::UPLOAD_CREDENTIAL_LIFETIME_SECONDS;
use orthomask_survey::trust::{
    DefinitionOffer, NONCE_BYTES, SignedDefinition, UploadCredential, credential_key_digest,
    nonce_text,
};
use rusqlite::{Connection, OptionalExtension};
use serde::Deserialize;
use std::sync::Arc;

/// What a request for a place decided.
enum Assignment {
    /// The place the invitation holds already (its cohort was opened when it was taken).
    Held(u32, String),
    /// A new place in `cohort` with this credential nonce.
    Taken {
        /// The cohort.
        cohort: u32,
        /// The credential's nonce.
        nonce: String,
        /// Whether the cohort is open at the services already.
        opened: bool,
        /// Whether this place filled the cohort, so the next one became current.
        filled: bool,
    },
    /// The cohort being filled closed meanwhile: try again.
    Retry,
}

/// `POST /api/surveys/{id}/definition`: the body of a request for a place.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlaceRequest {
    /// The invitation token, for a survey by invitation.
    #[serde(default)]
    pub(super) invite: Option<String>,
}

/// The cohort and nonce an invitation holds, if it holds a place: `Ok(None)` when it holds
/// none; a 409 while the cohort it holds is closed and its hand-over not in (whether its upload
/// is in it is known only then: `handover::settle`).
fn held_place(
    c: &Connection,
    survey: &str,
    invite_hash: &str,
) -> Result<Option<(u32, String)>, ApiError> {
    let held: Option<(Option<u32>, Option<String>)> = c
        .query_row(
            "SELECT cohort, nonce FROM invitations WHERE token_hash = ?1 AND survey = ?2",
            (invite_hash, survey),
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(sql)?;
    let Some((Some(k), Some(nonce))) = held else {
        return Ok(None);
    };
    let status = super::handover::cohort_status(c, survey, k)?;
    if !status.takes_participants() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "the group this invitation joined has just closed and is being processed; open the \
             link again in a few minutes",
        ));
    }
    Ok(Some((k, nonce)))
}

/// Take a place: the signed definition of the cohort being filled and a credential for one
/// upload. A POST with a JSON body, never a GET (issue 20 §7): taking a place is a side effect,
/// and a cross-site page can neither send this request (a JSON body needs a CORS preflight the
/// services refuse to foreign origins; a form's content type gets 415) nor make its visitors
/// burn places with an `<img src>`. The invitation travels in the body, not in a URL.
///
/// An invitation holds at most one place: every request with it — however many arrive at once —
/// gets the cohort and credential nonce it holds while that cohort is open. The check and the
/// taking are one transaction (issue 20 §4).
pub(super) async fn definition(
    State(col): State<Collector>,
    ApiPath(survey): ApiPath<String>,
    ApiJson(request): ApiJson<PlaceRequest>,
) -> Result<Response, ApiError> {
    let invite_hash = request
        .invite
        .as_deref()
        .map(|t| sha256_hex(t.trim().as_bytes()));
    for _ in 0..8 {
        let nonce = fresh_nonce()?;
        let (s, ih) = (survey.clone(), invite_hash.clone());
        let known_plan = col.0.plans.get(&survey);
        let plan_was_known = known_plan.is_some();
        let (placing, assignment) = col
            .0
            .store
            .run(move |c| -> Result<_, ApiError> {
                let placing = place_survey(c, &s, known_plan)?;
                let assignment = take_place(c, &s, &placing, ih.as_deref(), nonce)?;
                Ok((placing, assignment))
            })
            .await?;
        if !plan_was_known {
            col.0.plans.insert(survey.clone(), placing.plan.clone());
        }
        match assignment {
            Assignment::Held(k, nonce) => return col.offer(&survey, k, &nonce).await,
            Assignment::Retry => continue,
            Assignment::Taken {
                cohort,
                nonce,
                opened,
                filled,
            } => {
                let share = placing.plan.share_services;
                // Open the next cohort now, while this one's last offers go out, so the requests
                // that find it current need not wait for the services (issue 24: without it a
                // burst filled cohorts in waves, one opening apart).
                if filled {
                    let (col, survey) = (col.clone(), survey.clone());
                    tokio::spawn(async move {
                        // A failure here is met again, and answered, by the first request for a
                        // place in that cohort.
                        let _ = col.open_cohort(&survey, cohort + 1, share).await;
                    });
                }
                if !opened && let Err(e) = col.open_cohort(&survey, cohort, share).await {
                    // No offer leaves for a cohort the services have not opened: the place goes
                    // back, so a participant sent away takes none.
                    col.give_back(&survey, cohort, &nonce, invite_hash.as_deref())
                        .await?;
                    return Err(e);
                }
                return col.offer(&survey, cohort, &nonce).await;
            }
        }
    }
    // Every round found the cohort being filled closed by the survey team before this request's
    // turn: say when to come back (issue 24), as the listener does over its cap.
    Err(ApiError::busy(
        "the survey is very busy; try again in a moment",
        crate::listener::BUSY_RETRY_AFTER_S,
    ))
}

/// What a place request reads of its survey inside the writer: what changes (its status, the
/// cohort being filled) from the row, and its plan.
struct PlaceSurvey {
    plan: Arc<SurveyPlan>,
    status: SurveyState,
    current_cohort: u32,
}

/// The survey as a place request needs it. The plan is fixed when the survey is created, so
/// once parsed it comes from the memo (`Inner::plans`, passed in as `known_plan`) and only the
/// columns that change are read: parsing the whole row (template, registration and its key,
/// plan) for every request was about a third of the collector's writer thread in a burst, and
/// every place request waits for that thread (issue 24).
fn place_survey(
    c: &Connection,
    survey: &str,
    known_plan: Option<Arc<SurveyPlan>>,
) -> Result<PlaceSurvey, ApiError> {
    let row: Option<(SurveyState, u32, Option<String>)> = c
        .prepare_cached(
            "SELECT status, current_cohort, CASE WHEN ?2 THEN NULL ELSE plan END
             FROM surveys WHERE id = ?1",
        )
        .and_then(|mut s| {
            s.query_row((survey, known_plan.is_some()), |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
        })
        .optional()
        .map_err(sql)?;
    let (status, current_cohort, plan_text) = row.ok_or_else(|| no_survey_for_this_link(survey))?;
    let plan = match (known_plan, plan_text) {
        (Some(plan), _) => plan,
        (None, Some(text)) => {
            Arc::new(serde_json::from_str(&text).map_err(|e| corrupt_row(survey, "plan", &e))?)
        }
        (None, None) => {
            return Err(corrupt_row(survey, "plan", &"the column is empty"));
        }
    };
    Ok(PlaceSurvey {
        plan,
        status,
        current_cohort,
    })
}

/// Take a place in the cohort being filled (or the one the invitation holds) in one
/// transaction, and tie the invitation to it and to `nonce`. A place may be taken before its
/// cohort is open at the services; the offer waits for the opening (`definition`).
fn take_place(
    c: &Connection,
    survey: &str,
    row: &PlaceSurvey,
    invite_hash: Option<&str>,
    nonce: String,
) -> Result<Assignment, ApiError> {
    check_participation(c, survey, row, invite_hash)?;
    if let Some(h) = invite_hash
        && let Some((k, held)) = held_place(c, survey, h)?
    {
        return Ok(Assignment::Held(k, held));
    }
    let cohort = row.current_cohort;
    let (assigned, status, opened): (usize, CollectorCohort, bool) = c
        .query_row(
            "SELECT assigned, status, opened FROM cohorts WHERE survey = ?1 AND cohort = ?2",
            (survey, cohort),
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(sql)?;
    let m = row.plan.cohort_size;
    if !status.takes_participants() || assigned >= m {
        return Ok(Assignment::Retry);
    }
    c.execute(
        "UPDATE cohorts SET assigned = assigned + 1 WHERE survey = ?1 AND cohort = ?2",
        (survey, cohort),
    )
    .map_err(sql)?;
    let filled = assigned + 1 >= m;
    if filled {
        advance(c, survey, cohort)?;
    }
    // Every credential issued is remembered, so that a hand-over can be checked against them
    // (`claims::judge_basic`).
    c.execute(
        "INSERT INTO credentials (survey, cohort, nonce) VALUES (?1, ?2, ?3)",
        (survey, cohort, &nonce),
    )
    .map_err(sql)?;
    if let Some(h) = invite_hash {
        c.execute(
            "UPDATE invitations SET opened_at = ?2, cohort = ?3, nonce = ?4 WHERE token_hash = ?1",
            (h, crate::time::now_rfc3339(), cohort, &nonce),
        )
        .map_err(sql)?;
    }
    Ok(Assignment::Taken {
        cohort,
        nonce,
        opened,
        filled,
    })
}

/// 128 fresh random bits for an upload credential, from the operating system.
fn fresh_nonce() -> Result<String, ApiError> {
    let mut bytes = [0u8; NONCE_BYTES];
    getrandom::fill(&mut bytes)
        .map_err(|e| ApiError::internal("drawing an upload credential's nonce", e))?;
    Ok(nonce_text(bytes))
}

impl Collector {
    /// Open cohort `k` at the provider (or the right-masking services) before anyone can upload
    /// to it, and record that it is open. Idempotent at the services, so a lost answer is
    /// harmless; one request at a time (`Inner::opening`), so when a burst finds a cohort
    /// unopened the services are asked once, not once per request (issue 24). Closing a cohort
    /// holds the same lock (`admin::close_survey`, `close_one_cohort`), so an opening never
    /// reaches the services after the cohort's close: a cohort closed meanwhile is not opened.
    ///
    /// # Errors
    /// 410 when the cohort was closed meanwhile; the services' refusal or absence (502/503);
    /// store errors.
    async fn open_cohort(&self, survey: &str, k: u32, share: usize) -> Result<(), ApiError> {
        // Open once is open for good (`opened` is never set back), so what the memo holds is
        // what the store would answer below, without the lock or a store round trip. Asked
        // again under the lock: the requests that queued behind the one opening it are done.
        let id = (survey.to_owned(), k);
        if self.0.opened.get(&id).is_some() {
            return Ok(());
        }
        let _one_at_a_time = self.0.opening.lock().await;
        if self.0.opened.get(&id).is_some() {
            return Ok(());
        }
        let (s, store) = (survey.to_owned(), &self.0.store);
        let (opened, status) = store
            .run(move |c| -> Result<(bool, CollectorCohort), ApiError> {
                c.query_row(
                    "SELECT opened, status FROM cohorts WHERE survey = ?1 AND cohort = ?2",
                    (&s, k),
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map_err(sql)
            })
            .await?;
        if opened {
            self.0.opened.insert(id, ());
            return Ok(());
        }
        if !status.takes_participants() {
            return Err(ApiError::new(
                StatusCode::GONE,
                "the group being filled has just closed; open the link again",
            ));
        }
        self.cohort_call(survey, k, share, CohortStep::Open).await?;
        let s = survey.to_owned();
        store
            .run(move |c| -> Result<(), ApiError> {
                c.execute(
                    "UPDATE cohorts SET opened = 1 WHERE survey = ?1 AND cohort = ?2",
                    (&s, k),
                )
                .map_err(sql)?;
                Ok(())
            })
            .await?;
        // Remembered only once the store has it: a memo never says more than the store.
        self.0.opened.insert(id, ());
        Ok(())
    }

    /// Undo [`take_place`] for a place whose offer cannot leave (its cohort could not be opened at
    /// the services): the credential is forgotten, the invitation holds no place again, and the
    /// cohort counts one place fewer (if it was filled by it, it stays behind with one free place,
    /// which is harmless: cohorts close with fewer participants than places all the time).
    async fn give_back(
        &self,
        survey: &str,
        k: u32,
        nonce: &str,
        invite_hash: Option<&str>,
    ) -> Result<(), ApiError> {
        let (s, n, ih) = (
            survey.to_owned(),
            nonce.to_owned(),
            invite_hash.map(str::to_owned),
        );
        self.0
            .store
            .run(move |c| -> Result<(), ApiError> {
                c.execute(
                    "DELETE FROM credentials WHERE survey = ?1 AND cohort = ?2 AND nonce = ?3",
                    (&s, k, &n),
                )
                .map_err(sql)?;
                c.execute(
                    "UPDATE cohorts SET assigned = assigned - 1 WHERE survey = ?1 AND cohort = ?2 AND assigned > 0",
                    (&s, k),
                )
                .map_err(sql)?;
                if let Some(h) = &ih {
                    c.execute(
                        "UPDATE invitations SET cohort = NULL, nonce = NULL WHERE token_hash = ?1 AND nonce = ?2",
                        (h, &n),
                    )
                    .map_err(sql)?;
                }
                Ok(())
            })
            .await
    }

    /// The definition of cohort `k` signed by the collector, with a credential for one upload
    /// with `nonce`, valid for [`UPLOAD_CREDENTIAL_LIFETIME_SECONDS`] from now. The signed
    /// definition is made once per cohort (`Inner::signed`); only the credential is per place.
    async fn offer(&self, survey: &str, k: u32, nonce: &str) -> Result<Response, ApiError> {
        let cohort = self.signed_definition(survey, k).await?;
        let expires_at = crate::time::unix_seconds() + UPLOAD_CREDENTIAL_LIFETIME_SECONDS;
        let offer = DefinitionOffer {
            signed: cohort.signed,
            // Naming the cohort's device key: every credential of a cohort names the same one, and
            // the provider takes no upload naming another (`intake::accept`).
            credential: UploadCredential::reissue_for_key(
                &self.0.signing,
                survey,
                k,
                nonce,
                expires_at,
                cohort.key_digest,
            ),
        };
        Ok(json(StatusCode::OK, &offer))
    }

    /// Cohort `k`'s definition (its own device key), signed; made once and remembered
    /// (`Inner::signed`): requests that ask together wait for the one making it.
    async fn signed_definition(&self, survey: &str, k: u32) -> Result<CohortDefinition, ApiError> {
        let cell = self
            .0
            .signed
            .get_or_insert_with((survey.to_owned(), k), Arc::default);
        // Never stale (`memo`): the template and keys are fixed when the survey is created. A
        // failure leaves the cell empty, and the next request tries again.
        cell.get_or_try_init(|| self.sign_definition(survey, k))
            .await
            .cloned()
    }

    /// Make cohort `k`'s signed definition: the survey's row read, the cohort's device key
    /// derived, the template hydrated with it and signed.
    async fn sign_definition(&self, survey: &str, k: u32) -> Result<CohortDefinition, ApiError> {
        let s = survey.to_owned();
        let row = self.0.store.run(move |c| load_survey(c, &s)).await?;
        let key = self
            .0
            .keys
            .get(survey)
            .ok_or_else(|| ApiError::internal("definition", "the survey key is missing"))?;
        let design = row
            .template
            .design()
            .map_err(|e| ApiError::internal("definition", e))?;
        let collector =
            DataCollector::new(key, design).map_err(|e| ApiError::internal("definition", e))?;
        let definition = hydrate(
            &row.template,
            row.plan.share_services,
            k,
            &collector.device_key(k),
        );
        Ok(CohortDefinition {
            signed: SignedDefinition::sign(&self.0.signing, &definition),
            key_digest: credential_key_digest(&definition),
        })
    }
}

/// A cohort's signed definition and the digest of the device key it carries (none in share
/// mode), which every credential of the cohort names.
#[derive(Clone, Debug)]
pub(super) struct CohortDefinition {
    signed: SignedDefinition,
    key_digest: Option<String>,
}

/// How many entries each of the collector's memos keeps (`super::memo`): cohorts' signed
/// definitions ([`Collector::signed_definition`]), cohorts known to be open
/// ([`Collector::open_cohort`]) and surveys' plans ([`place_survey`]).
pub(super) const MEMO_ENTRIES: usize = 256;

/// Whether a participant may load the definition now (survey open, invitation valid).
fn check_participation(
    c: &Connection,
    survey: &str,
    row: &PlaceSurvey,
    invite_hash: Option<&str>,
) -> Result<(), ApiError> {
    // A survey by invitation is answered, to a request without a valid invitation, exactly as a
    // survey that does not exist (issue 43 §6): not even whether it is open is told.
    if row.plan.invitations {
        let Some(hash) = invite_hash else {
            return Err(no_survey_for_this_link(survey));
        };
        let known: bool = c
            .query_row(
                "SELECT 1 FROM invitations WHERE token_hash = ?1 AND survey = ?2",
                (hash, survey),
                |_| Ok(()),
            )
            .optional()
            .map_err(sql)?
            .is_some();
        if !known {
            return Err(no_survey_for_this_link(survey));
        }
    }
    if !row.status.takes_participants() {
        return Err(ApiError::new(
            StatusCode::GONE,
            format!("survey {survey:?} is closed to new participants"),
        ));
    }
    if !row.plan.invitations {
        return Ok(());
    }
    let Some(hash) = invite_hash else {
        return Err(no_survey_for_this_link(survey));
    };
    // `used_at` is set when the invitation's upload is known to have been handed over.
    let used: Option<Option<String>> = c
        .query_row(
            "SELECT used_at FROM invitations WHERE token_hash = ?1 AND survey = ?2",
            (hash, survey),
            |r| r.get(0),
        )
        .optional()
        .map_err(sql)?;
    match used {
        None => Err(no_survey_for_this_link(survey)),
        Some(Some(_)) => Err(ApiError::forbidden(
            "this invitation has already been used: the group it joined has been handed over \
             with its answers; ask the survey team for a new invitation if you sent none",
        )),
        Some(None) => Ok(()),
    }
}

/// The answer to a place request for a survey that does not exist, and alike for a survey by
/// invitation without a valid invitation.
pub(super) fn no_survey_for_this_link(survey: &str) -> ApiError {
    ApiError::not_found(format!(
        "there is no survey {survey:?} open to this link: open the invitation link you were \
         given, or ask the survey team"
    ))
}

/// Move on from cohort `k` (full or closed): the next cohort becomes current.
pub(super) fn advance(c: &Connection, survey: &str, k: u32) -> Result<(), ApiError> {
    let current: u32 = c
        .query_row(
            "SELECT current_cohort FROM surveys WHERE id = ?1",
            [survey],
            |r| r.get(0),
        )
        .map_err(sql)?;
    if current == k {
        c.execute(
            "UPDATE surveys SET current_cohort = ?2 WHERE id = ?1",
            (survey, k + 1),
        )
        .map_err(sql)?;
        c.execute(
            "INSERT OR IGNORE INTO cohorts (survey, cohort, status) VALUES (?1, ?2, ?3)",
            (survey, k + 1, CollectorCohort::Open),
        )
        .map_err(sql)?;
    }
    Ok(())
}
