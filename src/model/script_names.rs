//! How the exported R and Python scripts write names: a column as an R or a Python (patsy)
//! formula term, a text as an R string literal. The exports of the analyst view
//! ([`super::exports`], [`super::exact_exports`], [`super::labels`]) all write names here.

/// A column as a term of an R formula: bare when R reads it so, else backquoted.
pub fn r_name(name: &str) -> String {
    if name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
    {
        name.to_owned()
    } else {
        format!("`{}`", name.replace('`', "\\`"))
    }
}

/// A column as a term of a statsmodels (patsy) formula: bare when patsy reads it so, else
/// `Q("…")`.
pub fn py_name(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
    {
        name.to_owned()
    } else {
        format!("Q(\"{}\")", name.replace('"', "\\\""))
    }
}

/// `text` as an R string literal (double quotes; backslash and quote escaped).
pub fn r_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}
