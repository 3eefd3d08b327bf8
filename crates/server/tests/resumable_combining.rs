//! Issue 10 §6: in share mode the collector stores the last part before it combines the parts.
//! A crash or a store error in between used to leave the cohort unresolved for ever (the retry
//! of the last part took the "same part again" branch and did nothing). The failure is injected
//! here by writing the parts into the collector's database directly — exactly the state such a
//! crash leaves — and combining must then happen at start-up, or on the retry.

mod common;

use common::*;
use orthomask_server::peers::Party;
use orthomask_server::run::AllRunning;
use orthomask_server::wire::SharePart;
use orthomask_survey::merkle::sha256_hex;
use reqwest::Method;
use rusqlite::Connection;
use serde_json::Value;
use std::path::Path;

/// Store `part` as the collector's share-part handler does, bypassing it: the state a crash
/// between storing and combining leaves.
fn store_directly(collector_db: &Path, part: &SharePart) {
    let conn = Connection::open(collector_db).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    let m = part.block.to_fixed().unwrap();
    conn.execute(
        "INSERT INTO share_parts (survey, cohort, idx, body_hash, nrows, ncols, data, merkle_root, scale)
         VALUES (?1, 0, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        (
            &part.survey,
            part.index,
            sha256_hex(&serde_json::to_vec(part).unwrap()),
            m.nrows(),
            m.ncols(),
            m.to_le_bytes(),
            &part.merkle_root,
            part.scale,
        ),
    )
    .unwrap();
}

async fn cohort_0_status(http: &reqwest::Client, all: &AllRunning, survey: &str) -> Value {
    admin_view(http, all, survey).await["cohorts"][0]["status"].clone()
}

/// Wait for the step (combining) to happen, not for a time.
async fn resolved(http: &reqwest::Client, all: &AllRunning, survey: &str) -> Value {
    wait_for_view(http, all, survey, |v| v["cohorts"][0]["status"] != "open").await["cohorts"][0]
        ["status"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn combining_interrupted_by_a_crash_resumes_at_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let http = client();
    let all = start(dir.path(), 3, None).await;
    let created = create_survey(&http, &all, &draft("crashed", 12, true, false)).await;
    let p1 = created["p1"].as_u64().unwrap() as usize;
    all.stop().await;
    let db = dir.path().join("collector/collector.sqlite3");
    for index in 0..3 {
        store_directly(&db, &made_up_part("crashed", index, p1));
    }

    let all = start(dir.path(), 3, None).await;
    let status = resolved(&http, &all, "crashed").await;
    assert_eq!(
        status, "spoilt",
        "combined, and the made-up parts failed QA"
    );
    all.stop().await;
}

/// Every part was stored (each believed when it arrived), then the request that stored the
/// last one failed before combining: the service's retry of that part combines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn combining_interrupted_by_a_store_error_resumes_on_the_retry() {
    let dir = tempfile::tempdir().unwrap();
    let http = client();
    let all = start(dir.path(), 3, None).await;
    let created = create_survey(&http, &all, &draft("retried", 12, true, false)).await;
    let p1 = created["p1"].as_u64().unwrap() as usize;
    let last = identity_of(dir.path(), Party::Right(2));
    let db = dir.path().join("collector/collector.sqlite3");
    for index in 0..3 {
        store_directly(&db, &made_up_part("retried", index, p1));
    }
    assert_eq!(cohort_0_status(&http, &all, "retried").await, "open");
    // The right-masking service's outbox sends the same part again.
    let (status, body) = send_signed(
        &http,
        &last,
        Party::Collector,
        Method::PUT,
        &format!(
            "{}/api/peer/surveys/retried/cohorts/0/parts/2",
            all.collector.url()
        ),
        Some(&serde_json::to_value(made_up_part("retried", 2, p1)).unwrap()),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(cohort_0_status(&http, &all, "retried").await, "spoilt");
    all.stop().await;
}
