//! Query parameters of a hash route (`#/analyze?data=URL&y=COL&x=A,B`).

/// Decode a query string (with or without the leading `?`) into pairs, using the browser's
/// `URLSearchParams` so percent-encoding follows the URL standard.
pub fn parse(query: &str) -> Vec<(String, String)> {
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(query) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let entries = js_sys::try_iter(&params).ok().flatten();
    for entry in entries.into_iter().flatten().flatten() {
        let pair = js_sys::Array::from(&entry);
        if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
            out.push((k, v));
        }
    }
    out
}

/// The value of `key`, if present and non-empty.
pub fn get(pairs: &[(String, String)], key: &str) -> Option<String> {
    pairs
        .iter()
        .find(|(k, v)| k == key && !v.is_empty())
        .map(|(_, v)| v.clone())
}

/// A comma-separated list (`x=A,B`), trimmed, empty items dropped.
pub fn list(pairs: &[(String, String)], key: &str) -> Vec<String> {
    get(pairs, key)
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}
