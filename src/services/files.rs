//! Read a file the user picked or dropped.

use wasm_bindgen_futures::JsFuture;

use crate::model::audit::NamedText;

/// The text of `file`.
///
/// # Errors
/// One line naming the file when it cannot be read.
pub async fn read(file: web_sys::File) -> Result<NamedText, String> {
    let name = file.name();
    let text = JsFuture::from(file.text())
        .await
        .map_err(|_| format!("{name}: could not read the file"))?
        .as_string()
        .ok_or_else(|| format!("{name}: the file is not text"))?;
    Ok(NamedText { name, text })
}
