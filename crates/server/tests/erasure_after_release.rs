//! Issue 20 §1, shrinking the window: once a survey is released, the collector keeps the release
//! and its manifest and nothing that could be combined with another party's view — no per-cohort
//! `A₂,k X₁,k` or `A X₁`, no share parts, no survey key — and every service that held the
//! survey's data erases its vectors, hand-ons and key. The test captures those bytes while the
//! survey runs and, after the release, reads every database, write-ahead log and key file of all
//! services for them.

mod common;

use common::*;
use orthomask_server::peers::Party;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Every store and key file of every service (one subdirectory each).
fn files(data: &Path) -> Vec<std::path::PathBuf> {
    service_files(data, |name| {
        name.contains(".sqlite3") || name.ends_with("-keys.json")
    })
}

/// The files that hold `needle`.
fn holding(data: &Path, needle: &[u8]) -> Vec<String> {
    files_holding(files(data), needle)
        .into_iter()
        .map(|f| f.display().to_string())
        .collect()
}

/// Survey `survey`'s key in each key file that holds one: (file, hex key).
fn survey_keys(data: &Path, survey: &str) -> Vec<(String, String)> {
    files(data)
        .into_iter()
        .filter(|f| f.to_string_lossy().ends_with("-keys.json"))
        .filter_map(|f| {
            let file: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            file["surveys"][survey]
                .as_str()
                .map(|k| (f.display().to_string(), k.to_owned()))
        })
        .collect()
}

async fn released_and_erased(share_mode: bool) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    let all = start(&data, 3, None).await;
    let http = client();
    let survey = if share_mode {
        "erased-shares"
    } else {
        "erased-basic"
    };
    let created = create_survey(&http, &all, &draft(survey, 12, share_mode, !share_mode)).await;
    let invited = links(&http, &all, &created, 18).await;
    let mut raw = Vec::new();
    for (i, link) in (0..18u64).zip(&invited) {
        raw.push(participate(&http, link, i).await.0);
    }
    // While the survey runs: cohort 0's data at the collector, every service's survey key.
    wait_for_view(&http, &all, survey, |v| {
        v["cohorts"][0]["status"] == "received"
    })
    .await;
    let conn = Connection::open_with_flags(
        data.join("collector/collector.sqlite3"),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let stored: Vec<u8> = conn
        .query_row(
            "SELECT data FROM cohorts WHERE survey = ?1 AND cohort = 0",
            [survey],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    let cohort_data = stored[..64].to_vec();
    assert!(
        !holding(&data, &cohort_data).is_empty(),
        "control: the scanner finds it"
    );
    let keys = survey_keys(&data, survey);
    let services = if share_mode { 5 } else { 2 };
    assert_eq!(keys.len(), services, "{keys:?}");

    // Another party cannot make a service erase a survey at all; not even the collector can
    // while the survey is still running.
    let right_0 = identity_of(&data, Party::Right(0));
    let released = format!("{}/api/peer/surveys/{survey}/released", all.msp.url());
    let (status, body) = send_signed(
        &http,
        &right_0,
        Party::Provider,
        reqwest::Method::POST,
        &released,
        None,
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let collector = identity_of(&data, Party::Collector);
    let (status, body) = send_signed(
        &http,
        &collector,
        Party::Provider,
        reqwest::Method::POST,
        &released,
        None,
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        survey_keys(&data, survey).len(),
        services,
        "nothing was erased"
    );

    let (status, _) = admin_post(&http, &all, &format!("/api/admin/surveys/{survey}/close")).await;
    assert_eq!(status, 200);
    let (csv, _) = wait_for_release(&http, all.collector.url(), survey, 90).await;
    assert_same_regression(&raw, &csv);
    let view = wait_for_view(&http, &all, survey, |v| v["erased_at"].is_string()).await;
    assert!(view["released_at"].is_string());
    // Every service confirmed; what it erased is gone from its files while it runs.
    assert_eq!(holding(&data, &cohort_data), Vec::<String>::new());
    assert_eq!(survey_keys(&data, survey), Vec::<(String, String)>::new());
    for (_, key) in &keys {
        assert_eq!(
            holding(&data, key.as_bytes()),
            Vec::<String>::new(),
            "a survey key"
        );
    }
    let conn = Connection::open_with_flags(
        data.join("collector/collector.sqlite3"),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let (data_left, parts_left): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM cohorts WHERE survey = ?1 AND data IS NOT NULL),
                    (SELECT COUNT(*) FROM share_parts WHERE survey = ?1)",
            [survey],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((data_left, parts_left), (0, 0));
    if share_mode {
        for i in 0..3 {
            let conn = Connection::open_with_flags(
                data.join(format!("right-{i}/right.sqlite3")),
                OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .unwrap();
            let kept: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM hand_ons WHERE key IS NOT NULL OR seed IS NOT NULL",
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(kept, 0, "right-{i} keeps a handed-on key or seed");
        }
    }
    // The release itself stays.
    let (status, _) = get_text(
        &http,
        &format!("{}/api/surveys/{survey}/release.csv", all.collector.url()),
    )
    .await;
    assert_eq!(status, 200);
    all.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_basic_release_nothing_combinable_is_left() {
    released_and_erased(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_share_mode_release_nothing_combinable_is_left() {
    released_and_erased(true).await;
}
