//! Save text as a file the user downloads.
//!
//! The file is a `gloo-file` `Blob` behind an `ObjectUrl`, revoked when dropped, once the link
//! was clicked (both throw where the browser refuses, which it does not for text and a type).
//! The click on a made-up `<a download>` stays here: no gloo crate offers a download. The
//! document is found with `web_sys::window()`, not `gloo_utils::document()`, which throws where
//! there is none instead of answering with a line.

use gloo_file::{Blob, ObjectUrl};
use wasm_bindgen::JsCast;

/// Offer `text` as a download called `file_name`.
///
/// # Errors
/// One line when the browser refuses (no document or no link element).
pub fn save(file_name: &str, mime: &str, text: &str) -> Result<(), String> {
    let fail = |what: &str| format!("could not save {file_name}: {what}");
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| fail("no document"))?;
    let anchor = document
        .create_element("a")
        .ok()
        .and_then(|e| e.dyn_into::<web_sys::HtmlAnchorElement>().ok())
        .ok_or_else(|| fail("no link element"))?;
    let url = ObjectUrl::from(Blob::new_with_options(text, Some(mime)));
    anchor.set_href(&url);
    anchor.set_download(file_name);
    anchor.click();
    Ok(())
}
