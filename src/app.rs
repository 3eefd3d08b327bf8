//! The app shell: the job runner context, the hash router, the navigation and the page.

use yew::prelude::*;
use yew_router::prelude::*;

use crate::route::{Route, switch};
use crate::services::jobs::JobRunner;

/// The navigation bar.
#[function_component(Nav)]
fn nav() -> Html {
    let route = use_route::<Route>();
    html! {
        <nav class="top no-print" aria-label="Main">
            <ul>
                { for Route::NAV.iter().map(|(r, label)| {
                    let current = route.as_ref() == Some(r);
                    html! {
                        <li><Link<Route> to={r.clone()} classes={classes!(current.then_some("current"))}>
                            if current { <span aria-current="page">{ *label }</span> } else { { *label } }
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
    html! {
        <ContextProvider<JobRunner> context={(*jobs).clone()}>
            <HashRouter>
                <a class="skip-link" href="#main" onclick={Callback::from(|e: MouseEvent| {
                    e.prevent_default();
                    if let Some(main) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id("main")) {
                        let _ = main.scroll_into_view();
                    }
                })}>{ "Skip to content" }</a>
                <header><Nav /></header>
                <main id="main" tabindex="-1">
                    <Switch<Route> render={switch} />
                </main>
                <footer class="no-print"><p>{ "Orthomask — privacy-preserving survey data collection by triple matrix masking." }</p></footer>
            </HashRouter>
        </ContextProvider<JobRunner>>
    }
}
