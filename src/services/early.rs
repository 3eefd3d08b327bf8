//! Requests `index.html` starts before the module is even downloaded (issue 25): on a slow
//! network every round trip the page waits for counts. A link to a collector's survey makes the
//! page read, before it takes a place, the deployment ([`DEPLOYMENT_PATH`]) and its own files, to
//! check its build (`super::app_build`): `sw.js` and the files whose digests `sw.js` does not
//! declare (`scripts/stage_web.py`'s `{{early}}`: `index.html`); on a page a service worker
//! controls, `sw.js` as the worker keeps it instead ([`CACHED_SERVICE_WORKER`]). The bootstrap
//! puts each one's `fetch` promise in `window.orthomaskApp.early`, under the path it asked for;
//! the first GET of that path here
//! (`super::http`'s plain GETs, `super::app_build`'s reads) takes it over instead of asking
//! again. A hint only: what is fetched, and when it is needed, stays in the Rust code (a path the
//! bootstrap did not start is simply fetched). The bootstrap starts nothing for any other link:
//! one the app refuses, or a demonstration, asks the services nothing
//! (`e2e/tests/participate.test.mjs`).
//!
//! [`DEPLOYMENT_PATH`]: crate::model::participation::DEPLOYMENT_PATH

use js_sys::{Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The answer to the GET of `path` the bootstrap started, once: `None` when it started none (or
/// it was taken already), `Some(Err(()))` when it failed (no connection).
pub async fn take(path: &str) -> Option<Result<web_sys::Response, ()>> {
    Some(
        take_value(path)
            .await?
            .and_then(|r| r.dyn_into::<web_sys::Response>().map_err(|_| ())),
    )
}

/// What the bootstrap's promise under `key` gave, once: `None` when it started none (or it was
/// taken already), `Some(Err(()))` when it failed. Besides GETs under their paths, a page a
/// service worker controls starts its reads of the worker's cache under [`CACHE_KEYS`] and
/// [`CACHED_SERVICE_WORKER`] (`super::app_build`).
pub async fn take_value(key: &str) -> Option<Result<JsValue, ()>> {
    let early = Reflect::get(&js_sys::global(), &JsValue::from_str("orthomaskApp"))
        .ok()
        .and_then(|app| Reflect::get(&app, &JsValue::from_str("early")).ok())
        .filter(|early| early.is_object())?;
    let key = JsValue::from_str(key);
    let promise: Promise = Reflect::get(&early, &key).ok()?.dyn_into().ok()?;
    let _ = Reflect::delete_property(early.unchecked_ref::<js_sys::Object>(), &key);
    Some(JsFuture::from(promise).await.map_err(|_| ()))
}

/// The key of the bootstrap's `caches.keys()` (on a page a service worker controls).
pub const CACHE_KEYS: &str = "caches.keys()";

/// The key of the bootstrap's `caches.match('sw.js')` (on a page a service worker controls).
pub const CACHED_SERVICE_WORKER: &str = "caches.match(sw.js)";
