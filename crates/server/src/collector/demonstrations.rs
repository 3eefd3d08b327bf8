//! Live demonstrations (issue 12 §1): `orthomask serve all` creates the drafts of
//! `orthomask_survey::demonstrations` so a newcomer finds a survey to take on the running
//! services, and `GET /api/surveys` lists them.
//!
//! Only demonstrations are listed: a real survey's existence and title are not public (its
//! participants reach it by the link or invitation they were given). A demonstration is created
//! through [`Collector::create`], the code of `POST /api/admin/surveys` — called directly rather
//! than over HTTP, so starting the services needs neither the admin token on the wire nor a
//! pass through the public rate limiter, and a refusal keeps its typed status.
//!
//! Creation is idempotent over restarts of the same data directory: while a demonstration of a
//! family (`leaps-demo`, `leaps-demo-2`, …) still takes participants nothing is created; once
//! they are all closed, the next free id is, so a newcomer always finds a fresh one.
//!
//! A demonstration counts as live only while its upload addresses are this deployment's
//! (`Deployment::check_destinations`, the check every device makes): restarted on other ports,
//! the services would be handing out a survey every device refuses, so it is neither listed nor
//! kept, and the next of its family is created at the current addresses.

use super::{Collector, SurveyRow, load_survey, sql};
use crate::error::{ApiError, StoreError};
use crate::http::json;
use crate::states::SurveyState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use orthomask_survey::api;
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::demonstrations::demonstration_drafts;
use orthomask_survey::draft::{SurveyDraft, SurveyPlan};
use orthomask_survey::trust::Deployment;

/// What starting the services did about one demonstration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Demonstration {
    /// The survey's id (`leaps-demo`, `leaps-demo-2`, …).
    pub survey: String,
    /// `true`: created now; `false`: one created earlier still takes participants.
    pub created: bool,
    /// Where a participant opens it.
    pub participant_url: String,
}

impl std::fmt::Display for Demonstration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.created {
            "created"
        } else {
            "kept (still taking participants)"
        };
        write!(
            f,
            "demonstration {} {what}: {}",
            self.survey, self.participant_url
        )
    }
}

/// Whether a stored survey is a demonstration this deployment serves: labelled, and uploading
/// only to this deployment's addresses (see the module documentation).
fn serves(deployment: &Deployment, demonstration: bool, template: &SurveyDefinition) -> bool {
    demonstration && deployment.check_destinations(template).is_ok()
}

/// The id of the `n`-th demonstration of a family: `base`, then `base-2`, `base-3`, ….
fn nth_id(base: &str, n: u32) -> String {
    if n <= 1 {
        base.to_owned()
    } else {
        format!("{base}-{n}")
    }
}

/// Whether `id` is one of `base`'s family (exactly as [`nth_id`] spells it).
fn in_family(base: &str, id: &str) -> bool {
    id == base
        || id
            .strip_prefix(base)
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n >= 2 && nth_id(base, n) == id)
}

/// What to do for one family, given every stored survey as (id, is a demonstration this
/// deployment can serve, status).
fn decide(base: &str, stored: &[(String, bool, SurveyState)]) -> (String, bool) {
    // The latest demonstration of the family that still takes participants, if any.
    let open_demonstration = |(id, demo, status): &&(String, bool, SurveyState)| {
        *demo && status.takes_participants() && in_family(base, id)
    };
    if let Some((id, ..)) = stored.iter().rev().find(open_demonstration) {
        return (id.clone(), false);
    }
    // Any survey, demonstration or not, holds its id.
    let taken = |id: &str| stored.iter().any(|(s, ..)| s == id);
    let id = (1..=u32::MAX)
        .map(|n| nth_id(base, n))
        .find(|id| !taken(id))
        .unwrap_or_else(|| nth_id(base, u32::MAX));
    (id, true)
}

impl Collector {
    /// Make sure each demonstration has a survey taking participants: keep the one that does,
    /// or create the next of its family. Share mode's demonstration only where this collector
    /// knows at least `orthomask_survey::policy::MIN_SHARE_SERVICES` right-masking services.
    ///
    /// # Errors
    /// [`ApiError`] from the store or from [`Collector::create`] (a service refused or is
    /// unreachable), naming the demonstration.
    pub async fn ensure_demonstrations(&self) -> Result<Vec<Demonstration>, ApiError> {
        let mut done = Vec::new();
        for draft in demonstration_drafts(
            self.0.cfg.right_urls.len() >= orthomask_survey::policy::MIN_SHARE_SERVICES,
        ) {
            let deployment = self.deployment();
            let stored = self
                .0
                .store
                .run(
                    move |c| -> Result<Vec<(String, bool, SurveyState)>, ApiError> {
                        let mut stmt = c
                            .prepare(
                                "SELECT id, plan, template, status FROM surveys
                             ORDER BY created_at, rowid",
                            )
                            .map_err(sql)?;
                        let rows: Vec<(String, String, String, SurveyState)> = stmt
                            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                            .map_err(sql)?
                            .collect::<Result<_, _>>()
                            .map_err(sql)?;
                        rows.into_iter()
                            .map(|(id, plan, template, status)| {
                                let corrupt = |what: &str, e: serde_json::Error| {
                                    ApiError::from(StoreError::Corrupt(format!(
                                        "survey {id}: {what}: {e}"
                                    )))
                                };
                                let plan: SurveyPlan =
                                    serde_json::from_str(&plan).map_err(|e| corrupt("plan", e))?;
                                let template: SurveyDefinition = serde_json::from_str(&template)
                                    .map_err(|e| corrupt("template", e))?;
                                Ok((
                                    id,
                                    serves(&deployment, plan.demonstration, &template),
                                    status,
                                ))
                            })
                            .collect()
                    },
                )
                .await?;
            let (survey, create) = decide(&draft.id, &stored);
            if create {
                let draft = SurveyDraft {
                    id: survey.clone(),
                    ..draft
                };
                self.create(&draft).await.map_err(|e| {
                    ApiError::new(
                        e.status(),
                        format!("creating the demonstration {survey}: {}", e.message()),
                    )
                })?;
            }
            done.push(Demonstration {
                participant_url: self.participant_url(&survey, None),
                survey,
                created: create,
            });
        }
        Ok(done)
    }
}

/// `GET /api/surveys`: the demonstrations that take participants, for the web app's participant
/// page. Nothing else: a real survey's existence and title are not public.
pub(super) async fn list_demonstrations(
    State(col): State<Collector>,
) -> Result<Response, ApiError> {
    // One pass over the open surveys in one store call.
    let rows = col
        .0
        .store
        .run(|c| -> Result<Vec<(String, SurveyRow)>, ApiError> {
            let mut stmt = c
                .prepare("SELECT id FROM surveys WHERE status = ?1 ORDER BY created_at, rowid")
                .map_err(sql)?;
            let ids: Vec<String> = stmt
                .query_map([SurveyState::Open], |r| r.get(0))
                .map_err(sql)?
                .collect::<Result<_, _>>()
                .map_err(sql)?;
            ids.into_iter()
                .map(|id| load_survey(c, &id).map(|row| (id, row)))
                .collect()
        })
        .await?;
    let deployment = col.deployment();
    let mut surveys = Vec::new();
    for (id, row) in rows {
        if !serves(&deployment, row.plan.demonstration, &row.template)
            || !row.status.takes_participants()
        {
            continue;
        }
        surveys.push(api::Demonstration {
            participant_url: col.participant_url(&id, None),
            title: row.template.title,
            description: row.template.description,
            share_mode: row.plan.share_services > 0,
            cohort_size: row.plan.cohort_size,
            status: row.status.into(),
            survey: id,
        });
    }
    Ok(json(StatusCode::OK, &api::Demonstrations { surveys }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(rows: &[(&str, bool, SurveyState)]) -> Vec<(String, bool, SurveyState)> {
        rows.iter()
            .map(|(i, d, s)| ((*i).to_owned(), *d, *s))
            .collect()
    }

    #[test]
    fn a_family_is_the_base_and_its_numbered_successors() {
        assert!(in_family("leaps-demo", "leaps-demo"));
        assert!(in_family("leaps-demo", "leaps-demo-2"));
        assert!(in_family("leaps-demo", "leaps-demo-17"));
        assert!(!in_family("leaps-demo", "leaps-demo-1"));
        assert!(!in_family("leaps-demo", "leaps-demo-02"));
        assert!(!in_family("leaps-demo", "leaps-demo-x"));
        assert!(!in_family("leaps-demo", "leaps-demos"));
    }

    #[test]
    fn an_open_demonstration_is_kept_and_a_closed_one_is_followed() {
        use SurveyState::{Closing, Open, Released};
        assert_eq!(decide("d", &[]), ("d".to_owned(), true));
        assert_eq!(
            decide("d", &stored(&[("d", true, Open)])),
            ("d".to_owned(), false)
        );
        assert_eq!(
            decide(
                "d",
                &stored(&[("d", true, Released), ("d-2", true, Closing)])
            ),
            ("d-3".to_owned(), true)
        );
        assert_eq!(
            decide("d", &stored(&[("d", true, Released), ("d-2", true, Open)])),
            ("d-2".to_owned(), false)
        );
        // A survey the team made under a demonstration's id is neither kept nor reused.
        assert_eq!(
            decide("d", &stored(&[("d", false, Open)])),
            ("d-2".to_owned(), true)
        );
    }
}
