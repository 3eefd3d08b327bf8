//! The page's own files, read for its build digest (issue 27 §2; the decision is
//! [`crate::model::own_build`]): the service worker `sw.js` (as the worker that controls the page
//! keeps it, when one does: [`kept_service_worker`]) and the files its `APP_FILES` names,
//! as the page gets them (through the service worker, which answers them from this version's
//! cache), and, on a page no service worker controls, the copies the Cache API keeps
//! ([`own_files`] says why only then). The files whose digests `sw.js` declares (`LAZY_FILES`,
//! `DECLARED_FILES`: all but `index.html`) are not fetched: their digests are the declared ones
//! (`orthomask_survey::app_build::declared_files` says why the build digest stays whole), so
//! the page reads `sw.js` and `index.html` alone — on a slow phone, each read is a wait before a
//! place is taken (issue 25).

use js_sys::{ArrayBuffer, Function, Reflect, Uint8Array};
use orthomask_survey::app_build::{FileDigest, SERVICE_WORKER, app_files, declared_files};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// What `sw.js` says the build is: its own bytes, every file's path, and the files whose digests
/// it declares.
struct Listed {
    sw: Vec<u8>,
    names: Vec<String>,
    declared: Vec<FileDigest>,
}

/// The app's files as loaded (every file of the build, in the service worker's order: read, or
/// declared), and the service worker's cached copies of the files the page read (the declared
/// ones are not compared: the page did not read them, and those it runs are bound by the
/// Subresource Integrity digests of the `index.html` it did read). Both reads go at once, each
/// file's too: on a slow network each is a round trip, and none needs another.
///
/// The copies are read only when no service worker controls the page (its first visit, or a
/// reload that bypassed the worker), and only when a cache exists. A controlled page gets its
/// files from the worker's cache (`sw.js`: its static routes, or its handler, cache-first), so
/// its copies are the very bytes it loaded, and reading them again would compare the cache with
/// itself: on a slow phone, reads and hashes before a place is taken that prove nothing
/// (issue 25).
///
/// # Errors
/// The first: one line naming the file that could not be fetched, or why `sw.js` names no files
/// (then no copies are read).
pub async fn own_files() -> (Result<Vec<FileDigest>, String>, Vec<FileDigest>) {
    let listed = match listed().await {
        Ok(listed) => listed,
        Err(e) => return (Err(e), Vec::new()),
    };
    futures::future::join(loaded(&listed), async {
        if controlled() || cache_count().await == 0 {
            Vec::new()
        } else {
            cached(&listed).await
        }
    })
    .await
}

/// `sw.js` as the service worker that controls this page keeps it, when one does and its cache
/// is the only one (`sw.js` keeps its own script: a controlled page reads from it the version it
/// runs, without asking the network first — on a slow network a round trip before a place is
/// taken, issue 25). `None` otherwise (no controller, an older version that did not keep it, or
/// two versions' caches during an update): then the network's copy is read.
async fn kept_service_worker() -> Option<Vec<u8>> {
    if !controlled() || cache_count().await != 1 {
        return None;
    }
    let found = early_or_cache_storage(
        super::early::CACHED_SERVICE_WORKER,
        "match",
        &[SERVICE_WORKER.into()],
    )
    .await?;
    let buffer = array_buffer(&found.dyn_into().ok()?).await?;
    Some(Uint8Array::new(&buffer).to_vec())
}

/// Whether a service worker controls this page (`navigator.serviceWorker.controller`).
fn controlled() -> bool {
    let navigator = Reflect::get(&js_sys::global(), &JsValue::from_str("navigator"));
    navigator
        .and_then(|n| Reflect::get(&n, &JsValue::from_str("serviceWorker")))
        .and_then(|c| Reflect::get(&c, &JsValue::from_str("controller")))
        .is_ok_and(|controller| !controller.is_undefined() && !controller.is_null())
}

/// How many caches the origin has (`caches.keys()`; none without the Cache API): on a first
/// visit none, and asking for each file's copy would be a dozen answers of nothing.
async fn cache_count() -> u32 {
    early_or_cache_storage(super::early::CACHE_KEYS, "keys", &[])
        .await
        .and_then(|names| names.dyn_into::<js_sys::Array>().ok())
        .map_or(0, |names| names.length())
}

/// [`cache_storage`]'s answer, or the same call's that the bootstrap started under `key`
/// (`super::early`: a page a service worker controls starts its reads of the worker's cache
/// while the module starts; they are the same calls, made sooner).
async fn early_or_cache_storage(key: &str, method: &str, args: &[JsValue]) -> Option<JsValue> {
    match super::early::take_value(key).await {
        Some(answer) => answer.ok().filter(|a| !a.is_undefined()),
        None => cache_storage(method, args).await,
    }
}

/// The answer of the Cache API's `caches[method](…args)`, when the page has the Cache API.
async fn cache_storage(method: &str, args: &[JsValue]) -> Option<JsValue> {
    let caches = Reflect::get(&js_sys::global(), &JsValue::from_str("caches"))
        .ok()
        .filter(|c| !c.is_undefined())?;
    let call: Function = Reflect::get(&caches, &JsValue::from_str(method))
        .ok()?
        .dyn_into()
        .ok()?;
    let answer = call
        .apply(&caches, &args.iter().collect::<js_sys::Array>())
        .ok()?;
    JsFuture::from(js_sys::Promise::from(answer)).await.ok()
}

async fn listed() -> Result<Listed, String> {
    let sw = match kept_service_worker().await {
        Some(sw) => sw,
        None => fetch_bytes(SERVICE_WORKER).await?,
    };
    let text = String::from_utf8(sw.clone()).map_err(|_| format!("{SERVICE_WORKER}: not UTF-8"))?;
    Ok(Listed {
        names: app_files(&text).map_err(|e| e.to_string())?,
        declared: declared_files(&text).map_err(|e| e.to_string())?,
        sw,
    })
}

fn declared<'a>(listed: &'a Listed, name: &str) -> Option<&'a FileDigest> {
    listed.declared.iter().find(|f| f.path == name)
}

async fn loaded(listed: &Listed) -> Result<Vec<FileDigest>, String> {
    futures::future::try_join_all(listed.names.iter().map(|name| async move {
        if let Some(declared) = declared(listed, name) {
            return Ok(declared.clone());
        }
        if name == SERVICE_WORKER {
            return Ok(FileDigest::of(name, &listed.sw));
        }
        Ok(digest(name, &fetch_buffer(name).await?).await)
    }))
    .await
}

async fn cached(listed: &Listed) -> Vec<FileDigest> {
    let read = listed
        .names
        .iter()
        .filter(|name| declared(listed, name).is_none());
    futures::future::join_all(read.map(|name| async move {
        match cached_buffer(name).await {
            Some(buffer) => Some(digest(name, &buffer).await),
            None => None,
        }
    }))
    .await
    .into_iter()
    .flatten()
    .collect()
}

async fn fetch_bytes(path: &str) -> Result<Vec<u8>, String> {
    let buffer = fetch_buffer(path).await?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

async fn fetch_buffer(path: &str) -> Result<ArrayBuffer, String> {
    // `index.html` may have started it already (`super::early`).
    let response = match super::early::take(path).await {
        Some(Ok(response)) => response,
        Some(Err(())) => return Err(format!("{path}: could not be fetched")),
        None => gloo_net::http::Request::get(path)
            .send()
            .await
            .map_err(|_| format!("{path}: could not be fetched"))?
            .into(),
    };
    if !response.ok() {
        return Err(format!("{path}: HTTP {}", response.status()));
    }
    array_buffer(&response)
        .await
        .ok_or_else(|| format!("{path}: could not be read"))
}

async fn array_buffer(response: &web_sys::Response) -> Option<ArrayBuffer> {
    JsFuture::from(response.array_buffer().ok()?)
        .await
        .ok()?
        .dyn_into()
        .ok()
}

/// `caches.match(path)`'s body, when the page has the Cache API and the cache holds it.
async fn cached_buffer(path: &str) -> Option<ArrayBuffer> {
    let found = cache_storage("match", &[JsValue::from_str(path)]).await?;
    array_buffer(&found.dyn_into().ok()?).await
}

/// The digest of `buffer` served as `path`: [`FileDigest::of`]'s SHA-256, computed by the
/// browser ([`browser_sha256`]) when it can, else in WebAssembly.
async fn digest(path: &str, buffer: &ArrayBuffer) -> FileDigest {
    match browser_sha256(buffer).await {
        Some(sha256) => FileDigest {
            path: path.to_owned(),
            sha256,
        },
        None => FileDigest::of(path, &Uint8Array::new(buffer).to_vec()),
    }
}

/// The SHA-256 of `buffer` in lowercase hexadecimal, as the browser's own implementation
/// (`crypto.subtle.digest`) computes it; `None` where the page has none (Web Crypto is given
/// only to secure contexts: HTTPS and the loopback address).
///
/// Why not only [`FileDigest::of`]: the page hashes its own files before it takes a place
/// (`index.html`; `sw.js`, whose text it parses anyway, in WebAssembly), and on a slow phone
/// hashing in WebAssembly (after copying the bytes into the module's memory) is part of the wait
/// (issue 25); the browser hashes in native code, off the page's thread. SHA-256 is one
/// function: `tests/browser.rs` checks that both give the same digest, and the standard's own
/// test vector.
pub async fn browser_sha256(buffer: &ArrayBuffer) -> Option<String> {
    let crypto = Reflect::get(&js_sys::global(), &JsValue::from_str("crypto")).ok()?;
    let subtle = Reflect::get(&crypto, &JsValue::from_str("subtle")).ok()?;
    if subtle.is_undefined() || subtle.is_null() {
        return None;
    }
    let digest: Function = Reflect::get(&subtle, &JsValue::from_str("digest"))
        .ok()?
        .dyn_into()
        .ok()?;
    let promise = digest
        .call2(&subtle, &JsValue::from_str("SHA-256"), buffer)
        .ok()?;
    let hashed: ArrayBuffer = JsFuture::from(js_sys::Promise::from(promise))
        .await
        .ok()?
        .dyn_into()
        .ok()?;
    Some(orthomask_core::hex::encode(
        &Uint8Array::new(&hashed).to_vec(),
    ))
}
