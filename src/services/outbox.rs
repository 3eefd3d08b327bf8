//! The device's outbox in IndexedDB (issue 13 §1): masked submissions waiting for a connection,
//! keyed by their idempotency token ([`WaitingSubmission`], which holds no answer). Database
//! [`DATABASE`], object store [`STORE`], one JSON text per submission.
//!
//! Writes resolve when their transaction has committed, so "waiting to send" is shown only once
//! the upload is really kept.

use js_sys::{Array, Promise};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbOpenDbRequest, IdbRequest, IdbTransaction, IdbTransactionMode};

use orthomask_survey::client::Destination;
use orthomask_survey::upload::Receipt;

use super::http::{SendError, get_text};
use super::participation::send;
use crate::model::outbox::{WaitingError, WaitingSubmission};
use crate::model::participation::DEPLOYMENT_PATH;

/// The IndexedDB database of the app.
pub const DATABASE: &str = "orthomask";
/// The object store of waiting submissions.
pub const STORE: &str = "outbox";
const VERSION: u32 = 1;

fn failed(what: &str) -> String {
    format!("the browser's storage refused to {what}")
}

/// Resolve with the request's result on success, reject on error.
fn request_done(request: &IdbRequest) -> Promise {
    let request = request.clone();
    Promise::new(&mut |resolve, reject| {
        let done = request.clone();
        let on_success = Closure::once_into_js(move |_: web_sys::Event| {
            let _ = resolve.call1(&JsValue::NULL, &done.result().unwrap_or(JsValue::UNDEFINED));
        });
        let on_error = Closure::once_into_js(move |_: web_sys::Event| {
            let _ = reject.call0(&JsValue::NULL);
        });
        request.set_onsuccess(Some(on_success.unchecked_ref()));
        request.set_onerror(Some(on_error.unchecked_ref()));
    })
}

/// Resolve when the transaction has committed, reject when it aborts or fails.
fn transaction_done(transaction: &IdbTransaction) -> Promise {
    let transaction = transaction.clone();
    Promise::new(&mut |resolve, reject| {
        let on_complete = Closure::once_into_js(move |_: web_sys::Event| {
            let _ = resolve.call0(&JsValue::NULL);
        });
        let (on_error, on_abort) = {
            let (a, b) = (reject.clone(), reject);
            (
                Closure::once_into_js(move |_: web_sys::Event| {
                    let _ = a.call0(&JsValue::NULL);
                }),
                Closure::once_into_js(move |_: web_sys::Event| {
                    let _ = b.call0(&JsValue::NULL);
                }),
            )
        };
        transaction.set_oncomplete(Some(on_complete.unchecked_ref()));
        transaction.set_onerror(Some(on_error.unchecked_ref()));
        transaction.set_onabort(Some(on_abort.unchecked_ref()));
    })
}

async fn open() -> Result<IdbDatabase, String> {
    let factory = web_sys::window()
        .and_then(|w| w.indexed_db().ok().flatten())
        .ok_or_else(|| "this browser offers no IndexedDB".to_owned())?;
    let request: IdbOpenDbRequest = factory
        .open_with_u32(DATABASE, VERSION)
        .map_err(|_| failed("open the outbox"))?;
    // First use (version 0 → 1, the only upgrade): create the store (keys are the tokens,
    // given with each value).
    let upgrade = request.clone();
    let on_upgrade = Closure::once_into_js(move |_: web_sys::Event| {
        if let Ok(db) = upgrade.result().and_then(|r| r.dyn_into::<IdbDatabase>()) {
            let _ = db.create_object_store(STORE);
        }
    });
    request.set_onupgradeneeded(Some(on_upgrade.unchecked_ref()));
    let db = JsFuture::from(request_done(&request))
        .await
        .map_err(|_| failed("open the outbox"))?;
    db.dyn_into::<IdbDatabase>()
        .map_err(|_| failed("open the outbox"))
}

/// Keep `waiting` until it is sent or discarded (replacing an entry with its token).
///
/// # Errors
/// One line when the browser's storage refuses (private mode with storage off, quota).
pub async fn keep(waiting: &WaitingSubmission) -> Result<(), String> {
    let db = open().await?;
    let transaction = db
        .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readwrite)
        .map_err(|_| failed("keep the upload"))?;
    let store = transaction
        .object_store(STORE)
        .map_err(|_| failed("keep the upload"))?;
    store
        .put_with_key(
            &JsValue::from_str(&waiting.to_json()),
            &JsValue::from_str(&waiting.token),
        )
        .map_err(|_| failed("keep the upload"))?;
    let committed = JsFuture::from(transaction_done(&transaction)).await;
    db.close();
    committed.map(|_| ()).map_err(|_| failed("keep the upload"))
}

/// Forget the submission with this token (sent or discarded).
///
/// # Errors
/// One line when the browser's storage refuses.
pub async fn remove(token: &str) -> Result<(), String> {
    let db = open().await?;
    let transaction = db
        .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readwrite)
        .map_err(|_| failed("remove the upload"))?;
    let store = transaction
        .object_store(STORE)
        .map_err(|_| failed("remove the upload"))?;
    store
        .delete(&JsValue::from_str(token))
        .map_err(|_| failed("remove the upload"))?;
    let committed = JsFuture::from(transaction_done(&transaction)).await;
    db.close();
    committed
        .map(|_| ())
        .map_err(|_| failed("remove the upload"))
}

/// Every waiting submission, each read back and checked; an unreadable entry is reported with
/// its key so it can be discarded.
///
/// # Errors
/// One line when the browser's storage refuses.
pub async fn all() -> Result<Vec<(String, Result<WaitingSubmission, WaitingError>)>, String> {
    let db = open().await?;
    let transaction = db
        .transaction_with_str(STORE)
        .map_err(|_| failed("read the outbox"))?;
    let store = transaction
        .object_store(STORE)
        .map_err(|_| failed("read the outbox"))?;
    let keys = JsFuture::from(request_done(
        &store
            .get_all_keys()
            .map_err(|_| failed("read the outbox"))?,
    ))
    .await
    .map_err(|_| failed("read the outbox"))?;
    let values = JsFuture::from(request_done(
        &store.get_all().map_err(|_| failed("read the outbox"))?,
    ))
    .await
    .map_err(|_| failed("read the outbox"))?;
    db.close();
    let (keys, values) = (Array::from(&keys), Array::from(&values));
    Ok(keys
        .iter()
        .zip(values.iter())
        .map(|(key, value)| {
            let key = key.as_string().unwrap_or_default();
            let entry = value
                .as_string()
                .ok_or_else(|| WaitingError::Format("not text".into()))
                .and_then(|text| WaitingSubmission::from_json(&text));
            (key, entry)
        })
        .collect())
}

/// Send a submission that may have waited here (the form's, or one from an earlier visit) and,
/// once every destination answered with its receipt, forget it: it waits no more. If forgetting
/// fails, a later send of the same token gets the same receipt.
///
/// # Errors
/// As [`send`]; nothing is forgotten then.
pub async fn deliver(
    destinations: &[Destination],
    attempt: &dyn Fn(u32),
) -> Result<Vec<(String, Receipt)>, SendError> {
    let receipts = send(destinations, attempt).await?;
    if let Some(first) = destinations.first() {
        let _ = remove(&first.upload.token).await;
    }
    Ok(receipts)
}

/// Deliver a submission read back from this store, once it passed the checks its definition
/// passed before the form showed ([`WaitingSubmission::check`] against this origin's
/// deployment): storage can be edited, so nothing read from it is sent unchecked.
///
/// # Errors
/// [`SendError::Unreachable`] when the deployment cannot be fetched (try again later);
/// [`SendError::Failed`] with the reason when the entry is refused; else as [`deliver`].
pub async fn deliver_stored(
    waiting: &WaitingSubmission,
) -> Result<Vec<(String, Receipt)>, SendError> {
    let text = get_text(DEPLOYMENT_PATH)
        .await
        .map_err(SendError::Unreachable)?;
    let deployment = serde_json::from_str(&text)
        .map_err(|e| SendError::Failed(format!("{DEPLOYMENT_PATH} is not a deployment ({e})")))?;
    waiting
        .check(&deployment)
        .map_err(|e| SendError::Failed(e.to_string()))?;
    deliver(&waiting.destinations, &|_| {}).await
}
