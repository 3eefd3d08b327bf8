//! The participant's language switcher: a labelled `<select>` of the languages a survey offers,
//! each named in itself (and marked with its `lang`, so a screen reader pronounces it right).

use yew::prelude::*;

use crate::i18n::{AppLanguage, language_name};
use crate::t;

/// Properties of [`LanguageSwitcher`].
#[derive(Properties, Clone, PartialEq)]
pub struct LanguageSwitcherProps {
    /// BCP 47 tags offered, in order.
    pub languages: Vec<String>,
    /// The tag shown now.
    pub current: String,
    /// The language the label is written in.
    pub app_language: AppLanguage,
    /// Told the tag the participant picks.
    pub on_change: Callback<String>,
}

/// The switcher; nothing when there is only one language.
#[function_component(LanguageSwitcher)]
pub fn language_switcher(props: &LanguageSwitcherProps) -> Html {
    if props.languages.len() < 2 {
        return html! {};
    }
    let on_change = {
        let on_change = props.on_change.clone();
        Callback::from(move |e: Event| on_change.emit(crate::components::input::target_value(&e)))
    };
    html! {
        <div class="language-switcher">
            <label for="language">{ t!(props.app_language, "language-label") }</label>
            <select id="language" onchange={on_change} data-testid="language">
                { for props.languages.iter().map(|tag| html! {
                    <option value={tag.clone()} lang={tag.clone()} selected={*tag == props.current}>
                        { language_name(tag) }
                    </option>
                }) }
            </select>
        </div>
    }
}
