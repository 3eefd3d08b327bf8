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

/// The bytes of `file` (an XLSForm workbook), with its name.
///
/// # Errors
/// One line naming the file when it cannot be read.
pub async fn read_bytes(file: web_sys::File) -> Result<(String, Vec<u8>), String> {
    let name = file.name();
    let buffer = JsFuture::from(file.array_buffer())
        .await
        .map_err(|_| format!("{name}: could not read the file"))?;
    Ok((name, js_sys::Uint8Array::new(&buffer).to_vec()))
}
