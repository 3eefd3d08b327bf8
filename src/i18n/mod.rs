//! The app's own texts in the participant's language (issue 13 §2): one [Project Fluent]
//! catalogue per language in `locales/`, read by `fluent-bundle`, and nothing spelt out in the
//! components. A survey's own texts (title, consent, questions) come from its definition
//! (`SurveyDefinition::texts`); these are the buttons, errors, announcements, the "what leaves
//! your device" panel, the receipt and the offline outbox around them.
//!
//! Every catalogue has the same message ids and variables as English, and every id the code asks
//! for exists ([`tests`], which reads the sources). A message missing at run time would show its
//! English text, then its id — never nothing.
//!
//! [Project Fluent]: https://projectfluent.org/

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use fluent_bundle::{FluentArgs, FluentBundle, FluentResource};

mod answer_errors;
pub use answer_errors::answer_error;

mod refusals;
pub use refusals::floor_reason;

#[cfg(test)]
mod tests;

/// A language the app's texts exist in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AppLanguage {
    /// English (`locales/en.ftl`), the fallback.
    English,
    /// Spanish (`locales/es.ftl`).
    Spanish,
}

/// Every catalogue: its language, BCP 47 tag and Fluent source.
pub const CATALOGUES: [(AppLanguage, &str, &str); 2] = [
    (
        AppLanguage::English,
        "en",
        include_str!("../../locales/en.ftl"),
    ),
    (
        AppLanguage::Spanish,
        "es",
        include_str!("../../locales/es.ftl"),
    ),
];

/// The primary language subtag of a BCP 47 tag, lower case (`"es-MX"` → `"es"`).
pub fn primary_subtag(tag: &str) -> String {
    tag.split(['-', '_'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

impl AppLanguage {
    /// Its BCP 47 tag.
    pub fn tag(self) -> &'static str {
        CATALOGUES
            .iter()
            .find(|(language, ..)| *language == self)
            .map_or("en", |(_, tag, _)| tag)
    }

    /// The catalogue for a language tag, by its primary subtag; `None` when there is none.
    pub fn for_tag(tag: &str) -> Option<Self> {
        let primary = primary_subtag(tag);
        CATALOGUES
            .iter()
            .find(|(_, t, _)| *t == primary)
            .map(|(language, ..)| *language)
    }

    /// The first of the browser's preferred languages (`navigator.languages`) with a catalogue,
    /// else English.
    pub fn preferred(preferences: &[String]) -> Self {
        preferences
            .iter()
            .find_map(|tag| Self::for_tag(tag))
            .unwrap_or(Self::English)
    }
}

/// A language's name in itself, for the language switcher: the catalogue's own where there is
/// one, a short table of endonyms for the languages surveys most often add, else the tag.
pub fn language_name(tag: &str) -> String {
    if let Some(language) = AppLanguage::for_tag(tag) {
        return tr(language, "language-name", &[]);
    }
    let name = match primary_subtag(tag).as_str() {
        "fr" => "Français",
        "de" => "Deutsch",
        "pt" => "Português",
        "it" => "Italiano",
        "nl" => "Nederlands",
        "pl" => "Polski",
        "ru" => "Русский",
        "uk" => "Українська",
        "zh" => "中文",
        "ja" => "日本語",
        "ko" => "한국어",
        "vi" => "Tiếng Việt",
        "tl" => "Tagalog",
        "ar" => "العربية",
        "hi" => "हिन्दी",
        "ht" => "Kreyòl ayisyen",
        "sw" => "Kiswahili",
        _ => return tag.to_owned(),
    };
    name.to_owned()
}

thread_local! {
    /// The parsed catalogues, built on first use (the page and the worker are single-threaded).
    static BUNDLES: RefCell<HashMap<AppLanguage, Rc<FluentBundle<FluentResource>>>> =
        RefCell::new(HashMap::new());
}

fn bundle(language: AppLanguage) -> Rc<FluentBundle<FluentResource>> {
    BUNDLES.with(|bundles| {
        bundles
            .borrow_mut()
            .entry(language)
            .or_insert_with(|| Rc::new(build_bundle(language)))
            .clone()
    })
}

fn build_bundle(language: AppLanguage) -> FluentBundle<FluentResource> {
    let (_, tag, source) = CATALOGUES
        .iter()
        .find(|(l, ..)| *l == language)
        .copied()
        .unwrap_or(CATALOGUES[0]);
    let langid = tag.parse().unwrap_or_default();
    let mut bundle = FluentBundle::new(vec![langid]);
    // No Unicode isolation marks around arguments: they would end up in copied receipts and in
    // what screen readers spell out. Arguments here are numbers, ids and URLs.
    bundle.set_use_isolating(false);
    // A catalogue that does not parse keeps the entries that do (the tests refuse any error).
    let resource = FluentResource::try_new(source.to_owned()).unwrap_or_else(|(r, _)| r);
    let _ = bundle.add_resource(resource);
    bundle
}

fn format(language: AppLanguage, id: &str, args: &FluentArgs<'_>) -> Option<String> {
    let bundle = bundle(language);
    let pattern = bundle.get_message(id)?.value()?;
    let mut errors = Vec::new();
    let text = bundle.format_pattern(pattern, Some(args), &mut errors);
    errors.is_empty().then(|| text.into_owned())
}

/// Message `id` in `language` with its arguments (each already formatted as text); English when
/// the catalogue lacks it, the id when English does too.
pub fn tr(language: AppLanguage, id: &str, args: &[(&str, String)]) -> String {
    let mut fluent_args = FluentArgs::new();
    for (name, value) in args {
        fluent_args.set(*name, value.clone());
    }
    format(language, id, &fluent_args)
        .or_else(|| format(AppLanguage::English, id, &fluent_args))
        .unwrap_or_else(|| id.to_owned())
}

/// `t!(language, "message-id")` or `t!(language, "message-id", name = value, …)`: the message in
/// the app's catalogue, each value formatted with `to_string()`. The message id must be a
/// literal, so the missing-key test finds every one.
#[macro_export]
macro_rules! t {
    ($language:expr, $id:literal) => {
        $crate::i18n::tr($language, $id, &[])
    };
    ($language:expr, $id:literal, $($name:ident = $value:expr),+ $(,)?) => {
        $crate::i18n::tr($language, $id, &[$((stringify!($name), ($value).to_string())),+])
    };
}
