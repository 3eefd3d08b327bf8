//! Issue 10 §6: in share mode the collector stores the last part before it combines the parts.
//! A crash or a store error in between used to leave the cohort unresolved for ever (the retry
//! of the last part took the "same part again" branch and did nothing). The failure is injected
//! here by writing the parts into the collector's database directly — exactly the state such a
//! crash leaves — and combining must then happen at start-up, or on the retry.

mod common;

use common::*;
use nalgebra::DMatrix;
use orthomask_server::wire::{SharePart, WireMatrix};
use orthomask_survey::merkle::sha256_hex;
use reqwest::Method;
use rusqlite::Connection;
use serde_json::Value;
use std::path::Path;

/// Right-masking service `index`'s part for cohort 0: `rows × p` numbers (not a genuine `A Xⁱ`,
/// so the combined cohort fails QA — which is a resolution, and shows that combining ran).
fn part(survey: &str, index: u32, p: usize) -> SharePart {
    let mut g = Xorshift::new(u64::from(index) + 77);
    SharePart {
        survey: survey.into(),
        cohort: 0,
        index,
        merkle_root: format!("root-{index}"),
        uploads: 6,
        block: WireMatrix::from_matrix(&DMatrix::from_fn(6, p, |_, _| g.uniform())),
    }
}

/// Store `part` as the collector's share-part handler does, bypassing it: the state a crash
/// between storing and combining leaves.
fn store_directly(collector_db: &Path, part: &SharePart) {
    let conn = Connection::open(collector_db).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    let m = part.block.to_matrix().unwrap();
    let blob: Vec<u8> = (0..m.nrows())
        .flat_map(|i| m.row(i).iter().copied().collect::<Vec<_>>())
        .flat_map(f64::to_le_bytes)
        .collect();
    conn.execute(
        "INSERT INTO share_parts (survey, cohort, idx, body_hash, nrows, ncols, data, merkle_root)
         VALUES (?1, 0, ?2, ?3, ?4, ?5, ?6, ?7)",
        (
            &part.survey,
            part.index,
            sha256_hex(&serde_json::to_vec(part).unwrap()),
            m.nrows(),
            m.ncols(),
            blob,
            &part.merkle_root,
        ),
    )
    .unwrap();
}

async fn cohort_0_status(http: &reqwest::Client, collector: &str, survey: &str) -> Value {
    let (_, view) = send(
        http,
        Method::GET,
        &format!("{collector}/api/surveys/{survey}/status"),
        None,
        None,
    )
    .await;
    view["cohorts"][0]["status"].clone()
}

/// Wait for the step (combining) to happen, not for a time.
async fn resolved(http: &reqwest::Client, collector: &str, survey: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let status = cohort_0_status(http, collector, survey).await;
        if status != "open" {
            return status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "cohort 0 of {survey} never combined"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn combining_interrupted_by_a_crash_resumes_at_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let http = client();
    let all = start(dir.path(), 2, None).await;
    let created = create_survey(&http, &all, &draft("crashed", 12, true, false)).await;
    let p = (created["p1"].as_u64().unwrap() + created["p2"].as_u64().unwrap()) as usize;
    all.stop().await;
    let db = dir.path().join("collector/collector.sqlite3");
    store_directly(&db, &part("crashed", 0, p));
    store_directly(&db, &part("crashed", 1, p));

    let all = start(dir.path(), 2, None).await;
    let status = resolved(&http, all.collector.url(), "crashed").await;
    assert_eq!(
        status, "failed",
        "combined, and the made-up parts failed QA"
    );
    all.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn combining_interrupted_by_a_store_error_resumes_on_the_retry() {
    let dir = tempfile::tempdir().unwrap();
    let http = client();
    let all = start(dir.path(), 2, None).await;
    let created = create_survey(&http, &all, &draft("retried", 12, true, false)).await;
    let p = (created["p1"].as_u64().unwrap() + created["p2"].as_u64().unwrap()) as usize;
    let peer_token = std::fs::read_to_string(dir.path().join("peer-token")).unwrap();
    let put = |part: SharePart| {
        let http = http.clone();
        let url = format!(
            "{}/api/peer/surveys/retried/cohorts/0/parts/{}",
            all.collector.url(),
            part.index
        );
        let token = peer_token.trim().to_owned();
        async move {
            send(
                &http,
                Method::PUT,
                &url,
                Some(&serde_json::to_value(&part).unwrap()),
                Some(&token),
            )
            .await
        }
    };
    let (status, body) = put(part("retried", 0, p)).await;
    assert_eq!(status, 200, "{body}");
    // The last part was stored, then the request failed before combining.
    store_directly(
        &dir.path().join("collector/collector.sqlite3"),
        &part("retried", 1, p),
    );
    assert_eq!(
        cohort_0_status(&http, all.collector.url(), "retried").await,
        "open"
    );
    // The right-masking service's outbox sends the same part again.
    let (status, body) = put(part("retried", 1, p)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        cohort_0_status(&http, all.collector.url(), "retried").await,
        "failed"
    );
    all.stop().await;
}
