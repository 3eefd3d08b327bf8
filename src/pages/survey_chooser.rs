//! What `#/participate` shows when its link names no survey: the live demonstrations of the
//! collector that served the page, which really send (masked) answers, and the bundled practice
//! demonstrations, which send nothing. On a static host there is no collector to list anything:
//! the page says that sending needs the services.

use yew::prelude::*;

use crate::model::live_demonstrations::{
    LIVE_SURVEYS_PATH, LiveSurvey, STATIC_HOST_NOTE, live_surveys, participant_link,
};
use crate::model::participation::{DEMONSTRATIONS, demonstration_link};
use crate::services::http::get_text;

/// What the collector's list said.
#[derive(Clone, Debug, PartialEq)]
enum Live {
    Loading,
    Listed(Vec<LiveSurvey>),
    /// No collector answered (a static host, or the services are down).
    Unavailable,
}

/// The survey chooser.
#[function_component(SurveyChooser)]
pub fn survey_chooser() -> Html {
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
        Live::Loading => html! { <p role="status">{ "Looking for live demonstrations…" }</p> },
        Live::Unavailable => html! {
            <p class="small" data-testid="static-host">{ STATIC_HOST_NOTE }</p>
        },
        Live::Listed(list) if list.is_empty() => html! {
            <p class="small" data-testid="no-live">{ "This deployment runs no live demonstration right now; its survey team sends the links to real surveys." }</p>
        },
        Live::Listed(list) => html! {
            <>
                <h2>{ "Live demonstrations" }</h2>
                <p>{ "These run on this deployment's services: your answers are masked on this device and the masked numbers are really sent. They are demonstrations, so do not enter real personal data." }</p>
                <ul data-testid="live-surveys">
                    { for list.iter().map(|s| html! {
                        <li>
                            <a href={participant_link(&s.survey)} data-testid="live-survey">{ &s.title }</a>
                            { format!(" — groups of {}{}", s.cohort_size, if s.share_mode { ", split over several services (share mode)" } else { "" }) }
                            if let Some(d) = &s.description { <br /><span class="small">{ d }</span> }
                        </li>
                    }) }
                </ul>
            </>
        },
    };
    html! {
        <section>
            <h1>{ "Take a survey" }</h1>
            <p>{ "Open the link your survey team sent you, or try a demonstration." }</p>
            { live_list }
            <h2>{ "Practice (nothing is sent)" }</h2>
            <ul data-testid="practice-surveys">
                { for DEMONSTRATIONS.iter().map(|(name, title)| html! {
                    <li><a href={demonstration_link(name)}>{ *title }</a></li>
                }) }
            </ul>
        </section>
    }
}
