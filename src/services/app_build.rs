//! The page's own files, read for its build digest (issue 27 §2; the decision is
//! [`crate::model::own_build`]): the service worker `sw.js` and every file its `APP_FILES` names,
//! as this origin serves them now (through the service worker, which fetches from the network
//! first and keeps the answer), and the copies the service worker keeps in the Cache API.

use js_sys::{Function, Reflect, Uint8Array};
use orthomask_survey::app_build::{FileDigest, SERVICE_WORKER, app_files};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The app's files as loaded, in the service worker's order.
///
/// # Errors
/// One line naming the file that could not be fetched, or why `sw.js` names no files.
pub async fn loaded_files() -> Result<Vec<FileDigest>, String> {
    let sw = fetch_bytes(SERVICE_WORKER).await?;
    let text = String::from_utf8(sw.clone()).map_err(|_| format!("{SERVICE_WORKER}: not UTF-8"))?;
    let names = app_files(&text).map_err(|e| e.to_string())?;
    let mut files = Vec::with_capacity(names.len());
    for name in &names {
        let bytes = if name == SERVICE_WORKER {
            sw.clone()
        } else {
            fetch_bytes(name).await?
        };
        files.push(FileDigest::of(name, &bytes));
    }
    Ok(files)
}

/// The service worker's cached copies of `files` (those the cache holds; none without the
/// Cache API).
pub async fn cached_files(files: &[FileDigest]) -> Vec<FileDigest> {
    let mut cached = Vec::new();
    for f in files {
        if let Some(bytes) = cached_bytes(&f.path).await {
            cached.push(FileDigest::of(&f.path, &bytes));
        }
    }
    cached
}

async fn fetch_bytes(path: &str) -> Result<Vec<u8>, String> {
    let response = gloo_net::http::Request::get(path)
        .send()
        .await
        .map_err(|_| format!("{path}: could not be fetched"))?;
    if !response.ok() {
        return Err(format!("{path}: HTTP {}", response.status()));
    }
    response
        .binary()
        .await
        .map_err(|_| format!("{path}: could not be read"))
}

/// `caches.match(path)`'s body, when the page has the Cache API and the cache holds it.
async fn cached_bytes(path: &str) -> Option<Vec<u8>> {
    let caches = Reflect::get(&js_sys::global(), &JsValue::from_str("caches")).ok()?;
    if caches.is_undefined() {
        return None;
    }
    let matcher: Function = Reflect::get(&caches, &JsValue::from_str("match"))
        .ok()?
        .dyn_into()
        .ok()?;
    let found = JsFuture::from(js_sys::Promise::from(
        matcher.call1(&caches, &JsValue::from_str(path)).ok()?,
    ))
    .await
    .ok()?;
    let response: web_sys::Response = found.dyn_into().ok()?;
    let buffer = JsFuture::from(response.array_buffer().ok()?).await.ok()?;
    Some(Uint8Array::new(&buffer).to_vec())
}
