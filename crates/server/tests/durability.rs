//! Durability: an acknowledged upload survives `kill -9` of the provider, a restart loses
//! nothing and duplicates nothing; a hand-over to a collector that is down waits and is delivered
//! once it is back.

mod common;

use common::*;
use orthomask_server::peers::{Identity, Party, PeerKeys};
use orthomask_server::run::{bind, start_collector, start_msp};
use orthomask_server::{Limits, MspConfig};
use orthomask_survey::trust::{CollectorSigningKey, NONCE_BYTES};
use orthomask_survey::upload::{Receipt, Upload};
use reqwest::Method;
use serde_json::json;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const CHILD_ENV: &str = "ORTHOMASK_TEST_MSP_CHILD_DIR";
const TEST_NAME: &str = "acknowledged_uploads_survive_kill_9_of_the_provider";

fn msp_config(dir: &Path, collector_url: &str) -> MspConfig {
    MspConfig {
        data_dir: dir.to_owned(),
        public_url: "http://127.0.0.1".into(),
        collector_url: collector_url.to_owned(),
        right_urls: Vec::new(),
        peer_keys: PeerKeys {
            collector: Some(test_collector().public_key()),
            ..PeerKeys::default()
        },
        limits: loose_limits(),
        allowed_origins: Vec::new(),
    }
}

/// The provider as a separate process: this test binary re-run with the child variable set.
fn spawn_provider(dir: &Path) -> (std::process::Child, String) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([TEST_NAME, "--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufReader::new(stdout).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("the provider process printed its address")
            .unwrap();
        // libtest may print "test … ... " on the same line first.
        if let Some(at) = line.find("LISTENING ") {
            break line[at + "LISTENING ".len()..].trim().to_owned();
        }
    };
    (child, url)
}

/// In the child process: run a provider until killed.
fn run_provider_child(dir: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let listener = bind("127.0.0.1:0").await.unwrap();
        // The collector is never reached in this test; hand-overs would wait in the outbox.
        let running = start_msp(msp_config(Path::new(dir), "http://127.0.0.1:9"), listener)
            .await
            .unwrap();
        println!("LISTENING {}", running.url());
        std::future::pending::<()>().await;
    });
}

/// The collector key this test registers the survey with and signs its uploads' credentials by.
fn test_collector_key() -> CollectorSigningKey {
    CollectorSigningKey::from_secret([42; 32])
}

/// The same collector, as it signs its requests to the provider.
fn test_collector() -> Identity {
    Identity::from_secret(Party::Collector, [42; 32])
}

/// The survey of the burst: cohorts of 1 000, so that cohort 0 stays open through it.
fn durable_survey() -> DirectSurvey {
    direct_survey("durable", 1000, &[], test_collector_key())
}

fn upload(survey: &DirectSurvey, base: &Upload, i: usize) -> Upload {
    let mut nonce = [0u8; NONCE_BYTES];
    nonce[..8].copy_from_slice(&(i as u64).to_le_bytes());
    survey.opaque_upload(base, i as u64, format!("burst-upload-token-{i:08}"), nonce)
}

#[test]
fn acknowledged_uploads_survive_kill_9_of_the_provider() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        run_provider_child(&dir);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = spawn_provider(dir.path());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let http = client();
    let survey = Arc::new(durable_survey());
    let base = Arc::new(survey.uploads(0, 0, [0xff; NONCE_BYTES]).remove(0).1);
    let registration = survey.registration.clone();
    runtime.block_on(async {
        let collector = test_collector();
        let (status, body) = send_signed(
            &http,
            &collector,
            Party::Provider,
            Method::PUT,
            &format!("{url}/api/peer/surveys/durable"),
            Some(&registration),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let (status, _) = send_signed(
            &http,
            &collector,
            Party::Provider,
            Method::POST,
            &format!("{url}/api/peer/surveys/durable/cohorts/0/open"),
            None,
        )
        .await;
        assert_eq!(status, 200);
    });

    // The burst: 24 clients upload one distinct record after another until the provider dies.
    let next = Arc::new(AtomicUsize::new(0));
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let (acked, unknown) = runtime.block_on(async {
        let mut workers = Vec::new();
        for _ in 0..24 {
            let (http, url, next, acknowledged, survey, base) = (
                http.clone(),
                url.clone(),
                next.clone(),
                acknowledged.clone(),
                survey.clone(),
                base.clone(),
            );
            workers.push(tokio::spawn(async move {
                let mut acked: Vec<(Upload, Receipt)> = Vec::new();
                loop {
                    let u = upload(&survey, &base, next.fetch_add(1, Ordering::SeqCst));
                    let response = http
                        .post(format!("{url}/api/surveys/durable/uploads"))
                        .header("content-type", "application/json")
                        .body(serde_json::to_string(&u).unwrap())
                        .send()
                        .await;
                    let receipt = match response {
                        Ok(r) if r.status().as_u16() == 201 => r.text().await.ok(),
                        Ok(r) => panic!(
                            "upload refused: {} {}",
                            r.status(),
                            r.text().await.unwrap_or_default()
                        ),
                        Err(_) => None,
                    };
                    match receipt.and_then(|t| serde_json::from_str::<Receipt>(&t).ok()) {
                        Some(receipt) => {
                            acknowledged.fetch_add(1, Ordering::SeqCst);
                            acked.push((u, receipt));
                        }
                        // The provider is gone: this upload's fate is unknown.
                        None => return (acked, Some(u)),
                    }
                }
            }));
        }
        let (count, running) = (&acknowledged, &workers);
        poll_until("300 acknowledgements", HANG_GUARD, || async move {
            let seen = count.load(Ordering::SeqCst);
            if seen >= 300 {
                return Ok(());
            }
            assert!(
                !running.iter().any(|w| w.is_finished()),
                "the burst stopped before 300 acknowledgements"
            );
            Err(format!("{seen} acknowledgements"))
        })
        .await;
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let mut acked = Vec::new();
        let mut unknown = Vec::new();
        for w in workers {
            let (a, u) = w.await.unwrap();
            acked.extend(a);
            unknown.extend(u);
        }
        (acked, unknown)
    });
    assert!(acked.len() >= 300);
    assert_eq!(unknown.len(), 24, "every client was cut off mid-burst");

    let (mut child, url) = spawn_provider(dir.path());
    runtime.block_on(async {
        let upload_url = format!("{url}/api/surveys/durable/uploads");
        // Every acknowledged upload is still there: a retry gets the very same receipt.
        for (u, receipt) in &acked {
            let (status, body) = post_upload(&http, &upload_url, u).await;
            assert_eq!(status, 200, "acknowledged upload {} was lost: {body}", u.token);
            assert_eq!(serde_json::from_value::<Receipt>(body).unwrap(), *receipt);
        }
        // Uploads cut off in flight were stored or not; a retry settles each exactly once.
        let mut stored_before_the_kill = 0;
        for u in &unknown {
            let (status, body) = post_upload(&http, &upload_url, u).await;
            assert!(status == 200 || status == 201, "{status} {body}");
            stored_before_the_kill += usize::from(status == 200);
            let (status, _) = post_upload(&http, &upload_url, u).await;
            assert_eq!(status, 200);
        }
        eprintln!(
            "kill -9 after {} acknowledged uploads; {} cut off in flight, of which {stored_before_the_kill} \
             had been stored without their acknowledgement arriving",
            acked.len(),
            unknown.len()
        );
        let (status, view) = peer_view(&http, &url, (&test_collector(), Party::Provider), "durable").await;
        assert_eq!(status, 200);
        assert_eq!(view["cohorts"][0]["uploads"], acked.len() + unknown.len(), "{view}");
        assert_eq!(view["cohorts"][0]["status"], "open");
    });
    child.kill().unwrap();
    child.wait().unwrap();

    // The database itself: one row per token, nothing else.
    let conn = rusqlite::Connection::open_with_flags(
        dir.path().join("msp.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let (rows, tokens): (usize, usize) = conn
        .query_row(
            "SELECT COUNT(*), COUNT(DISTINCT token) FROM uploads",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (rows, tokens),
        (acked.len() + unknown.len(), acked.len() + unknown.len())
    );
    let stored = |hash: &str| -> bool {
        conn.query_row(
            "SELECT COUNT(*) FROM uploads WHERE upload_hash = ?1",
            [hash],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            == 1
    };
    assert!(acked.iter().all(|(u, _)| stored(&u.hash())));
}

/// How the collector is gone while the provider hands a cohort over.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gone {
    /// Stopped: its address refuses connections.
    Down,
    /// Hanging (issue 30 §4): something on its address accepts every connection and never
    /// answers, nor reads.
    Hangs,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_over_waits_for_a_collector_that_is_down() {
    hand_over_waits_for_the_collector(Gone::Down).await;
}

/// The provider gives up each attempt after its answer timeout (one second here), backs off, names
/// the collector's address and "timed out" in its status, and delivers once the collector is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_over_to_a_collector_that_hangs_times_out_and_is_delivered_later() {
    hand_over_waits_for_the_collector(Gone::Hangs).await;
}

async fn hand_over_waits_for_the_collector(gone: Gone) {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        peer_answer_timeout: std::time::Duration::from_secs(1),
        ..loose_limits()
    };
    let apart = start_apart(
        &dir.path().join("msp"),
        &dir.path().join("collector"),
        limits,
    )
    .await;
    let http = client();
    let prepared = apart.invited(&http, "waits", 12).await;
    let Apart {
        msp,
        collector,
        msp_url,
        collector_addr,
        collector_url,
        collector_config,
        collector_identity,
    } = apart;
    collector.stop().await;
    // A hanging collector: connections accepted and held, never read or answered.
    let hanging = if gone == Gone::Hangs {
        let listener = bind(&collector_addr.to_string()).await.unwrap();
        Some(tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        }))
    } else {
        None
    };

    // The cohort fills while the collector is gone: the provider masks it and keeps retrying.
    for (_, uploads) in &prepared {
        let (status, body) = post_upload(&http, &uploads[0].0, &uploads[0].1).await;
        assert_eq!(status, 201, "{body}");
    }
    let view = wait_for_peer_view(
        &http,
        &msp_url,
        (&collector_identity, Party::Provider),
        "waits",
        |v| v["outbox"][0]["attempts"].as_u64().unwrap_or(0) >= 2,
    )
    .await;
    let item = &view["outbox"][0];
    assert_eq!(item["state"], "pending", "{view}");
    let last_error = item["last_error"].as_str().unwrap();
    assert!(last_error.contains(&collector_url), "{view}");
    if gone == Gone::Hangs {
        assert!(last_error.contains("timed out"), "{view}");
    }
    assert_eq!(view["cohorts"][0]["status"], "masked");
    // The hanging listener goes, with every connection it held: the address is free again.
    if let Some(task) = hanging {
        task.abort();
        let _ = task.await;
    }

    // Back on the same address with the same store: the batch arrives, the survey is released.
    let collector = start_collector(
        collector_config.clone(),
        bind(&collector_addr.to_string()).await.unwrap(),
    )
    .await
    .unwrap();
    let (status, view) = send(
        &http,
        Method::POST,
        &format!("{collector_url}/api/admin/surveys/waits/close"),
        Some(&json!({})),
        Some(&collector_config.admin_token),
    )
    .await;
    assert_eq!(status, 200, "{view}");
    let (csv, _) = wait_for_release(&http, &collector_url, "waits", 60).await;
    let raw: Vec<Vec<f64>> = prepared.into_iter().map(|(r, _)| r).collect();
    assert_same_regression(&raw, &csv);
    // The provider records the delivery once the collector's answer reaches it, which may be
    // after the release is published.
    wait_for_peer_view(
        &http,
        &msp_url,
        (&collector_identity, Party::Provider),
        "waits",
        |v| v["outbox"][0]["state"] == "delivered",
    )
    .await;
    collector.stop().await;
    msp.stop().await;
}
