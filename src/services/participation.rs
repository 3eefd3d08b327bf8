//! Open the survey a participant link names (issue 10 §3): from the collector that served the
//! page — its deployment and its signed offer, both fetched by path from this origin and checked
//! by [`model::participation::accept`](crate::model::participation::accept) — or a bundled
//! demonstration from the app's own files. Never from an address taken from the link.

use orthomask_survey::definition::SurveyDefinition;

use super::clock::unix_seconds;
use super::http::get_text;
use crate::model::participation::{
    self, Access, DEPLOYMENT_PATH, Source, definition_path, demonstration_path,
};

/// Fetch and check the survey `source` names.
///
/// # Errors
/// One line: the fetch that failed (with the collector's message), or why the offer is not
/// trusted. Nothing has been masked or sent when this fails.
pub async fn open(source: &Source) -> Result<(SurveyDefinition, Access), String> {
    match source {
        Source::Collector { survey, invite } => {
            let deployment = get_text(DEPLOYMENT_PATH).await?;
            let offer = get_text(&definition_path(survey, invite.as_deref())).await?;
            // Named without the invitation: the message may be shown or reported.
            let source_name = definition_path(survey, None);
            participation::accept(&deployment, &offer, survey, &source_name, unix_seconds())
                .map_err(|e| e.to_string())
        }
        Source::Demonstration { name } => {
            let path = demonstration_path(name);
            let text = get_text(&path).await?;
            participation::open_demonstration(&text, &path).map_err(|e| e.to_string())
        }
    }
}
