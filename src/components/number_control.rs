//! A labelled number field that commits on `change` (Enter or leaving the field).
//!
//! Yew re-applies a controlled input's `value` whenever the DOM differs from it, so a re-render
//! while someone types (a worker's progress message, say) would erase the typing. The field
//! therefore keeps its own draft from `input` events until the value is committed.

use yew::prelude::*;

use crate::components::input::target_value;

/// Props of [`NumberControl`].
#[derive(Properties, PartialEq)]
pub struct NumberControlProps {
    /// Element id.
    pub id: AttrValue,
    /// Label text.
    pub label: AttrValue,
    /// The committed value.
    pub value: AttrValue,
    /// `min` attribute.
    #[prop_or(AttrValue::from("0"))]
    pub min: AttrValue,
    /// `step` attribute.
    #[prop_or(AttrValue::from("any"))]
    pub step: AttrValue,
    /// Called with the text when it is committed.
    pub on_commit: Callback<String>,
}

/// A number field with a draft.
#[function_component(NumberControl)]
pub fn number_control(props: &NumberControlProps) -> Html {
    let draft = use_state_eq(|| None::<String>);
    let oninput = {
        let draft = draft.setter();
        Callback::from(move |e: InputEvent| draft.set(Some(target_value(&e.into()))))
    };
    let onchange = {
        let (draft, commit) = (draft.setter(), props.on_commit.clone());
        Callback::from(move |e: Event| {
            commit.emit(target_value(&e));
            draft.set(None);
        })
    };
    let shown = (*draft).clone().unwrap_or_else(|| props.value.to_string());
    html! {
        <label for={props.id.clone()}>{ props.label.clone() }
            <input id={props.id.clone()} type="number" min={props.min.clone()} step={props.step.clone()}
                value={shown} {oninput} {onchange} />
        </label>
    }
}
