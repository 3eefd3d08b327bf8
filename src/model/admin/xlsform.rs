//! "Import XLSForm" on the survey team's page: a workbook's bytes (read in the browser) go to
//! the collector (`POST /api/admin/xlsform`), which answers the draft it becomes
//! ([`XlsformDraft`]); this turns that answer into the JSON editor's text, which the builder
//! follows as it follows typed text. The collector reads the workbook, not the page, so the app
//! every participant downloads carries no xlsx reader (about 0.6 MB of WebAssembly); the
//! mapping and every refusal are `orthomask_xlsform`'s.

use base64::Engine as _;
use orthomask_survey::api::{XlsformDraft, XlsformUpload};

use super::editor;

/// What an import gives the page.
#[derive(Clone, Debug, PartialEq)]
pub struct XlsformImport {
    /// The draft as the JSON editor shows it.
    pub text: String,
    /// What the import left out on purpose, one line each with its row.
    pub ignored: Vec<String>,
}

/// The request that sends the workbook `bytes` read from the file `name`.
pub fn upload(bytes: &[u8], name: &str) -> XlsformUpload {
    XlsformUpload {
        name: name.to_owned(),
        workbook_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
    }
}

/// The collector's answer as the editor's text.
///
/// # Errors
/// One line when the draft does not serialise (it always does: it came as JSON).
pub fn imported(answer: &XlsformDraft) -> Result<XlsformImport, String> {
    let json = serde_json::to_value(&answer.draft).map_err(|e| e.to_string())?;
    Ok(XlsformImport {
        text: editor::text(&json),
        ignored: answer.left_out.clone(),
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

    /// The collector's reading of `request`, as `POST /api/admin/xlsform` does it (its
    /// HTTP test is the services' `xlsform_endpoint`).
    fn collector_reads(request: &XlsformUpload) -> Result<XlsformDraft, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&request.workbook_base64)
            .map_err(|e| e.to_string())?;
        let i = orthomask_xlsform::import(&bytes, &request.name)
            .map_err(|e| format!("{}: {e}", request.name))?;
        Ok(XlsformDraft {
            draft: i.draft,
            left_out: i.ignored.iter().map(ToString::to_string).collect(),
        })
    }

    /// An XLSForm (here one the exporter wrote), sent as the page sends it and read as the
    /// collector reads it, fills the builder exactly as the draft's JSON typed into the editor
    /// would.
    #[test]
    fn an_xlsform_fills_the_builder() {
        let draft: orthomask_survey::draft::SurveyDraft = serde_json::from_str(DRAFT).unwrap();
        let bytes = orthomask_xlsform::export(&draft).unwrap();
        let answer = collector_reads(&upload(&bytes, "form.xlsx")).unwrap();
        let imported = imported(&answer).unwrap();
        assert!(imported.ignored.is_empty());
        let state = Rc::new(BuilderState::default()).reduce(BuilderAction::Text(imported.text));
        assert_eq!(state.text_error, None);
        assert_eq!(state.form.to_draft().unwrap(), draft);
    }
}
