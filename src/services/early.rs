//! Requests `index.html` starts before the module is even downloaded (issue 25): on a slow
//! network every round trip the page waits for counts, and a participant's page always reads its
//! service worker's file list (`sw.js`) first, to check its own build. The bootstrap puts each
//! one's `fetch` promise in `window.orthomaskApp.early`, under the path it asked for; the first
//! GET of that path here takes it over instead of asking again. A hint only: what is fetched, and
//! when it is needed, stays in the Rust code (a path the bootstrap did not start is simply
//! fetched). The bootstrap starts nothing of the API: the app reads the link first, and asks the
//! services nothing for a link it refuses or a demonstration.

use js_sys::{Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The answer to the GET of `path` the bootstrap started, once: `None` when it started none (or
/// it was taken already), `Some(Err(()))` when it failed (no connection).
pub async fn take(path: &str) -> Option<Result<web_sys::Response, ()>> {
    let early = Reflect::get(&js_sys::global(), &JsValue::from_str("orthomaskApp"))
        .ok()
        .and_then(|app| Reflect::get(&app, &JsValue::from_str("early")).ok())
        .filter(|early| early.is_object())?;
    let key = JsValue::from_str(path);
    let promise: Promise = Reflect::get(&early, &key).ok()?.dyn_into().ok()?;
    let _ = Reflect::delete_property(early.unchecked_ref::<js_sys::Object>(), &key);
    Some(
        JsFuture::from(promise)
            .await
            .ok()
            .and_then(|r| r.dyn_into::<web_sys::Response>().ok())
            .ok_or(()),
    )
}
