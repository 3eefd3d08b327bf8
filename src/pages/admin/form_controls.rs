//! Form controls the team's builder and its model-term control share.

use yew::prelude::*;

use crate::components::input::target_value;

/// A labelled `<select>` of `(value, text, selected)` options, telling `on` the chosen value.
pub fn select(
    id: &str,
    label: &str,
    options: Vec<(String, String, bool)>,
    on: Callback<String>,
) -> Html {
    let onchange = Callback::from(move |e: Event| on.emit(target_value(&e)));
    html! {
        <label for={id.to_owned()} class="field">
            <span>{ label }</span>
            <select id={id.to_owned()} onchange={onchange}>
                { for options.into_iter().map(|(value, text, selected)| html! {
                    <option value={value} selected={selected}>{ text }</option>
                }) }
            </select>
        </label>
    }
}
