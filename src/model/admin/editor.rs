//! The JSON editor: the draft as text, parsed with the same serde types the collector uses
//! (`SurveyDraft` denies unknown fields) and checked as the schema `docs/survey.schema.json`
//! (`#/$defs/draft`) checks it ([`check`]): no field a question's kind does not have, and the
//! id, texts and questions by `SurveyDraft::validate_content`. The cases of
//! `docs/draft-cases.json` are refused here and by the schema alike (tested on both sides).

use orthomask_survey::definition::question_fields;
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

/// Why the editor's text is not a draft the collector takes.
#[derive(Debug, thiserror::Error)]
pub enum DraftTextError {
    /// Not JSON, or not a draft's shape: with its place.
    #[error(transparent)]
    Syntax(#[from] EditorError),
    /// A question field its kind does not have (the parser would ignore it; the schema refuses).
    #[error("questions[{index}]: {kind} questions have no field {field:?}")]
    QuestionField {
        /// Which question.
        index: usize,
        /// Its kind's tag.
        kind: String,
        /// The field.
        field: String,
    },
    /// The id, a text or a question breaks a rule.
    #[error(transparent)]
    Content(#[from] orthomask_survey::definition::SurveyError),
}

/// Parse and check the editor's text as the schema does ([`parse`], then each question's fields
/// against its kind, then the content rules).
///
/// # Errors
/// The first [`DraftTextError`], one line.
pub fn check(text: &str) -> Result<SurveyDraft, DraftTextError> {
    let draft = parse(text)?;
    // Parsed once more as plain JSON for the field names serde's flattened kind lets through.
    let raw: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let questions = raw.get("questions").and_then(|q| q.as_array());
    for (index, (question, parsed)) in questions
        .into_iter()
        .flatten()
        .zip(&draft.questions)
        .enumerate()
    {
        let allowed = question_fields(&parsed.kind);
        let unknown = question
            .as_object()
            .and_then(|fields| fields.keys().find(|k| !allowed.contains(&k.as_str())));
        if let Some(field) = unknown {
            return Err(DraftTextError::QuestionField {
                index,
                kind: question["kind"].as_str().unwrap_or_default().to_owned(),
                field: field.clone(),
            });
        }
    }
    draft.validate_content()?;
    Ok(draft)
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
            ("s", Some(10), true)
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

    /// `docs/draft-cases.json`: every valid case passes [`check`], every invalid one is refused
    /// with one line — the same verdicts `scripts/check_schemas.py` asserts for the schema.
    #[test]
    fn the_editor_and_the_schema_agree_on_the_draft_cases() {
        let cases: serde_json::Value =
            serde_json::from_str(include_str!("../../../docs/draft-cases.json")).unwrap();
        for draft in cases["valid"].as_array().unwrap() {
            let text = serde_json::to_string_pretty(draft).unwrap();
            check(&text).unwrap_or_else(|e| panic!("{}: {e}", draft["id"]));
        }
        let invalid = cases["invalid"].as_array().unwrap();
        assert!(invalid.len() >= 10);
        for case in invalid {
            let text = serde_json::to_string_pretty(&case["draft"]).unwrap();
            let e = check(&text).expect_err(case["why"].as_str().unwrap());
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }

    #[test]
    fn a_field_of_another_kind_is_named() {
        let e = check(&GOOD.replace(r#""kind": "yes_no""#, r#""kind": "yes_no", "points": 5"#))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"questions[0]: yes_no questions have no field "points""#
        );
    }
}
