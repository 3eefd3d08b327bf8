//! Hand-overs racing each other at the collector: a sender's outbox retries after a timeout
//! while its first request is still being judged, so the same part or result arrives twice at
//! once. The check "already stored? already settled?" and the write happen in one transaction,
//! so both answers are the same success and the cohort is settled once.
//!
//! The genuine hand-overs are held back at the collector's tap (503: the senders keep retrying)
//! and their bodies, as the tap recorded them, are sent twice at once, signed as their sender.

mod common;

use common::tap::{hold, start_tapped};
use common::*;
use orthomask_server::peers::{Identity, Party};
use reqwest::Method;
use serde_json::Value;

/// `PUT path` with `body` twice at once, straight to the collector (past its tap), signed by
/// `from` (each request afresh, as a sender's retry is).
async fn twice_at_once(
    http: &reqwest::Client,
    from: &Identity,
    collector: &str,
    path: &str,
    body: &Value,
) -> [(u16, Value); 2] {
    let url = format!("{collector}{path}");
    let to = Party::Collector;
    let one = send_signed(http, from, to, Method::PUT, &url, Some(body));
    let two = send_signed(http, from, to, Method::PUT, &url, Some(body));
    let (a, b) = tokio::join!(one, two);
    [a, b]
}

/// Share mode, three services: each service's part arrives twice at once — every answer is the
/// same success, one part is stored per service, and the cohort is combined into the raw data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_parts_racing_each_other_are_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let t = start_tapped(dir.path(), 3).await;
    let all = &t.all;
    let http = client();
    let created = create_survey(&http, all, &draft("part-race", 12, true, false)).await;
    let url = created["definition_url"].as_str().unwrap().to_owned();
    t.collector.set_rule(Some(hold(&["/parts/"])));
    let mut raw = Vec::new();
    for i in 0..12u64 {
        raw.push(participate(&http, &url, i).await.0);
    }
    let collector = all.collector.url();
    let mut pairs = Vec::new();
    for index in 0..3 {
        let held = t
            .collector
            .wait_seen("PUT", &format!("/cohorts/0/parts/{index}"))
            .await;
        let (path, body) = (held.path.clone(), held.json());
        let collector = collector.to_owned();
        let from = identity_of(dir.path(), Party::Right(index));
        pairs.push(async move { twice_at_once(&client(), &from, &collector, &path, &body).await });
    }
    for [(s1, b1), (s2, b2)] in join_all_spawned(pairs).await {
        assert_eq!((s1, s2), (200, 200), "{b1} / {b2}");
        assert_eq!(b1, b2);
    }
    let view = admin_view(&http, all, "part-race").await;
    assert_eq!(view["cohorts"][0]["status"], "received", "{view}");
    t.collector.set_rule(None);
    let (status, _) = admin_post(&http, all, "/api/admin/surveys/part-race/close").await;
    assert_eq!(status, 200);
    let (csv, _) = wait_for_release(&http, collector, "part-race", 60).await;
    assert_same_regression(&raw, &csv);
    t.all.stop().await;
}

/// Basic protocol: the provider's hand-over arrives twice at once — both answers say the same
/// settled state, and the cohort is settled once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_over_racing_its_retry_settles_once() {
    let dir = tempfile::tempdir().unwrap();
    let t = start_tapped(dir.path(), 0).await;
    let all = &t.all;
    let http = client();
    let created = create_survey(&http, all, &draft("result-race", 12, false, true)).await;
    let invited = links(&http, all, &created, 12).await;
    t.collector.set_rule(Some(hold(&["/result"])));
    let mut raw = Vec::new();
    for (i, link) in (0..12u64).zip(&invited) {
        raw.push(participate(&http, link, i).await.0);
    }
    let collector = all.collector.url();
    let held = t.collector.wait_seen("PUT", "/cohorts/0/result").await;
    let (path, body) = (held.path.clone(), held.json());
    let provider = identity_of(dir.path(), Party::Provider);
    let [(s1, b1), (s2, b2)] = twice_at_once(&http, &provider, collector, &path, &body).await;
    assert_eq!((s1, s2), (200, 200), "{b1} / {b2}");
    assert_eq!(
        (&b1["settled"], &b2["settled"]),
        (&Value::from("received"), &Value::from("received"))
    );
    t.collector.set_rule(None);
    let (status, _) = admin_post(&http, all, "/api/admin/surveys/result-race/close").await;
    assert_eq!(status, 200);
    let (csv, _) = wait_for_release(&http, collector, "result-race", 60).await;
    assert_same_regression(&raw, &csv);
    t.all.stop().await;
}
