//! Issue 30 §3, performed as the fault: `orthomask serve all` whose wall clock is set back a
//! day while it runs (libfaketime, its clock read from a file the test rewrites; the monotonic
//! clock the timers use is left alone). A cohort closed before the jump stays closed — the next
//! participant goes to the next cohort — and hand-overs, uploads and the release carry on under
//! the set-back clock. Where libfaketime is not installed (`scripts/setup.sh` installs Debian's
//! `faketime`), the test says so and passes.

#![cfg(target_os = "linux")]

mod common;
#[path = "../../server/tests/common/mod.rs"]
mod services;

use reqwest::Method;
use services::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Debian's multi-threaded libfaketime, if installed.
fn libfaketime() -> Option<PathBuf> {
    [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib",
    ]
    .iter()
    .map(|dir| Path::new(dir).join("faketime/libfaketimeMT.so.1"))
    .find(|p| p.exists())
}

/// `serve all` in `dir` with its wall clock read from `clock` (a libfaketime offset such as
/// `+0` or `-1d`, re-read on every call).
fn serve_all_with_clock(dir: &Path, lib: &Path, clock: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_orthomask"))
        .args(["serve", "all", "--data-dir"])
        .arg(dir)
        .args(["--port", "0", "--no-web", "--right-services", "0"])
        .env("LD_PRELOAD", lib)
        .env("FAKETIME_TIMESTAMP_FILE", clock)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Participants `from..to` take a place through `url` and upload; the cohort each was given
/// and the day (YYYY-MM-DD) on the provider's clock each receipt names.
async fn answer(http: &reqwest::Client, url: &str, from: u64, to: u64) -> Vec<(u32, String)> {
    let mut given = Vec::new();
    for i in from..to {
        let (def, uploads) = prepare(http, url, i, &answers(i)).await;
        let (status, body) = post_upload(http, &uploads[0].0, &uploads[0].1).await;
        assert_eq!(status, 201, "{body}");
        let day = body["received_at"].as_str().unwrap()[..10].to_owned();
        given.push((def.masking.cohort, day));
    }
    given
}

/// The day (YYYY-MM-DD) `offset_days` from today on this (real) clock.
fn day(offset_days: i64) -> String {
    let now = orthomask_server::time::unix_millis();
    orthomask_server::time::rfc3339(now + offset_days * 86_400_000)[..10].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_set_back_a_day_reopens_no_cohort_and_stops_nothing() {
    let Some(lib) = libfaketime() else {
        eprintln!("skipped: libfaketime is not installed (Debian: apt-get install faketime)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let clock = dir.path().join("clock");
    std::fs::write(&clock, "+0\n").unwrap();
    let data = dir.path().join("data");
    let mut child = serve_all_with_clock(&data, &lib, &clock);
    // `services_json` blocks, polling a file, until the child process has started.
    let urls = tokio::task::block_in_place(|| common::services_json(&data, &mut child));
    let collector = urls["collector"].as_str().unwrap().to_owned();
    let admin = std::fs::read_to_string(data.join("admin-token")).unwrap();
    let admin = admin.trim();
    let http = client();
    let mut open = draft("clock", 10, false, false);
    open["demonstration"] = true.into();
    let (status, created) = send(
        &http,
        Method::POST,
        &format!("{collector}/api/admin/surveys"),
        Some(&open),
        Some(admin),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let url = created["definition_url"].as_str().unwrap().to_owned();

    // Cohort 0 fills and is handed over before the jump.
    // (The day is read before and after, in case midnight passes meanwhile.)
    let today = [day(0), String::new()];
    let given = answer(&http, &url, 0, 10).await;
    let today = [today[0].clone(), day(0)];
    for (cohort, received) in given {
        assert_eq!(cohort, 0);
        assert!(today.contains(&received), "{received}, today {today:?}");
    }
    let before = wait_for_view_at(&http, &collector, admin, "clock", |v| {
        v["cohorts"][0]["status"]
            .as_str()
            .is_some_and(|s| !matches!(s, "open" | "processing"))
    })
    .await;

    // The wall clock goes back a day.
    std::fs::write(&clock, "-1d\n").unwrap();
    // Cohort 0 stays as it was; the next participants go to cohort 1, whose credentials, dated
    // by the set-back clock, are taken by the provider's set-back clock too, and which is handed
    // over and released.
    let yesterday = day(-1);
    let given = answer(&http, &url, 10, 20).await;
    let yesterday = [yesterday, day(-1)];
    for (cohort, received) in given {
        assert_eq!(cohort, 1);
        // The provider's clock did go back: its receipts are dated the day before.
        assert!(
            yesterday.contains(&received),
            "{received}, yesterday {yesterday:?}"
        );
    }
    let view = admin_view_at(&http, &collector, admin, "clock").await;
    assert_eq!(
        view["cohorts"][0]["status"], before["cohorts"][0]["status"],
        "{view}"
    );
    let (status, body) = send(
        &http,
        Method::POST,
        &format!("{collector}/api/admin/surveys/clock/close"),
        Some(&serde_json::json!({})),
        Some(admin),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (_, manifest) = wait_for_release(&http, &collector, "clock", 90).await;
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["n"], 20, "{manifest}");

    common::terminate(child);
}
