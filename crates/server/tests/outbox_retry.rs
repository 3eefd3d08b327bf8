//! Issue 10 §6: hand-overs always finish. The provider's outbox retries with back-off whatever
//! does not judge the hand-over itself (a 401 after a key change, a proxy's 404 or 413), gives
//! up only on a verdict on the content (409, 422), and the administrator can put a refused
//! hand-over back in the queue. The collector here is a scripted mock that answers what a broken
//! deployment would.

mod common;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::put;
use common::*;
use orthomask_server::MspConfig;
use orthomask_server::peers::{Identity, Party, PeerKeys};
use orthomask_server::run::{bind, start_msp};
use orthomask_survey::trust::{CollectorSigningKey, NONCE_BYTES};
use reqwest::Method;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The answers the mock collector gives, in order; after the script, 200.
#[derive(Clone, Default)]
struct Script(Arc<Mutex<(Vec<u16>, Vec<u16>)>>);

impl Script {
    fn set(&self, answers: &[u16]) {
        self.0.lock().unwrap().0 = answers.iter().rev().copied().collect();
    }
    fn next(&self) -> u16 {
        let mut s = self.0.lock().unwrap();
        let code = s.0.pop().unwrap_or(200);
        s.1.push(code);
        code
    }
    fn answered(&self) -> Vec<u16> {
        self.0.lock().unwrap().1.clone()
    }
}

async fn mock_collector(script: Script) -> String {
    let app = Router::new().route(
        "/api/peer/surveys/{survey}/cohorts/{cohort}/result",
        put(move || {
            let script = script.clone();
            async move {
                let code = StatusCode::from_u16(script.next()).unwrap();
                (
                    code,
                    json!({"error": format!("scripted {code}")}).to_string(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// The mock collector's signing key: the key its registrations carry and its identity.
const COLLECTOR_SECRET: [u8; 32] = [5; 32];

fn key() -> CollectorSigningKey {
    CollectorSigningKey::from_secret(COLLECTOR_SECRET)
}

/// The collector, as it signs its requests to the provider.
fn collector_identity() -> Identity {
    Identity::from_secret(Party::Collector, COLLECTOR_SECRET)
}

/// Register `survey` (the test survey, cohorts of 6) and fill cohort 0 with honest uploads,
/// which makes the provider mask it and queue the hand-over.
async fn fill_a_cohort(http: &reqwest::Client, msp: &str, survey: &str) {
    let direct = direct_survey(survey, 6, &[], key());
    let c = collector_identity();
    let url = format!("{msp}/api/peer/surveys/{survey}");
    let to = Party::Provider;
    let (status, body) =
        send_signed(http, &c, to, Method::PUT, &url, Some(&direct.registration)).await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = send_signed(
        http,
        &c,
        to,
        Method::POST,
        &format!("{url}/cohorts/0/open"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    for i in 0..6u8 {
        let (_, upload) = direct.uploads(u64::from(i), 0, [i; NONCE_BYTES]).remove(0);
        let (status, body) = post_upload(
            http,
            &format!("{msp}/api/surveys/{survey}/uploads"),
            &upload,
        )
        .await;
        assert_eq!(status, 201, "{body}");
    }
}

/// The provider's outbox entry for cohort 0 once it reaches `state` (waiting for the step,
/// with a generous deadline, never asserting a duration).
async fn outbox_reaches(http: &reqwest::Client, msp: &str, survey: &str, state: &str) -> Value {
    wait_for_peer_view(
        http,
        msp,
        (&collector_identity(), Party::Provider),
        survey,
        |v| v["outbox"][0]["state"] == state,
    )
    .await["outbox"][0]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_refusals_are_retried_and_a_verdict_can_be_requeued() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script::default();
    let collector = mock_collector(script.clone()).await;
    let msp = start_msp(
        MspConfig {
            data_dir: Path::new(dir.path()).join("msp"),
            public_url: "http://127.0.0.1".into(),
            collector_url: collector,
            right_urls: Vec::new(),
            peer_keys: PeerKeys {
                collector: Some(collector_identity().public_key()),
                ..PeerKeys::default()
            },
            limits: loose_limits(),
            allowed_origins: Vec::new(),
        },
        bind("127.0.0.1:0").await.unwrap(),
    )
    .await
    .unwrap();
    let http = client();
    let url = msp.url().to_owned();

    // A key change, a proxy that lost the route, a proxy body limit: retried, then delivered.
    script.set(&[401, 404, 413]);
    fill_a_cohort(&http, &url, "transient").await;
    let item = outbox_reaches(&http, &url, "transient", "delivered").await;
    assert_eq!(script.answered(), [401, 404, 413, 200], "{item}");

    // A verdict on the content is final …
    script.set(&[422]);
    fill_a_cohort(&http, &url, "refused").await;
    let item = outbox_reaches(&http, &url, "refused", "rejected").await;
    assert!(
        item["last_error"].as_str().unwrap().contains("422"),
        "{item}"
    );
    // … until the administrator puts it back in the queue.
    let (status, body) = send_signed(
        &http,
        &collector_identity(),
        Party::Provider,
        Method::POST,
        &format!("{url}/api/peer/surveys/refused/outbox/requeue"),
        None,
    )
    .await;
    assert_eq!(
        (status, body["requeued"].as_u64()),
        (200, Some(1)),
        "{body}"
    );
    outbox_reaches(&http, &url, "refused", "delivered").await;
    let (status, _) = send(
        &http,
        Method::POST,
        &format!("{url}/api/peer/surveys/refused/outbox/requeue"),
        None,
        None,
    )
    .await;
    assert_eq!(status, 401, "requeue is a peer call");
    msp.stop().await;
}

/// The collector's administrator reaches every service's requeue through one call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_administrator_requeues_through_the_collector() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    create_survey(&http, &all, &draft("requeue", 12, true, false)).await;
    let (status, body) = admin_post(&http, &all, "/api/admin/surveys/requeue/requeue").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["services"].as_array().unwrap().len(),
        4,
        "three right-masking services and the provider: {body}"
    );
    all.stop().await;
}
