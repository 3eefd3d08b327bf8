//! The collector's admin API (`/api/admin/…`, same origin as the page), every request with
//! `Authorization: Bearer <token>`. The token lives in this tab's `sessionStorage` only (never
//! `localStorage`): closing the tab forgets it, and [`forget_token`] signs out.

use orthomask_survey::api::{
    self, InvitationRequest, Invitations, SurveyList, SurveyStatus, XlsformDraft, XlsformUpload,
};
use orthomask_survey::trust::Deployment;

use super::http::{FetchError, fetch_text};

const TOKEN_KEY: &str = "orthomask-admin-token";

fn session() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok().flatten()
}

/// The token this tab signed in with.
pub fn saved_token() -> Option<String> {
    session()?
        .get_item(TOKEN_KEY)
        .ok()
        .flatten()
        .filter(|t| !t.is_empty())
}

/// Keep `token` for this tab.
pub fn keep_token(token: &str) {
    if let Some(s) = session() {
        let _ = s.set_item(TOKEN_KEY, token);
    }
}

/// Sign out: forget the token.
pub fn forget_token() {
    if let Some(s) = session() {
        let _ = s.remove_item(TOKEN_KEY);
    }
}

/// One request to this origin ([`fetch_text`], with the bearer `token` when given); the
/// answer's text, or one line: the service's `{"error": …}` message alone when it gives one.
async fn request(
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Result<String, String> {
    fetch_text(method, path, body, token)
        .await
        .map_err(|e| match e {
            FetchError::Status {
                reason: Some(reason),
                ..
            } => reason,
            other => other.to_string(),
        })
}

/// `GET /api/admin/surveys`: the surveys, which also checks the token.
///
/// # Errors
/// One line (a wrong token: the collector's message).
pub async fn list(token: &str) -> Result<SurveyList, String> {
    let text = request("GET", "/api/admin/surveys", Some(token), None).await?;
    api::parse(&text, "survey list")
}

/// `GET /api/admin/surveys/{id}`: the survey and every service's status of it.
///
/// # Errors
/// One line.
pub async fn survey(token: &str, id: &str) -> Result<SurveyStatus, String> {
    let text = request(
        "GET",
        &format!("/api/admin/surveys/{id}"),
        Some(token),
        None,
    )
    .await?;
    api::parse(&text, "survey status")
}

/// `POST /api/admin/surveys` with the draft's JSON; the collector's answer, pretty.
///
/// # Errors
/// One line: the collector's refusal.
pub async fn create(token: &str, draft: &serde_json::Value) -> Result<String, String> {
    let text = request(
        "POST",
        "/api/admin/surveys",
        Some(token),
        Some(&draft.to_string()),
    )
    .await?;
    Ok(serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or(text))
}

/// `POST /api/admin/xlsform`: the draft the collector reads from an XLSForm workbook.
///
/// # Errors
/// One line: the collector's refusal naming the file, sheet and row.
pub async fn import_xlsform(token: &str, upload: &XlsformUpload) -> Result<XlsformDraft, String> {
    let body = serde_json::to_string(upload).map_err(|e| e.to_string())?;
    let text = request("POST", "/api/admin/xlsform", Some(token), Some(&body)).await?;
    api::parse(&text, "XLSForm draft")
}

/// `POST /api/admin/surveys/{id}/invitations {"count": n}`.
///
/// # Errors
/// One line.
pub async fn invite(token: &str, id: &str, count: usize) -> Result<Invitations, String> {
    let body = serde_json::to_string(&InvitationRequest { count })
        .map_err(|e| format!("the invitation request: {e}"))?;
    let text = request(
        "POST",
        &format!("/api/admin/surveys/{id}/invitations"),
        Some(token),
        Some(&body),
    )
    .await?;
    api::parse(&text, "invitations")
}

/// `POST /api/admin/surveys/{id}/cohorts/{k}/close`.
///
/// # Errors
/// One line.
pub async fn close_cohort(token: &str, id: &str, cohort: u32) -> Result<(), String> {
    request(
        "POST",
        &format!("/api/admin/surveys/{id}/cohorts/{cohort}/close"),
        Some(token),
        Some("{}"),
    )
    .await
    .map(drop)
}

/// `POST /api/admin/surveys/{id}/close`: close every cohort and publish.
///
/// # Errors
/// One line.
pub async fn close_survey(token: &str, id: &str) -> Result<(), String> {
    request(
        "POST",
        &format!("/api/admin/surveys/{id}/close"),
        Some(token),
        Some("{}"),
    )
    .await
    .map(drop)
}

/// `GET /api/deployment`: where this deployment's participants upload.
///
/// # Errors
/// One line.
pub async fn deployment() -> Result<Deployment, String> {
    let text = request("GET", "/api/deployment", None, None).await?;
    api::parse(&text, "deployment description")
}

/// The released columns and which are binary, from the public `manifest.json`.
///
/// # Errors
/// One line.
pub async fn manifest_columns(url: &str) -> Result<(Vec<String>, Vec<String>), String> {
    let text = request("GET", url, None, None).await?;
    let v: serde_json::Value = api::parse(&text, "manifest")?;
    let names = |k: &str| -> Vec<String> {
        v.get(k)
            .and_then(|a| a.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|c| c.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok((names("columns"), names("binary_columns")))
}
