//! Issue 20 §7: taking a cohort place is a side effect, so it is a `POST` with a JSON body that a
//! cross-site page cannot send; a `GET` takes nothing (an `<img src>` on any page could otherwise
//! make its visitors burn an open survey's places, past every per-address rate limit). A real
//! survey's status — per-cohort counts and notes — is the survey team's: anonymous clients get
//! 401 and nothing of it; a live demonstration's stays public.

mod common;

use common::*;
use reqwest::Method;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_takes_no_place_and_a_cross_site_page_cannot_take_one() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("open-shares", 12, true, false)).await;
    let url = created["definition_url"].as_str().unwrap();

    // What an `<img src>` or a link does: a GET. Refused, and no place is taken.
    let (status, body) = get_text(&http, url).await;
    assert_eq!(status, 405, "{body}");
    // What a cross-site form can send: a simple content type. Refused before anything is read.
    for content_type in [
        "application/x-www-form-urlencoded",
        "text/plain",
        "multipart/form-data; boundary=x",
    ] {
        let r = http
            .post(url)
            .header("content-type", content_type)
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 415, "{content_type}");
    }
    // A JSON POST from another origin needs a CORS preflight, which the collector answers without
    // allowing any origin (its own page needs none).
    let r = http
        .request(Method::OPTIONS, url)
        .header("origin", "http://evil.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert!(
        r.headers().get("access-control-allow-origin").is_none(),
        "{:?}",
        r.headers()
    );
    let view = admin_view(&http, &all, "open-shares").await;
    assert_eq!(
        view["cohorts"][0]["assigned"], 0,
        "nothing took a place: {view}"
    );

    // The participant page's own request takes exactly one.
    let (status, body) = take_place(&http, url).await;
    assert_eq!(status, 200, "{body}");
    let view = admin_view(&http, &all, "open-shares").await;
    assert_eq!(view["cohorts"][0]["assigned"], 1, "{view}");
    all.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_surveys_status_needs_the_admin_token_and_a_demonstrations_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let all = orthomask_server::run::start_all(config(dir.path(), 3, None, true))
        .await
        .unwrap();
    let http = client();
    let created = create_survey(&http, &all, &draft("private", 12, false, true)).await;
    let survey = created["survey"].as_str().unwrap();
    let status_url = format!("{}/api/surveys/{survey}/status", all.collector.url());
    // Without the admin token a real survey is answered as one that does not exist (issue 43
    // §6): the same status and the same line.
    let (status, body) = send(&http, Method::GET, &status_url, None, None).await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["cohorts"].is_null() && body["title"].is_null(),
        "{body}"
    );
    let (_, none) = send(
        &http,
        Method::GET,
        &status_url.replace("/private/", "/no-such-survey/"),
        None,
        None,
    )
    .await;
    assert_eq!(
        one_line_error(&body).replace("private", "S"),
        one_line_error(&none).replace("no-such-survey", "S")
    );
    let (status, body) = send(
        &http,
        Method::GET,
        &status_url,
        None,
        Some("not-the-admin-token-0"),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = send(
        &http,
        Method::GET,
        &status_url,
        None,
        Some(&all.admin_token),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["cohorts"].is_array());
    // The live demonstrations the chooser lists stay public.
    let (status, list) = send(
        &http,
        Method::GET,
        &format!("{}/api/surveys", all.collector.url()),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let demos: Vec<Value> = list["surveys"].as_array().unwrap().clone();
    assert!(!demos.is_empty());
    for demo in demos {
        let id = demo["survey"].as_str().unwrap();
        let (status, body) = send(
            &http,
            Method::GET,
            &format!("{}/api/surveys/{id}/status", all.collector.url()),
            None,
            None,
        )
        .await;
        assert_eq!(status, 200, "{id}: {body}");
    }
    all.stop().await;
}
