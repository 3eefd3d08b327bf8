//! The page's own files, read for its build digest (issue 27 §2; the decision is
//! [`crate::model::own_build`]): the service worker `sw.js` and every file its `APP_FILES` names,
//! as the page gets them (through the service worker, which answers them from this version's
//! cache), and the copies the service worker keeps in the Cache API. The files a participant's
//! page never loads (`LAZY_FILES`: the whole app's module and worker) are not fetched: their
//! digests are the ones `sw.js` declares (`orthomask_survey::app_build::lazy_files` says why the
//! build digest stays whole).

use js_sys::{Function, Reflect, Uint8Array};
use orthomask_survey::app_build::{FileDigest, SERVICE_WORKER, app_files, lazy_files};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// What `sw.js` says the build is: its own bytes, every file's path, and the lazily loaded ones
/// with their declared digests.
struct Listed {
    sw: Vec<u8>,
    names: Vec<String>,
    lazy: Vec<FileDigest>,
}

/// The app's files as loaded (every file of the build, in the service worker's order: read, or
/// declared when lazy), and the service worker's cached copies of the files the page read (the
/// lazily loaded ones are not compared: the page did not read them). Both reads go at once, each
/// file's too: on a slow network each is a round trip, and none needs another.
///
/// # Errors
/// The first: one line naming the file that could not be fetched, or why `sw.js` names no files
/// (then no copies are read).
pub async fn own_files() -> (Result<Vec<FileDigest>, String>, Vec<FileDigest>) {
    let listed = match listed().await {
        Ok(listed) => listed,
        Err(e) => return (Err(e), Vec::new()),
    };
    futures::future::join(loaded(&listed), cached(&listed)).await
}

async fn listed() -> Result<Listed, String> {
    let sw = fetch_bytes(SERVICE_WORKER).await?;
    let text = String::from_utf8(sw.clone()).map_err(|_| format!("{SERVICE_WORKER}: not UTF-8"))?;
    Ok(Listed {
        names: app_files(&text).map_err(|e| e.to_string())?,
        lazy: lazy_files(&text).map_err(|e| e.to_string())?,
        sw,
    })
}

fn declared<'a>(listed: &'a Listed, name: &str) -> Option<&'a FileDigest> {
    listed.lazy.iter().find(|f| f.path == name)
}

async fn loaded(listed: &Listed) -> Result<Vec<FileDigest>, String> {
    futures::future::try_join_all(listed.names.iter().map(|name| async move {
        if let Some(declared) = declared(listed, name) {
            return Ok(declared.clone());
        }
        let bytes = if name == SERVICE_WORKER {
            listed.sw.clone()
        } else {
            fetch_bytes(name).await?
        };
        Ok(FileDigest::of(name, &bytes))
    }))
    .await
}

async fn cached(listed: &Listed) -> Vec<FileDigest> {
    let read = listed
        .names
        .iter()
        .filter(|name| declared(listed, name).is_none());
    futures::future::join_all(read.map(|name| async move {
        cached_bytes(name)
            .await
            .map(|bytes| FileDigest::of(name, &bytes))
    }))
    .await
    .into_iter()
    .flatten()
    .collect()
}

async fn fetch_bytes(path: &str) -> Result<Vec<u8>, String> {
    // `index.html` may have started it already (`super::early`).
    let response = match super::early::take(path).await {
        Some(Ok(response)) => gloo_net::http::Response::from(response),
        Some(Err(())) => return Err(format!("{path}: could not be fetched")),
        None => gloo_net::http::Request::get(path)
            .send()
            .await
            .map_err(|_| format!("{path}: could not be fetched"))?,
    };
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
