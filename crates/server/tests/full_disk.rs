//! Issue 30 §1, performed as the fault: the services' data directory on a small tmpfs that the
//! test fills. An upload the provider cannot store is answered 503 with `Retry-After` and one line
//! (not a 500 that clients give up on); nothing acknowledged is lost, nothing refused is stored;
//! health and the public reads keep answering; when space returns, the same upload is taken
//! without a restart, stored once, and the survey is released with every acknowledged record.
//!
//! Mounting needs privileges: where `mount -t tmpfs` is refused, the test says so and passes.

mod common;

use common::*;
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
    let created = create_survey(&http, &all, &draft("full", 12, false, true)).await;
    let links = links(&http, &all, &created, 12).await;
    let mut prepared = Vec::new();
    for (i, link) in (0..12u64).zip(&links) {
        let a = answers(i);
        let (def, uploads) = prepare(&http, link, i, &a).await;
        prepared.push((def.encode(&a).unwrap(), uploads));
    }
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
    assert_eq!(retry_after.unwrap(), "30");
    let line = body["error"].as_str().unwrap();
    assert!(
        line.contains("disk is full") && !line.contains('\n'),
        "{line}"
    );
    // Reads keep answering: health, and the receipt of an upload stored before.
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
