//! The survey team's page (`#/admin`): sign in with the admin token, list the surveys, build and
//! create one, invite participants, watch the cohorts and every service, close and publish.
//!
//! The logic is [`crate::model::admin`] (tested natively); every request is
//! [`crate::services::admin`]. Status changes are announced through one `aria-live` region.
//!
//! * [`sign_in`] — the token form;
//! * [`survey_list`] — the surveys;
//! * [`builder`] — the question builder, the JSON editor, the plan preview and "Create";
//! * [`form_controls`] — the `<select>` the builder and the terms control share;
//! * [`terms_editor`] — the builder's model terms: the declared ones, and a row that adds one;
//! * [`preview`] — the participant's form as it will look, read-only;
//! * [`survey_detail`] — one survey: invitations, live status, close, release links.

pub mod builder;
pub mod form_controls;
pub mod preview;
pub mod sign_in;
pub mod survey_detail;
pub mod survey_list;
pub mod terms_editor;

use yew::prelude::*;

use orthomask_survey::definition::valid_survey_id;

use crate::context::use_query;
use crate::services::admin as api;

/// What the signed-in page shows.
#[derive(Clone, Debug, PartialEq)]
enum View {
    List,
    Create,
    Detail(String),
}

/// The survey team's page.
#[function_component(Admin)]
pub fn admin() -> Html {
    let token = use_state(api::saved_token);
    // `#/admin?survey=ID` opens that survey once signed in (the receipt of a live
    // demonstration links here).
    let params = use_query();
    let view = use_state(|| {
        params
            .iter()
            .find(|(k, v)| k == "survey" && valid_survey_id(v))
            .map_or(View::List, |(_, id)| View::Detail(id.clone()))
    });
    let announcement = use_state(String::new);
    let announce = {
        let a = announcement.setter();
        Callback::from(move |m: String| a.set(m))
    };
    let live = html! {
        <p class="visually-hidden" aria-live="polite" role="status" data-testid="admin-announcer">{ (*announcement).clone() }</p>
    };
    let Some(t) = (*token).clone() else {
        let on_signed_in = {
            let (token, announce) = (token.setter(), announce.clone());
            Callback::from(move |t: String| {
                api::keep_token(&t);
                token.set(Some(t));
                announce.emit("Signed in.".into());
            })
        };
        return html! {
            <section class="admin">
                <h1>{ "Survey team" }</h1>
                { live }
                <sign_in::SignIn on_signed_in={on_signed_in} />
            </section>
        };
    };
    let on_sign_out = {
        let (token, announce) = (token.setter(), announce.clone());
        Callback::from(move |_| {
            api::forget_token();
            token.set(None);
            announce.emit("Signed out.".into());
        })
    };
    let show = |v: View| {
        let view = view.setter();
        Callback::from(move |_| view.set(v.clone()))
    };
    let on_open = {
        let view = view.setter();
        Callback::from(move |id: String| view.set(View::Detail(id)))
    };
    let body = match &*view {
        View::List => html! {
            <>
                <button type="button" class="primary" onclick={show(View::Create)} data-testid="new-survey">{ "Create a survey" }</button>
                <survey_list::SurveyList token={t.clone()} on_open={on_open.clone()} />
            </>
        },
        View::Create => html! {
            <builder::Builder token={t.clone()} announce={announce.clone()} on_created={on_open.clone()} />
        },
        View::Detail(id) => html! {
            <survey_detail::SurveyDetail token={t.clone()} id={id.clone()} announce={announce.clone()} />
        },
    };
    html! {
        <section class="admin">
            <h1>{ "Survey team" }</h1>
            { live }
            <div class="admin-bar">
                <span class="small">{ "Signed in for this tab only." }</span>
                if *view != View::List {
                    <button type="button" onclick={show(View::List)} data-testid="back-to-list">{ "All surveys" }</button>
                }
                <button type="button" onclick={on_sign_out} data-testid="sign-out">{ "Sign out" }</button>
            </div>
            { body }
        </section>
    }
}
