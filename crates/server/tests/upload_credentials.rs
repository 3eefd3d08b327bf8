//! Issue 10 §1, performed as the attacks: only a device the collector handed a definition to can
//! upload, once. An anonymous request (no credential), a forged credential (another key), an
//! expired one, one for another survey and a reused one are each refused through HTTP with a
//! one-line error, nothing is stored and the cohort's count stays where it was; junk cannot fill
//! a cohort and lock real participants out, and the survey that was attacked still releases the
//! raw regression.

mod common;

use common::*;
use orthomask_server::run::AllRunning;
use orthomask_survey::trust::{CollectorSigningKey, NONCE_BYTES, UploadCredential};
use orthomask_survey::upload::Upload;
use serde_json::Value;

/// The uploads the provider holds for cohort `k` of `survey`, as the administrator sees them.
async fn stored_uploads(http: &reqwest::Client, all: &AllRunning, survey: &str, k: usize) -> u64 {
    let view = admin_view(http, all, survey).await;
    view["services"][0]["status"]["cohorts"][k]["uploads"]
        .as_u64()
        .unwrap_or_else(|| panic!("no upload count in {view}"))
}

fn error_line(body: &Value) -> &str {
    let e = body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("not a JSON error: {body}"));
    assert!(!e.is_empty() && !e.contains('\n'), "{e}");
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_without_a_valid_credential_are_refused_and_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("cred", 12, false, true)).await;
    let invited = links(&http, &all, &created, 13).await;
    let (def0, uploads) = prepare(&http, &invited[0], 0, &answers(0)).await;
    let (url, genuine) = uploads[0].clone();
    let credential = genuine
        .credential
        .clone()
        .expect("the client attaches the credential");

    // Each attack, with values a junk sender would choose (1e300 would sink QA if stored).
    let junk = |credential: Option<UploadCredential>, token: &str| Upload {
        values: vec![1e300; genuine.values.len()],
        token: token.to_owned(),
        credential,
        ..genuine.clone()
    };
    let forger = CollectorSigningKey::from_secret([9; 32]);
    let attacks: Vec<(&str, Upload, u16, &str)> = vec![
        (
            "anonymous",
            junk(None, "anonymous-token-0001"),
            401,
            "no upload credential",
        ),
        (
            "forged",
            junk(
                Some(UploadCredential::issue(
                    &forger,
                    "cred",
                    0,
                    [1; NONCE_BYTES],
                    FAR_FUTURE,
                )),
                "forged-token-000001",
            ),
            403,
            "not signed by this survey's collector",
        ),
        (
            "tampered",
            junk(
                Some(UploadCredential {
                    expires_at: FAR_FUTURE,
                    ..credential.clone()
                }),
                "tampered-token-00001",
            ),
            403,
            "not signed by this survey's collector",
        ),
        (
            "expired",
            junk(
                Some(UploadCredential::issue(
                    &collector_signing_key(dir.path()),
                    "cred",
                    0,
                    [2; NONCE_BYTES],
                    1_000_000_000,
                )),
                "expired-token-000001",
            ),
            403,
            "expired",
        ),
        (
            "another survey's",
            junk(
                Some(UploadCredential::issue(
                    &collector_signing_key(dir.path()),
                    "other",
                    0,
                    [3; NONCE_BYTES],
                    FAR_FUTURE,
                )),
                "other-token-00000001",
            ),
            403,
            // Answered as a forged one: another survey's credential must not tell that this
            // survey exists (issue 43 §6).
            "not signed by this survey's collector",
        ),
        (
            "malformed",
            junk(
                Some(UploadCredential {
                    nonce: "zz".into(),
                    ..credential.clone()
                }),
                "malformed-token-0001",
            ),
            403,
            "not signed by this survey's collector",
        ),
    ];
    for (what, upload, status, message) in &attacks {
        let (got, body) = post_upload(&http, &url, upload).await;
        assert_eq!(got, *status, "{what}: {body}");
        assert!(error_line(&body).contains(message), "{what}: {body}");
    }
    assert_eq!(
        stored_uploads(&http, &all, "cred", 0).await,
        0,
        "nothing was stored"
    );

    // The genuine upload goes in; a retry is idempotent; the same credential cannot bring in a
    // second upload under another token (ballot stuffing).
    let (status, first) = post_upload(&http, &url, &genuine).await;
    assert_eq!(status, 201, "{first}");
    let (status, again) = post_upload(&http, &url, &genuine).await;
    assert_eq!((status, &again), (200, &first));
    let mut stuffed = genuine.clone();
    stuffed.token = "stuffed-token-000001".into();
    stuffed.values[0] += 1.0;
    let (status, body) = post_upload(&http, &url, &stuffed).await;
    assert_eq!(status, 403, "{body}");
    assert!(error_line(&body).contains("already used"), "{body}");
    assert_eq!(stored_uploads(&http, &all, "cred", 0).await, 1);

    // m − 1 = 11 more junk requests cannot fill the cohort: the 11 invited participants still
    // get their places, and the survey releases exactly their regression.
    for t in 0..11 {
        let (status, _) =
            post_upload(&http, &url, &junk(None, &format!("junk-token-{t:09}"))).await;
        assert_eq!(status, 401);
    }
    let mut raw = vec![def0.encode(&answers(0)).unwrap()];
    for (i, link) in (1..).zip(&invited[1..12]) {
        let (record, _) = participate(&http, link, i).await;
        raw.push(record);
    }
    let (status, _) = admin_post(&http, &all, "/api/admin/surveys/cred/close").await;
    assert_eq!(status, 200);
    let (csv, _) = wait_for_release(&http, all.collector.url(), "cred", 120).await;
    assert_same_regression(&raw, &csv);
    all.stop().await;
}

/// Share mode needs no invitation, but still a credential: without loading the definition from
/// the collector nothing reaches a right-masking service.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_uploads_need_a_credential_too() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("shared", 12, true, false)).await;
    let link = &links(&http, &all, &created, 1).await[0];
    let (_, uploads) = prepare(&http, link, 0, &answers(0)).await;
    for (url, share) in &uploads {
        let mut anonymous = share.clone();
        anonymous.credential = None;
        let (status, body) = post_upload(&http, url, &anonymous).await;
        assert_eq!(status, 401, "{body}");
        let (status, body) = post_upload(&http, url, share).await;
        assert_eq!(status, 201, "{body}");
    }
    all.stop().await;
}

/// Garbage that does carry a valid credential (an invited participant who sends made-up numbers)
/// costs one refused upload, not a cohort (issue 20 §8): no honest device makes a vector that
/// long, so the provider refuses it before storing anything (422), and the cohort is released
/// with exactly its honest participants' raw regression.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_with_a_valid_credential_is_refused_and_the_cohort_released() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("spoilt", 12, false, true)).await;
    let invited = links(&http, &all, &created, 19).await;
    // Cohort 0: twelve honest participants (it fills and closes itself).
    let mut raw = Vec::new();
    for (i, link) in (0..12u64).zip(&invited) {
        let (record, sent) = participate(&http, link, i).await;
        assert_eq!(sent[0].receipt.cohort, 0);
        raw.push(record);
    }
    // Cohort 1: six honest participants and one whose "masked record" is made up.
    for (i, link) in (12..18u64).zip(&invited[12..18]) {
        let (record, _) = participate(&http, link, i).await;
        raw.push(record);
    }
    let (_, uploads) = prepare(&http, &invited[18], 18, &answers(18)).await;
    let (url, mut garbage) = uploads[0].clone();
    assert_eq!(garbage.cohort, 1);
    for (j, v) in garbage.values.iter_mut().enumerate() {
        *v = 1e6 * (j % 7) as f64;
    }
    let (status, body) = post_upload(&http, &url, &garbage).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("exceeds the"),
        "{body}"
    );
    let receipts = format!("{}/api/peer/surveys/spoilt/status", all.msp.url());
    let (_, view) = send_signed(
        &http,
        &identity_of(dir.path(), orthomask_server::peers::Party::Collector),
        orthomask_server::peers::Party::Provider,
        reqwest::Method::GET,
        &receipts,
        None,
    )
    .await;
    assert_eq!(
        view["cohorts"][1]["uploads"], 6,
        "nothing of it was stored: {view}"
    );

    let (status, _) = admin_post(&http, &all, "/api/admin/surveys/spoilt/close").await;
    assert_eq!(status, 200);
    let (csv, manifest) = wait_for_release(&http, all.collector.url(), "spoilt", 120).await;
    assert_same_regression(&raw, &csv);
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["cohorts"]["sizes"], serde_json::json!([12, 6]));
    all.stop().await;
}
