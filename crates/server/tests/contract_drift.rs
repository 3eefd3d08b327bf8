//! Disagreements between docs/openapi.yaml and the services that the contract tester
//! (`scripts/contract.sh`, schemathesis) found, each pinned by a test of its own.

mod common;

use common::*;
use orthomask_server::peers::Party;
use reqwest::Method;
use serde_json::json;

/// JSON has one number type and the contract's `integer` admits `3.0`: a body that writes an
/// integer with a fraction of zero is accepted, not refused with 422 (issue 14, found by the
/// tester's `positive_data_acceptance` on every operation with an integer field).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integers_written_as_floats_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let mut d = draft("floats", 12, false, true);
    d["cohort_size"] = json!(12.0);
    create_survey(&http, &all, &d).await;
    let (status, body) = send(
        &http,
        Method::POST,
        &format!(
            "{}/api/admin/surveys/floats/invitations",
            all.collector.url()
        ),
        Some(&json!({"count": 2.0})),
        Some(&all.admin_token),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["invitations"].as_array().map(Vec::len), Some(2));
    // A fraction is still refused, with the field named.
    let (status, body) = send(
        &http,
        Method::POST,
        &format!(
            "{}/api/admin/surveys/floats/invitations",
            all.collector.url()
        ),
        Some(&json!({"count": 2.5})),
        Some(&all.admin_token),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["error"].as_str().unwrap().contains("count"), "{body}");
    all.stop().await;
}

/// The peer requeue of a survey the service does not know is 404, like every other peer
/// operation on a survey (it answered 200 with `requeued: 0`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peer_requeue_of_an_unknown_survey_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let collector = identity_of(dir.path(), Party::Collector);
    let (status, body) = send_signed(
        &http,
        &collector,
        Party::Provider,
        Method::POST,
        &format!("{}/api/peer/surveys/nothing/outbox/requeue", all.msp.url()),
        None,
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(body["error"].is_string(), "{body}");
    all.stop().await;
}

/// Found by the contract tester: a registration with `p2 = 2⁶⁴ − 1` overflowed `p = p₁ + p₂`
/// and the handler panicked (the connection dropped without an answer). It is a 400 now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_with_huge_dimensions_is_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let collector = identity_of(dir.path(), Party::Collector);
    let direct = direct_survey("huge", 12, &[], collector_signing_key(dir.path()));
    for (answers, p2) in [(3u64, u64::MAX), (u64::MAX, 30)] {
        let mut registration = direct.registration.clone();
        registration["answers"] = json!(answers);
        registration["p2"] = json!(p2);
        let (status, body) = send_signed(
            &http,
            &collector,
            Party::Provider,
            Method::PUT,
            &format!("{}/api/peer/surveys/huge", all.msp.url()),
            Some(&registration),
        )
        .await;
        assert_eq!(status, 400, "{body}");
        assert!(
            body["error"].as_str().unwrap().contains("at most"),
            "{body}"
        );
    }
    all.stop().await;
}
