//! The builder's model terms (issue 22 §1): the terms declared so far, each with its formula and
//! a "Remove" button, and a row of fields that adds one — a kind, the answer column(s) the
//! survey's rule offers for it, an exponent or a constant, a name. What the fields make is
//! [`crate::model::admin::terms_form`]; whether the survey can hold the term is the draft's
//! validation, shown by the builder as for any other field.

use std::rc::Rc;

use yew::prelude::*;

use crate::components::input::target_value;
use crate::model::admin::terms_form::{TermForm, TermFormKind};
use orthomask_survey::definition::Term;
use orthomask_survey::terms::TermInput;

/// Props of [`TermsEditor`].
#[derive(Properties, PartialEq)]
pub struct TermsEditorProps {
    /// The terms declared so far.
    pub terms: Vec<Term>,
    /// The answer columns the questions offer (empty while the questions do not make a draft).
    pub inputs: Rc<Vec<TermInput>>,
    /// Told the terms after an addition or a removal.
    pub on_change: Callback<Vec<Term>>,
}

/// The builder's `<select>`, with an empty first choice ("—": nothing chosen yet).
fn choice(
    id: &str,
    label: &str,
    options: &[(String, String)],
    selected: &str,
    on: Callback<String>,
) -> Html {
    let options = std::iter::once((String::new(), "—".to_owned()))
        .chain(options.iter().cloned())
        .map(|(value, text)| {
            let chosen = value == selected;
            (value, text, chosen)
        })
        .collect();
    super::form_controls::select(id, label, options, on)
}

fn text(id: &str, label: &str, value: &str, placeholder: String, on: Callback<String>) -> Html {
    let oninput = Callback::from(move |e: InputEvent| on.emit(target_value(&e.into())));
    html! {
        <label for={id.to_owned()} class="field">
            <span>{ label }</span>
            <input id={id.to_owned()} type="text" value={value.to_owned()} placeholder={placeholder} oninput={oninput} />
        </label>
    }
}

/// The model-terms fieldset of the builder.
#[function_component(TermsEditor)]
pub fn terms_editor(props: &TermsEditorProps) -> Html {
    let form = use_state(TermForm::default);
    let error = use_state(|| None::<String>);
    let set = |f: fn(&mut TermForm, String)| {
        let form = form.clone();
        Callback::from(move |value: String| {
            let mut next = (*form).clone();
            f(&mut next, value);
            form.set(next);
        })
    };
    let on_add = {
        let (form, error, terms, on_change) = (
            form.clone(),
            error.clone(),
            props.terms.clone(),
            props.on_change.clone(),
        );
        Callback::from(move |_: MouseEvent| match form.term() {
            Ok(term) => {
                let mut next = terms.clone();
                next.push(term);
                on_change.emit(next);
                error.set(None);
                form.set(TermForm::default());
            }
            Err(e) => error.set(Some(e.to_string())),
        })
    };
    let columns = |names: Vec<&str>| -> Vec<(String, String)> {
        names
            .into_iter()
            .map(|n| (n.to_owned(), n.to_owned()))
            .collect()
    };
    let first = columns(form.offered(&props.inputs));
    let every: Vec<(String, String)> =
        columns(props.inputs.iter().map(|i| i.name.as_str()).collect());
    let kinds: Vec<(String, String)> = TermFormKind::ALL
        .iter()
        .map(|k| (k.value().to_owned(), k.label().to_owned()))
        .collect();
    let on_kind = set(|f, v| f.kind = TermFormKind::from_value(&v).unwrap_or_default());
    html! {
        <fieldset class="terms" data-testid="terms-editor">
            <legend>{ "Model terms computed on the device" }</legend>
            <p class="small">{ "A masked release keeps only linear combinations of its columns: x², x·z or log x can be fitted only if the devices compute them. Each term is one more masked column (p₁ grows by one)." }</p>
            if !props.terms.is_empty() {
                <ul data-testid="terms-list">
                    { for props.terms.iter().enumerate().map(|(i, t)| {
                        let on_remove = {
                            let (terms, on_change) = (props.terms.clone(), props.on_change.clone());
                            Callback::from(move |_: MouseEvent| {
                                let mut next = terms.clone();
                                next.remove(i);
                                on_change.emit(next);
                            })
                        };
                        html! {
                            <li data-term={t.id.clone()}>
                                <code>{ format!("{} = {}", t.id, t.kind.formula()) }</code>
                                { " " }
                                <button type="button" onclick={on_remove} aria-label={format!("Remove the term {}", t.id)}>{ "Remove" }</button>
                            </li>
                        }
                    }) }
                </ul>
            }
            <div class="fields">
                { choice("t-kind", "Kind", &kinds, form.kind.value(), on_kind) }
                { choice("t-of", "Answer column", &first, &form.of, set(|f, v| f.of = v)) }
                if form.kind == TermFormKind::Product {
                    { choice("t-with", "Times", &every, &form.with, set(|f, v| f.with = v)) }
                }
                if form.kind == TermFormKind::Power {
                    { choice("t-exponent", "Exponent", &[("2".into(), "2".into()), ("3".into(), "3".into())], &form.exponent, set(|f, v| f.exponent = v)) }
                }
                if form.kind == TermFormKind::Centre {
                    { text("t-at", "Centre at", &form.at, String::new(), set(|f, v| f.at = v)) }
                }
                { text("t-id", "Column name (empty: suggested)", &form.id, form.suggested_id(), set(|f, v| f.id = v)) }
            </div>
            <button type="button" onclick={on_add} data-testid="add-term">{ "Add the term" }</button>
            if let Some(e) = &*error {
                <p class="error" role="alert" data-testid="term-error">{ e }</p>
            }
        </fieldset>
    }
}
