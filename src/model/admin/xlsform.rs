//! "Import XLSForm" on the survey team's page: a workbook's bytes (read in the browser) → the
//! JSON editor's text of its draft, which the builder follows as it follows typed text; or the
//! import's one line naming the row it refused. The mapping is `orthomask_xlsform`'s.

use super::editor;

/// What an import gives the page.
#[derive(Clone, Debug, PartialEq)]
pub struct XlsformImport {
    /// The draft as the JSON editor shows it.
    pub text: String,
    /// What the import left out on purpose, one line each with its row.
    pub ignored: Vec<String>,
}

/// Import the XLSForm `bytes` read from the file `name`.
///
/// # Errors
/// One line: the file's name, the sheet and row, and why.
pub fn import(bytes: &[u8], name: &str) -> Result<XlsformImport, String> {
    let imported = orthomask_xlsform::import(bytes, name).map_err(|e| format!("{name}: {e}"))?;
    let json = serde_json::to_value(&imported.draft).map_err(|e| format!("{name}: {e}"))?;
    Ok(XlsformImport {
        text: editor::text(&json),
        ignored: imported.ignored.iter().map(ToString::to_string).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::admin::state::{BuilderAction, BuilderState};
    use std::rc::Rc;
    use yew::Reducible;

    const DRAFT: &str = r#"{"id": "from-kobo", "title": "T", "consent": "ok", "language": "es",
  "questions": [{"id": "a", "label": "¿A?", "kind": "yes_no"},
                {"id": "n", "label": "N", "kind": "integer", "min": 1, "max": 9, "show_if": {"question": "a", "equals": "yes"}}],
  "cohort_size": 10, "invitations": true}"#;

    /// An XLSForm (here one the exporter wrote) fills the builder exactly as the draft's JSON
    /// typed into the editor would.
    #[test]
    fn an_xlsform_fills_the_builder() {
        let draft: orthomask_survey::draft::SurveyDraft = serde_json::from_str(DRAFT).unwrap();
        let bytes = orthomask_xlsform::export(&draft).unwrap();
        let imported = import(&bytes, "form.xlsx").unwrap();
        assert!(imported.ignored.is_empty());
        let state = Rc::new(BuilderState::default()).reduce(BuilderAction::Text(imported.text));
        assert_eq!(state.text_error, None);
        assert_eq!(state.form.to_draft().unwrap(), draft);
    }

    #[test]
    fn a_refusal_is_one_line_naming_the_file() {
        let e = import(b"not a workbook", "form.xlsx").unwrap_err();
        assert!(e.starts_with("form.xlsx: not an XLSForm workbook"), "{e}");
        assert!(!e.contains('\n'));
    }
}
