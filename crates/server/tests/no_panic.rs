//! Issue 10 §7: no request reaches a panic. Each case that used to index out of range or build
//! from inconsistent state answers with a one-line error instead, and the service stays up.

mod common;

use common::*;
use orthomask_server::peers::Party;
use reqwest::Method;
use serde_json::{Value, json};

fn error_line(body: &Value) -> &str {
    let e = body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("not a JSON error: {body}"));
    assert!(!e.is_empty() && !e.contains('\n'), "{e}");
    e
}

async fn healthy(http: &reqwest::Client, base: &str) {
    let (status, body) = send(http, Method::GET, &format!("{base}/api/health"), None, None).await;
    assert_eq!(status, 200, "{base} is down: {body}");
}

/// A share-mode survey planned with three right-masking services, then the collector restarted
/// with none: every call that would reach them answers 503 naming the configuration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_restarted_with_fewer_right_services_answers_503() {
    let dir = tempfile::tempdir().unwrap();
    let http = client();
    let all = start(dir.path(), 3, None).await;
    create_survey(&http, &all, &draft("fewer", 12, true, false)).await;
    all.stop().await;

    let all = start(dir.path(), 0, None).await;
    for (method, path) in [
        (Method::POST, "/api/admin/surveys/fewer/close"),
        (Method::GET, "/api/admin/surveys/fewer"),
        (Method::POST, "/api/admin/surveys/fewer/cohorts/0/close"),
    ] {
        let (status, body) = send(
            &http,
            method,
            &format!("{}{path}", all.collector.url()),
            Some(&json!({})),
            Some(&all.admin_token),
        )
        .await;
        assert_eq!(status, 503, "{path}: {body}");
        assert!(error_line(&body).contains("configured with 0"), "{body}");
    }
    healthy(&http, all.collector.url()).await;
    all.stop().await;
}

/// Once the provider holds a survey's share blocks, a registration with another record length
/// is refused (409) rather than accepted and later mis-shaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_registration_with_another_p_after_share_blocks_arrived_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let http = client();
    let all = start(dir.path(), 3, None).await;
    let created = create_survey(&http, &all, &draft("reshaped", 12, true, false)).await;
    for (i, link) in (0..12u64).zip(&links(&http, &all, &created, 12).await) {
        participate(&http, link, i).await;
    }
    let (status, _) = admin_post(&http, &all, "/api/admin/surveys/reshaped/close").await;
    assert_eq!(status, 200);
    // Released: the provider has had both blocks.
    wait_for_release(&http, all.collector.url(), "reshaped", 120).await;
    let (_, deployment) = send(
        &http,
        Method::GET,
        &format!("{}/api/deployment", all.collector.url()),
        None,
        None,
    )
    .await;
    let collector = identity_of(dir.path(), Party::Collector);
    // The collector itself signs another design of the survey (cohorts of 13: another p₂).
    let signing = collector_signing_key(dir.path());
    assert_eq!(
        deployment["collector_public_key"],
        signing.public_key().to_hex()
    );
    let rights: Vec<String> = all.rights.iter().map(|r| r.url().to_owned()).collect();
    let reshaped = direct_survey("reshaped", 13, &rights, signing).registration;
    assert_ne!(reshaped["p2"], created["p2"]);
    let (status, body) = send_signed(
        &http,
        &collector,
        Party::Provider,
        Method::PUT,
        &format!("{}/api/peer/surveys/reshaped", all.msp.url()),
        Some(&reshaped),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert!(error_line(&body).contains("never replaced"), "{body}");
    healthy(&http, all.msp.url()).await;
    all.stop().await;
}

/// Cohort numbers that are not a `u32`, or name a cohort the upload's credential is not for,
/// are 4xx at a right-masking service, which keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_cohort_numbers_at_a_right_masking_service_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let http = client();
    let all = start(dir.path(), 3, None).await;
    let created = create_survey(&http, &all, &draft("cohorts", 12, true, false)).await;
    let right = all.rights[0].url().to_owned();
    let collector = identity_of(dir.path(), Party::Collector);
    for cohort in ["abc", "-1", "99999999999", "1.5", "%00"] {
        let (status, body) = send(
            &http,
            Method::GET,
            &format!("{right}/api/surveys/cohorts/cohorts/{cohort}/receipts"),
            None,
            None,
        )
        .await;
        assert_eq!(status, 400, "receipts of cohort {cohort:?}: {body}");
        error_line(&body);
        let (status, body) = send_signed(
            &http,
            &collector,
            Party::Right(0),
            Method::POST,
            &format!("{right}/api/peer/surveys/cohorts/cohorts/{cohort}/open"),
            None,
        )
        .await;
        assert_eq!(status, 400, "opening cohort {cohort:?}: {body}");
    }
    let link = &links(&http, &all, &created, 1).await[0];
    let (_, uploads) = prepare(&http, link, 0, &answers(0)).await;
    let (url, mut share) = uploads[0].clone();
    share.cohort = u32::MAX;
    let (status, body) = post_upload(&http, &url, &share).await;
    assert_eq!(status, 403, "{body}");
    healthy(&http, &right).await;
    all.stop().await;
}
