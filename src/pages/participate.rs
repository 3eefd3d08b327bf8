//! The participant's survey form (`#/participate?survey=ID[&invite=TOKEN]`, or
//! `#/participate?demo=NAME`): consent first, one question per screen with a progress bar,
//! validation announced to screen readers, a "what leaves your device" panel, submission with
//! retry and an idempotency token, and a receipt to save.
//!
//! The form appears only once the survey is trusted ([`model::participation`]): a collector's
//! survey after its signature, upload addresses and credential were checked, a demonstration
//! only as practice that sends nothing. A refused survey shows why and nothing else.
//!
//! The answers stay in this page's memory (the [`ParticipantState`] reducer): nothing is written
//! to storage or the console, and only [`Prepared`](orthomask_survey::client::Prepared) — masked
//! numbers from the participant client `orthomask_survey::client` — is ever sent.

use std::rc::Rc;

use orthomask_survey::client::{receipt_file, receipts_list_url};
use orthomask_survey::definition::{Question, QuestionKind, SurveyDefinition};
use yew::prelude::*;

use super::target_value;
use crate::components::save_button::SaveButton;
use crate::context::use_query;
use crate::model::format::sig;
use crate::model::participation::{self as participation, Access};
use crate::pages::simulated_participants::SimulatedParticipants;
use crate::pages::survey_chooser::SurveyChooser;
use crate::services::participation as open_survey;
use crate::state::{ParticipantAction, ParticipantState, Phase};

/// The participant page.
#[function_component(Participate)]
pub fn participate() -> Html {
    let params = use_query();
    let source = participation::source_from_query(&params);
    let state = use_reducer(ParticipantState::default);

    // Which opening is current: a slow answer for a link the page has since left is dropped.
    let opening = use_mut_ref(|| 0_u64);
    {
        let dispatch = state.dispatcher();
        use_effect_with(source.clone(), move |source| {
            // Nothing of the survey shown before stays on the page while this one loads.
            dispatch.dispatch(ParticipantAction::Open);
            *opening.borrow_mut() += 1;
            let this = *opening.borrow();
            match source.clone() {
                // Nothing is fetched for a route that names no trusted source.
                Err(refused) => {
                    dispatch.dispatch(ParticipantAction::Loaded(Err(refused.to_string())))
                }
                Ok(None) => {}
                Ok(Some(source)) => wasm_bindgen_futures::spawn_local(async move {
                    let loaded = open_survey::open(&source)
                        .await
                        .map(|(survey, access)| (Rc::new(survey), access));
                    if *opening.borrow() == this {
                        dispatch.dispatch(ParticipantAction::Loaded(loaded));
                    }
                }),
            }
        });
    }
    // Prepare the masked upload when the review opens (one token per submission, reused on retry).
    {
        let dispatch = state.dispatcher();
        let needs = state.phase == Phase::Review
            && state.prepared.is_none()
            && state.prepare_error.is_none();
        let (survey, inputs, access) = (
            state.survey.clone(),
            state.inputs.clone(),
            state.access.clone(),
        );
        use_effect_with(needs, move |needs| {
            if let (true, Some(survey), Some(access)) = (*needs, survey, access) {
                // Errors become the text the page shows here.
                let result = survey
                    .answers_from_inputs(&inputs)
                    .map_err(|e| e.to_string())
                    .and_then(|answers| open_survey::prepare(&survey, &access, &answers))
                    .map(Rc::new);
                dispatch.dispatch(ParticipantAction::Prepared(result));
            }
        });
    }

    if matches!(source, Ok(None)) {
        return html! { <SurveyChooser /> };
    }
    let demonstration = matches!(state.access, Some(Access::Demonstration));

    let live = html! {
        <p class="visually-hidden" aria-live="assertive" role="status" data-testid="announcer">{ &state.announcement }</p>
    };
    let body = match (&state.phase, &state.survey) {
        (Phase::Loading, _) => html! { <p role="status">{ "Loading the survey…" }</p> },
        (Phase::Broken(e), _) => {
            html! { <p class="error" role="alert">{ format!("This survey cannot be opened: {e}") }</p> }
        }
        (_, None) => html! {},
        (Phase::Consent, Some(survey)) => consent(survey, &state),
        (Phase::Question(i), Some(survey)) => question_screen(survey, *i, &state),
        (Phase::Review | Phase::Sending(_) | Phase::Failed(_), Some(survey)) => {
            review(survey, &state)
        }
        (Phase::Done, Some(survey)) => receipt(survey, &state),
    };
    let title = state
        .survey
        .as_ref()
        .map_or_else(|| "Survey".to_owned(), |s| s.title.clone());
    html! {
        <section class="participate">
            <h1>{ title }</h1>
            if demonstration && state.survey.is_some() {
                <p class="badge teaching" data-testid="demonstration">{ "Demonstration: this survey uses a published teaching key, so answers are not private. Practise freely — nothing you enter is sent anywhere." }</p>
            } else if state.survey.as_ref().is_some_and(|s| s.masking.teaching) {
                <p class="badge teaching" data-testid="live-demonstration">{ "Demonstration survey: anyone may take it and its device key is given to everyone who opens it, so do not enter real personal data." }</p>
            }
            if matches!(state.phase, Phase::Question(_) | Phase::Review | Phase::Sending(_) | Phase::Failed(_) | Phase::Done) {
                <label class="survey-progress">
                    { format!("Progress: {:.0}%", state.progress() * 100.0) }
                    <progress max="1" value={state.progress().to_string()} />
                </label>
            }
            { live }
            { body }
        </section>
    }
}

fn consent(survey: &SurveyDefinition, state: &UseReducerHandle<ParticipantState>) -> Html {
    let on_check = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            d.dispatch(ParticipantAction::Consent(super::target_checked(&e)))
        })
    };
    let on_submit = {
        let d = state.dispatcher();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            d.dispatch(ParticipantAction::Begin);
        })
    };
    html! {
        <form class="consent" onsubmit={on_submit}>
            if let Some(d) = &survey.description { <p>{ d }</p> }
            <h2>{ "Consent" }</h2>
            <p class="consent-text">{ &survey.consent }</p>
            <label class="check">
                <input type="checkbox" id="consent" checked={state.consent} onchange={on_check} />
                { "I have read this and agree to take part." }
            </label>
            <button type="submit" class="primary" disabled={!state.consent}>{ "Start the survey" }</button>
        </form>
    }
}

fn question_input(
    q: &Question,
    index: usize,
    value: &str,
    error_id: &str,
    has_error: bool,
    on_input: Callback<String>,
) -> Html {
    let radio = |name: String, options: Vec<(String, String)>| -> Html {
        html! {
            <div class="choices" role="radiogroup" aria-describedby={error_id.to_owned()} aria-invalid={has_error.to_string()}>
                { for options.into_iter().enumerate().map(|(k, (val, label))| {
                    let on_input = on_input.clone();
                    let v = val.clone();
                    let id = format!("q{index}-{k}");
                    html! {
                        <label for={id.clone()} class="choice">
                            <input type="radio" id={id} name={name.clone()} value={val.clone()} checked={value == val}
                                onchange={Callback::from(move |_: Event| on_input.emit(v.clone()))} />
                            { label }
                        </label>
                    }
                }) }
            </div>
        }
    };
    let name = format!("q{index}");
    match &q.kind {
        QuestionKind::YesNo => radio(
            name,
            vec![("yes".into(), "Yes".into()), ("no".into(), "No".into())],
        ),
        QuestionKind::Likert {
            points,
            low_label,
            high_label,
        } => radio(
            name,
            (1..=*points)
                .map(|k| {
                    let label = if k == 1 {
                        format!("{k} ({low_label})")
                    } else if k == *points {
                        format!("{k} ({high_label})")
                    } else {
                        k.to_string()
                    };
                    (k.to_string(), label)
                })
                .collect(),
        ),
        QuestionKind::Categorical { options } => radio(
            name,
            options
                .iter()
                .enumerate()
                .map(|(k, o)| (k.to_string(), o.clone()))
                .collect(),
        ),
        QuestionKind::Integer { min, max } => numeric(
            index,
            value,
            error_id,
            has_error,
            on_input,
            &min.to_string(),
            &max.to_string(),
            "1",
            "numeric",
        ),
        QuestionKind::Number { min, max } => numeric(
            index,
            value,
            error_id,
            has_error,
            on_input,
            &min.to_string(),
            &max.to_string(),
            "any",
            "decimal",
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn numeric(
    index: usize,
    value: &str,
    error_id: &str,
    has_error: bool,
    on_input: Callback<String>,
    min: &str,
    max: &str,
    step: &str,
    mode: &str,
) -> Html {
    let oninput = Callback::from(move |e: InputEvent| {
        let e: Event = e.into();
        on_input.emit(target_value(&e));
    });
    html! {
        <input id={format!("q{index}-input")} type="number" inputmode={mode.to_owned()} min={min.to_owned()} max={max.to_owned()} step={step.to_owned()}
            value={value.to_owned()} oninput={oninput} autofocus=true
            aria-describedby={error_id.to_owned()} aria-invalid={has_error.to_string()} aria-labelledby={format!("q{index}-label")} />
    }
}

fn question_screen(
    survey: &SurveyDefinition,
    i: usize,
    state: &UseReducerHandle<ParticipantState>,
) -> Html {
    let q = &survey.questions[i];
    let value = state.inputs.get(i).cloned().unwrap_or_default();
    let error = state
        .errors
        .get(i)
        .cloned()
        .flatten()
        .map(|e| e.to_string());
    let error_id = format!("q{i}-error");
    let on_input = {
        let d = state.dispatcher();
        Callback::from(move |value: String| {
            d.dispatch(ParticipantAction::Input { index: i, value })
        })
    };
    let on_submit = {
        let d = state.dispatcher();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            d.dispatch(ParticipantAction::Next);
        })
    };
    let on_back = {
        let d = state.dispatcher();
        Callback::from(move |_| d.dispatch(ParticipantAction::Back))
    };
    let on_skip = {
        let d = state.dispatcher();
        Callback::from(move |_| {
            d.dispatch(ParticipantAction::Input {
                index: i,
                value: String::new(),
            });
            d.dispatch(ParticipantAction::Next);
        })
    };
    let last = i + 1 == survey.questions.len();
    html! {
        <form class="question" onsubmit={on_submit} novalidate=true>
            <fieldset>
                <legend id={format!("q{i}-label")}>
                    <span class="counter">{ format!("Question {} of {}", i + 1, survey.questions.len()) }</span>
                    <span class="label">{ &q.label }</span>
                    if q.optional { <span class="badge">{ "optional" }</span> }
                </legend>
                if let Some(help) = &q.help { <p class="help">{ help }</p> }
                { question_input(q, i, &value, &error_id, error.is_some(), on_input) }
                <p id={error_id} class="error" role={error.is_some().then_some("alert")}>{ error.unwrap_or_default() }</p>
            </fieldset>
            <div class="buttons">
                <button type="button" onclick={on_back}>{ "Back" }</button>
                if q.optional { <button type="button" onclick={on_skip}>{ "Skip this question" }</button> }
                <button type="submit" class="primary">{ if last { "Review" } else { "Next" } }</button>
            </div>
        </form>
    }
}

fn review(survey: &SurveyDefinition, state: &UseReducerHandle<ParticipantState>) -> Html {
    if let Some(e) = &state.prepare_error {
        return html! { <p class="error" role="alert">{ format!("Your answers could not be masked: {e}") }</p> };
    }
    let Some(prepared) = state.prepared.clone() else {
        return html! { <p role="status">{ "Masking your answers on this device…" }</p> };
    };
    let on_send = {
        let d = state.dispatcher();
        let prepared = prepared.clone();
        Callback::from(move |_| {
            // Only a collector's survey sends, and every upload carries its credential.
            if prepared
                .destinations
                .iter()
                .any(|dest| dest.upload.credential.is_none())
            {
                return;
            }
            let (d, prepared) = (d.clone(), prepared.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let d2 = d.clone();
                match open_survey::send(&prepared, &move |n| {
                    d2.dispatch(ParticipantAction::Sending(n))
                })
                .await
                {
                    Ok(receipts) => d.dispatch(ParticipantAction::Sent(receipts)),
                    Err(e) => d.dispatch(ParticipantAction::Failed(e)),
                }
            });
        })
    };
    let on_back = {
        let d = state.dispatcher();
        Callback::from(move |_| d.dispatch(ParticipantAction::Back))
    };
    let first = &prepared.destinations[0].upload;
    let p = first.values.len();
    let why = if prepared.share_mode {
        // What one service alone learns (orthomask_survey::share_view): its share shows the
        // answers at this signal-to-noise ratio, a Gaussian mechanism with this (ε, δ).
        let view = prepared.one_service_view.map_or_else(String::new, |v| {
            format!(
                " On its own, one part shows your answers at a signal-to-noise ratio below {} — as private as a Gaussian mechanism with ε = {} at δ = {}.",
                sig(v.signal_to_noise, 2),
                sig(v.epsilon, 2),
                sig(v.delta, 1)
            )
        });
        format!(
            "Your {} answers were padded with {} random numbers and split into {} random parts that add up to them; each part goes to a different service, and each part hides your answers under random noise {:.0} times larger than any answer this survey allows.{view} The survey team only ever receives everyone's rows mixed together by every service, so nobody — not one service, not the survey team — can read or link your answers.",
            survey.questions.len(),
            prepared.p2,
            prepared.destinations.len(),
            prepared.share_noise_ratio.unwrap_or(f64::NAN)
        )
    } else {
        format!(
            "Your answers were padded with {} random numbers and turned by a secret random rotation, so these {p} numbers do not reveal any single answer. The masking service sees only these turned numbers, and the survey team can undo the rotation only after that service has mixed your row with everyone else's — so nobody can read or link your answers.",
            prepared.p2
        )
    };
    let sending = matches!(state.phase, Phase::Sending(_));
    // A demonstration has no credential and a published key: it never sends.
    let practice = !matches!(state.access, Some(Access::Collector(_)));
    html! {
        <div class="review">
            <section class="leaves-device" aria-labelledby="leaves-title">
                <h2 id="leaves-title">{ "What leaves your device" }</h2>
                <p>{ why }</p>
                if practice {
                    <p class="badge teaching">{ "In this demonstration the key is published, so anyone could undo the masking: never enter real answers here." }</p>
                }
                { for prepared.destinations.iter().enumerate().map(|(k, dest)| html! {
                    <details open={k == 0}>
                        <summary>{ format!("{} numbers {} {}", dest.upload.values.len(), if practice { "would go to" } else { "to" }, dest.url) }</summary>
                        <p class="masked-vector" data-testid="masked-vector">
                            { dest.upload.values.iter().map(|v| sig(*v, 6)).collect::<Vec<_>>().join(", ") }
                        </p>
                    </details>
                }) }
                <p class="small">{ format!("Survey {:?}, cohort {}, submission token {} (it makes a retried upload count once).", first.survey, first.cohort, first.token) }</p>
            </section>
            if let Phase::Failed(e) = &state.phase {
                <p class="error" role="alert">{ e }</p>
            }
            if practice {
                <p class="practice" role="status" data-testid="practice">{ "This was practice: a demonstration survey sends nothing. In a real survey, the link your survey team sends you opens its own collector's survey, and only these masked numbers would be sent." }</p>
            }
            <div class="buttons">
                <button type="button" onclick={on_back} disabled={sending}>{ "Change my answers" }</button>
                if !practice {
                    <button type="button" class="primary" onclick={on_send} disabled={sending}>
                        { match state.phase { Phase::Sending(n) => format!("Sending (attempt {n})…"), Phase::Failed(_) => "Try again".to_owned(), _ => "Send".to_owned() } }
                    </button>
                }
            </div>
        </div>
    }
}

fn receipt(survey: &SurveyDefinition, state: &UseReducerHandle<ParticipantState>) -> Html {
    let file = receipt_file(&state.receipts);
    let name = format!("orthomask-receipt-{}.json", survey.id);
    html! {
        <div class="receipt">
            <h2>{ "Thank you — your masked answers were received" }</h2>
            { for state.receipts.iter().map(|(url, r)| html! {
                <dl>
                    <dt>{ "Received by" }</dt><dd>{ url }</dd>
                    <dt>{ "Cohort" }</dt><dd>{ r.cohort }</dd>
                    <dt>{ "Time" }</dt><dd>{ &r.received_at }</dd>
                    <dt>{ "Upload hash" }</dt><dd class="hash" data-testid="receipt-hash">{ &r.upload_hash }</dd>
                    if let Some(list) = receipts_list_url(url, r.cohort) {
                        <dt>{ "Published list" }</dt>
                        <dd><a href={list} data-testid="receipt-list">{ format!("Receipts of cohort {} at this service (once it closes)", r.cohort) }</a></dd>
                    }
                </dl>
            }) }
            <p>{ "The hash identifies exactly what was sent; it was checked against your upload. Keep it to verify later that your record is in the published cohort." }</p>
            <SaveButton label="Save receipt" class={classes!("primary")} file_name={name} mime="application/json" text={file} />
            // A live demonstration (a collector's survey labelled as one) can be filled at once.
            if let (Some(Access::Collector(_)), true, Some((_, r))) = (&state.access, survey.masking.teaching, state.receipts.first()) {
                <SimulatedParticipants survey={survey.id.clone()} cohort={r.cohort} />
            }
        </div>
    }
}
