//! Participants: handing out survey definitions, one cohort place (and one invitation) each.

use super::*;

/// What a definition request decided.
enum Assignment {
    Assigned(u32),
    Retry,
}

#[derive(Deserialize)]
pub(super) struct DefinitionQuery {
    pub(super) invite: Option<String>,
}

pub(super) async fn definition(
    State(col): State<Collector>,
    ApiPath(survey): ApiPath<String>,
    ApiQuery(query): ApiQuery<DefinitionQuery>,
) -> Result<Response, ApiError> {
    let invite_hash = query
        .invite
        .as_deref()
        .map(|t| sha256_hex(t.trim().as_bytes()));
    for _ in 0..8 {
        let s = survey.clone();
        let ih = invite_hash.clone();
        // 1. Which cohort is being filled, and is it open at the services yet?
        let (row, cohort, opened) = col
            .0
            .store
            .run(move |c| -> Result<_, ApiError> {
                let row = load_survey(c, &s)?;
                check_participation(c, &s, &row, ih.as_deref())?;
                let k = row.current_cohort;
                let opened: Option<bool> = c
                    .query_row(
                        "SELECT opened FROM cohorts WHERE survey = ?1 AND cohort = ?2",
                        (&s, k),
                        |r| r.get(0),
                    )
                    .optional()
                    .map_err(sql)?;
                Ok((row, k, opened.unwrap_or(false)))
            })
            .await?;
        let share = row.plan.share_services;
        if !opened {
            // 2. Open it at the provider (or the right-masking services) before anyone can
            //    upload to it; idempotent, so a lost answer is harmless.
            col.cohort_call(&survey, cohort, share, "open").await?;
            let s = survey.clone();
            col.0
                .store
                .run(move |c| -> Result<(), ApiError> {
                    c.execute(
                        "UPDATE cohorts SET opened = 1 WHERE survey = ?1 AND cohort = ?2",
                        (&s, cohort),
                    )
                    .map_err(sql)?;
                    Ok(())
                })
                .await?;
        }
        // 3. Take a place in it (and use up the invitation) in one transaction.
        let s = survey.clone();
        let ih = invite_hash.clone();
        let m = row.plan.cohort_size;
        let assignment = col
            .0
            .store
            .run(move |c| -> Result<Assignment, ApiError> {
                let row = load_survey(c, &s)?;
                check_participation(c, &s, &row, ih.as_deref())?;
                if row.current_cohort != cohort {
                    return Ok(Assignment::Retry);
                }
                let (assigned, status, opened): (usize, String, bool) = c
                    .query_row(
                        "SELECT assigned, status, opened FROM cohorts WHERE survey = ?1 AND cohort = ?2",
                        (&s, cohort),
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                    )
                    .map_err(sql)?;
                if status != "open" || !opened || assigned >= m {
                    return Ok(Assignment::Retry);
                }
                c.execute(
                    "UPDATE cohorts SET assigned = assigned + 1 WHERE survey = ?1 AND cohort = ?2",
                    (&s, cohort),
                )
                .map_err(sql)?;
                if assigned + 1 >= m {
                    advance(c, &s, cohort)?;
                }
                if let Some(h) = &ih {
                    c.execute(
                        "UPDATE invitations SET used_at = ?2, cohort = ?3 WHERE token_hash = ?1",
                        (h, crate::time::now_rfc3339(), cohort),
                    )
                    .map_err(sql)?;
                }
                Ok(Assignment::Assigned(cohort))
            })
            .await?;
        if let Assignment::Assigned(k) = assignment {
            let key = col
                .0
                .keys
                .get(&survey)
                .ok_or_else(|| ApiError::internal("definition", "the survey key is missing"))?;
            let design = row
                .template
                .design()
                .map_err(|e| ApiError::internal("definition", e))?;
            let collector =
                DataCollector::new(key, design).map_err(|e| ApiError::internal("definition", e))?;
            let def = hydrate(&row.template, share, k, &collector.device_key(k));
            return Ok(json(StatusCode::OK, &def));
        }
    }
    Err(ApiError::unavailable(
        "the survey is very busy; try again in a moment",
    ))
}

/// Whether a participant may load the definition now (survey open, invitation valid).
fn check_participation(
    c: &Connection,
    survey: &str,
    row: &SurveyRow,
    invite_hash: Option<&str>,
) -> Result<(), ApiError> {
    if row.status != "open" {
        return Err(ApiError::new(
            StatusCode::GONE,
            format!("survey {survey:?} is closed to new participants"),
        ));
    }
    if !row.plan.invitations {
        return Ok(());
    }
    let Some(hash) = invite_hash else {
        return Err(ApiError::forbidden(
            "this survey is by invitation only: open the link you were given",
        ));
    };
    let used: Option<Option<String>> = c
        .query_row(
            "SELECT used_at FROM invitations WHERE token_hash = ?1 AND survey = ?2",
            (hash, survey),
            |r| r.get(0),
        )
        .optional()
        .map_err(sql)?;
    match used {
        None => Err(ApiError::forbidden(
            "this invitation is not valid for this survey",
        )),
        Some(Some(_)) => Err(ApiError::forbidden(
            "this invitation has already been used; each invitation opens the survey once",
        )),
        Some(None) => Ok(()),
    }
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
            "INSERT OR IGNORE INTO cohorts (survey, cohort, status) VALUES (?1, ?2, 'open')",
            (survey, k + 1),
        )
        .map_err(sql)?;
    }
    Ok(())
}
