//! # orthomask-web
//!
//! Orthomask in the browser: a Yew single-page app, compiled to WebAssembly by `scripts/build-web.sh`, in which
//! every masking step and every statistic comes from the workspace crates (`orthomask-core`,
//! `orthomask-formats`, `orthomask-stats`, `orthomask-dp`). This crate adds only views, state
//! and I/O; it re-implements no mathematics.
//!
//! Two binaries link this library into two modules ([`app`] says why): the participant's form
//! alone (`orthomask-participant`), and the whole app (`orthomask-web`), which runs twice: in the
//! page it mounts the app, in a Web Worker (`www/worker.js`) it runs long computations
//! ([`model::jobs`]) and reports progress, so the page stays responsive.
//!
//! Read in this order:
//! * [`model`] — pure, I/O-free logic behind each view (native tests cover it): the participant
//!   form, the analysis, the classroom, the audit, the benchmark, and the worker's jobs;
//! * [`plots`] — every figure as a function generic over plotters' `DrawingBackend`;
//! * [`i18n`] — the app's own texts, one Fluent catalogue per language (`locales/`);
//! * [`state`] — reducers (`Action` enums, `impl Reducible`), no HTML;
//! * [`services`] — all I/O: HTTP, files, downloads, the Web Worker, timing;
//! * [`context`] — shared state through contexts and `use_xxx()` hooks;
//! * [`route`] — the hash routes, one `Routable` enum;
//! * [`components`], [`pages`], [`app`] — the views;
//! * [`worker`] — the worker side of the job protocol.

pub mod i18n;
pub mod model;
pub mod plots;

pub mod state;

pub mod services;

pub mod context;
pub mod route;

pub mod components;
pub mod pages;

pub mod app;
pub mod worker;

/// Entry point of the whole app's WebAssembly module (`src/main.rs`): mount the app when running
/// in a page, serve jobs when running in a Web Worker.
pub fn start() {
    if web_sys::window().is_some() {
        // Installable and usable offline once opened (issue 13 §1; `www/sw.js`).
        services::browser::register_service_worker();
        yew::Renderer::<app::App>::new().render();
    } else {
        worker::serve();
    }
}

/// Entry point of the participant's WebAssembly module (`src/participant.rs`): the survey form
/// alone, without a Web Worker (`app` says why there are two modules).
///
/// The service worker is registered by the form once it shows what its link opened (the survey,
/// or why not), not here: on a first visit its install fetches the app's files, and started with the opening it
/// would take the connections (a browser opens six to a host) and the bandwidth that the
/// deployment and the place need on a slow network. It installs while the participant reads the
/// consent screen, and offline use needs nothing sooner: a form works offline only once opened.
pub fn start_participant() {
    if web_sys::window().is_some() {
        services::clock::mark("orthomask:module started");
        // A collector's survey link starts opening now, and the first render waits until the
        // opening has asked for its place (`start_opening` says why, and for how long at most).
        match linked_collector_survey() {
            Some(source) => {
                let place_asked = services::participation::start_opening(source);
                wasm_bindgen_futures::spawn_local(async move {
                    place_asked.await;
                    yew::Renderer::<app::ParticipantApp>::new().render();
                });
            }
            None => {
                yew::Renderer::<app::ParticipantApp>::new().render();
            }
        }
    }
}

/// The collector's survey the page's link names (`#/participate?survey=ID…`), read as the form
/// reads its route: the hash router's history ([`route::Route`], and
/// [`model::participation::source_from_query`] on its query). `None` for any other link (a
/// refused one, a demonstration, another route), which starts nothing before the form.
fn linked_collector_survey() -> Option<model::participation::Source> {
    use yew_router::Routable;
    use yew_router::history::{HashHistory, History};
    let location = HashHistory::new().location();
    if route::Route::recognize(location.path()) != Some(route::Route::Participate) {
        return None;
    }
    let pairs = services::query::parse(location.query_str());
    match model::participation::source_from_query(&pairs) {
        Ok(Some(source @ model::participation::Source::Collector { .. })) => Some(source),
        _ => None,
    }
}
