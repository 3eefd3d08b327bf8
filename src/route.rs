//! The hash routes: `#/`, `#/participate?survey=ID[&invite=TOKEN]` (or `?demo=NAME`),
//! `#/analyze?data=URL&y=COL&x=COL,COL`,
//! `#/classroom`, `#/audit?data=URL&manifest=URL`, `#/bench`, `#/admin` (the survey team). Hash routes let the built `dist/`
//! work from any static host. Query parameters are read with
//! [`services::query`](crate::services::query).

use yew_router::prelude::*;

use crate::i18n::AppLanguage;
use crate::t;

/// Every page of the app.
#[derive(Clone, Debug, PartialEq, Eq, Routable)]
pub enum Route {
    /// What Orthomask is, with links to the views.
    #[at("/")]
    Home,
    /// The participant's survey form.
    #[at("/participate")]
    Participate,
    /// The analyst view.
    #[at("/analyze")]
    Analyze,
    /// The classroom demonstration.
    #[at("/classroom")]
    Classroom,
    /// The audit view.
    #[at("/audit")]
    Audit,
    /// The survey team's page: create surveys, invite, watch, close and publish.
    #[at("/admin")]
    Admin,
    /// The browser benchmark.
    #[at("/bench")]
    Bench,
    /// Anything else.
    #[not_found]
    #[at("/404")]
    NotFound,
}

impl Route {
    /// The navigation entries, in order, with their labels.
    pub const NAV: [Route; 6] = [
        Route::Home,
        Route::Participate,
        Route::Analyze,
        Route::Classroom,
        Route::Audit,
        Route::Admin,
    ];

    /// Its name in the navigation bar, in `language` (`locales/`); `None` off the bar.
    pub fn nav_label(&self, language: AppLanguage) -> Option<String> {
        Some(match self {
            Route::Home => t!(language, "nav-home"),
            Route::Participate => t!(language, "nav-participate"),
            Route::Analyze => t!(language, "nav-analyze"),
            Route::Classroom => t!(language, "nav-classroom"),
            Route::Audit => t!(language, "nav-audit"),
            Route::Admin => t!(language, "nav-admin"),
            Route::Bench | Route::NotFound => return None,
        })
    }
}
