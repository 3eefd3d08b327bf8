//! The app shell: the job runner context, the hash router, the navigation and the page.

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

/// The whole app.
#[function_component(App)]
pub fn app() -> Html {
    let jobs = use_memo((), |()| JobRunner::start());
    let shell = use_state(|| AppLanguage::English);
    let lang = *shell;
    html! {
        <ContextProvider<JobRunner> context={(*jobs).clone()}>
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
                    <Switch<Route> render={switch} />
                </main>
                <footer class="no-print"><p>{ t!(lang, "footer") }</p></footer>
            </HashRouter>
        </ContextProvider<ShellLanguage>>
        </ContextProvider<JobRunner>>
    }
}

/// The one `switch` of the app: a route to its page (here, beside the shell, so that the routes
/// know no page and every page may link to any route).
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
