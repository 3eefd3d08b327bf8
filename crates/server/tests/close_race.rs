//! A cohort closed early while its participants' shares are still arriving (issue 24: since shares
//! are stored as uploaded and masked at the hand-over, the hand-over and the uploads race on each
//! right-masking service; the trust issue's "requests race each other"). The team closes cohort 0
//! of a share-mode survey at the same moment as eleven participants send their three shares each,
//! so the services see the close at different points of the stream, and some participants may
//! have shares on one service and not on another. Whatever the interleaving:
//!
//! * every share gets an answer: a receipt, or one line saying the cohort is closed — nothing
//!   else, no hang;
//! * each service's published receipt list is exactly the shares it acknowledged: none
//!   acknowledged and then left out of the hand-over, none refused and kept;
//! * the cohort ends settled, never stuck: received; withheld when too few remain; empty when a
//!   service closed before any share reached it;
//! * a participant split across the close (a share on one service, not on another) is left out,
//!   and the provider says how many were: the cohort holds exactly the records of the
//!   participants whose every share was acknowledged, and its release has their `XᵀX` and
//!   column sums, never a partial record's.

mod common;

use common::*;
use nalgebra::DMatrix;
use orthomask_core::tolerance::PRESERVED_STATISTICS;
use orthomask_server::run::AllRunning;
use orthomask_survey::upload::{Receipt, Upload};
use serde_json::Value;
use std::collections::BTreeSet;

/// A participant's raw record and its uploads, one per right-masking service.
type Participant = (Vec<f64>, Vec<(String, Upload)>);

/// What a participant's one share got from its service.
struct Answer {
    participant: usize,
    service: usize,
    upload_hash: String,
    acknowledged: bool,
}

/// Send every share of every participant, and close cohort 0, all at once (each request its
/// own task); the answers.
async fn close_while_sending(
    http: &reqwest::Client,
    all: &AllRunning,
    survey: &str,
    prepared: &[Participant],
) -> Vec<Answer> {
    let mut sends = Vec::new();
    for (participant, (_, uploads)) in prepared.iter().enumerate() {
        for (service, (url, upload)) in uploads.iter().enumerate() {
            let (http, url, upload) = (http.clone(), url.clone(), upload.clone());
            sends.push(async move {
                let (status, body) = post_upload(&http, &url, &upload).await;
                let acknowledged = match status {
                    200 | 201 => {
                        let receipt: Receipt = serde_json::from_value(body).expect("a receipt");
                        assert_eq!(receipt.upload_hash, upload.hash());
                        true
                    }
                    409 => {
                        let line = one_line_error(&body);
                        assert!(line.contains("is closed"), "{line}");
                        false
                    }
                    other => panic!("share {service} of participant {participant}: {other} {body}"),
                };
                Answer {
                    participant,
                    service,
                    upload_hash: upload.hash(),
                    acknowledged,
                }
            });
        }
    }
    let path = format!("/api/admin/surveys/{survey}/cohorts/0/close");
    let close = admin_post(http, all, &path);
    let (answers, (status, view)) = tokio::join!(join_all_spawned(sends), close);
    assert_eq!(status, 200, "{view}");
    answers
}

/// The upload hashes the service taking uploads at `upload_url` lists for cohort 0, once it
/// publishes the list.
async fn listed(http: &reqwest::Client, upload_url: &str) -> BTreeSet<String> {
    let url = upload_url.replace("/uploads", "/cohorts/0/receipts");
    let list: Value = poll_until("the service's receipt list", HANG_GUARD, || async {
        let (status, text) = get_text(http, &url).await;
        if status == 200 {
            Ok(serde_json::from_str(&text).expect("a receipt list"))
        } else {
            Err(format!("{status} {text}"))
        }
    })
    .await;
    list["upload_hashes"]
        .as_array()
        .expect("upload hashes")
        .iter()
        .map(|h| h.as_str().expect("a hash").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_early_close_racing_the_shares_loses_no_acknowledged_share_and_releases_no_partial_record()
 {
    let (_dir, all, http) = started(3).await;
    let created = create_survey(&http, &all, &draft("close-race", 12, true, false)).await;
    let url = created["definition_url"].as_str().unwrap().to_owned();
    let mut prepared = Vec::new();
    for i in 0..11u64 {
        let a = answers(i);
        let (def, uploads) = prepare(&http, &url, i, &a).await;
        assert_eq!(uploads.len(), 3);
        prepared.push((def.encode(&a).unwrap(), uploads));
    }

    let answers = close_while_sending(&http, &all, "close-race", &prepared).await;

    // Each service lists exactly the shares it acknowledged.
    for service in 0..3 {
        let acknowledged: BTreeSet<String> = answers
            .iter()
            .filter(|a| a.service == service && a.acknowledged)
            .map(|a| a.upload_hash.clone())
            .collect();
        let upload_url = &prepared[0].1[service].0;
        assert_eq!(
            listed(&http, upload_url).await,
            acknowledged,
            "service {service}: its receipt list is not the shares it acknowledged"
        );
    }

    // Who is whole (every share acknowledged), who is split across the close.
    let whole: Vec<usize> = (0..prepared.len())
        .filter(|&p| {
            answers
                .iter()
                .filter(|a| a.participant == p)
                .all(|a| a.acknowledged)
        })
        .collect();
    let split = (0..prepared.len())
        .filter(|&p| {
            let got: Vec<bool> = answers
                .iter()
                .filter(|a| a.participant == p)
                .map(|a| a.acknowledged)
                .collect();
            got.iter().any(|&x| x) && got.iter().any(|&x| !x)
        })
        .count();

    // The cohort settles; which way depends on the interleaving, and each way is checked.
    let view = wait_for_view(&http, &all, "close-race", |v| {
        matches!(
            v["cohorts"][0]["status"].as_str(),
            Some("received" | "withheld" | "empty")
        )
    })
    .await;
    let status = view["cohorts"][0]["status"].as_str().unwrap().to_owned();
    eprintln!(
        "close race: {} whole, {split} split across the close, cohort {status}",
        whole.len()
    );
    let provider = view["services"]
        .as_array()
        .expect("the services")
        .iter()
        .find(|s| s["service"] == "the masking service provider")
        .expect("the provider's view");
    let note = provider["status"]["share_cohorts"][0]["note"].as_str();
    // A withheld cohort's note is why it is withheld; otherwise it counts who was left out.
    if split > 0 && status != "withheld" {
        let note = note.expect("the provider notes the participants it left out");
        assert!(
            note.starts_with(&format!("{split} participants' shares did not reach every")),
            "{note}"
        );
    }
    let floor = view["min_cohort_size"].as_u64().expect("the floor") as usize;
    if status == "empty" {
        // A service closed before any participant's share reached it.
        assert!(
            whole.is_empty(),
            "{} whole participants, an empty cohort: {view}",
            whole.len()
        );
        return;
    }
    if status == "withheld" {
        assert!(
            whole.len() < floor,
            "{} whole participants were withheld: {view}",
            whole.len()
        );
        return;
    }
    assert_eq!(view["cohorts"][0]["records"], whole.len(), "{view}");
    let (code, closed) = admin_post(&http, &all, "/api/admin/surveys/close-race/close").await;
    assert_eq!(code, 200, "{closed}");
    let (csv, _) = wait_for_release(&http, all.collector.url(), "close-race", 90).await;
    // The release's XᵀX and column sums are the whole participants', and so is the regression —
    // also when theirs is a degenerate design: when none of them smokes, the release's smoker
    // column is exact zeros as theirs is ((E9) of `Tm2Design::unscale_unmasked`), and both fits
    // drop it.
    let table = orthomask_formats::csv::parse_table(csv.as_bytes(), "release.csv")
        .expect("the release parses");
    let released = table.data().columns(0, ANSWERED).into_owned();
    let raw = DMatrix::from_fn(whole.len(), ANSWERED, |i, j| prepared[whole[i]].0[j]);
    assert_eq!(
        released.nrows(),
        raw.nrows(),
        "every whole record is released"
    );
    let (gram_released, gram_raw) = (released.transpose() * &released, raw.transpose() * &raw);
    assert!(
        (&gram_released - &gram_raw).amax() <= PRESERVED_STATISTICS * gram_raw.amax(),
        "the release's XᵀX is not the whole participants': {gram_released} against {gram_raw}"
    );
    let scale = raw.amax() * raw.nrows() as f64;
    for j in 0..ANSWERED {
        let (sum_released, sum_raw) = (released.column(j).sum(), raw.column(j).sum());
        assert!(
            (sum_released - sum_raw).abs() <= PRESERVED_STATISTICS * scale,
            "column {j}: the release sums to {sum_released}, the whole participants to {sum_raw}"
        );
    }
    let records: Vec<Vec<f64>> = whole.iter().map(|&p| prepared[p].0.clone()).collect();
    assert_same_regression(&records, &csv);
}

/// The survey's answered columns (`draft`: smoker, age, income, score), before the QA column.
const ANSWERED: usize = 4;
