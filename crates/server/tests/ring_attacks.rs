//! The share-mode ring's peer endpoints under attack by a dishonest party of the deployment,
//! signing with its own identity key — the only key it holds (issue 43):
//!
//! * `PUT …/left-masked` is the provider's: a dishonest provider's block at a right-masking
//!   service that does not unmask that share, or below the cohort floor of the signed template,
//!   is refused, nothing unmasked;
//! * `PUT …/hand-on/{from}` is service `from`'s alone: the provider or another service forging
//!   it is refused (403). Service `from` itself, dishonest, can send a bad key of its own ahead
//!   of the genuine one: it is taken and the genuine one refused, so the parts' cancelling masks
//!   no longer cancel, the sum fails QA and the cohort is spoilt — its participants are asked to
//!   answer again. A denial of service by a member of the ring, stated in the threat model, not
//!   a read: the forged key only acts on rows the forger never sees unmasked.

mod common;

use common::tap::{hold, start_tapped};
use common::*;
use nalgebra::DMatrix;
use orthomask_server::peers::{Identity, Party};
use orthomask_server::wire::{HandOn, LeftMasked, SharePart, WireMatrix};
use reqwest::Method;

async fn put(
    http: &reqwest::Client,
    (from, to): (&Identity, Party),
    url: &str,
    body: &impl serde::Serialize,
) -> (u16, serde_json::Value) {
    send_signed(
        http,
        from,
        to,
        Method::PUT,
        url,
        Some(&serde_json::to_value(body).unwrap()),
    )
    .await
}

/// Three services: service 0 unmasks share 2 (the ring), so a block of share 0 is refused; a
/// block of three rows is below the template's floor of six and is refused too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn left_masked_blocks_outside_the_ring_or_below_the_floor_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = start_tapped(dir.path(), 3).await;
    let http = client();
    let created = create_survey(&http, &t.all, &draft("ring", 12, true, false)).await;
    let p = (created["p1"].as_u64().unwrap() + created["p2"].as_u64().unwrap()) as usize;
    let url = format!(
        "{}/api/peer/surveys/ring/cohorts/0/left-masked",
        t.all.rights[0].url()
    );
    let block = |index: u32, rows: usize| LeftMasked {
        survey: "ring".into(),
        cohort: 0,
        index,
        block: WireMatrix::from_matrix(&DMatrix::from_element(rows, p, 0.5)),
    };
    let provider = identity_of(dir.path(), Party::Provider);
    let as_provider = (&provider, Party::Right(0));
    // Another party than the provider is refused whatever the block.
    let service_1 = identity_of(dir.path(), Party::Right(1));
    let (status, body) = put(&http, (&service_1, Party::Right(0)), &url, &block(2, 12)).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = put(&http, as_provider, &url, &block(0, 12)).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("does not unmask share 0"),
        "{body}"
    );
    let (status, body) = put(&http, as_provider, &url, &block(2, 3)).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("should have been withheld"),
        "{body}"
    );
    t.all.stop().await;
}

/// A hand-on of service 0 is service 0's: the provider and service 2 forging it are refused. A
/// dishonest service 0's own bad hand-on ahead of the genuine one: taken, the genuine one
/// refused, the cohort spoilt and its participants asked to answer again; nothing of it is
/// released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_hand_on_spoils_the_cohort() {
    let dir = tempfile::tempdir().unwrap();
    let t = start_tapped(dir.path(), 3).await;
    let http = client();
    let created = create_survey(&http, &t.all, &draft("forged-hand-on", 12, true, false)).await;
    let (p1, p2) = (
        created["p1"].as_u64().unwrap() as usize,
        created["p2"].as_u64().unwrap() as usize,
    );
    for tap in &t.rights {
        tap.set_rule(Some(hold(&["/hand-on/"])));
    }
    let url = created["definition_url"].as_str().unwrap().to_owned();
    for i in 0..12u64 {
        participate(&http, &url, i).await;
    }
    // Service 0's genuine hand-on to service 1 is waiting at service 1's tap.
    t.rights[1].wait_seen("PUT", "/cohorts/0/hand-on/0").await;
    let forged = HandOn {
        survey: "forged-hand-on".into(),
        cohort: 0,
        from: 0,
        key: WireMatrix::from_matrix(&DMatrix::from_fn(p1 + p2, p1, |i, j| {
            ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.5
        })),
        seed: Some("ab".repeat(32)),
    };
    let hand_on = format!(
        "{}/api/peer/surveys/forged-hand-on/cohorts/0/hand-on/0",
        t.all.rights[1].url()
    );
    for forger in [Party::Provider, Party::Right(2), Party::Collector] {
        let forger = identity_of(dir.path(), forger);
        let (status, body) = put(&http, (&forger, Party::Right(1)), &hand_on, &forged).await;
        assert_eq!(status, 403, "{body}");
        assert!(
            one_line_error(&body).contains("right-masking service 0's to ask"),
            "{body}"
        );
    }
    let service_0 = identity_of(dir.path(), Party::Right(0));
    let (status, body) = put(&http, (&service_0, Party::Right(1)), &hand_on, &forged).await;
    assert_eq!(status, 200, "{body}");
    for tap in &t.rights {
        tap.set_rule(None);
    }
    let view = wait_for_view(&http, &t.all, "forged-hand-on", |v| {
        v["cohorts"][0]["status"] == "spoilt"
    })
    .await;
    assert_eq!(view["spoilt"]["cohorts"], 1, "{view}");
    let nonce = t.rights[0].seen_matching("POST", "/uploads")[0].json()["credential"]["nonce"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, fate) = cohort_fate(
        &http,
        t.all.collector.url(),
        "forged-hand-on",
        0,
        Some(&nonce),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(fate["answer_again"], true, "{fate}");
    t.all.stop().await;
}

/// A share part that reports a rounding scale no honest service can report for its rows is
/// refused with one line, before it is judged or stored: the collector widens its QA tolerance by
/// the reported scales, so an unbounded one would let a forged part pass QA. The bound is the
/// intake bound's longest share times `√rows` (`UploadBounds::largest_part_scale`); the same part
/// with a scale inside it gets past this check (and is then judged against the lists).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_reporting_an_impossible_rounding_scale_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let http = client();
    let all = start(dir.path(), 3, None).await;
    let created = create_survey(&http, &all, &draft("scaled", 12, true, false)).await;
    let p1 = created["p1"].as_u64().unwrap() as usize;
    let service_0 = identity_of(dir.path(), Party::Right(0));
    let url = format!(
        "{}/api/peer/surveys/scaled/cohorts/0/parts/0",
        all.collector.url()
    );
    let part = |scale: f64| SharePart {
        scale,
        ..made_up_part("scaled", 0, p1)
    };
    let put_part = |scale: f64| {
        let body = serde_json::to_value(part(scale)).unwrap();
        let (http, url, from) = (http.clone(), url.clone(), service_0.clone());
        async move {
            send_signed(
                &http,
                &from,
                Party::Collector,
                Method::PUT,
                &url,
                Some(&body),
            )
            .await
        }
    };
    let answer = put_part(1e300).await;
    refused("a part with scale 1e300", &answer, 400, "rounding scale");
    let view = admin_view(&http, &all, "scaled").await;
    assert_eq!(view["cohorts"][0]["status"], "open", "{view}");
    let answer = put_part(1.0).await;
    assert!(
        !one_line_error(&answer.1).contains("rounding scale"),
        "a scale of 1 for six rows was refused: {}",
        answer.1
    );
    all.stop().await;
}
