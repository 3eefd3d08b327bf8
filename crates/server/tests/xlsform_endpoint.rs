//! Issue 29 §1: `POST /api/admin/xlsform` reads a team's XLSForm workbook as a draft, for the
//! team's page — the collector reads it, so the app participants download carries no xlsx
//! reader. The workbook here is one `orthomask_xlsform::export` wrote of a draft with a
//! translation, a branch and a model term; the collector's answer must be that draft, which
//! `POST /api/admin/surveys` then creates. Without the admin token nothing is read; bytes that
//! are not base64, or not a workbook, get one line naming the file.

mod common;

use base64::Engine as _;
use common::*;
use orthomask_survey::api::XlsformDraft;
use orthomask_survey::draft::SurveyDraft;
use serde_json::json;

fn draft() -> SurveyDraft {
    serde_json::from_value(json!({
        "id": "from-kobo",
        "title": "Household",
        "consent": "Your answers are masked on this device.",
        "language": "en",
        "questions": [
            {"id": "smoker", "label": "Do you smoke?", "kind": "yes_no"},
            {"id": "age", "label": "Your age", "kind": "integer", "min": 18, "max": 90,
             "show_if": {"question": "smoker", "equals": "yes"}}
        ],
        "terms": [{"id": "age_sq", "kind": "power", "of": "age", "exponent": 2}],
        "translations": {"es": {"title": "Hogar", "consent": "Sus respuestas se enmascaran.",
            "questions": {"smoker": {"label": "¿Fuma?"}, "age": {"label": "Su edad"}}}},
        "invitations": true
    }))
    .unwrap()
}

#[tokio::test]
async fn the_collector_reads_an_xlsform_as_the_draft_it_was_written_from() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let url = format!("{}/api/admin/xlsform", all.collector.url());
    let workbook = orthomask_xlsform::export(&draft()).unwrap();
    let body = json!({
        "name": "household.xlsx",
        "workbook_base64": base64::engine::general_purpose::STANDARD.encode(&workbook),
    });
    let (status, _) = send(&http, reqwest::Method::POST, &url, Some(&body), None).await;
    assert_eq!(status, 401, "read without the admin token");
    let as_admin = |body: serde_json::Value| {
        let (http, url, token) = (&http, &url, &all.admin_token);
        async move { send(http, reqwest::Method::POST, url, Some(&body), Some(token)).await }
    };
    let (status, answer) = as_admin(body).await;
    assert_eq!(status, 200, "{answer}");
    let read: XlsformDraft = serde_json::from_value(answer).unwrap();
    assert_eq!(read.draft, draft());
    assert!(read.left_out.is_empty(), "{:?}", read.left_out);
    // The draft it answers is one the collector creates.
    let created = create_survey(&http, &all, &serde_json::to_value(&read.draft).unwrap()).await;
    // smoker, age, age_answered (age is shown only to smokers), age_sq and QA.
    assert_eq!(created["p1"], 5, "{created}");

    for (workbook_base64, expected) in [
        (
            "not base64!",
            "household.xlsx: workbook_base64 is not base64",
        ),
        (
            "bm90IGEgd29ya2Jvb2s=",
            "household.xlsx: not an XLSForm workbook",
        ),
    ] {
        let (status, answer) =
            as_admin(json!({"name": "household.xlsx", "workbook_base64": workbook_base64})).await;
        assert_eq!(status, 400, "{answer}");
        let message = answer["error"].as_str().unwrap();
        assert!(message.starts_with(expected), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }
    all.stop().await;
}
