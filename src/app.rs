//! The app shells: the navigation, the hash router and the page, around one of two `switch`es.
//!
//! The web app is built as two WebAssembly modules (issue 25; `scripts/build-web.sh`):
//! * **the participant's** ([`ParticipantApp`], binary `orthomask-participant`): the survey form
//!   alone — no Web Worker, no analyst view, classroom, team page, audit or plots, which the
//!   linker leaves out because nothing here names them;
//! * **the whole app's** ([`App`], binary `orthomask-web`): every view, with the Web Worker that
//!   runs the long computations.
//!
//! `index.html` loads the participant's module for `#/participate…` and the whole app's for every
//! other route. When a participant's page is sent to another route (a navigation link), it
//! reloads ([`LoadWholeApp`]) and `index.html` then loads the whole app's module: the participant
//! never downloads code it does not run.

use yew::prelude::*;
use yew_router::prelude::*;

use crate::context::ShellLanguage;
use crate::i18n::AppLanguage;
use crate::pages;
use crate::route::Route;
use crate::services::jobs::JobRunner;
use crate::t;

/// The navigation bar.
#[function_component(Nav)]
fn nav() -> Html {
    let route = use_route::<Route>();
    let lang = use_context::<ShellLanguage>().map_or(AppLanguage::English, |l| *l);
    html! {
        <nav class="top no-print" aria-label={t!(lang, "nav-label")}>
            <ul>
                { for Route::NAV.iter().map(|r| {
                    let label = r.nav_label(lang).unwrap_or_default();
                    let current = route.as_ref() == Some(r);
                    html! {
                        <li><Link<Route> to={r.clone()} classes={classes!(current.then_some("current"))}>
                            if current { <span aria-current="page">{ label }</span> } else { { label } }
                        </Link<Route>></li>
                    }
                }) }
            </ul>
        </nav>
    }
}

/// What a shell renders for each route.
#[derive(Properties, PartialEq)]
struct ShellProps {
    /// The module's `switch`.
    render: Callback<Route, Html>,
}

/// Skip link, navigation, the routed page and the footer: the same in both modules.
#[function_component(Shell)]
fn shell(props: &ShellProps) -> Html {
    let shell = use_state(|| AppLanguage::English);
    let lang = *shell;
    html! {
        <ContextProvider<ShellLanguage> context={shell.clone()}>
            <HashRouter>
                <a class="skip-link" href="#main" onclick={Callback::from(|e: MouseEvent| {
                    e.prevent_default();
                    if let Some(main) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id("main")) {
                        let _ = main.scroll_into_view();
                    }
                })}>{ t!(lang, "skip-to-content") }</a>
                <header><Nav /></header>
                <main id="main" tabindex="-1">
                    <Switch<Route> render={props.render.clone()} />
                </main>
                <footer class="no-print"><p>{ t!(lang, "footer") }</p></footer>
            </HashRouter>
        </ContextProvider<ShellLanguage>>
    }
}

/// The whole app: every view, and the Web Worker its computations run in.
#[function_component(App)]
pub fn app() -> Html {
    let jobs = use_memo((), |()| JobRunner::start());
    html! {
        <ContextProvider<JobRunner> context={(*jobs).clone()}>
            <Shell render={Callback::from(switch)} />
        </ContextProvider<JobRunner>>
    }
}

/// The participant's app: the survey form, and every other route by loading the whole app.
#[function_component(ParticipantApp)]
pub fn participant_app() -> Html {
    html! { <Shell render={Callback::from(participant_switch)} /> }
}

/// The one `switch` of the whole app: a route to its page (here, beside the shell, so that the
/// routes know no page and every page may link to any route).
pub fn switch(route: Route) -> Html {
    match route {
        Route::Home => html! { <pages::home::Home /> },
        Route::Participate => html! { <pages::participate::Participate /> },
        Route::Analyze => html! { <pages::analyze::Analyze /> },
        Route::Classroom => html! { <pages::classroom::Classroom /> },
        Route::Audit => html! { <pages::audit::Audit /> },
        Route::Admin => html! { <pages::admin::Admin /> },
        Route::Bench => html! { <pages::bench::Bench /> },
        Route::NotFound => html! { <pages::home::NotFound /> },
    }
}

/// The participant module's `switch`: the form, and for any other route the whole app.
fn participant_switch(route: Route) -> Html {
    match route {
        Route::Participate => html! { <pages::participate::Participate /> },
        _ => html! { <LoadWholeApp /> },
    }
}

/// Reloads the page at its current address, where `index.html` loads the whole app's module
/// (module documentation). Nothing of a survey is lost: a form's answers are never kept, and a
/// masked upload waiting to be sent stays in the outbox (IndexedDB), which the whole app's
/// participant page reads as this one does.
#[function_component(LoadWholeApp)]
fn load_whole_app() -> Html {
    use_effect_with((), |()| {
        crate::services::browser::reload();
    });
    html! { <p class="loading" role="status" aria-live="polite">{ "…" }</p> }
}
