//! What `#/participate` shows when its link names no survey: the live demonstrations of the
//! collector that served the page, which really send (masked) answers, and the bundled practice
//! demonstrations, which send nothing. On a static host there is no collector to list anything:
//! the page says that sending needs the services.

use yew::prelude::*;

use crate::i18n::AppLanguage;
use crate::model::live_demonstrations::{LIVE_SURVEYS_PATH, live_surveys, participant_link};
use crate::model::participation::{DEMONSTRATIONS, demonstration_link};
use crate::services::http::get_text;
use crate::t;
use orthomask_survey::api::Demonstration;

/// What the collector's list said.
#[derive(Clone, Debug, PartialEq)]
enum Live {
    Loading,
    Listed(Vec<Demonstration>),
    /// No collector answered (a static host, or the services are down).
    Unavailable,
}

/// A bundled demonstration's title in the participant's language.
fn demonstration_title(lang: AppLanguage, name: &str) -> String {
    match name {
        "leaps-demo" => t!(lang, "practice-leaps-demo"),
        "wellbeing-optional" => t!(lang, "practice-wellbeing-optional"),
        "shares-demo" => t!(lang, "practice-shares-demo"),
        "habits-branching" => t!(lang, "practice-habits-branching"),
        other => other.to_owned(),
    }
}

/// Properties of [`SurveyChooser`].
#[derive(Properties, Clone, PartialEq)]
pub struct SurveyChooserProps {
    /// The participant's language (the browser's preference).
    pub language: AppLanguage,
}

/// The survey chooser.
#[function_component(SurveyChooser)]
pub fn survey_chooser(props: &SurveyChooserProps) -> Html {
    let lang = props.language;
    let live = use_state(|| Live::Loading);
    {
        let live = live.clone();
        use_effect_with((), move |()| {
            wasm_bindgen_futures::spawn_local(async move {
                let listed = get_text(LIVE_SURVEYS_PATH)
                    .await
                    .ok()
                    .and_then(|text| live_surveys(&text).ok());
                live.set(listed.map_or(Live::Unavailable, Live::Listed));
            });
        });
    }
    let live_list = match &*live {
        Live::Loading => html! { <p role="status">{ t!(lang, "chooser-looking") }</p> },
        Live::Unavailable => html! {
            <p class="small" data-testid="static-host">{ t!(lang, "chooser-static-host") }</p>
        },
        Live::Listed(list) if list.is_empty() => html! {
            <p class="small" data-testid="no-live">{ t!(lang, "chooser-no-live") }</p>
        },
        Live::Listed(list) => html! {
            <>
                <h2>{ t!(lang, "chooser-live-heading") }</h2>
                <p>{ t!(lang, "chooser-live-intro") }</p>
                <ul data-testid="live-surveys">
                    { for list.iter().map(|s| html! {
                        <li>
                            <a href={participant_link(&s.survey)} data-testid="live-survey">{ &s.title }</a>
                            { " " }{ if s.share_mode { t!(lang, "chooser-groups-shares", size = s.cohort_size) } else { t!(lang, "chooser-groups", size = s.cohort_size) } }
                            if let Some(d) = &s.description { <br /><span class="small">{ d }</span> }
                        </li>
                    }) }
                </ul>
            </>
        },
    };
    html! {
        <section>
            <h1>{ t!(lang, "chooser-title") }</h1>
            <p>{ t!(lang, "chooser-intro") }</p>
            { live_list }
            <h2>{ t!(lang, "chooser-practice-heading") }</h2>
            <ul data-testid="practice-surveys">
                { for DEMONSTRATIONS.iter().map(|name| html! {
                    <li><a href={demonstration_link(name)}>{ demonstration_title(lang, name) }</a></li>
                }) }
            </ul>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_demonstration_has_a_title_in_every_language() {
        for language in [AppLanguage::English, AppLanguage::Spanish] {
            for name in DEMONSTRATIONS {
                let title = demonstration_title(language, name);
                assert!(title != name && !title.is_empty(), "{name}: {title}");
            }
        }
    }
}
