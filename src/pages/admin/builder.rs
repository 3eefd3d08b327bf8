//! Create a survey: the question builder, the JSON editor of the same draft (two-way, validated
//! as you type), the participant's form as it will look, and the design the collector will
//! choose — `plan_survey` run here with the deployment's endpoints, refusing unsafe designs with
//! the API's one-line reason before anything is sent. A question after the first may be shown
//! only when an earlier answer meets a condition ("Show only when …", `show_if`); model terms the
//! devices compute (`x²`, `x·z`, logs) have their own control ([`super::terms_editor`]); texts in other
//! languages are written in the JSON editor (`translations`), which the builder keeps. An open
//! survey without device-side differential privacy gets a note recommending it, with the option
//! one click away (issue 20 §9, `model::admin::preview::recommends_dp`). "Import XLSForm" reads
//! a team's ODK/KoboToolbox questionnaire in the browser, has the collector read it
//! (`POST /api/admin/xlsform`) and puts its draft in the JSON editor,
//! which the builder follows; a row the import refuses is shown as its one line (issue 29 §1,
//! `model::admin::xlsform`).

use std::rc::Rc;

use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::form_controls::select;
use super::preview::FormPreview;
use super::terms_editor::TermsEditor;
use crate::components::input::{target_checked, target_value};
use crate::model::admin::builder::{ConditionKind, DraftForm, Kind, QuestionForm};
use crate::model::admin::preview::{PlanPreview, preview, recommends_dp};
use crate::model::admin::state::{BuilderAction, BuilderState};
use crate::model::format::sig;
use crate::services::admin as api;
use crate::services::files;
use orthomask_survey::definition::Term;
use orthomask_survey::trust::Deployment;

/// Props of [`Builder`].
#[derive(Properties, PartialEq)]
pub struct BuilderProps {
    /// The admin token.
    pub token: AttrValue,
    /// Announces status changes.
    pub announce: Callback<String>,
    /// Told the id of the survey once created.
    pub on_created: Callback<String>,
}

type Dispatch = UseReducerDispatcher<BuilderState>;

fn edit(d: &Dispatch, f: impl Fn(&mut DraftForm, String) + 'static) -> Callback<String> {
    let (d, f) = (d.clone(), Rc::new(f));
    Callback::from(move |value: String| {
        let f = f.clone();
        d.dispatch(BuilderAction::Edit(Rc::new(move |form| {
            f(form, value.clone())
        })));
    })
}

fn edit_check(d: &Dispatch, f: impl Fn(&mut DraftForm, bool) + 'static) -> Callback<Event> {
    let (d, f) = (d.clone(), Rc::new(f));
    Callback::from(move |e: Event| {
        let (f, on) = (f.clone(), target_checked(&e));
        d.dispatch(BuilderAction::Edit(Rc::new(move |form| f(form, on))));
    })
}

fn text_value(e: InputEvent) -> String {
    let e: Event = e.into();
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlTextAreaElement>().ok())
        .map_or_else(|| target_value(&e), |t| t.value())
}

fn field(id: &str, label: &str, value: &str, on: Callback<String>, kind: &str) -> Html {
    let oninput = Callback::from(move |e: InputEvent| on.emit(text_value(e)));
    html! {
        <label for={id.to_owned()} class="field">
            <span>{ label }</span>
            if kind == "textarea" {
                <textarea id={id.to_owned()} value={value.to_owned()} oninput={oninput} rows="2" />
            } else {
                <input id={id.to_owned()} type={kind.to_owned()} value={value.to_owned()} oninput={oninput} />
            }
        </label>
    }
}

fn check(id: &str, label: &str, checked: bool, on: Callback<Event>) -> Html {
    html! {
        <label for={id.to_owned()} class="check">
            <input id={id.to_owned()} type="checkbox" checked={checked} onchange={on} />
            { label }
        </label>
    }
}

/// "Show only when …": the earlier question, the condition its kind allows, the value(s).
fn condition_editor(d: &Dispatch, form: &DraftForm, i: usize) -> Html {
    let Some(q) = form.questions.get(i) else {
        return html! {};
    };
    let s = &q.show_if;
    let earlier = form.earlier_questions(i);
    // The first question has nothing to depend on, unless the editor gave it a condition.
    if earlier.is_empty() && !s.enabled {
        return html! {};
    }
    let at = |f: &str| format!("b-q{i}-if-{f}");
    let set = |f: fn(&mut crate::model::admin::builder::ShowIfForm, String)| {
        edit(d, move |form, v| {
            if let Some(q) = form.questions.get_mut(i) {
                f(&mut q.show_if, v);
            }
        })
    };
    let on_enabled = edit_check(d, move |form, on| form.set_conditional(i, on));
    let toggle = check(
        &at("on"),
        "Show only when an earlier answer is …",
        s.enabled,
        on_enabled,
    );
    if !s.enabled {
        return html! { <div class="condition-editor">{ toggle }</div> };
    }
    let subject = form.condition_subject(i);
    let kind = subject.map(|q| q.kind);
    let mut subjects: Vec<(String, String, bool)> = earlier
        .iter()
        .map(|e| {
            let id = e.id.trim().to_owned();
            let text = if e.label.trim().is_empty() {
                id.clone()
            } else {
                format!("{id}: {}", e.label.trim())
            };
            let selected = id == s.question.trim();
            (id, text, selected)
        })
        .collect();
    if subject.is_none() {
        // Never hidden: a condition on a question that is not earlier stays visible (and the
        // draft's validation says what is wrong with it).
        subjects.insert(
            0,
            (
                s.question.clone(),
                format!("{} (not an earlier question)", s.question),
                true,
            ),
        );
    }
    let on_subject = edit(d, move |form, v| form.set_condition_subject(i, &v));
    let allowed: Vec<ConditionKind> = kind.map_or_else(
        || ConditionKind::ALL.iter().map(|(k, ..)| *k).collect(),
        |k| ConditionKind::allowed(k).to_vec(),
    );
    let conditions: Vec<(String, String, bool)> = ConditionKind::ALL
        .iter()
        .filter(|(k, ..)| allowed.contains(k) || *k == s.condition)
        .map(|(k, key, label)| ((*key).to_owned(), (*label).to_owned(), *k == s.condition))
        .collect();
    let options: Vec<String> = match (kind, subject) {
        (Some(Kind::YesNo), _) => vec!["yes".into(), "no".into()],
        (Some(Kind::Categorical), Some(q)) => {
            q.option_list().into_iter().map(str::to_owned).collect()
        }
        _ => Vec::new(),
    };
    let choices = matches!(kind, Some(Kind::YesNo | Kind::Categorical));
    let value = match s.condition {
        ConditionKind::Equals if choices => {
            let mut list: Vec<(String, String, bool)> = options
                .iter()
                .map(|o| (o.clone(), o.clone(), *o == s.value))
                .collect();
            if !options.contains(&s.value) {
                list.insert(
                    0,
                    (
                        s.value.clone(),
                        format!("{} (not an answer)", s.value),
                        true,
                    ),
                );
            }
            select(&at("value"), "Answer", list, set(|s, v| s.value = v))
        }
        ConditionKind::Equals => field(
            &at("value"),
            "Answer",
            &s.value,
            set(|s, v| s.value = v),
            "text",
        ),
        ConditionKind::OneOf if choices => html! {
            <fieldset class="condition-values">
                <legend>{ "Answers" }</legend>
                { for options.iter().enumerate().map(|(k, o)| {
                    let option = o.clone();
                    let on = edit_check(d, move |form, on| {
                        if let Some(q) = form.questions.get_mut(i) {
                            q.show_if.toggle(&option, on);
                        }
                    });
                    check(&at(&format!("value-{k}")), o, s.has(o), on)
                }) }
            </fieldset>
        },
        ConditionKind::OneOf => field(
            &at("values"),
            "Answers, separated by commas",
            &s.values,
            set(|s, v| s.values = v),
            "text",
        ),
        ConditionKind::Range => html! {
            <>
                { field(&at("min"), "From", &s.min, set(|s, v| s.min = v), "text") }
                { field(&at("max"), "To", &s.max, set(|s, v| s.max = v), "text") }
            </>
        },
    };
    html! {
        <div class="condition-editor" data-testid={format!("condition-{i}")}>
            { toggle }
            <div class="fields">
                { select(&at("question"), "Earlier question", subjects, on_subject) }
                { select(&at("condition"), "Condition", conditions, set(|s, v| s.condition = ConditionKind::from_key(&v).unwrap_or_default())) }
                { value }
            </div>
        </div>
    }
}

fn question_editor(
    d: &Dispatch,
    form: &DraftForm,
    i: usize,
    q: &QuestionForm,
    count: usize,
) -> Html {
    let at = |f: &str| format!("b-q{i}-{f}");
    let set = |f: fn(&mut QuestionForm, String)| {
        edit(d, move |form, v| {
            if let Some(q) = form.questions.get_mut(i) {
                f(q, v);
            }
        })
    };
    let on_kind = {
        let on = set(|q, v| q.kind = Kind::from_tag(&v).unwrap_or_default());
        Callback::from(move |e: Event| on.emit(target_value(&e)))
    };
    let on_optional = edit_check(d, move |form, on| {
        if let Some(q) = form.questions.get_mut(i) {
            q.optional = on;
        }
    });
    let action = |f: fn(&mut Vec<QuestionForm>, usize)| {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| {
            d.dispatch(BuilderAction::Edit(Rc::new(move |form| {
                f(&mut form.questions, i)
            })))
        })
    };
    let specific = match q.kind {
        Kind::YesNo => html! {},
        Kind::Integer | Kind::Number => html! {
            <>
                { field(&at("min"), "Smallest answer", &q.min, set(|q, v| q.min = v), "text") }
                { field(&at("max"), "Largest answer", &q.max, set(|q, v| q.max = v), "text") }
            </>
        },
        Kind::Likert => html! {
            <>
                { field(&at("points"), "Points (2 to 11)", &q.points, set(|q, v| q.points = v), "text") }
                { field(&at("low"), "Label of point 1", &q.low_label, set(|q, v| q.low_label = v), "text") }
                { field(&at("high"), "Label of the last point", &q.high_label, set(|q, v| q.high_label = v), "text") }
            </>
        },
        Kind::Categorical => field(
            &at("options"),
            "Options, one per line (the first is the reference)",
            &q.options,
            set(|q, v| q.options = v),
            "textarea",
        ),
    };
    html! {
        <fieldset class="question-editor" data-testid={format!("question-{i}")}>
            <legend>{ format!("Question {}", i + 1) }</legend>
            <div class="fields">
                <label for={at("kind")} class="field">
                    <span>{ "Kind" }</span>
                    <select id={at("kind")} onchange={on_kind}>
                        { for Kind::ALL.iter().map(|(k, tag, label)| html! {
                            <option value={*tag} selected={*k == q.kind}>{ *label }</option>
                        }) }
                    </select>
                </label>
                { field(&at("id"), "Column name", &q.id, set(|q, v| q.id = v), "text") }
                { field(&at("label"), "Question", &q.label, set(|q, v| q.label = v), "text") }
                { field(&at("help"), "Help text (optional)", &q.help, set(|q, v| q.help = v), "text") }
                { specific }
            </div>
            { check(&at("optional"), "Participants may skip it", q.optional, on_optional) }
            { condition_editor(d, form, i) }
            <div class="buttons">
                <button type="button" onclick={action(|qs, i| qs.swap(i - 1, i))} disabled={i == 0}>{ "Move up" }</button>
                <button type="button" onclick={action(|qs, i| qs.swap(i, i + 1))} disabled={i + 1 == count}>{ "Move down" }</button>
                <button type="button" onclick={action(|qs, i| { qs.remove(i); })} disabled={count == 1}>{ format!("Remove question {}", i + 1) }</button>
            </div>
        </fieldset>
    }
}

fn plan_view(plan: &PlanPreview) -> Html {
    html! {
        <dl class="plan" data-testid="plan">
            <dt>{ "Data columns p₁" }</dt><dd data-testid="plan-p1">{ plan.p1 }</dd>
            <dt>{ "Noise columns p₂" }</dt><dd data-testid="plan-p2">{ plan.p2 }</dd>
            <dt>{ "Noise σ" }</dt><dd data-testid="plan-sigma">{ sig(plan.sigma, 6) }</dd>
            if let Some(s) = plan.dp_sigma { <dt>{ "DP noise σ" }</dt><dd data-testid="plan-dp-sigma">{ sig(s, 6) }</dd> }
            <dt>{ "Cohort size" }</dt><dd data-testid="plan-cohort-size">{ plan.cohort_size }</dd>
            <dt>{ "Minimum cohort released" }</dt><dd data-testid="plan-min-cohort">{ plan.min_cohort_size }</dd>
            <dt>{ "Appendix C failure probability" }</dt>
            <dd data-testid="plan-failure">{ plan.failure_probability.map_or_else(|| "does not apply".to_owned(), |f| sig(f, 3)) }</dd>
            <dt>{ "Method" }</dt>
            <dd>{ if plan.share_services == 0 { "basic protocol (one masking service provider)".to_owned() } else { format!("share mode over {} right-masking services", plan.share_services) } }</dd>
            <dt>{ "Released columns" }</dt><dd>{ plan.columns.join(", ") }</dd>
            if let Some(d) = plan.expected_digits_lost {
                <dt>{ "Expected digits lost to masking" }</dt>
                <dd data-testid="plan-digits">{ format!("{d:.1} (rms estimate under a rounding model, not a bound)") }</dd>
            }
            if let Some(note) = &plan.accuracy_note {
                <dt>{ "Accuracy" }</dt><dd class="note" role="note" data-testid="plan-accuracy-note">{ note.clone() }</dd>
            }
        </dl>
    }
}

/// What the last XLSForm import gave: the file's name and what it left out, or the refusal.
type XlsformStatus = Option<Result<(String, Vec<String>), String>>;

/// "Import XLSForm": a file input whose workbook fills the editor (and so the builder).
fn xlsform_import(d: &Dispatch, status: &UseStateHandle<XlsformStatus>, token: &str) -> Html {
    let on_change = {
        let (d, status, token) = (d.clone(), status.clone(), token.to_owned());
        Callback::from(move |e: Event| {
            let input = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
            let Some(file) = input.and_then(|i| i.files()).and_then(|f| f.get(0)) else {
                return;
            };
            let (d, status, token) = (d.clone(), status.clone(), token.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let result = async {
                    let (name, bytes) = files::read_bytes(file).await?;
                    let upload = crate::model::admin::xlsform::upload(&bytes, &name);
                    let answer = api::import_xlsform(&token, &upload).await?;
                    crate::model::admin::xlsform::imported(&answer).map(|i| (name, i))
                }
                .await;
                match result {
                    Ok((name, imported)) => {
                        d.dispatch(BuilderAction::Text(imported.text));
                        status.set(Some(Ok((name, imported.ignored))));
                    }
                    Err(e) => status.set(Some(Err(e))),
                }
            });
        })
    };
    html! {
        <fieldset class="xlsform-import">
            <legend>{ "Import XLSForm" }</legend>
            <label for="b-xlsform" class="field">
                <span>{ "An ODK, KoboToolbox or SurveyCTO form (.xlsx): it fills the draft below" }</span>
                <input id="b-xlsform" type="file" data-testid="xlsform-file"
                    accept=".xlsx,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" onchange={on_change} />
            </label>
            { match &**status {
                None => html! {},
                Some(Ok((name, ignored))) => html! {
                    <div role="status" data-testid="xlsform-imported">
                        <p>{ format!("Imported {name}.") }</p>
                        if !ignored.is_empty() {
                            <p>{ "Left out on purpose:" }</p>
                            <ul>{ for ignored.iter().map(|line| html! { <li>{ line.clone() }</li> }) }</ul>
                        }
                    </div>
                },
                Some(Err(e)) => html! { <p class="error" role="alert" data-testid="xlsform-error">{ e.clone() }</p> },
            } }
        </fieldset>
    }
}

/// The survey builder.
#[function_component(Builder)]
pub fn builder(props: &BuilderProps) -> Html {
    let state = use_reducer(BuilderState::default);
    let deployment = use_state(|| None::<Result<Deployment, String>>);
    let created = use_state(|| None::<Result<(String, String), String>>);
    let creating = use_state(|| false);
    let xlsform = use_state(|| None);
    {
        let deployment = deployment.setter();
        use_effect_with((), move |()| {
            wasm_bindgen_futures::spawn_local(async move {
                deployment.set(Some(api::deployment().await))
            });
        });
    }
    let d = state.dispatcher();
    let form = &state.form;
    let draft = form.draft();
    let plan: Option<Result<PlanPreview, String>> = match (&draft, &*deployment) {
        (Err(e), _) => Some(Err(e.clone())),
        (_, Some(Err(e))) => Some(Err(format!("the deployment could not be read: {e}"))),
        (Ok((_, draft)), Some(Ok(endpoints))) => Some(preview(draft, endpoints)),
        (_, None) => None,
    };
    let ready = state.text_error.is_none() && matches!(plan, Some(Ok(_))) && !*creating;

    let on_text = {
        let d = d.clone();
        Callback::from(move |e: InputEvent| d.dispatch(BuilderAction::Text(text_value(e))))
    };
    let on_add = {
        let d = d.clone();
        Callback::from(move |_: MouseEvent| {
            d.dispatch(BuilderAction::Edit(Rc::new(|f| {
                let n = f.questions.len() + 1;
                f.questions.push(QuestionForm::new(Kind::YesNo, n));
            })))
        })
    };
    let on_create = {
        let (token, announce, created, creating) = (
            props.token.to_string(),
            props.announce.clone(),
            created.setter(),
            creating.setter(),
        );
        let draft = draft.clone();
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let Ok((json, d)) = draft.clone() else { return };
            let (token, announce, created, creating) = (
                token.clone(),
                announce.clone(),
                created.clone(),
                creating.clone(),
            );
            creating.set(true);
            announce.emit(format!("Creating survey {}…", d.id));
            wasm_bindgen_futures::spawn_local(async move {
                let answer = api::create(&token, &json).await;
                creating.set(false);
                match &answer {
                    Ok(_) => announce.emit(format!("Survey {} created.", d.id)),
                    Err(e) => announce.emit(format!("The survey was not created: {e}")),
                }
                created.set(Some(answer.map(|a| (d.id.clone(), a))));
            });
        })
    };

    let survey_fields = html! {
        <fieldset>
            <legend>{ "Survey" }</legend>
            <div class="fields">
                { field("b-id", "Survey id (a-z, 0-9, - and _)", &form.id, edit(&d, |f, v| f.id = v), "text") }
                { field("b-title", "Title", &form.title, edit(&d, |f, v| f.title = v), "text") }
                { field("b-description", "Introduction (optional)", &form.description, edit(&d, |f, v| f.description = v), "textarea") }
                { field("b-consent", "Consent text", &form.consent, edit(&d, |f, v| f.consent = v), "textarea") }
            </div>
        </fieldset>
    };
    let design_fields = html! {
        <fieldset>
            <legend>{ "Design" }</legend>
            <div class="fields">
                { field("b-cohort-size", "Participants per cohort (empty: the plan's choice)", &form.cohort_size, edit(&d, |f, v| f.cohort_size = v), "text") }
                { field("b-min-cohort", "Fewest records released (empty: the collector's default)", &form.min_cohort_size, edit(&d, |f, v| f.min_cohort_size = v), "text") }
            </div>
            { check("b-invitations", "Invitations: each participant needs a one-use link", form.invitations, edit_check(&d, |f, on| f.invitations = on)) }
            { check("b-share-mode", "Share mode: split each record over the right-masking services", form.share_mode, edit_check(&d, |f, on| f.share_mode = on)) }
            { check("b-dp", "Device-side differential privacy", form.dp, edit_check(&d, |f, on| f.dp = on)) }
            if form.dp {
                <div class="fields">
                    { field("b-epsilon", "ε", &form.epsilon, edit(&d, |f, v| f.epsilon = v), "text") }
                    { field("b-delta", "δ", &form.delta, edit(&d, |f, v| f.delta = v), "text") }
                </div>
            }
        </fieldset>
    };
    let count = form.questions.len();
    let preview_draft = draft.as_ref().ok().map(|(_, d)| Rc::new(d.clone()));
    let dp_note = draft.as_ref().is_ok_and(|(_, d)| recommends_dp(d)).then(|| {
        let d = d.clone();
        let on_dp = Callback::from(move |_: MouseEvent| {
            d.dispatch(BuilderAction::Edit(Rc::new(|f: &mut DraftForm| f.dp = true)))
        });
        html! {
            <div class="note" role="note" data-testid="open-survey-dp-note">
                <p>{ "Anyone can take places in an open survey. Whoever fills all but one place of a cohort can work out the last participant's answers from the cohort's totals, which the release keeps exactly. Turn on device-side differential privacy (ε, δ) so that no single answer can be read off the totals." }</p>
                <button type="button" onclick={on_dp} data-testid="turn-on-dp">{ "Turn on differential privacy" }</button>
            </div>
        }
    });
    html! {
        <form class="builder" onsubmit={on_create} novalidate=true>
            <h2>{ "Create a survey" }</h2>
            <div class="side-by-side">
                <div class="builder-fields">
                    { xlsform_import(&d, &xlsform, &props.token) }
                    { survey_fields }
                    <h3>{ "Questions" }</h3>
                    { for form.questions.iter().enumerate().map(|(i, q)| question_editor(&d, form, i, q, count)) }
                    <button type="button" onclick={on_add} data-testid="add-question">{ "Add a question" }</button>
                    <TermsEditor terms={form.terms.clone()} inputs={Rc::new(form.term_inputs())} on_change={{
                        let d = d.clone();
                        Callback::from(move |terms: Vec<Term>| {
                            d.dispatch(BuilderAction::Edit(Rc::new(move |f: &mut DraftForm| f.terms = terms.clone())))
                        })
                    }} />
                    { design_fields }
                </div>
                <div class="builder-side">
                    <label for="b-json" class="field">
                        <span>{ "The draft as JSON (edit either side)" }</span>
                        <textarea id="b-json" class="json-editor" spellcheck="false" rows="18" value={state.text.clone()} oninput={on_text}
                            aria-invalid={state.text_error.is_some().to_string()} aria-describedby="b-json-error" data-testid="json-editor" />
                    </label>
                    <p id="b-json-error" class="error" role={state.text_error.is_some().then_some("alert")} data-testid="json-error">{ state.text_error.clone().unwrap_or_default() }</p>
                    <section aria-labelledby="plan-title">
                        <h3 id="plan-title">{ "The design the collector will choose" }</h3>
                        { dp_note.unwrap_or_default() }
                        { match &plan {
                            None => html! { <p role="status">{ "Reading the deployment…" }</p> },
                            Some(Ok(p)) => plan_view(p),
                            Some(Err(e)) => html! { <p class="error" role="alert" data-testid="plan-error">{ format!("Cannot create this survey: {e}") }</p> },
                        } }
                    </section>
                    <button type="submit" class="primary" disabled={!ready} data-testid="create">{ if *creating { "Creating…" } else { "Create the survey" } }</button>
                    if let Some(Err(e)) = &*created {
                        <p class="error" role="alert" data-testid="create-error">{ format!("The survey was not created: {e}") }</p>
                    }
                    if let Some(Ok((id, answer))) = &*created {
                        <p role="status">{ format!("Survey {id} created. The collector answered:") }</p>
                        <pre data-testid="create-answer">{ answer }</pre>
                        <button type="button" class="primary" data-testid="open-created" onclick={{
                            let (cb, id) = (props.on_created.clone(), id.clone());
                            Callback::from(move |_| cb.emit(id.clone()))
                        }}>{ format!("Open survey {id}") }</button>
                    }
                </div>
            </div>
            <section aria-labelledby="preview-title">
                <h3 id="preview-title">{ "What participants will see" }</h3>
                if let Some(d) = preview_draft { <FormPreview draft={d} /> }
            </section>
        </form>
    }
}
