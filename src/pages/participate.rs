//! The participant's survey form (`#/participate?survey=ID[&invite=TOKEN]`, or
//! `#/participate?demo=NAME`): consent first, one question per screen with a progress bar (only
//! the questions the earlier answers show: `show_if`), validation announced to screen readers, a
//! "what leaves your device" panel, submission with retry and an idempotency token, and a receipt
//! to save. In the participant's language: the survey's texts from its definition
//! (`SurveyDefinition::texts`), the page's own from the catalogue ([`crate::i18n`]), starting
//! from the browser's preference, with a switcher. Offline, the masked upload waits on the device
//! ([`crate::services::outbox`]) and goes out when the connection returns; nothing of the survey
//! itself is kept on the device, so a survey opens only online (reloaded offline, the page says
//! so in one line, lists what waits, and offers to try again).
//!
//! After the receipt, while the page stays open, it watches the cohort's fate
//! ([`crate::services::fate`], proving its place with the upload credential's nonce): when the
//! collector left the cohort out — spoilt because someone in it sent invalid data, or regrouped
//! because too few people had answered in it for its answers to be masked — the page takes a new
//! place through the same link, masks the answers still in memory afresh (a new token, new
//! noise, a new credential) and sends them, announcing which of the two happened.
//!
//! The form appears only once the survey is trusted ([`model::participation`]): a collector's
//! survey after its signature, upload addresses and credential were checked, a demonstration
//! only as practice that sends nothing. A refused survey shows why and nothing else.
//!
//! The answers stay in this page's memory (the [`ParticipantState`] reducer): nothing is written
//! to storage or the console, and only [`Prepared`](orthomask_survey::client::Prepared) — masked
//! numbers from the participant client `orthomask_survey::client` — is ever sent or kept.

use std::cell::Cell;
use std::rc::Rc;

use orthomask_survey::client::Prepared;
use orthomask_survey::definition::{QuestionKind, SurveyDefinition};
use orthomask_survey::languages::{QuestionTexts, SurveyTexts};
use yew::prelude::*;

use crate::components::input::target_value;
use crate::components::language_switcher::LanguageSwitcher;
use crate::components::receipts::Receipts;
use crate::context::ShellLanguage;
use crate::context::use_query;
use crate::i18n::{AppLanguage, answer_error, floor_reason};
use crate::model::fate::{AgainReason, credential_nonce};
use crate::model::format::sig;
use crate::model::outbox::WaitingSubmission;
use crate::model::participation::{self as participation, Access, Source, Unopened};
use crate::pages::simulated_participants::SimulatedParticipants;
use crate::pages::survey_chooser::SurveyChooser;
use crate::pages::waiting_uploads::WaitingUploads;
use crate::services::browser::{OnlineListener, preferred_languages, register_service_worker};
use crate::services::http::SendError;
use crate::services::{fate, outbox, participation as open_survey};
use crate::state::{Announcement, ParticipantAction, ParticipantState, Phase};
use crate::t;

/// The participant page.
#[function_component(Participate)]
pub fn participate() -> Html {
    let params = use_query();
    let source = participation::source_from_query(&params);
    let state = use_reducer(ParticipantState::default);
    // The language the participant picked with the switcher (none: the browser's preference).
    let picked = use_state(|| None::<String>);
    let browser_languages = use_memo((), |()| preferred_languages());

    // Which opening is current: a slow answer for a link the page has since left is dropped.
    let opening = use_mut_ref(|| 0_u64);
    // The deployment description the current survey's offer was accepted against: a new place
    // after a left-out cohort is checked against it, without fetching it again.
    let deployment = use_mut_ref(|| None::<String>);
    // The build that deployment names (issue 27), read once when the survey opens, not at every
    // render.
    let served_build = use_mut_ref(|| None::<String>);
    // Bumped to open the same link again ("Try again" once the connection is back: not on its
    // own, since in an open survey every opening takes a place).
    let reopen = use_state(|| 0_u32);
    {
        let (dispatch, deployment, served_build) =
            (state.dispatcher(), deployment.clone(), served_build.clone());
        use_effect_with((source.clone(), *reopen), move |(source, _)| {
            // The form is drawn (effects run after the render): on a collector's survey link the
            // opening was started before it (`open_first`; e2e-services/page-load.mjs checks the
            // order of these marks).
            crate::services::clock::mark("orthomask:form drawn");
            // Nothing of the survey shown before stays on the page while this one loads.
            dispatch.dispatch(ParticipantAction::Open);
            *deployment.borrow_mut() = None;
            *served_build.borrow_mut() = None;
            *opening.borrow_mut() += 1;
            let this = *opening.borrow();
            match source.clone() {
                // Nothing is fetched for a route that names no trusted source.
                Err(refused) => dispatch.dispatch(ParticipantAction::Loaded(Err(
                    Unopened::Refused(refused.to_string()),
                ))),
                Ok(None) => {}
                Ok(Some(source)) => wasm_bindgen_futures::spawn_local(async move {
                    // The module may have started this opening already (`open_first`).
                    let opened = open_survey::open_first(&source).await;
                    if *opening.borrow() == this {
                        let loaded = opened.map(|o| {
                            *served_build.borrow_mut() = o
                                .deployment
                                .as_deref()
                                .and_then(participation::served_build);
                            *deployment.borrow_mut() = o.deployment;
                            (Rc::new(o.survey), o.access)
                        });
                        dispatch.dispatch(ParticipantAction::Loaded(loaded));
                    }
                }),
            }
        });
    }
    // The service worker is registered once the page shows what its link opened (the survey, or
    // why not; the list of surveys), after that render (`crate::start_participant` says why).
    // Registering again is a no-op.
    {
        let shown = state.phase != Phase::Loading || matches!(source, Ok(None));
        use_effect_with(shown, |shown| {
            if *shown {
                register_service_worker();
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

    // The survey's language: the one picked, else the browser's preferred one the survey offers.
    let survey_language = state.survey.as_ref().map(|survey| {
        picked
            .as_ref()
            .filter(|tag| survey.languages().contains(&tag.as_str()))
            .cloned()
            .unwrap_or_else(|| survey.preferred_language(&browser_languages).to_owned())
    });
    // The page's own texts follow the survey's language when there is a catalogue for it.
    let lang = match &survey_language {
        Some(tag) => AppLanguage::for_tag(tag).unwrap_or(AppLanguage::English),
        None => AppLanguage::preferred(&browser_languages),
    };
    // Screen readers read the page in its language (`<html lang>`), and the app's other pages
    // are English again once the participant leaves.
    {
        let tag = survey_language
            .clone()
            .unwrap_or_else(|| lang.tag().to_owned());
        use_effect_with(tag, |tag| {
            set_document_language(tag);
            || set_document_language("en")
        });
    }
    // The app's frame (navigation, skip link, footer) speaks the page's language while it is
    // open, and English again once the participant leaves.
    {
        let shell = use_context::<ShellLanguage>();
        use_effect_with(lang, move |lang| {
            if let Some(shell) = &shell {
                shell.set(*lang);
            }
            move || {
                if let Some(shell) = shell {
                    shell.set(AppLanguage::English);
                }
            }
        });
    }
    // While the upload waits for a connection, send it when the connection returns.
    {
        let waiting = (state.phase == Phase::Waiting)
            .then(|| state.prepared.clone())
            .flatten();
        let dispatch = state.dispatcher();
        use_effect_with(waiting, move |waiting| {
            let listener = waiting.clone().map(|prepared| {
                OnlineListener::new(move || submit(dispatch.clone(), prepared.clone(), lang))
            });
            move || drop(listener)
        });
    }

    // After the receipt, while the page stays open: watch the cohort's fate, and answer again in
    // a new cohort when the collector left it out.
    {
        // Keyed by the receipt's cohort and the nonce of the credential its upload carried (the
        // page's proof of a place there; none for a demonstration); the phase leaves `Done`
        // while the answers go again, so the watch of the new cohort starts afresh.
        let watched = match (&state.phase, &state.access, state.receipts.first()) {
            (Phase::Done, Some(Access::Collector(..)), Some((_, receipt))) => {
                let nonce = state
                    .prepared
                    .as_ref()
                    .and_then(|p| credential_nonce(&p.destinations))
                    .map(str::to_owned);
                Some((receipt.survey.clone(), receipt.cohort, nonce))
            }
            _ => None,
        };
        let (dispatch, source, deployment, inputs) = (
            state.dispatcher(),
            source.clone(),
            deployment.clone(),
            state.inputs.clone(),
        );
        use_effect_with(watched, move |watched| {
            let alive = Rc::new(Cell::new(true));
            if let (Some((survey, cohort, nonce)), Ok(Some(source))) = (watched.clone(), source) {
                let alive = alive.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let verdict = fate::watch(&survey, cohort, nonce.as_deref(), &alive).await;
                    if let Some(why) = verdict.and_then(|f| AgainReason::of(f.fate))
                        && alive.get()
                    {
                        let accepted = deployment.borrow().clone();
                        answer_again(dispatch, source, accepted, inputs, lang, why);
                    }
                });
            }
            move || alive.set(false)
        });
    }

    let waiting_token = (state.phase == Phase::Waiting)
        .then(|| state.prepared.as_ref())
        .flatten()
        .and_then(|p| p.destinations.first())
        .map(|d| d.upload.token.clone());
    let waiting_panel = html! { <WaitingUploads language={lang} exclude={waiting_token} /> };
    if matches!(source, Ok(None)) {
        return html! { <>{ waiting_panel }<SurveyChooser language={lang} /></> };
    }
    let demonstration = matches!(state.access, Some(Access::Demonstration));
    let texts = state
        .survey
        .as_ref()
        .zip(survey_language.as_deref())
        .map(|(survey, tag)| survey.texts(tag));

    let live = html! {
        <p class="visually-hidden" aria-live="assertive" role="status" data-testid="announcer">{ announcement(lang, &state.announcement) }</p>
    };
    let body = match (&state.phase, &state.survey, &texts) {
        (Phase::Loading, ..) => html! { <p role="status">{ t!(lang, "survey-loading") }</p> },
        (Phase::Broken(Unopened::NeedsConnection), ..) => {
            let on_retry = {
                let reopen = reopen.clone();
                Callback::from(move |_| reopen.set(*reopen + 1))
            };
            html! {
                <div class="needs-connection" data-testid="needs-connection">
                    <p role="status">{ unopened_line(lang, &Unopened::NeedsConnection) }</p>
                    <button type="button" onclick={on_retry}>{ t!(lang, "button-try-again") }</button>
                </div>
            }
        }
        (Phase::Broken(e), ..) => {
            html! { <p class="error" role="alert">{ unopened_line(lang, e) }</p> }
        }
        (_, None, _) | (_, _, None) => html! {},
        (Phase::Consent, _, Some(texts)) => consent(texts, &state, lang),
        (Phase::Question(i), Some(survey), Some(texts)) => {
            question_screen(survey, texts, *i, &state, lang)
        }
        (
            Phase::Review | Phase::Sending(_) | Phase::Failed(_) | Phase::Waiting,
            Some(survey),
            _,
        ) => review(survey, &state, lang),
        (Phase::Done, Some(survey), _) => receipt(survey, &state, lang),
        (Phase::AnsweringAgain(why), ..) => html! {
            <p role="status" data-testid="answering-again">{ match why {
                AgainReason::Spoilt => t!(lang, "again-taking-place"),
                AgainReason::Regrouped => t!(lang, "again-taking-place-regrouped"),
            } }</p>
        },
        (Phase::AgainFailed { why, error }, ..) => {
            let why = *why;
            let on_again = {
                let (d, source, deployment, inputs) = (
                    state.dispatcher(),
                    source.clone(),
                    deployment.clone(),
                    state.inputs.clone(),
                );
                Callback::from(move |_| {
                    if let Ok(Some(source)) = source.clone() {
                        let accepted = deployment.borrow().clone();
                        answer_again(d.clone(), source, accepted, inputs.clone(), lang, why);
                    }
                })
            };
            let line = match why {
                AgainReason::Spoilt => t!(lang, "again-failed", reason = error),
                AgainReason::Regrouped => t!(lang, "again-failed-regrouped", reason = error),
            };
            html! {
                <>
                    <p class="error" role="alert">{ line }</p>
                    <button type="button" class="primary" onclick={on_again}>{ t!(lang, "again-try") }</button>
                </>
            }
        }
    };
    let title = texts
        .as_ref()
        .map_or_else(|| t!(lang, "survey-fallback-title"), |t| t.title.to_owned());
    let on_language = {
        let picked = picked.clone();
        Callback::from(move |tag: String| picked.set(Some(tag)))
    };
    html! {
        <section class="participate" lang={survey_language.clone()}>
            { waiting_panel }
            if let (Some(survey), Some(current)) = (&state.survey, &survey_language) {
                <LanguageSwitcher
                    languages={survey.languages().into_iter().map(str::to_owned).collect::<Vec<_>>()}
                    current={current.clone()} app_language={lang} on_change={on_language} />
            }
            <h1>{ title }</h1>
            if demonstration && state.survey.is_some() {
                <p class="badge teaching" data-testid="demonstration">{ t!(lang, "badge-practice") }</p>
            } else if state.survey.as_ref().is_some_and(|s| s.masking.teaching) {
                <p class="badge teaching" data-testid="live-demonstration">{ t!(lang, "badge-live-demonstration") }</p>
            }
            if state.shows_progress() {
                <label class="survey-progress">
                    { t!(lang, "progress", percent = format!("{:.0}", state.progress() * 100.0)) }
                    <progress max="1" value={state.progress().to_string()} />
                </label>
            }
            { live }
            { body }
            // Issue 27: the build the collector says it serves, and how anyone can check it.
            if let Some(digest) = served_build.borrow().clone() {
                <p class="small app-build" data-testid="app-build">{ t!(lang, "app-build",
                    short = digest[..12].to_owned(),
                    origin = web_sys::window().and_then(|w| w.location().origin().ok()).unwrap_or_default(),
                    digest = digest.clone()) }</p>
            }
        </section>
    }
}

fn set_document_language(tag: &str) {
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("lang", tag);
    }
}

/// Why the survey is not shown, in the participant's language.
fn unopened_line(lang: AppLanguage, why: &Unopened) -> String {
    match why {
        Unopened::NeedsConnection => t!(lang, "survey-needs-connection"),
        Unopened::WeakPlan(floor) => {
            t!(lang, "survey-weak-plan", reason = floor_reason(lang, floor))
        }
        Unopened::Refused(e) => t!(lang, "survey-broken", reason = e),
    }
}

/// The live region's text in the participant's language.
fn announcement(lang: AppLanguage, a: &Announcement) -> String {
    match a {
        Announcement::Nothing => String::new(),
        Announcement::Loaded => t!(lang, "announce-loaded"),
        Announcement::NeedConsent => t!(lang, "announce-need-consent"),
        Announcement::Question { number, total } => {
            t!(lang, "question-counter", number = number, total = total)
        }
        Announcement::Invalid { number, error } => t!(
            lang,
            "announce-invalid",
            number = number,
            reason = answer_error(lang, error)
        ),
        Announcement::AllAnswered => t!(lang, "announce-all-answered"),
        Announcement::Sending(1) => t!(lang, "announce-sending"),
        Announcement::Sending(n) => t!(lang, "announce-sending-attempt", attempt = n),
        Announcement::Sent => t!(lang, "announce-sent"),
        Announcement::Waiting => t!(lang, "announce-waiting"),
        Announcement::Discarded => t!(lang, "announce-discarded"),
        Announcement::Unopened(why) => unopened_line(lang, why),
        Announcement::AnsweringAgain(AgainReason::Spoilt) => t!(lang, "announce-answering-again"),
        Announcement::AnsweringAgain(AgainReason::Regrouped) => {
            t!(lang, "announce-answering-again-regrouped")
        }
        Announcement::SentAgain(AgainReason::Spoilt) => t!(lang, "announce-sent-again"),
        Announcement::SentAgain(AgainReason::Regrouped) => {
            t!(lang, "announce-sent-again-regrouped")
        }
        Announcement::Message(m) => m.clone(),
    }
}

/// The receipt's cohort was left out (spoilt, issue 20 §8, or regrouped, issue 43 §3: `why`): say
/// so ([`ParticipantAction::LeftOut`]), take a new place through the same link (its invitation,
/// reopened by the collector, or none for an open survey) — checked against the deployment
/// `accepted` at the first opening, not fetched again — mask the answers still on this page
/// afresh for it (a new token, new noise, the new credential, through the same
/// `orthomask_survey::client`) and send them as the first time ([`submit`]).
fn answer_again(
    dispatch: UseReducerDispatcher<ParticipantState>,
    source: Source,
    accepted: Option<String>,
    inputs: Vec<String>,
    lang: AppLanguage,
    why: AgainReason,
) {
    dispatch.dispatch(ParticipantAction::LeftOut(why));
    wasm_bindgen_futures::spawn_local(async move {
        let reassigned = match open_survey::open(&source, accepted.as_deref()).await {
            Err(why) => Err(unopened_line(lang, &why)),
            Ok(open_survey::Opened { survey, access, .. }) => survey
                .answers_from_inputs(&inputs)
                .map_err(|e| e.to_string())
                .and_then(|answers| open_survey::prepare(&survey, &access, &answers))
                .map(|prepared| (Rc::new(survey), access, Rc::new(prepared))),
        };
        let prepared = reassigned.as_ref().ok().map(|(.., p)| p.clone());
        dispatch.dispatch(ParticipantAction::Reassigned(reassigned));
        if let Some(prepared) = prepared {
            submit(dispatch, prepared, lang);
        }
    });
}

/// Send `prepared`; without a connection keep it in the outbox (masked uploads only) and wait.
fn submit(
    dispatch: UseReducerDispatcher<ParticipantState>,
    prepared: Rc<Prepared>,
    lang: AppLanguage,
) {
    wasm_bindgen_futures::spawn_local(async move {
        let progress = dispatch.clone();
        let sent = outbox::deliver(&prepared.destinations, &move |n| {
            progress.dispatch(ParticipantAction::Sending(n))
        })
        .await;
        let action = match sent {
            Ok(receipts) => ParticipantAction::Sent(receipts),
            Err(SendError::Unreachable(reason)) => {
                match WaitingSubmission::from_prepared(&prepared) {
                    Some(waiting) => match outbox::keep(&waiting).await {
                        Ok(()) => ParticipantAction::Waiting,
                        Err(e) => {
                            ParticipantAction::Failed(t!(lang, "waiting-store-failed", reason = e))
                        }
                    },
                    None => ParticipantAction::Failed(reason),
                }
            }
            Err(SendError::Failed(e)) => ParticipantAction::Failed(e),
        };
        dispatch.dispatch(action);
    });
}

fn consent(
    texts: &SurveyTexts<'_>,
    state: &UseReducerHandle<ParticipantState>,
    lang: AppLanguage,
) -> Html {
    let on_check = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            d.dispatch(ParticipantAction::Consent(
                crate::components::input::target_checked(&e),
            ))
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
            if let Some(d) = texts.description { <p>{ d }</p> }
            <h2>{ t!(lang, "consent-heading") }</h2>
            <p class="consent-text">{ texts.consent }</p>
            <label class="check">
                <input type="checkbox" id="consent" checked={state.consent} onchange={on_check} />
                { t!(lang, "consent-agree") }
            </label>
            <button type="submit" class="primary" disabled={!state.consent}>{ t!(lang, "consent-start") }</button>
        </form>
    }
}

/// What the participant picks or types for one question, in its language's words; the values
/// (`yes`/`no`, points, option indices) are the same in every language.
struct InputView<'a> {
    kind: &'a QuestionKind,
    texts: &'a QuestionTexts<'a>,
    index: usize,
    value: &'a str,
    error_id: &'a str,
    has_error: bool,
    on_input: Callback<String>,
}

fn question_input(v: InputView<'_>, lang: AppLanguage) -> Html {
    let InputView {
        kind,
        texts,
        index,
        value,
        error_id,
        has_error,
        on_input,
    } = v;
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
    match kind {
        QuestionKind::YesNo => radio(
            name,
            vec![
                ("yes".into(), t!(lang, "answer-yes")),
                ("no".into(), t!(lang, "answer-no")),
            ],
        ),
        QuestionKind::Likert { points, .. } => {
            let (low, high) = (
                texts.low_label.unwrap_or(""),
                texts.high_label.unwrap_or(""),
            );
            radio(
                name,
                (1..=*points)
                    .map(|k| {
                        let label = if k == 1 {
                            format!("{k} ({low})")
                        } else if k == *points {
                            format!("{k} ({high})")
                        } else {
                            k.to_string()
                        };
                        (k.to_string(), label)
                    })
                    .collect(),
            )
        }
        QuestionKind::Categorical { .. } => radio(
            name,
            texts
                .options
                .iter()
                .enumerate()
                .map(|(k, o)| (k.to_string(), (*o).to_owned()))
                .collect(),
        ),
        QuestionKind::Integer { min, max } => numeric(
            index,
            value,
            error_id,
            has_error,
            on_input,
            (&min.to_string(), &max.to_string(), "1", "numeric"),
        ),
        QuestionKind::Number { min, max } => numeric(
            index,
            value,
            error_id,
            has_error,
            on_input,
            (&min.to_string(), &max.to_string(), "any", "decimal"),
        ),
    }
}

/// A number field: `(min, max, step, inputmode)` from the question's declared range.
fn numeric(
    index: usize,
    value: &str,
    error_id: &str,
    has_error: bool,
    on_input: Callback<String>,
    (min, max, step, mode): (&str, &str, &str, &str),
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
    texts: &SurveyTexts<'_>,
    i: usize,
    state: &UseReducerHandle<ParticipantState>,
    lang: AppLanguage,
) -> Html {
    let q = &survey.questions[i];
    let q_texts = &texts.questions[i];
    let value = state.inputs.get(i).cloned().unwrap_or_default();
    let error = state
        .errors
        .get(i)
        .cloned()
        .flatten()
        .map(|e| answer_error(lang, &e));
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
    // The last question the answers so far can show: after it comes the review.
    let last = !survey
        .shown_from_inputs(&state.inputs)
        .iter()
        .skip(i + 1)
        .any(|shown| *shown);
    let input = InputView {
        kind: &q.kind,
        texts: q_texts,
        index: i,
        value: &value,
        error_id: &error_id,
        has_error: error.is_some(),
        on_input,
    };
    html! {
        <form class="question" onsubmit={on_submit} novalidate=true>
            <fieldset>
                <legend id={format!("q{i}-label")}>
                    <span class="counter">{ t!(lang, "question-counter", number = i + 1, total = survey.questions.len()) }</span>
                    <span class="label">{ q_texts.label }</span>
                    if q.optional { <span class="badge">{ t!(lang, "question-optional") }</span> }
                </legend>
                if let Some(help) = q_texts.help { <p class="help">{ help }</p> }
                { question_input(input, lang) }
                <p id={error_id} class="error" role={error.is_some().then_some("alert")}>{ error.unwrap_or_default() }</p>
            </fieldset>
            <div class="buttons">
                <button type="button" onclick={on_back}>{ t!(lang, "button-back") }</button>
                if q.optional { <button type="button" onclick={on_skip}>{ t!(lang, "button-skip") }</button> }
                <button type="submit" class="primary">{ if last { t!(lang, "button-review") } else { t!(lang, "button-next") } }</button>
            </div>
        </form>
    }
}

fn review(
    survey: &SurveyDefinition,
    state: &UseReducerHandle<ParticipantState>,
    lang: AppLanguage,
) -> Html {
    if let Some(e) = &state.prepare_error {
        return html! { <p class="error" role="alert">{ t!(lang, "review-mask-failed", reason = e) }</p> };
    }
    let Some(prepared) = state.prepared.clone() else {
        return html! { <p role="status">{ t!(lang, "review-masking") }</p> };
    };
    // Only a collector's survey sends, and every upload carries its credential.
    let sendable = !prepared
        .destinations
        .iter()
        .any(|dest| dest.upload.credential.is_none());
    let on_send = {
        let d = state.dispatcher();
        let prepared = prepared.clone();
        Callback::from(move |_| {
            if sendable {
                submit(d.clone(), prepared.clone(), lang);
            }
        })
    };
    let on_discard = {
        let d = state.dispatcher();
        let token = prepared
            .destinations
            .first()
            .map(|dest| dest.upload.token.clone());
        Callback::from(move |_| {
            let (d, token) = (d.clone(), token.clone());
            wasm_bindgen_futures::spawn_local(async move {
                if let Some(token) = token
                    && outbox::remove(&token).await.is_ok()
                {
                    d.dispatch(ParticipantAction::Discarded);
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
                " {}",
                t!(
                    lang,
                    "leaves-one-service",
                    snr = sig(v.signal_to_noise, 2),
                    epsilon = sig(v.epsilon, 2),
                    delta = sig(v.delta, 1)
                )
            )
        });
        format!(
            "{}{view} {}",
            t!(
                lang,
                "leaves-shares",
                answers = survey.questions.len(),
                p2 = prepared.p2,
                parts = prepared.destinations.len(),
                ratio = format!("{:.0}", prepared.share_noise_ratio.unwrap_or(f64::NAN))
            ),
            t!(lang, "leaves-shares-nobody")
        )
    } else {
        t!(lang, "leaves-basic", p2 = prepared.p2, count = p)
    };
    let sending = matches!(state.phase, Phase::Sending(_));
    let waiting = state.phase == Phase::Waiting;
    // A demonstration has no credential and a published key: it never sends.
    let practice = !matches!(state.access, Some(Access::Collector(..)));
    html! {
        <div class="review">
            <section class="leaves-device" aria-labelledby="leaves-title">
                <h2 id="leaves-title">{ t!(lang, "leaves-heading") }</h2>
                <p>{ why }</p>
                if practice {
                    <p class="badge teaching">{ t!(lang, "leaves-practice-key") }</p>
                }
                { for prepared.destinations.iter().enumerate().map(|(k, dest)| html! {
                    <details open={k == 0}>
                        <summary>{ if practice {
                            t!(lang, "leaves-destination-practice", count = dest.upload.values.len(), url = dest.url)
                        } else {
                            t!(lang, "leaves-destination", count = dest.upload.values.len(), url = dest.url)
                        } }</summary>
                        <p class="masked-vector" data-testid="masked-vector">
                            { dest.upload.values.iter().map(|v| sig(*v, 6)).collect::<Vec<_>>().join(", ") }
                        </p>
                    </details>
                }) }
                <p class="small">{ t!(lang, "leaves-token", survey = format!("{:?}", first.survey), cohort = first.cohort, token = first.token) }</p>
            </section>
            if let Phase::Failed(e) = &state.phase {
                <p class="error" role="alert">{ e }</p>
            }
            if waiting {
                <section class="waiting" aria-labelledby="form-waiting-title" data-testid="form-waiting">
                    <h2 id="form-waiting-title">{ t!(lang, "waiting-heading") }</h2>
                    <p role="status">{ t!(lang, "waiting-explain") }</p>
                    <div class="buttons">
                        <button type="button" class="primary" onclick={on_send.clone()}>{ t!(lang, "waiting-send-now") }</button>
                        <button type="button" onclick={on_discard}>{ t!(lang, "waiting-discard") }</button>
                    </div>
                </section>
            }
            if practice {
                <p class="practice" role="status" data-testid="practice">{ t!(lang, "practice-note") }</p>
            }
            if !waiting {
                <div class="buttons">
                    <button type="button" onclick={on_back} disabled={sending}>{ t!(lang, "button-change") }</button>
                    if !practice {
                        <button type="button" class="primary" onclick={on_send} disabled={sending}>
                            { match state.phase {
                                Phase::Sending(n) => t!(lang, "button-sending", attempt = n),
                                Phase::Failed(_) => t!(lang, "button-try-again"),
                                _ => t!(lang, "button-send"),
                            } }
                        </button>
                    }
                </div>
            }
        </div>
    }
}

fn receipt(
    survey: &SurveyDefinition,
    state: &UseReducerHandle<ParticipantState>,
    lang: AppLanguage,
) -> Html {
    html! {
        <div class="receipt">
            <h2>{ t!(lang, "receipt-heading") }</h2>
            if let Some(why) = state.sent_again {
                <p data-testid="answered-again">{ match why {
                    AgainReason::Spoilt => t!(lang, "again-note"),
                    AgainReason::Regrouped => t!(lang, "again-note-regrouped"),
                } }</p>
            }
            <Receipts survey={survey.id.clone()} receipts={state.receipts.clone()} language={lang} />
            // A live demonstration (a collector's survey labelled as one) can be filled at once.
            if let (Some(Access::Collector(..)), true, Some((_, r))) = (&state.access, survey.masking.teaching, state.receipts.first()) {
                <SimulatedParticipants survey={survey.id.clone()} cohort={r.cohort} language={lang} />
            }
        </div>
    }
}
