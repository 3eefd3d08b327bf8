//! Issue 20 §5: every claim a hand-over makes — masked, empty, withheld, a share part's — is
//! believed only once it agrees with the receipt lists the accepting services published; a
//! refused claim is recorded and never settles the cohort, so the genuine hand-over is still
//! taken; and the manifest names any cohort whose services published receipts but which gives no
//! rows.
//!
//! The deployment runs behind taps (`common::tap`): the genuine hand-over is held back (the tap
//! answers 503, so the sender's outbox keeps retrying) while a dishonest provider's claims —
//! signed with its own identity key, the only one it holds — arrive first, then let through.

mod common;

use common::tap::{hold, start_tapped};
use common::*;
use nalgebra::DMatrix;
use orthomask_server::peers::{Identity, Party};
use orthomask_server::wire::{CohortResult, MaskingOutcome, WireMatrix};
use reqwest::Method;
use serde_json::Value;

/// A cohort result claimed by `provider` (its signature, its claim).
async fn claim(
    http: &reqwest::Client,
    provider: &Identity,
    collector: &str,
    survey: &str,
    result: &CohortResult,
) -> (u16, Value) {
    send_signed(
        http,
        provider,
        Party::Collector,
        Method::PUT,
        &format!(
            "{collector}/api/peer/surveys/{survey}/cohorts/{}/result",
            result.cohort
        ),
        Some(&serde_json::to_value(result).unwrap()),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_claims_the_lists_contradict_are_refused_and_the_genuine_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let t = start_tapped(dir.path(), 0).await;
    let all = &t.all;
    let http = client();
    let created = create_survey(&http, all, &draft("claims", 12, false, true)).await;
    let invited = links(&http, all, &created, 18).await;
    t.collector.set_rule(Some(hold(&["/result"])));
    let mut raw = Vec::new();
    let mut nonces = Vec::new();
    for (i, link) in (0..12u64).zip(&invited) {
        let (record, sent) = participate(&http, link, i).await;
        raw.push(record);
        nonces.push(sent[0].upload.credential.clone().unwrap().nonce);
    }
    // Cohort 0 is full: the provider masked it and its hand-over is held back.
    t.collector.wait_seen("PUT", "/cohorts/0/result").await;
    let (_, list) = send(
        &http,
        Method::GET,
        &format!("{}/api/surveys/claims/cohorts/0/receipts", t.msp.url),
        None,
        None,
    )
    .await;
    let root = list["merkle_root"].as_str().unwrap().to_owned();
    let collector = all.collector.url();
    let p = (created["p1"].as_u64().unwrap() + created["p2"].as_u64().unwrap()) as usize;
    let mut made_up = nonces.clone();
    made_up[0] = "0123456789abcdef0123456789abcdef".into();
    made_up.sort();
    let claims = [
        // A full cohort reported withheld, then empty.
        (
            MaskingOutcome::Withheld {
                reason: "too few".into(),
            },
            12,
            Vec::new(),
            "withheld",
        ),
        (MaskingOutcome::Empty, 0, Vec::new(), "empty"),
        // A bogus batch naming a nonce the collector never issued, under the published root.
        (
            MaskingOutcome::Masked {
                batch: WireMatrix::from_matrix(&DMatrix::from_element(12, p, 1.0)),
            },
            12,
            made_up,
            "made up",
        ),
    ];
    for (outcome, uploads, nonces, why) in claims {
        let result = CohortResult {
            survey: "claims".into(),
            cohort: 0,
            uploads,
            merkle_root: root.clone(),
            nonces,
            outcome,
        };
        let (status, body) = claim(
            &http,
            &identity_of(dir.path(), Party::Provider),
            collector,
            "claims",
            &result,
        )
        .await;
        assert_eq!(status, 422, "{why}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(why),
            "{why}: {body}"
        );
    }
    let view = admin_view(&http, all, "claims").await;
    assert_eq!(
        view["cohorts"][0]["status"], "open",
        "nothing settled: {view}"
    );
    assert_eq!(
        view["refused_handovers"].as_array().unwrap().len(),
        3,
        "{view}"
    );

    // Six more in cohort 1, closed by the survey team: its hand-over stays held back for good.
    for (i, link) in (12..18u64).zip(&invited[12..]) {
        participate(&http, link, i).await;
    }
    t.collector.set_rule(Some(hold(&["/cohorts/1/result"])));
    // The genuine hand-over of cohort 0 is taken at the provider's next retry.
    let view = wait_for_view(&http, all, "claims", |v| {
        v["cohorts"][0]["status"] == "received"
    })
    .await;
    assert_eq!(view["cohorts"][0]["records"], 12);
    let (status, _) = admin_post(&http, all, "/api/admin/surveys/claims/close").await;
    assert_eq!(status, 200);
    t.collector.wait_seen("PUT", "/cohorts/1/result").await;
    // The survey team leaves cohort 1 out; the release names it with the receipts it had.
    let (status, body) =
        admin_post(&http, all, "/api/admin/surveys/claims/cohorts/1/leave-out").await;
    assert_eq!(status, 200, "{body}");
    let (csv, manifest) = wait_for_release(&http, collector, "claims", 60).await;
    assert_same_regression(&raw, &csv);
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    let warnings = manifest["warnings"].to_string();
    assert!(
        warnings.contains("cohort 1: ")
            && warnings.contains("published 6 receipts but the cohort contributes no rows"),
        "{warnings}"
    );
    t.all.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_mode_claims_the_lists_contradict_are_refused_and_the_genuine_is_taken() {
    use orthomask_core::protocol::share_handover::FixedMatrix;
    use orthomask_server::wire::{SharePart, WireFixed};
    let dir = tempfile::tempdir().unwrap();
    let t = start_tapped(dir.path(), 3).await;
    let all = &t.all;
    let http = client();
    let created = create_survey(&http, all, &draft("share-claims", 12, true, false)).await;
    let url = created["definition_url"].as_str().unwrap().to_owned();
    t.collector.set_rule(Some(hold(&["/parts/", "/result"])));
    let mut raw = Vec::new();
    for i in 0..12u64 {
        raw.push(participate(&http, &url, i).await.0);
    }
    t.collector.wait_seen("PUT", "/cohorts/0/parts/").await;
    let collector = all.collector.url();
    // The provider, signing as itself, says the cohort yields nothing: every service
    // published twelve receipts, so it is not believed.
    for outcome in [
        MaskingOutcome::Empty,
        MaskingOutcome::Withheld {
            reason: "lost shares".into(),
        },
    ] {
        let result = CohortResult {
            survey: "share-claims".into(),
            cohort: 0,
            uploads: 3,
            merkle_root: String::new(),
            nonces: Vec::new(),
            outcome,
        };
        let (status, body) = claim(
            &http,
            &identity_of(dir.path(), Party::Provider),
            collector,
            "share-claims",
            &result,
        )
        .await;
        assert_eq!(status, 422, "{body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("published at least 12"),
            "{body}"
        );
    }
    // A part claiming another root than service 0 published is refused and not stored.
    let p1 = created["p1"].as_u64().unwrap() as usize;
    let forged = SharePart {
        survey: "share-claims".into(),
        cohort: 0,
        index: 0,
        merkle_root: "00".repeat(32),
        uploads: 12,
        scale: 1.0,
        block: WireFixed::from_fixed(
            &FixedMatrix::encode(&DMatrix::from_element(12, p1, 1.0)).unwrap(),
        ),
    };
    let (status, body) = send_signed(
        &http,
        &identity_of(dir.path(), Party::Right(0)),
        Party::Collector,
        Method::PUT,
        &format!("{collector}/api/peer/surveys/share-claims/cohorts/0/parts/0"),
        Some(&serde_json::to_value(&forged).unwrap()),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let view = admin_view(&http, all, "share-claims").await;
    assert_eq!(
        view["cohorts"][0]["status"], "open",
        "nothing settled: {view}"
    );
    assert_eq!(
        view["refused_handovers"].as_array().unwrap().len(),
        3,
        "{view}"
    );
    // The genuine parts go through.
    t.collector.set_rule(None);
    wait_for_view(&http, all, "share-claims", |v| {
        v["cohorts"][0]["status"] == "received"
    })
    .await;
    let (status, _) = admin_post(&http, all, "/api/admin/surveys/share-claims/close").await;
    assert_eq!(status, 200);
    let (csv, _) = wait_for_release(&http, collector, "share-claims", 60).await;
    assert_same_regression(&raw, &csv);
    t.all.stop().await;
}
