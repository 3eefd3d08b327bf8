//! Issue 20 §8: garbage costs one upload, not a cohort.
//!
//! * An orthogonal right mask keeps each row's length, so the provider may refuse — before it
//!   stores anything — an upload no honest device makes: a `1e300`, an answer far outside its
//!   declared range (`orthomask_survey::intake_bounds`). A right-masking service sees its raw
//!   share and checks each part: the QA entry exactly, the padding's and the answers' lengths.
//!   Every honest upload of a large simulated cohort passes.
//! * A participant who lies *within* the bound (a wrong QA entry, made with the cohort's own
//!   `B_k`) spoils the cohort's QA check, and which upload it was cannot be told. The fallback:
//!   the cohort is left out and its invitations reopen; the honest participants' devices learn
//!   it from the cohort's fate, take a place in a new cohort and send again. The release then
//!   holds exactly the honest records and equals their raw regression, and the collector kept
//!   nothing of the spoilt cohort to difference against the new one.

mod common;

use common::*;
use orthomask_core::key::Key;
use orthomask_server::peers::{Identity, Party};
use orthomask_survey::client as device;
use serde_json::Value;

async fn provider_uploads(
    http: &reqwest::Client,
    msp: &str,
    collector: &Identity,
    survey: &str,
) -> Value {
    peer_view(http, msp, (collector, Party::Provider), survey)
        .await
        .1["cohorts"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_no_honest_device_makes_are_refused_before_they_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let peer = &identity_of(dir.path(), Party::Collector);

    // Basic protocol, cohorts of 200: every honest upload of 200 simulated participants passes.
    let created = create_survey(&http, &all, &draft("bounded", 200, false, true)).await;
    let invited = links(&http, &all, &created, 202).await;
    for (i, link) in (0..200u64).zip(&invited) {
        participate(&http, link, i).await;
    }
    // The two that are left: a 1e300, and an income of 10⁹ against a declared 0–250 (made by a
    // device that holds B_k). Both carry valid credentials; neither is stored.
    let bounded = provider_uploads(&http, all.msp.url(), peer, "bounded").await;
    let before = bounded[1]["uploads"].as_u64().unwrap_or(0);
    for (i, link) in (200..202u64).zip(&invited[200..]) {
        let (def, uploads) = prepare(&http, link, i, &answers(i)).await;
        let (url, honest) = uploads[0].clone();
        let garbage = if i == 200 {
            let mut u = honest.clone();
            u.values[3] = 1e300;
            u
        } else {
            crafted(&def, &honest, i, |record| {
                record[2] = 2.0 * 1e9 / 250.0 - 1.0
            })
        };
        let (status, body) = post_upload(&http, &url, &garbage).await;
        assert_eq!(status, 422, "{body}");
        let error = body["error"].as_str().unwrap();
        assert!(
            error.contains("exceeds the") && !error.contains('\n'),
            "{error}"
        );
    }
    let after = provider_uploads(&http, all.msp.url(), peer, "bounded").await;
    assert_eq!(
        after[1]["uploads"].as_u64().unwrap_or(0),
        before,
        "nothing stored: {after}"
    );

    // Share mode: a share whose QA entry lies, or whose padding is gone, is refused at the
    // right-masking service — it can no longer spoil the cohort's QA check.
    let created = create_survey(&http, &all, &draft("shared", 12, true, false)).await;
    let url = created["definition_url"].as_str().unwrap();
    let (def, uploads) = prepare(&http, url, 7, &answers(7)).await;
    let qa_index = def.design().unwrap().answers();
    for (what, edit) in [
        (
            "QA entry",
            (|v: &mut Vec<f64>, q: usize| v[q] += 0.5) as fn(&mut Vec<f64>, usize),
        ),
        ("padding", |v, q| {
            v[q + 1..].iter_mut().for_each(|x| *x = 0.0)
        }),
    ] {
        let (url, mut share) = uploads[1].clone();
        edit(&mut share.values, qa_index);
        let (status, body) = post_upload(&http, &url, &share).await;
        assert_eq!(status, 422, "{what}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(what),
            "{what}: {body}"
        );
    }
    let (_, view) = peer_view(
        &http,
        all.rights[1].url(),
        (peer, Party::Right(1)),
        "shared",
    )
    .await;
    assert_eq!(view["cohorts"][0]["uploads"], 0, "{view}");
    all.stop().await;
}

/// Wait until cohort `k`'s fate, as a device asks for it, is no longer open or processing.
async fn settled_fate(
    http: &reqwest::Client,
    collector: &str,
    survey: &str,
    k: u32,
    nonce: &str,
) -> Value {
    poll_until(
        &format!("the fate of cohort {k} of {survey} to settle"),
        HANG_GUARD,
        || async move {
            let (status, fate) = cohort_fate(http, collector, survey, k, Some(nonce)).await;
            assert_eq!(status, 200, "{fate}");
            if fate["fate"] != "open" && fate["fate"] != "processing" {
                Ok(fate)
            } else {
                Err(fate)
            }
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_liar_among_forty_costs_a_second_round_not_the_others_answers() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("liar", 41, false, true)).await;
    let invited = links(&http, &all, &created, 41).await;
    // Forty honest participants and one who sends its record with the QA entry off by a half —
    // inside every bound, and only the collector's QA check can see it.
    let mut raw = Vec::new();
    for (i, link) in (0..40u64).zip(&invited) {
        let (record, sent) = participate(&http, link, i).await;
        assert_eq!(sent[0].receipt.cohort, 0);
        raw.push(record);
    }
    let (def, uploads) = prepare(&http, &invited[40], 40, &answers(40)).await;
    let (url, honest) = uploads[0].clone();
    let qa = def.design().unwrap().answers();
    let liar = crafted(&def, &honest, 40, |record| record[qa] += 0.5);
    let (status, body) = post_upload(&http, &url, &liar).await;
    assert_eq!(
        status, 201,
        "inside the bounds, the provider cannot tell: {body}"
    );

    // The cohort (full at 41) is spoilt; every device is told to answer again.
    // Asked as a device of the cohort asks: with its credential's nonce; without one, the
    // collector tells nothing (issue 43 §6).
    let nonce = liar.credential.as_ref().unwrap().nonce.clone();
    let fate = settled_fate(&http, all.collector.url(), "liar", 0, &nonce).await;
    let (status, _) = cohort_fate(&http, all.collector.url(), "liar", 0, None).await;
    assert_eq!(status, 404);
    assert_eq!(fate["fate"], "spoilt", "{fate}");
    assert_eq!(fate["answer_again"], true);
    let view = admin_view(&http, &all, "liar").await;
    assert_eq!(view["spoilt"]["cohorts"], 1, "{view}");
    assert_eq!(view["spoilt"]["reopened_invitations"], 41, "{view}");
    // Nothing of the spoilt cohort is kept by the collector (data NULL; no bytes in the files).
    let conn = rusqlite::Connection::open_with_flags(
        dir.path().join("collector/collector.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let kept: Option<Vec<u8>> = conn
        .query_row(
            "SELECT data FROM cohorts WHERE survey = 'liar' AND cohort = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(kept.is_none());
    drop(conn);

    // The honest devices take a place again with the same invitation and send again, with a
    // fresh token (the liar does not come back).
    for (i, link) in (0..40u64).zip(&invited) {
        let (def, credential) = load(&http, link).await;
        assert_eq!(def.masking.cohort, 1, "a place in a new cohort");
        let prepared = device::Client::new(&def)
            .unwrap()
            .with_credential(credential)
            .prepare(&answers(i), &token(10_000 + i), &Key::teaching(80_000 + i))
            .unwrap();
        let d = &prepared.destinations[0];
        let (status, body) = post_upload(&http, &d.url, &d.upload).await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, _) = admin_post(&http, &all, "/api/admin/surveys/liar/close").await;
    assert_eq!(status, 200);
    let (csv, manifest) = wait_for_release(&http, all.collector.url(), "liar", 120).await;
    assert_same_regression(&raw, &csv);
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["cohorts"]["sizes"], serde_json::json!([40]));
    let warnings = manifest["warnings"].to_string();
    assert!(
        warnings.contains("cohort 0 was left out and its participants asked to answer again"),
        "{warnings}"
    );
    all.stop().await;
}
