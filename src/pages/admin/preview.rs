//! The participant's form as it will look, every question on one page and read-only, with the
//! participant page's markup and classes (`form.question`, `.choices`, `.choice`, `.help`,
//! `.badge`) so the preview follows the page's style. It names the languages offered and says
//! under each conditional question when it is shown (`crate::model::admin::preview::notes`).

use std::rc::Rc;

use orthomask_survey::definition::{Question, QuestionKind};
use orthomask_survey::draft::SurveyDraft;
use yew::prelude::*;

use crate::model::admin::preview::notes;

/// Props of [`FormPreview`].
#[derive(Properties, PartialEq)]
pub struct FormPreviewProps {
    /// The draft to show.
    pub draft: Rc<SurveyDraft>,
}

fn choices(index: usize, options: Vec<String>) -> Html {
    html! {
        <div class="choices" role="radiogroup" aria-labelledby={format!("preview-q{index}-label")}>
            { for options.into_iter().enumerate().map(|(k, label)| {
                let id = format!("preview-q{index}-{k}");
                html! {
                    <label for={id.clone()} class="choice">
                        <input type="radio" id={id} name={format!("preview-q{index}")} disabled=true />
                        { label }
                    </label>
                }
            }) }
        </div>
    }
}

fn input(index: usize, q: &Question) -> Html {
    let numeric = |min: String, max: String, step: &str| {
        html! {
            <input type="number" min={min} max={max} step={step.to_owned()} disabled=true
                aria-labelledby={format!("preview-q{index}-label")} />
        }
    };
    match &q.kind {
        QuestionKind::YesNo => choices(index, vec!["Yes".into(), "No".into()]),
        QuestionKind::Likert {
            points,
            low_label,
            high_label,
        } => choices(
            index,
            (1..=*points)
                .map(|k| match k {
                    1 => format!("{k} ({low_label})"),
                    k if k == *points => format!("{k} ({high_label})"),
                    k => k.to_string(),
                })
                .collect(),
        ),
        QuestionKind::Categorical { options } => choices(index, options.clone()),
        QuestionKind::Integer { min, max } => numeric(min.to_string(), max.to_string(), "1"),
        QuestionKind::Number { min, max } => numeric(min.to_string(), max.to_string(), "any"),
    }
}

/// The read-only form.
#[function_component(FormPreview)]
pub fn form_preview(props: &FormPreviewProps) -> Html {
    let d = &props.draft;
    let n = d.questions.len();
    let notes = notes(d);
    let languages = match notes.languages.split_first() {
        Some((main, [])) => format!("Language: {main}"),
        Some((main, others)) => format!(
            "Languages offered: {main} (main), {} (participants choose; the browser's preference first)",
            others.join(", ")
        ),
        None => String::new(),
    };
    html! {
        <div class="participate form-preview" data-testid="form-preview" aria-label="Preview of the participant's form" role="region">
            <h3>{ &d.title }</h3>
            <p class="languages" data-testid="preview-languages">{ languages }</p>
            if let Some(text) = &d.description { <p>{ text }</p> }
            <h4>{ "Consent" }</h4>
            <p class="consent-text">{ &d.consent }</p>
            { for d.questions.iter().enumerate().map(|(i, q)| html! {
                <div class="question">
                    <fieldset disabled=true>
                        <legend id={format!("preview-q{i}-label")}>
                            <span class="counter">{ format!("Question {} of {n}", i + 1) }</span>
                            <span class="label">{ &q.label }</span>
                            if q.optional { <span class="badge">{ "optional" }</span> }
                            if q.show_if.is_some() { <span class="badge">{ "conditional" }</span> }
                        </legend>
                        if let Some(Some(when)) = notes.conditions.get(i) {
                            <p class="condition" data-testid="preview-condition">{ when }</p>
                        }
                        if let Some(help) = &q.help { <p class="help">{ help }</p> }
                        { input(i, q) }
                    </fieldset>
                </div>
            }) }
        </div>
    }
}
