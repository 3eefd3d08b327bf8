//! Issue 10 §5, issue 20 §5 and the threat-model row "The provider tampers": the collector checks
//! each hand-over against the receipt list the provider published for the cohort — the list's
//! root recomputed from its hashes, the hand-over's root, its upload count and its rows — refuses
//! a mismatch (422, recorded in the survey team's status) without touching the cohort, so the
//! genuine hand-over is still taken; answers 503 while the list cannot be fetched (never
//! accepting unchecked); and records the checked root in the manifest.
//!
//! The provider here is a scripted mock that publishes whatever list the test sets, so a
//! tampering provider's hand-over can be played without racing the honest one. Its batch is
//! made of the participants' genuine uploads `x·B_k` with `A₂ = I` (which fixes `1ₙ`), so it
//! passes the nonce check and QA: only the receipt check can catch a dropped row.

mod common;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use common::*;
use nalgebra::DMatrix;
use orthomask_formats::manifest::Manifest;
use orthomask_server::CollectorConfig;
use orthomask_server::peers::Party;
use orthomask_server::run::{bind, start_collector, url_of};
use orthomask_server::wire::{CohortResult, MaskingOutcome, WireMatrix};
use orthomask_survey::inclusion::{Evidence, PublishedList, SavedReceipt, check_receipt};
use orthomask_survey::merkle::merkle_root;
use orthomask_survey::upload::Upload;
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

const ADMIN_TOKEN: &str = "admin-token-for-the-receipt-check-test-0123";

/// The list the mock provider publishes for every cohort (`None`: it answers 503).
#[derive(Clone, Default)]
struct Published(Arc<Mutex<Option<Value>>>);

impl Published {
    fn set(&self, list: Option<Value>) {
        *self.0.lock().unwrap() = list;
    }
}

/// A provider that takes registrations and cohort calls and publishes the scripted list.
async fn mock_provider(published: Published) -> String {
    let app = Router::new()
        .route(
            "/api/surveys/{survey}/cohorts/{cohort}/receipts",
            get(|State(p): State<Published>| async move {
                match p.0.lock().unwrap().clone() {
                    Some(list) => (StatusCode::OK, list.to_string()),
                    None => (
                        StatusCode::SERVICE_UNAVAILABLE,
                        json!({"error": "down"}).to_string(),
                    ),
                }
            }),
        )
        .fallback(|| async { (StatusCode::OK, "{}") })
        .with_state(published);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// A collector whose provider (and right-masking services) are the given mocks, each pinned with
/// an identity of its own made under `dir` (the mocks check no signature; the test signs its
/// hand-overs as the provider, or as each service).
async fn start_with(
    dir: &std::path::Path,
    msp: String,
    right_urls: Vec<String>,
) -> (orthomask_server::Running, String) {
    let keys = orthomask_server::run::identities_in(dir, right_urls.len()).unwrap();
    let listener = bind("127.0.0.1:0").await.unwrap();
    let collector_url = url_of(&listener).unwrap();
    let collector = start_collector(
        CollectorConfig {
            data_dir: dir.join("collector"),
            public_url: collector_url.clone(),
            msp_url: msp,
            right_urls,
            admin_token: ADMIN_TOKEN.into(),
            peer_keys: keys,
            web_dir: None,
            limits: loose_limits(),
            allowed_origins: Vec::new(),
            accepted_builds: Vec::new(),
        },
        listener,
    )
    .await
    .unwrap();
    (collector, collector_url)
}

/// The list a provider publishes for `uploads`, with its root over `rooted` (an honest provider
/// roots the list's own hashes).
fn list(survey: &str, hashes: &[String], root: &str) -> Value {
    let mut sorted = hashes.to_vec();
    sorted.sort();
    json!({"survey": survey, "cohort": 0, "closed_at": "2026-01-01T00:00:00Z",
        "count": sorted.len(), "merkle_root": root, "upload_hashes": sorted})
}

struct Cohort {
    uploads: Vec<Upload>,
    hashes: Vec<String>,
    nonces: Vec<String>,
    upload_url: String,
}

/// `n` invited participants load their definitions and prepare their uploads (nothing is sent:
/// the mock provider does not store uploads).
async fn participants(http: &reqwest::Client, collector: &str, survey: &str, n: usize) -> Cohort {
    let created = {
        let (status, body) = send(
            http,
            Method::POST,
            &format!("{collector}/api/admin/surveys"),
            Some(&draft(survey, 12, false, true)),
            Some(ADMIN_TOKEN),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        body
    };
    let mut cohort = Cohort {
        uploads: Vec::new(),
        hashes: Vec::new(),
        nonces: Vec::new(),
        upload_url: String::new(),
    };
    for (i, link) in (0..n as u64).zip(&links_at(http, collector, ADMIN_TOKEN, &created, n).await) {
        let (def, uploads) = prepare(http, link, i, &answers(i)).await;
        let upload = uploads[0].1.clone();
        cohort.upload_url = def.upload_url.clone();
        cohort.hashes.push(upload.hash());
        cohort.nonces.push(upload.credential.clone().unwrap().nonce);
        cohort.uploads.push(upload);
    }
    cohort
}

/// A hand-over of the given uploads with `A₂ = I`: genuine rows, so nonces and QA pass.
fn hand_over(survey: &str, rows: &[Upload], uploads: usize, root: &str) -> CohortResult {
    let p = rows[0].values.len();
    let batch = DMatrix::from_fn(rows.len(), p, |i, j| rows[i].values[j]);
    let mut nonces: Vec<String> = rows
        .iter()
        .map(|u| u.credential.clone().unwrap().nonce)
        .collect();
    nonces.sort();
    CohortResult {
        survey: survey.into(),
        cohort: 0,
        uploads,
        merkle_root: root.into(),
        nonces,
        outcome: MaskingOutcome::Masked {
            batch: WireMatrix::from_matrix(&batch),
        },
    }
}

/// The provider's hand-over, signed as the provider whose identity is under `dir`.
async fn put_result(
    http: &reqwest::Client,
    dir: &std::path::Path,
    collector: &str,
    result: &CohortResult,
) -> (u16, Value) {
    send_signed(
        http,
        &identity_of(dir, Party::Provider),
        Party::Collector,
        Method::PUT,
        &format!(
            "{collector}/api/peer/surveys/{}/cohorts/0/result",
            result.survey
        ),
        Some(&serde_json::to_value(result).unwrap()),
    )
    .await
}

async fn cohort_0(http: &reqwest::Client, collector: &str, survey: &str) -> Value {
    admin_view_at(http, collector, ADMIN_TOKEN, survey).await["cohorts"][0].clone()
}

/// Threat-model row "The provider tampers": a hand-over whose Merkle root, upload count or rows
/// differ from the provider's published receipt list — or whose list is not rooted in its own
/// hashes — is refused with 422 and recorded with a one-line note; the cohort is untouched, and
/// the genuine hand-over that follows is taken (issue 20 §5: a refused claim never blocks it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hand_overs_that_differ_from_the_published_receipts_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let published = Published::default();
    let msp = mock_provider(published.clone()).await;
    let (collector, collector_url) = start_with(dir.path(), msp, Vec::new()).await;
    let http = client();
    let c = collector_url.as_str();
    for (survey, expected) in [
        ("other-root", "Merkle root"),
        ("dropped-row", "has 7 rows but"),
        ("miscounted", "counts 7 uploads"),
        ("unrooted-list", "inconsistent"),
    ] {
        let cohort = participants(&http, c, survey, 8).await;
        let honest_root = merkle_root(&cohort.hashes);
        let (published_list, result) = match survey {
            // The provider hands all eight rows over under the root of seven.
            "other-root" => (
                list(survey, &cohort.hashes, &honest_root),
                hand_over(
                    survey,
                    &cohort.uploads,
                    8,
                    &merkle_root(&cohort.hashes[..7]),
                ),
            ),
            // It published eight receipts and drops one honest row (its credential too, so the
            // nonce check passes), claiming the published root and count.
            "dropped-row" => (
                list(survey, &cohort.hashes, &honest_root),
                hand_over(survey, &cohort.uploads[..7], 8, &honest_root),
            ),
            // The same, counting the seven it kept.
            "miscounted" => (
                list(survey, &cohort.hashes, &honest_root),
                hand_over(survey, &cohort.uploads[..7], 7, &honest_root),
            ),
            // It publishes eight hashes under the root of seven, and hands seven over.
            _ => {
                let seven = merkle_root(&cohort.hashes[..7]);
                (
                    list(survey, &cohort.hashes, &seven),
                    hand_over(survey, &cohort.uploads[..7], 8, &seven),
                )
            }
        };
        published.set(Some(published_list));
        let (status, body) = put_result(&http, dir.path(), c, &result).await;
        assert_eq!(status, 422, "{survey}: {body}");
        let error = body["error"].as_str().unwrap();
        assert!(error.contains(expected), "{survey}: {error}");
        let seen = admin_view_at(&http, c, ADMIN_TOKEN, survey).await;
        assert_eq!(seen["cohorts"][0]["status"], "open", "{survey}: {seen}");
        let refused = &seen["refused_handovers"][0];
        assert!(
            refused["why"].as_str().unwrap().contains(expected),
            "{survey}: {seen}"
        );
        // The same hand-over again is refused again (the outbox would stop here).
        let (status, _) = put_result(&http, dir.path(), c, &result).await;
        assert_eq!(status, 422, "{survey}");
        // The genuine hand-over, checked against the genuine list, is taken.
        published.set(Some(list(survey, &cohort.hashes, &honest_root)));
        let genuine = hand_over(survey, &cohort.uploads, 8, &honest_root);
        let (status, body) = put_result(&http, dir.path(), c, &genuine).await;
        assert_eq!(status, 200, "{survey}: {body}");
        assert_eq!(cohort_0(&http, c, survey).await["status"], "received");
    }
    collector.stop().await;
}

/// While the provider's list cannot be fetched the hand-over is neither accepted nor refused
/// (503, the cohort stays open); once the list is there, the honest hand-over is accepted, and
/// the release's manifest records the checked root against which a participant's saved receipt
/// passes (`orthomask_survey::inclusion`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_list_defers_the_hand_over_and_the_checked_root_is_published() {
    let dir = tempfile::tempdir().unwrap();
    let published = Published::default();
    let msp = mock_provider(published.clone()).await;
    let (collector, collector_url) = start_with(dir.path(), msp, Vec::new()).await;
    let http = client();
    let c = collector_url.as_str();
    let survey = "honest";
    let cohort = participants(&http, c, survey, 8).await;
    let root = merkle_root(&cohort.hashes);
    let result = hand_over(survey, &cohort.uploads, 8, &root);

    published.set(None);
    let (status, body) = put_result(&http, dir.path(), c, &result).await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("could not be fetched"),
        "{body}"
    );
    assert_eq!(cohort_0(&http, c, survey).await["status"], "open");

    let published_list = list(survey, &cohort.hashes, &root);
    published.set(Some(published_list.clone()));
    let (status, body) = put_result(&http, dir.path(), c, &result).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(cohort_0(&http, c, survey).await["status"], "received");

    let (status, view) = send(
        &http,
        Method::POST,
        &format!("{c}/api/admin/surveys/{survey}/close"),
        None,
        Some(ADMIN_TOKEN),
    )
    .await;
    assert_eq!(status, 200, "{view}");
    let (_, manifest) = wait_for_release(&http, c, survey, 60).await;
    let manifest = Manifest::parse(&manifest, "manifest.json").unwrap();
    assert_eq!(manifest.receipt_roots.len(), 1);
    let entry = &manifest.receipt_roots[0];
    assert_eq!(
        (entry.cohort, entry.count, entry.merkle_root.as_str()),
        (0, 8, root.as_str())
    );
    assert_eq!(entry.service, cohort.upload_url);

    // Every participant's receipt checks against the release with the published list.
    let evidence = Evidence::List(serde_json::from_value::<PublishedList>(published_list).unwrap());
    for hash in &cohort.hashes {
        let receipt = SavedReceipt {
            service: cohort.upload_url.clone(),
            survey: survey.into(),
            cohort: 0,
            upload_hash: hash.clone(),
            received_at: None,
        };
        check_receipt(&manifest, &receipt, &evidence).unwrap();
    }
    collector.stop().await;
}

/// Share mode: right-masking service `i`'s hashes of `n` uploads.
fn share_hashes(survey: &str, i: usize, n: usize) -> Vec<String> {
    (0..n)
        .map(|j| orthomask_survey::merkle::sha256_hex(format!("{survey} {i} {j}").as_bytes()))
        .collect()
}

/// Share mode, threat-model row "The provider tampers" (and a right-masking service that
/// tampers): each part is checked against the list its own service published when it arrives.
/// A part under another root, or with more rows than its service took uploads, is refused (422,
/// recorded, the cohort still waiting); fewer rows than uploads are accepted — the provider
/// keeps only participants whose shares reached every service — and the manifest records each
/// service's count and says how many records were released of it. The parts here are the
/// leading columns of genuine additive shares with `A = I` (three services, without the
/// cancelling masks, which only hide each part and cancel in the sum), so they pass QA and only
/// the receipt check decides.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_parts_are_checked_against_each_services_published_receipts() {
    use orthomask_core::protocol::share_handover::FixedMatrix;
    use orthomask_server::wire::{SharePart, WireFixed};
    let dir = tempfile::tempdir().unwrap();
    let msp = mock_provider(Published::default()).await;
    let lists = [
        Published::default(),
        Published::default(),
        Published::default(),
    ];
    let rights = vec![
        mock_provider(lists[0].clone()).await,
        mock_provider(lists[1].clone()).await,
        mock_provider(lists[2].clone()).await,
    ];
    let (collector, collector_url) = start_with(dir.path(), msp, rights.clone()).await;
    let http = client();
    let c = collector_url.as_str();
    for (survey, counts, expected) in [
        ("share-other-root", [8, 8, 8], Some("Merkle root")),
        ("share-more-rows", [7, 7, 7], Some("has 8 rows but")),
        ("share-fewer-rows", [9, 8, 8], None),
    ] {
        let (status, created) = send(
            &http,
            Method::POST,
            &format!("{c}/api/admin/surveys"),
            Some(&draft(survey, 12, true, false)),
            Some(ADMIN_TOKEN),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let p = (created["p1"].as_u64().unwrap() + created["p2"].as_u64().unwrap()) as usize;
        let answers = created["p1"].as_u64().unwrap() as usize - 1;
        // Eight honest records as a device carries them — the test participants' answers scaled
        // to [−1, 1] by their declared ranges (the same draft planned here gives the same
        // definition), the QA entry 888/|888| = 1, padding — split into three additive shares.
        let template = direct_survey(
            survey,
            12,
            &rights,
            orthomask_survey::trust::CollectorSigningKey::from_secret([1; 32]),
        )
        .template;
        let design = template.design().unwrap();
        let mut g = Xorshift::new(0x5a5a);
        let x = DMatrix::from_fn(8, p, |r, j| {
            if j < answers {
                let coded = template.encode(&common::answers(r as u64)).unwrap();
                design.scaler().unwrap().scale_row(&coded).unwrap()[j]
            } else if j == answers {
                1.0
            } else {
                g.uniform() * 2.0 - 1.0
            }
        });
        let x0 = DMatrix::from_fn(8, p, |_, _| g.uniform() * 100.0 - 50.0);
        let x1 = DMatrix::from_fn(8, p, |_, _| g.uniform() * 100.0 - 50.0);
        let shares = [x0.clone(), x1.clone(), &x - &x0 - &x1];
        let mut status = 0;
        let mut body = Value::Null;
        for (i, share) in shares.iter().enumerate() {
            let hashes = share_hashes(survey, i, counts[i]);
            let root = merkle_root(&hashes);
            let mut listed = list(survey, &hashes, &root);
            listed["cohort"] = json!(0);
            lists[i].set(Some(listed));
            let claimed = if survey == "share-other-root" && i == 2 {
                merkle_root(&hashes[..7])
            } else {
                root
            };
            let leading = share.columns(0, answers + 1).into_owned();
            let part = SharePart {
                survey: survey.into(),
                cohort: 0,
                index: i as u32,
                merkle_root: claimed,
                uploads: counts[i],
                scale: 100.0,
                block: WireFixed::from_fixed(&FixedMatrix::encode(&leading).unwrap()),
            };
            (status, body) = send_signed(
                &http,
                &identity_of(dir.path(), Party::Right(i as u32)),
                Party::Collector,
                Method::PUT,
                &format!("{c}/api/peer/surveys/{survey}/cohorts/0/parts/{i}"),
                Some(&serde_json::to_value(&part).unwrap()),
            )
            .await;
            // Each part is judged when it arrives: both of `share-more-rows` are refused.
            if i == 0 && survey != "share-more-rows" {
                assert_eq!(status, 200, "{survey}: {body}");
            }
        }
        let view = cohort_0(&http, c, survey).await;
        match expected {
            Some(why) => {
                assert_eq!(status, 422, "{survey}: {body}");
                assert!(
                    body["error"].as_str().unwrap().contains(why),
                    "{survey}: {body}"
                );
                assert_eq!(view["status"], "open", "{survey}: {view}");
            }
            None => {
                assert_eq!(status, 200, "{survey}: {body}");
                assert_eq!(view["status"], "received", "{survey}: {view}");
                let (status, view) = send(
                    &http,
                    Method::POST,
                    &format!("{c}/api/admin/surveys/{survey}/close"),
                    None,
                    Some(ADMIN_TOKEN),
                )
                .await;
                assert_eq!(status, 200, "{view}");
                let (_, manifest) = wait_for_release(&http, c, survey, 60).await;
                let manifest = Manifest::parse(&manifest, "manifest.json").unwrap();
                let entries: Vec<(String, usize)> = manifest
                    .receipt_roots
                    .iter()
                    .map(|r| (r.service.clone(), r.count))
                    .collect();
                let upload = |base: &str| format!("{base}/api/surveys/{survey}/uploads");
                assert_eq!(
                    entries,
                    [
                        (upload(&rights[0]), 9),
                        (upload(&rights[1]), 8),
                        (upload(&rights[2]), 8)
                    ]
                );
                assert!(
                    manifest
                        .warnings
                        .iter()
                        .any(|w| w.contains("8 records were released of the 9 uploads")),
                    "{:?}",
                    manifest.warnings
                );
            }
        }
    }
    collector.stop().await;
}
