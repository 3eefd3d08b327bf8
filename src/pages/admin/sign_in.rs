//! The sign-in form: the admin token, checked with `GET /api/admin/surveys` before it is kept.

use yew::prelude::*;

use crate::components::input::target_value;
use crate::services::admin as api;

/// Props of [`SignIn`].
#[derive(Properties, PartialEq)]
pub struct SignInProps {
    /// Told the token once the collector accepted it.
    pub on_signed_in: Callback<String>,
}

/// The token form.
#[function_component(SignIn)]
pub fn sign_in(props: &SignInProps) -> Html {
    let token = use_state(String::new);
    let error = use_state(|| None::<String>);
    let checking = use_state(|| false);
    let on_input = {
        let token = token.setter();
        Callback::from(move |e: InputEvent| token.set(target_value(&e.into())))
    };
    let on_submit = {
        let (token, error, checking, done) = (
            (*token).clone(),
            error.setter(),
            checking.setter(),
            props.on_signed_in.clone(),
        );
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            let t = token.trim().to_owned();
            if t.is_empty() {
                error.set(Some("Enter the admin token (the admin-token file of the collector's data directory).".into()));
                return;
            }
            let (error, checking, done) = (error.clone(), checking.clone(), done.clone());
            checking.set(true);
            wasm_bindgen_futures::spawn_local(async move {
                let checked = api::list(&t).await;
                checking.set(false);
                match checked {
                    Ok(_) => {
                        error.set(None);
                        done.emit(t);
                    }
                    Err(e) => error.set(Some(format!("Sign-in failed: {e}"))),
                }
            });
        })
    };
    html! {
        <form class="sign-in" onsubmit={on_submit} data-testid="sign-in">
            <p>{ "The survey team creates surveys, invites participants and publishes releases. Sign in with the collector's admin token; it is kept for this tab only." }</p>
            <label for="admin-token">{ "Admin token" }</label>
            <input id="admin-token" type="password" autocomplete="off" value={(*token).clone()} oninput={on_input}
                aria-invalid={error.is_some().to_string()} aria-describedby="sign-in-error" />
            <button type="submit" class="primary" disabled={*checking}>{ if *checking { "Checking…" } else { "Sign in" } }</button>
            <p id="sign-in-error" class="error" role={error.is_some().then_some("alert")} data-testid="sign-in-error">{ (*error).clone().unwrap_or_default() }</p>
        </form>
    }
}
