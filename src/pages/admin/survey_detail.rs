//! One survey: invitations (as a CSV download), the live status (cohorts, records, notes, QA,
//! every service, how often cohorts were spoilt and the hand-over claims the collector refused),
//! closing a cohort or the survey, and once released the release, manifest,
//! analyst and audit views and the published receipt lists. Counts only: nothing about any
//! single participant is shown. The status is polled every few seconds while this view is open.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use yew::prelude::*;

use crate::components::input::target_value;
use crate::components::save_button::SaveButton;
use crate::model::admin::links::{
    analyst_link, audit_link, default_model, invitations_csv, labelled_analyst_link, receipt_lists,
};
use crate::pages::simulated_participants::SimulatedParticipants;
use crate::services::admin as api;
use crate::services::clock::sleep;
use orthomask_survey::api::{InvitationRequest, Invitations, SurveyPhase, SurveyStatus};
use orthomask_survey::trust::Deployment;

/// How often the status is asked for while the view is open.
const POLL_MS: i32 = 3000;

/// Props of [`SurveyDetail`].
#[derive(Properties, PartialEq)]
pub struct SurveyDetailProps {
    /// The admin token.
    pub token: AttrValue,
    /// The survey.
    pub id: AttrValue,
    /// Announces status changes.
    pub announce: Callback<String>,
}

/// Ask for the status once and show it; announce a change of state.
async fn refresh(
    token: &str,
    id: &str,
    status: &UseStateSetter<Option<Result<SurveyStatus, String>>>,
    last: &Rc<RefCell<String>>,
    announce: &Callback<String>,
) {
    let answer = api::survey(token, id).await;
    if let Ok(s) = &answer {
        let now = format!(
            "{}{}",
            s.status,
            s.error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        );
        if *last.borrow() != now {
            if !last.borrow().is_empty() {
                announce.emit(format!("Survey {id} is now {now}."));
            }
            *last.borrow_mut() = now;
        }
    }
    status.set(Some(answer));
}

/// A team action on a survey (close a cohort, close the survey): given the token and the survey,
/// its one-line outcome.
type AdminAction = Rc<
    dyn Fn(
        String,
        String,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, String>>>>,
>;

/// The survey's detail.
#[function_component(SurveyDetail)]
pub fn survey_detail(props: &SurveyDetailProps) -> Html {
    let status = use_state(|| None::<Result<SurveyStatus, String>>);
    let deployment = use_state(|| None::<Deployment>);
    let model = use_state(|| None::<Result<(String, Vec<String>), String>>);
    let invitations = use_state(|| None::<Result<Invitations, String>>);
    let count = use_state(|| "10".to_owned());
    let action_error = use_state(|| None::<String>);
    let busy = use_state(|| false);
    let last = use_mut_ref(String::new);

    // Poll while this view is open; leaving it (or another survey) stops the loop.
    {
        let (status, announce, last) = (status.setter(), props.announce.clone(), last.clone());
        use_effect_with(
            (props.token.clone(), props.id.clone()),
            move |(token, id)| {
                let alive = Rc::new(Cell::new(true));
                let (token, id, flag) = (token.to_string(), id.to_string(), alive.clone());
                *last.borrow_mut() = String::new();
                wasm_bindgen_futures::spawn_local(async move {
                    while flag.get() {
                        refresh(&token, &id, &status, &last, &announce).await;
                        sleep(POLL_MS).await;
                    }
                });
                move || alive.set(false)
            },
        );
    }
    {
        let deployment = deployment.setter();
        use_effect_with((), move |()| {
            wasm_bindgen_futures::spawn_local(async move {
                deployment.set(api::deployment().await.ok())
            });
        });
    }
    // Once released: the manifest's columns give the analyst link's model.
    let manifest_url = status
        .as_ref()
        .and_then(|s| s.as_ref().ok())
        .and_then(|s| s.manifest_url.clone());
    {
        let model = model.setter();
        use_effect_with(manifest_url.clone(), move |url| {
            if let Some(url) = url.clone() {
                wasm_bindgen_futures::spawn_local(async move {
                    let answer = api::manifest_columns(&url)
                        .await
                        .and_then(|(columns, binary)| {
                            default_model(&columns, &binary)
                                .ok_or_else(|| "the manifest lists no column".to_owned())
                        });
                    model.set(Some(answer));
                });
            }
        });
    }

    let run = |what: &'static str, id: String, op: AdminAction| {
        let (token, announce, status, last, action_error, busy) = (
            props.token.to_string(),
            props.announce.clone(),
            status.setter(),
            last.clone(),
            action_error.setter(),
            busy.setter(),
        );
        Callback::from(move |_: MouseEvent| {
            let (token, id, announce, status, last, action_error, busy, op) = (
                token.clone(),
                id.clone(),
                announce.clone(),
                status.clone(),
                last.clone(),
                action_error.clone(),
                busy.clone(),
                op.clone(),
            );
            busy.set(true);
            announce.emit(format!("{what}…"));
            wasm_bindgen_futures::spawn_local(async move {
                let answer = op(token.clone(), id.clone()).await;
                busy.set(false);
                match answer {
                    Ok(done) => {
                        action_error.set(None);
                        announce.emit(done);
                    }
                    Err(e) => {
                        announce.emit(format!("{what} failed: {e}"));
                        action_error.set(Some(format!("{what} failed: {e}")));
                    }
                }
                refresh(&token, &id, &status, &last, &announce).await;
            });
        })
    };
    let id = props.id.to_string();
    let close_survey = run(
        "Closing the survey",
        id.clone(),
        Rc::new(|token, id| {
            Box::pin(async move {
                api::close_survey(&token, &id).await.map(|()| {
                    format!("Survey {id} closed: its cohorts are being unmasked and published.")
                })
            })
        }),
    );
    let close_cohort = |k: u32| {
        run(
            "Closing the cohort",
            id.clone(),
            Rc::new(move |token, id| {
                Box::pin(async move {
                    api::close_cohort(&token, &id, k)
                        .await
                        .map(|()| format!("Cohort {k} of survey {id} closed."))
                })
            }),
        )
    };
    let on_count = {
        let count = count.setter();
        Callback::from(move |e: InputEvent| count.set(target_value(&e.into())))
    };
    let on_invite = {
        let (token, id, count, invitations, announce) = (
            props.token.to_string(),
            id.clone(),
            (*count).clone(),
            invitations.setter(),
            props.announce.clone(),
        );
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let Ok(n) = count.trim().parse::<usize>() else {
                invitations.set(Some(Err(format!(
                    "{:?} is not a number of invitations (1 to {})",
                    count.trim(),
                    InvitationRequest::MAX
                ))));
                return;
            };
            let (token, id, invitations, announce) = (
                token.clone(),
                id.clone(),
                invitations.clone(),
                announce.clone(),
            );
            wasm_bindgen_futures::spawn_local(async move {
                let answer = api::invite(&token, &id, n).await;
                announce.emit(match &answer {
                    Ok(i) => format!("{} invitations created.", i.invitations.len()),
                    Err(e) => format!("No invitations: {e}"),
                });
                invitations.set(Some(answer));
            });
        })
    };

    let Some(current) = &*status else {
        return html! { <section><h2>{ format!("Survey {id}") }</h2><p role="status">{ "Loading the survey…" }</p></section> };
    };
    let s = match current {
        Err(e) => {
            return html! { <section><h2>{ format!("Survey {id}") }</h2><p class="error" role="alert" data-testid="detail-error">{ e }</p></section> };
        }
        Ok(s) => s,
    };
    let open = s.status == SurveyPhase::Open;
    let invitation_section = html! {
        <section aria-labelledby="invite-title">
            <h3 id="invite-title">{ "Invite participants" }</h3>
            if let Some(Some(c)) = &s.invitations {
                <p data-testid="invitation-counts">{ c.summary() }</p>
            }
            if open {
                <form class="invite" onsubmit={on_invite}>
                    <label for="invite-count">{ "Number of invitations" }</label>
                    <input id="invite-count" type="number" min="1" max={InvitationRequest::MAX.to_string()} step="1" value={(*count).clone()} oninput={on_count} />
                    <button type="submit" data-testid="invite">{ "Create invitations" }</button>
                </form>
            }
            { match &*invitations {
                None => html! {},
                Some(Err(e)) => html! { <p class="error" role="alert" data-testid="invite-error">{ e }</p> },
                Some(Ok(i)) => html! {
                    <p data-testid="invite-result">
                        { format!("{} one-use links created; each opens the form for one participant. ", i.invitations.len()) }
                        <SaveButton label="Download the invitations (CSV)" class={classes!("primary")} file_name={format!("{}-invitations.csv", i.survey)} mime="text/csv" text={invitations_csv(&i.invitations)} />
                    </p>
                },
            } }
        </section>
    };
    let cohorts = html! {
        <div class="table-scroll">
            <table class="cohorts" data-testid="cohorts">
                <caption>{ "Cohorts" }</caption>
                <thead><tr>
                    <th scope="col">{ "Cohort" }</th><th scope="col">{ "Status" }</th><th scope="col">{ "Assigned" }</th>
                    <th scope="col">{ "Records" }</th><th scope="col">{ "QA" }</th><th scope="col">{ "Note" }</th><th scope="col">{ "Action" }</th>
                </tr></thead>
                <tbody>
                    { for s.cohorts.iter().map(|c| html! {
                        <tr data-cohort={c.cohort.to_string()} data-status={c.status.word()}>
                            <th scope="row">{ c.cohort }</th>
                            <td>{ c.status.word() }</td>
                            <td>{ c.assigned }</td>
                            <td>{ c.records.map(|n| n.to_string()).unwrap_or_default() }</td>
                            <td>{ c.qa_text().unwrap_or_default() }</td>
                            <td>{ c.note.clone().unwrap_or_default() }</td>
                            <td>if c.closable() && open {
                                <button type="button" onclick={close_cohort(c.cohort)} disabled={*busy}>{ format!("Close cohort {}", c.cohort) }</button>
                            }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </div>
    };
    let services = html! {
        <ul class="services" data-testid="services">
            { for s.services.iter().flatten().map(|v| html! { <li><strong>{ &v.service }</strong>{ ": " }{ v.summary() }</li> }) }
        </ul>
    };
    // Issue 20 §8: cohorts left out for invalid data, and refused hand-over claims.
    let checks = html! {
        <>
            <h4>{ "Spoilt cohorts" }</h4>
            <p data-testid="spoilt">{ s.spoilt.summary() }</p>
            <h4>{ "Refused hand-over claims" }</h4>
            if s.refused_handovers.is_empty() {
                <p data-testid="refused-handovers">{ "None: every hand-over claim was believed." }</p>
            } else {
                <ul data-testid="refused-handovers">
                    { for s.refused_handovers.iter().map(|r| html! { <li>{ r.line() }</li> }) }
                </ul>
            }
        </>
    };
    let release = match (&s.released_at, &s.release_csv_url, &s.manifest_url) {
        (Some(at), Some(csv), Some(manifest)) => {
            let analyst = match &*model {
                Some(Ok((y, x))) => {
                    let href = match &s.datapackage_url {
                        Some(package) => labelled_analyst_link(csv, package, y, x),
                        None => analyst_link(csv, y, x),
                    };
                    html! { <li><a href={href} data-testid="analyst-link">{ format!("Analyse the release ({y} on {})", x.join(", ")) }</a></li> }
                }
                Some(Err(e)) => {
                    html! { <li class="error">{ format!("No analyst link: {e}") }</li> }
                }
                None => html! {},
            };
            let lists: Vec<String> = deployment
                .as_ref()
                .map(|dep| {
                    s.cohorts
                        .iter()
                        .filter(|c| c.records.is_some_and(|r| r > 0))
                        .flat_map(|c| {
                            receipt_lists(
                                &s.survey,
                                c.cohort,
                                s.share_services as usize,
                                &dep.msp,
                                &dep.rights,
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            html! {
                <section aria-labelledby="release-title" data-testid="release">
                    <h3 id="release-title">{ format!("Released {at}") }</h3>
                    <ul>
                        <li><a href={csv.clone()} data-testid="release-link">{ "release.csv" }</a></li>
                        <li><a href={manifest.clone()} data-testid="manifest-link">{ "manifest.json" }</a></li>
                        if let Some(package) = &s.datapackage_url {
                            <li><a href={package.clone()} data-testid="datapackage-link">{ "datapackage.json" }</a>{ " — the codebook and labels (Frictionless Data Package)" }</li>
                        }
                        { analyst }
                        <li><a href={audit_link(csv, manifest)} data-testid="audit-link">{ "Audit the release" }</a></li>
                    </ul>
                    if !lists.is_empty() {
                        <p>{ "Receipt lists participants check their receipts against:" }</p>
                        <ul data-testid="receipt-lists">
                            { for lists.iter().map(|u| html! { <li><a href={u.clone()}>{ u }</a></li> }) }
                        </ul>
                    }
                </section>
            }
        }
        _ => html! {},
    };
    html! {
        <section class="survey-detail" aria-labelledby="detail-title" data-testid="survey-detail">
            <h2 id="detail-title">{ format!("Survey {}: {}", s.survey, s.title) }</h2>
            <p>
                { "Status: " }<strong data-testid="survey-status">{ s.status.word() }</strong>
                { format!(" — cohorts of {}, released from {} records{}; updated every few seconds.",
                    s.cohort_size,
                    s.min_cohort_size,
                    if s.share_services > 0 { format!(", share mode over {} services", s.share_services) } else { String::new() }) }
            </p>
            if let Some(e) = &s.error { <p class="error" role="alert" data-testid="survey-error">{ e }</p> }
            if let Some(e) = &*action_error { <p class="error" role="alert" data-testid="action-error">{ e }</p> }
            { invitation_section }
            // A demonstration's cohort can be filled at once, through the participant client.
            if s.demonstration && open {
                <SimulatedParticipants survey={s.survey.clone()} cohort={s.current_cohort} on_team_page=true />
            }
            <section aria-labelledby="watch-title">
                <h3 id="watch-title">{ "Collection" }</h3>
                { cohorts }
                <h4>{ "Services" }</h4>
                { services }
                { checks }
                if open {
                    <button type="button" class="primary" onclick={close_survey} disabled={*busy} data-testid="close-survey">{ "Close the survey and publish" }</button>
                }
            </section>
            { release }
        </section>
    }
}
