//! The JSON editor: the draft as text, parsed with the same serde types the collector uses
//! (`SurveyDraft` denies unknown fields), so what the editor accepts the API accepts.

use orthomask_survey::draft::SurveyDraft;

/// Why the editor's text is not a draft: one line with what and where.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("JSON line {line}, column {column}: {what}")]
pub struct EditorError {
    /// 1-based line of the problem.
    pub line: usize,
    /// 1-based column of the problem.
    pub column: usize,
    /// What is wrong (serde's message without its position).
    pub what: String,
}

/// Parse the editor's text into a draft.
///
/// # Errors
/// [`EditorError`]: serde's message with its line and column, on one line.
pub fn parse(text: &str) -> Result<SurveyDraft, EditorError> {
    serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        // serde_json appends " at line L column C"; the position is given once, up front.
        let what = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(what, _)| what);
        EditorError {
            line: e.line(),
            column: e.column(),
            what: what.lines().collect::<Vec<_>>().join(" "),
        }
    })
}

/// The draft as the editor shows it: pretty JSON.
pub fn text(draft: &serde_json::Value) -> String {
    serde_json::to_string_pretty(draft).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"id": "s", "title": "T", "consent": "ok",
  "questions": [{"id": "a", "label": "A?", "kind": "yes_no"}], "cohort_size": 10, "invitations": true}"#;

    #[test]
    fn a_valid_draft_parses() {
        let d = parse(GOOD).unwrap();
        assert_eq!(
            (d.id.as_str(), d.cohort_size, d.invitations),
            ("s", 10, true)
        );
    }

    #[test]
    fn syntax_errors_name_line_and_column_on_one_line() {
        let e = parse("{\n  \"id\": \"s\",\n  \"title\" \"T\"\n}").unwrap_err();
        assert_eq!((e.line, e.column), (3, 11));
        let shown = e.to_string();
        assert!(
            shown.starts_with("JSON line 3, column 11: expected `:`"),
            "{shown}"
        );
        assert!(
            !shown.contains('\n') && !shown.contains(" at line "),
            "{shown}"
        );
    }

    #[test]
    fn unknown_fields_and_wrong_types_are_refused_with_their_place() {
        let e = parse(&GOOD.replace("\"cohort_size\"", "\"cohort_sise\"")).unwrap_err();
        assert!(e.what.contains("unknown field `cohort_sise`"), "{e}");
        assert_eq!(e.line, 2);
        let e = parse(&GOOD.replace("10", "\"ten\"")).unwrap_err();
        assert!(e.what.contains("invalid type: string \"ten\""), "{e}");
        let e = parse("").unwrap_err();
        assert_eq!(
            e.to_string(),
            "JSON line 1, column 0: EOF while parsing a value"
        );
    }
}
