//! Issue 30 §1, performed as the fault: the services' data directory on a small tmpfs that the
//! test fills. An upload the provider cannot store is answered 503 with `Retry-After` and one line
//! (not a 500 that clients give up on); nothing acknowledged is lost, nothing refused is stored;
//! health and the public reads keep answering; when space returns, the same upload is taken
//! without a restart, stored once, and the survey is released with every acknowledged record.
//! And when the collector's disk is the full one, the provider's hand-over waits in its outbox
//! (the collector answers 503 with `Retry-After`) and is delivered once space returns.
//!
//! Mounting needs privileges: where `mount -t tmpfs` is refused, the test says so and passes.

mod common;

use common::*;
use orthomask_server::error::STORE_FULL_RETRY_AFTER_S;
use orthomask_server::peers::Party;
use reqwest::Method;
use std::path::Path;
use std::process::Command;

/// A tmpfs of `size` mounted on `dir` for as long as this lives.
struct Tmpfs<'a>(&'a Path);

impl<'a> Tmpfs<'a> {
    fn mount(dir: &'a Path, size: &str) -> Option<Self> {
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .ok()?;
        mounted.status.success().then_some(Self(dir))
    }
}

impl Drop for Tmpfs<'_> {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.0).status();
    }
}

/// Fill the file system of `dir` with `filler` until a write fails: at most a few kilobytes
/// remain.
fn fill(filler: &Path) {
    use std::io::Write;
    let mut file = std::fs::File::create(filler).unwrap();
    let block = vec![0x5a_u8; 64 * 1024];
    while file.write_all(&block).is_ok() {}
    let small = vec![0x5a_u8; 512];
    while file.write_all(&small).is_ok() {}
    let _ = file.sync_all();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_answers_503_keeps_what_it_acknowledged_and_recovers_without_a_restart() {
    let outer = tempfile::tempdir().unwrap();
    let Some(tmpfs) = Tmpfs::mount(outer.path(), "24m") else {
        eprintln!("skipped: mounting a tmpfs is not permitted here");
        return;
    };
    let data = tmpfs.0.join("data");
    let all = start(&data, 0, None).await;
    let http = client();
    // A survey released before the disk fills: its release stays readable.
    let done = create_survey(&http, &all, &draft("done", 10, false, true)).await;
    for (i, link) in (100..110u64).zip(&links(&http, &all, &done, 10).await) {
        let (_, uploads) = prepare(&http, link, i, &answers(i)).await;
        let (status, body) = post_upload(&http, &uploads[0].0, &uploads[0].1).await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, body) = send(
        &http,
        Method::POST,
        &format!("{}/api/admin/surveys/done/close", all.collector.url()),
        Some(&serde_json::json!({})),
        Some(&all.admin_token),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (released_csv, released_manifest) =
        wait_for_release(&http, all.collector.url(), "done", 90).await;
    let created = create_survey(&http, &all, &draft("full", 12, false, true)).await;
    let prepared = prepare_all(&http, &links(&http, &all, &created, 12).await).await;
    // Half the cohort is stored, then the disk fills.
    for (_, uploads) in &prepared[..6] {
        let (status, body) = post_upload(&http, &uploads[0].0, &uploads[0].1).await;
        assert_eq!(status, 201, "{body}");
    }
    let filler = tmpfs.0.join("filler");
    fill(&filler);
    let (url, upload) = &prepared[6].1[0];
    let refused = http
        .post(url)
        .header("content-type", "application/json")
        .body(serde_json::to_string(upload).unwrap())
        .send()
        .await
        .unwrap();
    let status = refused.status();
    let retry_after = refused.headers().get("retry-after").cloned();
    let body: serde_json::Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        retry_after.unwrap(),
        STORE_FULL_RETRY_AFTER_S.to_string().as_str()
    );
    let line = body["error"].as_str().unwrap();
    assert!(
        line.contains("disk is full") && !line.contains('\n'),
        "{line}"
    );
    // A survey cannot be created either (its key file has no room): 503, not 500.
    let (status, body) = send(
        &http,
        Method::POST,
        &format!("{}/api/admin/surveys", all.collector.url()),
        Some(&draft("later", 12, false, true)),
        Some(&all.admin_token),
    )
    .await;
    assert_eq!(status, 503, "{body}");
    // Reads keep answering: the earlier release and its manifest, health, and the receipt of an
    // upload stored before.
    let (csv, manifest) = wait_for_release(&http, all.collector.url(), "done", 5).await;
    assert_eq!((csv, manifest), (released_csv, released_manifest));
    let (status, _) = send(
        &http,
        Method::GET,
        &format!("{}/api/health", all.msp.url()),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200);
    let (status, receipt) = post_upload(&http, &prepared[0].1[0].0, &prepared[0].1[0].1).await;
    assert_eq!(
        status, 200,
        "an acknowledged upload sent again is acknowledged again: {receipt}"
    );
    assert_eq!(receipt["upload_hash"], prepared[0].1[0].1.hash());

    // Space returns: the same upload is taken, and the rest; nothing was restarted.
    std::fs::remove_file(&filler).unwrap();
    for (_, uploads) in &prepared[6..] {
        let (status, body) = post_upload(&http, &uploads[0].0, &uploads[0].1).await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, view) = send(
        &http,
        Method::POST,
        &format!("{}/api/admin/surveys/full/close", all.collector.url()),
        Some(&serde_json::json!({})),
        Some(&all.admin_token),
    )
    .await;
    assert_eq!(status, 200, "{view}");
    let (csv, manifest) = wait_for_release(&http, all.collector.url(), "full", 90).await;
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(
        manifest["n"], 12,
        "every acknowledged record, each once: {manifest}"
    );
    let raw: Vec<Vec<f64>> = prepared.into_iter().map(|(r, _)| r).collect();
    assert_same_regression(&raw, &csv);
    all.stop().await;
}

/// The collector's data on a tmpfs that fills after the cohort's participants took their places;
/// the provider's disk has room. The cohort's hand-over is refused 503 (nothing stored at the
/// collector), waits in the provider's outbox with the collector's reason, and is delivered
/// when space returns; the release holds every record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_over_to_a_collector_with_a_full_disk_waits_and_is_delivered() {
    let outer = tempfile::tempdir().unwrap();
    let Some(tmpfs) = Tmpfs::mount(outer.path(), "24m") else {
        eprintln!("skipped: mounting a tmpfs is not permitted here");
        return;
    };
    let provider_dir = tempfile::tempdir().unwrap();
    let apart = start_apart(
        provider_dir.path(),
        &tmpfs.0.join("collector"),
        loose_limits(),
    )
    .await;
    let http = client();
    let prepared = apart.invited(&http, "waits", 12).await;
    let Apart {
        msp,
        collector,
        msp_url,
        collector_url,
        collector_config,
        collector_identity,
        ..
    } = apart;
    let admin = collector_config.admin_token.as_str();
    let filler = tmpfs.0.join("filler");
    fill(&filler);
    for (_, uploads) in &prepared {
        let (status, body) = post_upload(&http, &uploads[0].0, &uploads[0].1).await;
        assert_eq!(status, 201, "the provider has room: {body}");
    }
    let view = wait_for_peer_view(
        &http,
        &msp_url,
        (&collector_identity, Party::Provider),
        "waits",
        |v| {
            v["outbox"][0]["last_error"]
                .as_str()
                .is_some_and(|e| e.contains("disk is full"))
        },
    )
    .await;
    assert_eq!(view["outbox"][0]["state"], "pending", "{view}");
    std::fs::remove_file(&filler).unwrap();
    wait_for_peer_view(
        &http,
        &msp_url,
        (&collector_identity, Party::Provider),
        "waits",
        |v| v["outbox"][0]["state"] == "delivered",
    )
    .await;
    let (status, view) = send(
        &http,
        Method::POST,
        &format!("{collector_url}/api/admin/surveys/waits/close"),
        Some(&serde_json::json!({})),
        Some(admin),
    )
    .await;
    assert_eq!(status, 200, "{view}");
    let (csv, _) = wait_for_release(&http, &collector_url, "waits", 90).await;
    let raw: Vec<Vec<f64>> = prepared.into_iter().map(|(r, _)| r).collect();
    assert_same_regression(&raw, &csv);
    collector.stop().await;
    msp.stop().await;
}

/// The size of every write-ahead log under `dir`, largest first.
fn write_ahead_logs(dir: &Path) -> Vec<u64> {
    let mut sizes: Vec<u64> = walk(dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("-wal"))
        .filter_map(|p| std::fs::metadata(p).ok().map(|m| m.len()))
        .collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A burst of 1 500 definition loads (each takes a place: a write at the collector) leaves a
/// write-ahead log of a few megabytes: SQLite checkpoints every 1 000 pages and the log is cut
/// back to 16 MiB at most after a checkpoint (the 6 MB disk filled during such a burst;
/// this shows the log no longer grows with the burst).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_definition_loads_leaves_a_bounded_write_ahead_log() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    // A labelled demonstration: open to anyone, so every load takes a new place.
    let mut open = draft("burst", 10, false, false);
    open["demonstration"] = true.into();
    let created = create_survey(&http, &all, &open).await;
    let url = created["definition_url"].as_str().unwrap().to_owned();
    for _ in 0..1_500 {
        let (status, text) = take_place(&http, &url).await;
        assert_eq!(status, 200, "{text}");
    }
    let logs = write_ahead_logs(dir.path());
    assert!(!logs.is_empty(), "the stores run in WAL mode");
    assert!(
        logs[0] <= 16 << 20,
        "largest write-ahead log: {} bytes",
        logs[0]
    );
    all.stop().await;
}
