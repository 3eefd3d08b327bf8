//! What the browser tells and offers the participant form: whether it is online (and the
//! `online` event when the connection returns), the preferred languages, the service worker.
//!
//! The `online` listener is `gloo-events`' (removed when dropped). The rest are single
//! `navigator` reads web-sys already gives, for which gloo has no crate; they use
//! `web_sys::window()`, not `gloo_utils::window()`, which throws where there is no window.

use gloo_events::EventListener;
use wasm_bindgen::prelude::*;

/// `navigator.onLine`: `false` means certainly offline; `true` only that a network exists.
pub fn is_online() -> bool {
    web_sys::window().is_none_or(|w| w.navigator().on_line())
}

/// A listener for the window's `online` event, removed when dropped.
pub struct OnlineListener {
    _listener: Option<EventListener>,
}

impl OnlineListener {
    /// Call `on_online` every time the connection returns.
    pub fn new(mut on_online: impl FnMut() + 'static) -> Self {
        let listener = web_sys::window()
            .map(|window| EventListener::new(&window, "online", move |_| on_online()));
        Self {
            _listener: listener,
        }
    }
}

/// The browser's preferred languages (`navigator.languages`, else `navigator.language`).
pub fn preferred_languages() -> Vec<String> {
    let Some(navigator) = web_sys::window().map(|w| w.navigator()) else {
        return Vec::new();
    };
    let listed: Vec<String> = navigator
        .languages()
        .iter()
        .filter_map(|v| v.as_string())
        .collect();
    if listed.is_empty() {
        navigator.language().into_iter().collect()
    } else {
        listed
    }
}

/// Register the service worker (`sw.js`, next to the page) that keeps the app's own files for
/// offline use — never a survey offer, which carries key material (issue 20 §6). Browsers
/// without service workers (or an insecure origin) just work online.
pub fn register_service_worker() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let navigator = window.navigator();
    if !js_sys::Reflect::has(&navigator, &JsValue::from_str("serviceWorker")).unwrap_or(false) {
        return;
    }
    let _ = navigator.service_worker().register("sw.js");
}

/// Load the page again at its current address (`index.html` then picks the module the route
/// needs: `crate::app`).
pub fn reload() {
    if let Some(window) = web_sys::window() {
        let _ = window.location().reload();
    }
}
