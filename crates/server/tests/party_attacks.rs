//! Issue 43: the parties distrust each other. Each attack the issue tried against a real
//! `serve all` is performed here as the party that would make it, holding only what that party
//! holds — its own identity key (`common::identity_of`), or none for an outsider — against the
//! real services over HTTP:
//!
//! 1. registration hijack: a party other than the pinned collector registers or re-registers a
//!    survey; the collector re-registers one under another design;
//! 2. share mode downgraded to two services by a definition the real collector signs;
//! 3. answers lost by a cohort closed early: by a party that may not close, and by the survey
//!    team, which may;
//! 4. memory exhaustion by a peer's oversized body;
//! 5. liars inside the upload bounds (zero padding in the basic protocol, a shifted answer in
//!    every share in share mode);
//! 6. oracles: what an outsider learns of a real survey against one that does not exist;
//! 7. a QA constant that cannot reveal a change; `Permissions-Policy` on every answer.

mod common;

use common::*;
use orthomask_server::peers::{Identity, Party};
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::trust::{CollectorSigningKey, NONCE_BYTES, SignedDefinition};
use reqwest::Method;
use serde_json::{Value, json};

/// `PUT {base}/api/peer/surveys/{survey}` with `registration`, signed by `from` for `to`.
async fn register(
    http: &reqwest::Client,
    (from, to): (&Identity, Party),
    base: &str,
    registration: &Value,
) -> (u16, Value) {
    let survey = registration["survey"].as_str().unwrap();
    send_signed(
        http,
        from,
        to,
        Method::PUT,
        &format!("{base}/api/peer/surveys/{survey}"),
        Some(registration),
    )
    .await
}

/// An identity no service pins: an outsider's, or a party's stolen-and-replaced key.
fn outsider() -> Identity {
    Identity::from_secret(Party::Collector, [0x5e; 32])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_is_believed_only_from_the_pinned_collector_and_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let data = dir.path();
    let (collector, provider, right_0) = (
        identity_of(data, Party::Collector),
        identity_of(data, Party::Provider),
        identity_of(data, Party::Right(0)),
    );
    let msp = all.msp.url();
    let created = create_survey(&http, &all, &draft("genuine", 12, false, true)).await;
    let invited = links(&http, &all, &created, 1).await;
    let (_, uploads) = prepare(&http, &invited[0], 0, &answers(0)).await;

    // A new survey "registered" with a template signed by a key of the registrant's own.
    let foreign = direct_survey("hijack", 12, &[], CollectorSigningKey::from_secret([9; 32]));
    for (who, expected, naming) in [
        (&right_0, 403, "the data collector's to ask"),
        (&provider, 401, "not one this service pins"),
        (&outsider(), 401, "not one this service pins"),
        (&collector, 403, "names another key"),
    ] {
        let (status, body) =
            register(&http, (who, Party::Provider), msp, &foreign.registration).await;
        assert_eq!(status, expected, "{who:?}: {body}");
        assert!(one_line_error(&body).contains(naming), "{who:?}: {body}");
    }
    // The provider signing to itself is refused too: it pins no key of its own as a peer.
    // The genuine survey, re-registered before its first upload: by another party, refused;
    // by the collector itself under another design, refused too — never replaced.
    let genuine_other = direct_survey("genuine", 13, &[], collector_signing_key(data));
    for who in [&right_0, &outsider()] {
        let (status, body) = register(
            &http,
            (who, Party::Provider),
            msp,
            &genuine_other.registration,
        )
        .await;
        assert!(matches!(status, 401 | 403), "{who:?}: {body}");
    }
    let (status, body) = register(
        &http,
        (&collector, Party::Provider),
        msp,
        &genuine_other.registration,
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert!(one_line_error(&body).contains("never replaced"), "{body}");
    // In share mode, a right-masking service cannot register at another one.
    let shares = direct_survey(
        "hijack-shares",
        12,
        &all.rights
            .iter()
            .map(|r| r.url().to_owned())
            .collect::<Vec<_>>(),
        collector_signing_key(data),
    );
    let (status, body) = register(
        &http,
        (&right_0, Party::Right(1)),
        all.rights[1].url(),
        &shares.registration,
    )
    .await;
    assert_eq!(status, 403, "{body}");

    // The genuine participant's upload is still taken: nothing was replaced.
    let (status, body) = post_upload(&http, &uploads[0].0, &uploads[0].1).await;
    assert_eq!(status, 201, "{body}");
    all.stop().await;
}

/// The signed template of a planned survey, changed by `edit` and signed again by `signing`:
/// what a dishonest collector can hand its devices and register.
fn resigned(
    survey: &DirectSurvey,
    signing: &CollectorSigningKey,
    edit: impl FnOnce(&mut SurveyDefinition),
) -> (SurveyDefinition, Value) {
    let mut template = survey.template.clone();
    edit(&mut template);
    let mut registration = survey.registration.clone();
    registration["template"] =
        serde_json::to_value(SignedDefinition::sign(signing, &template)).unwrap();
    (template, registration)
}

/// Attack 2, and attack 7's QA constant: the real collector signs a weaker definition. The device
/// refuses it before masking anything, and the provider and every right-masking service refuse
/// to register it, each in one line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_definition_the_collector_weakened_is_refused_by_devices_and_services() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let data = dir.path();
    let signing = collector_signing_key(data);
    let collector = identity_of(data, Party::Collector);
    let rights: Vec<String> = all.rights.iter().map(|r| r.url().to_owned()).collect();

    // Share mode over two of the three services.
    let three = direct_survey("two-services", 12, &rights, signing.clone());
    let (two, registration) = resigned(&three, &signing, |t| {
        t.masking.share_mode.as_mut().unwrap().providers.truncate(2);
    });
    let mut registration = registration;
    registration["share_services"] = json!(2);
    let device = orthomask_survey::floors::check(&two)
        .unwrap_err()
        .to_string();
    assert!(device.contains("right-masking services"), "{device}");
    for (to, base) in [
        (Party::Provider, all.msp.url()),
        (Party::Right(0), all.rights[0].url()),
        (Party::Right(1), all.rights[1].url()),
    ] {
        let (status, body) = register(&http, (&collector, to), base, &registration).await;
        assert_eq!(status, 400, "{to}: {body}");
        assert!(
            one_line_error(&body).contains("right-masking services"),
            "{to}: {body}"
        );
    }

    // A QA constant of 0: the QA check could never reveal a changed mask.
    let basic = direct_survey("qa-zero", 12, &[], signing.clone());
    let (zero, mut registration) = resigned(&basic, &signing, |t| {
        t.masking.qa_constant = Some(0.0);
    });
    registration["qa_constant"] = json!(0.0);
    let device = orthomask_survey::floors::check(&zero)
        .unwrap_err()
        .to_string();
    assert!(device.contains("QA"), "{device}");
    let (status, body) = register(
        &http,
        (&collector, Party::Provider),
        all.msp.url(),
        &registration,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(one_line_error(&body).contains("QA"), "{body}");
    all.stop().await;
}

/// Attack 3: closing a cohort is the collector's alone; and when the survey team closes one
/// early, below its floor, no answer is lost — the uploads' participants are told their cohort
/// was regrouped, take a fresh place and answer again, new places keep being served, and the
/// release holds every answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cohort_closed_early_loses_no_answer_and_only_the_collector_closes() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let data = dir.path();
    let created = create_survey(&http, &all, &draft("early", 12, false, true)).await;
    let invited = links(&http, &all, &created, 12).await;
    let mut first_nonces = Vec::new();
    for (i, link) in (0..2u64).zip(&invited) {
        let (_, sent) = participate(&http, link, i).await;
        assert_eq!(sent[0].receipt.cohort, 0);
        first_nonces.push(sent[0].upload.credential.clone().unwrap().nonce);
    }
    let close = format!("{}/api/peer/surveys/early/cohorts/0/close", all.msp.url());
    for (who, expected) in [
        (identity_of(data, Party::Right(0)), 403),
        (identity_of(data, Party::Right(2)), 403),
        (outsider(), 401),
    ] {
        let (status, body) =
            send_signed(&http, &who, Party::Provider, Method::POST, &close, None).await;
        assert_eq!(status, expected, "{who:?}: {body}");
    }
    let view = admin_view(&http, &all, "early").await;
    assert_eq!(view["cohorts"][0]["status"], "open", "{view}");

    // The survey team closes cohort 0 with its two uploads: below the floor, withheld.
    let (status, body) = admin_post(&http, &all, "/api/admin/surveys/early/cohorts/0/close").await;
    assert_eq!(status, 200, "{body}");
    wait_for_view(&http, &all, "early", |v| {
        v["cohorts"][0]["status"] == "withheld"
    })
    .await;
    for nonce in &first_nonces {
        let (status, fate) = cohort_fate(&http, all.collector.url(), "early", 0, Some(nonce)).await;
        assert_eq!(status, 200, "{fate}");
        assert_eq!(fate["fate"], "regrouped", "{fate}");
        assert_eq!(fate["answer_again"], true, "{fate}");
    }
    // Their devices answer again with the same invitations (a new upload: a fresh token, as the
    // page makes one), ten others join, all in cohort 1: new places were served all along.
    let mut raw = Vec::new();
    for (i, link) in (0..2u64).zip(&invited) {
        let (def, credential) = load(&http, link).await;
        assert_eq!(def.masking.cohort, 1, "a fresh place in a new cohort");
        let prepared = orthomask_survey::client::Client::new(&def)
            .unwrap()
            .with_credential(credential)
            .prepare(
                &answers(i),
                &token(20_000 + i),
                &orthomask_core::key::Key::teaching(90_000 + i),
            )
            .unwrap();
        let d = &prepared.destinations[0];
        let (status, body) = post_upload(&http, &d.url, &d.upload).await;
        assert_eq!(status, 201, "{body}");
        raw.push(def.encode(&answers(i)).unwrap());
    }
    for (i, link) in (2..12u64).zip(&invited[2..]) {
        let (record, sent) = participate(&http, link, i).await;
        assert_eq!(sent[0].status, 201);
        assert_eq!(sent[0].receipt.cohort, 1, "participant {i}");
        raw.push(record);
    }
    let (status, _) = admin_post(&http, &all, "/api/admin/surveys/early/close").await;
    assert_eq!(status, 200);
    let (csv, manifest) = wait_for_release(&http, all.collector.url(), "early", 120).await;
    assert_same_regression(&raw, &csv);
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["cohorts"]["sizes"], json!([12]), "{manifest}");
    all.stop().await;
}

/// Issue 43's adversarial review, the collector alone: it hands one participant a definition
/// with a device key of its own (and a credential naming it, or the device would refuse), so
/// that after the provider's mask that participant's row is the one the cohort's key does not
/// unmask — found through the QA column and read. Every credential of a cohort names its device
/// key and the provider refuses a second one in a cohort: the retargeted upload is refused and
/// nothing of it is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_participant_given_a_key_of_the_collectors_own_is_refused_by_the_provider() {
    use orthomask_survey::trust::{DefinitionOffer, UploadCredential, device_key_digest};
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("retarget", 12, false, true)).await;
    let invited = links(&http, &all, &created, 2).await;
    let (_, sent) = participate(&http, &invited[0], 0).await;
    assert_eq!(sent[0].status, 201);
    // The collector's own offer for the target, re-made with a fresh key.
    let (status, text) = take_place(&http, &invited[1]).await;
    assert_eq!(status, 200, "{text}");
    let offer: DefinitionOffer = serde_json::from_str(&text).unwrap();
    let mut target: SurveyDefinition = serde_json::from_str(&offer.signed.definition).unwrap();
    let fresh = "c0ffee".repeat(10) + "c0ff";
    target.masking.right_mask_key = Some(fresh.clone());
    let signing = collector_signing_key(dir.path());
    let credential = UploadCredential::reissue_for_key(
        &signing,
        "retarget",
        offer.credential.cohort,
        &offer.credential.nonce,
        offer.credential.expires_at,
        Some(device_key_digest(&fresh)),
    );
    let retargeted = DefinitionOffer {
        signed: SignedDefinition::sign(&signing, &target),
        credential: credential.clone(),
    };
    let deployment: orthomask_survey::trust::Deployment = serde_json::from_value(
        send(
            &http,
            Method::GET,
            &format!("{}/api/deployment", all.collector.url()),
            None,
            None,
        )
        .await
        .1,
    )
    .unwrap();
    // The device has no way to tell: the offer is consistent and signed by its collector.
    let accepted = deployment.accept(&retargeted, "retargeted").unwrap();
    let prepared = orthomask_survey::client::Client::new(&accepted)
        .unwrap()
        .with_credential(credential)
        .prepare(
            &answers(1),
            &token(1),
            &orthomask_core::key::Key::teaching(77_001),
        )
        .unwrap();
    let d = &prepared.destinations[0];
    let (status, body) = post_upload(&http, &d.url, &d.upload).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        one_line_error(&body).contains("another device key than the rest of its cohort"),
        "{body}"
    );
    all.stop().await;
}

/// One request written on a fresh connection: the head only, announcing `length` bytes of body
/// that never come. The service's answer's status line.
async fn head_only(base: &str, head: String) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    answer.extend_from_slice(&buf[..n]);
                    if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
            }
        }
    };
    // A hang guard: the answer must come without the body, so it cannot wait for it.
    tokio::time::timeout(HANG_GUARD, read)
        .await
        .expect("the service answered before the body came");
    String::from_utf8_lossy(&answer).into_owned()
}

/// Attack 4: a pinned peer (the provider, dishonest) announces a body of 500 MiB to the
/// collector's hand-over endpoint. The collector refuses it from the head alone — 413, naming
/// the size the survey's design allows — and reads none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_body_beyond_what_the_design_allows_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    create_survey(&http, &all, &draft("flood", 12, false, true)).await;
    let provider = identity_of(dir.path(), Party::Provider);
    let base = all.collector.url();
    let path = "/api/peer/surveys/flood/cohorts/0/result";
    let url = format!("{base}{path}");
    let signature =
        orthomask_server::peer_auth::sign(&provider, Party::Collector, &Method::PUT, &url, b"")
            .await
            .unwrap();
    let mut head = format!(
        "PUT {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n",
        base.trim_start_matches("http://"),
        500u64 << 20
    );
    for (name, value) in &signature {
        head.push_str(&format!("{name}: {}\r\n", value.to_str().unwrap()));
    }
    head.push_str("\r\n");
    let answer = head_only(base, head).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // The collector keeps serving.
    let (status, _) = send(
        &http,
        Method::GET,
        &format!("{base}/api/health"),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200);
    all.stop().await;
}

/// The scaled value of answer column `column` that makes a zero-padded record as long as the
/// middle of the provider's honest range: the zero-padding liar's best lie.
fn zero_padding_lie(def: &SurveyDefinition, honest: &[f64], column: usize) -> f64 {
    use orthomask_survey::intake_bounds::UploadBounds;
    let UploadBounds::Masked { low, high, .. } = UploadBounds::of(def).unwrap() else {
        panic!("the basic protocol's bounds");
    };
    let design = def.design().unwrap();
    let answers = design.answers();
    let others: f64 = (0..answers)
        .filter(|&j| j != column)
        .map(|j| honest[j] * honest[j])
        .sum();
    let q = honest[answers];
    let target = (low * low + high * high) / 2.0;
    (target - q * q - others).sqrt()
}

/// Attack 5, basic protocol: a device that holds its cohort's `B_k` sends zero padding and puts
/// the padding's length into the age instead — inside the provider's length bound, so stored —
/// and the collector's check of the cohort's statistics against the declared ranges spoils the
/// cohort, naming the column.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_padding_liar_is_caught_by_the_cohorts_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("padding-liar", 12, false, true)).await;
    let invited = links(&http, &all, &created, 12).await;
    for (i, link) in (0..11u64).zip(&invited) {
        participate(&http, link, i).await;
    }
    let (def, uploads) = prepare(&http, &invited[11], 11, &answers(11)).await;
    let (url, honest) = uploads[0].clone();
    let design = def.design().unwrap();
    let answers = design.answers();
    let age = 1;
    let liar = crafted(&def, &honest, 11, |record| {
        let lie = zero_padding_lie(&def, record, age);
        for v in &mut record[answers + 1..] {
            *v = 0.0;
        }
        record[age] = lie;
    });
    let (status, body) = post_upload(&http, &url, &liar).await;
    assert_eq!(status, 201, "inside the provider's bound: {body}");
    let view = wait_for_view(&http, &all, "padding-liar", |v| {
        v["cohorts"][0]["status"] != "open" && v["cohorts"][0]["status"] != "closed"
    })
    .await;
    assert_eq!(view["cohorts"][0]["status"], "spoilt", "{view}");
    let note = view["cohorts"][0]["note"].as_str().unwrap();
    assert!(note.contains("\"age\""), "{note}");
    all.stop().await;
}

/// Attack 5, share mode, as the issue measured it: one participant adds 600 (on the `[−1, 1]`
/// scale) to the age in each of its three shares and sends no share noise. Each service now
/// refuses such a share coordinate by coordinate. A liar who stays just inside the coordinate
/// bound gets every share taken, and the collector's check of the summed cohort refuses it: the
/// cohort is spoilt, the released mean never moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_mode_liar_shifting_every_share_is_caught() {
    use orthomask_survey::intake_bounds::UploadBounds;
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("share-liar", 12, true, false)).await;
    let url = created["definition_url"].as_str().unwrap().to_owned();
    for i in 0..11u64 {
        participate(&http, &url, i).await;
    }
    let (def, uploads) = prepare(&http, &url, 11, &answers(11)).await;
    let design = def.design().unwrap();
    let answers_n = design.answers();
    let k = uploads.len() as f64;
    let scaled = design
        .scaler()
        .unwrap()
        .scale_row(&def.encode(&answers(11)).unwrap())
        .unwrap();
    let UploadBounds::Share {
        coordinate_high, ..
    } = UploadBounds::of(&def).unwrap()
    else {
        panic!("share mode's bounds");
    };
    let age = 1;
    let lie = |share: &orthomask_survey::upload::Upload, shift: f64| {
        let mut liar = share.clone();
        for (j, (value, answer)) in liar.values[..answers_n].iter_mut().zip(&scaled).enumerate() {
            *value = answer / k + if j == age { shift } else { 0.0 };
        }
        liar
    };
    for (to, share) in &uploads {
        let (status, body) = post_upload(&http, to, &lie(share, 600.0)).await;
        assert_eq!(status, 422, "{body}");
        assert!(one_line_error(&body).contains("answer value 1"), "{body}");
    }
    // Just inside: every service takes its share (the same tokens: nothing was stored before).
    let shift = 0.95 * coordinate_high - scaled[age] / k;
    for (to, share) in &uploads {
        let (status, body) = post_upload(&http, to, &lie(share, shift)).await;
        assert_eq!(status, 201, "every service takes its share: {body}");
    }
    let view = wait_for_view(&http, &all, "share-liar", |v| {
        v["cohorts"][0]["status"] != "open" && v["cohorts"][0]["status"] != "closed"
    })
    .await;
    assert_eq!(view["cohorts"][0]["status"], "spoilt", "{view}");
    let note = view["cohorts"][0]["note"].as_str().unwrap();
    assert!(note.contains("\"age\""), "{note}");
    all.stop().await;
}

/// Attack 6: an outsider asking about a real survey by invitation learns what it learns about
/// one that does not exist — the same status and the same line, whatever it asks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outsider_cannot_tell_a_real_survey_from_none() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    create_survey(&http, &all, &draft("real", 12, false, true)).await;
    let (c, m) = (all.collector.url(), all.msp.url());
    let foreign = direct_survey("real", 12, &[], CollectorSigningKey::from_secret([8; 32]));
    let forged = foreign.uploads(0, 0, [3; NONCE_BYTES]).remove(0).1;
    let mut answers_for = Vec::new();
    for survey in ["real", "none-at-all"] {
        let mut upload = forged.clone();
        upload.survey = survey.to_owned();
        upload.credential.as_mut().unwrap().survey = survey.to_owned();
        let upload = serde_json::to_value(&upload).unwrap();
        let asked = [
            send(
                &http,
                Method::GET,
                &format!("{c}/api/surveys/{survey}/status"),
                None,
                None,
            )
            .await,
            send(
                &http,
                Method::POST,
                &format!("{c}/api/surveys/{survey}/definition"),
                Some(&json!({})),
                None,
            )
            .await,
            send(
                &http,
                Method::GET,
                &format!("{c}/api/surveys/{survey}/release.csv"),
                None,
                None,
            )
            .await,
            cohort_fate(&http, c, survey, 0, None).await,
            cohort_fate(&http, c, survey, 0, Some(&"ab".repeat(16))).await,
            send(
                &http,
                Method::GET,
                &format!("{m}/api/surveys/{survey}/cohorts/0/receipts"),
                None,
                None,
            )
            .await,
            send(
                &http,
                Method::POST,
                &format!("{m}/api/surveys/{survey}/uploads"),
                Some(&upload),
                None,
            )
            .await,
            // A credential with a malformed nonce (found by the adversarial review).
            send(
                &http,
                Method::POST,
                &format!("{m}/api/surveys/{survey}/uploads"),
                Some(&{
                    let mut u = upload.clone();
                    u["credential"]["nonce"] = json!("zz");
                    u
                }),
                None,
            )
            .await,
        ];
        answers_for.push(
            asked
                .into_iter()
                .map(|(status, body)| (status, one_line_error(&body).replace(survey, "S")))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(answers_for[0], answers_for[1]);
    assert!(answers_for[0].iter().all(|(s, _)| matches!(s, 401..=404)));
    all.stop().await;
}

/// Attack 7: every answer of every service turns off the browser features the form never uses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_carries_a_permissions_policy() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let mut bases: Vec<&str> = vec![all.collector.url(), all.msp.url()];
    bases.extend(all.rights.iter().map(|r| r.url()));
    for base in bases {
        for path in [
            "/api/health",
            "/api/nothing",
            "/",
            "/api/peer/surveys/x/status",
        ] {
            let answer = http.get(format!("{base}{path}")).send().await.unwrap();
            let policy = answer
                .headers()
                .get("permissions-policy")
                .unwrap_or_else(|| panic!("{base}{path}: no Permissions-Policy"))
                .to_str()
                .unwrap()
                .to_owned();
            for feature in ["camera=()", "microphone=()", "geolocation=()", "payment=()"] {
                assert!(policy.contains(feature), "{base}{path}: {policy}");
            }
        }
    }
    all.stop().await;
}

/// The provider's hand-over of `copied-row`-like survey `id` (cohorts of 12, by invitation,
/// basic protocol) with its masked row 1 copied over row 0, signed as the provider — the one
/// party that may hand a cohort over — ahead of the genuine one (held back at the collector's
/// tap). `answer` gives participant `i`'s answers. The collector's view once the cohort settled.
async fn copied_row_fate(
    draft: Value,
    answer: fn(u64) -> Vec<orthomask_survey::coding::Answer>,
) -> Value {
    use common::tap::{hold, start_tapped};
    use orthomask_server::wire::{CohortResult, MaskingOutcome, WireMatrix};
    let id = draft["id"].as_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let t = start_tapped(dir.path(), 0).await;
    let http = client();
    let created = create_survey(&http, &t.all, &draft).await;
    let invited = links(&http, &t.all, &created, 12).await;
    t.collector.set_rule(Some(hold(&["/cohorts/0/result"])));
    for (i, link) in (0..12u64).zip(&invited) {
        let (_, uploads) = prepare(&http, link, i, &answer(i)).await;
        for (url, upload) in uploads {
            let (status, body) = post_upload(&http, &url, &upload).await;
            assert_eq!(status, 201, "{body}");
        }
    }
    let genuine = t.collector.wait_seen("PUT", "/cohorts/0/result").await;
    let mut result: CohortResult = serde_json::from_value(genuine.json()).unwrap();
    let MaskingOutcome::Masked { batch } = &result.outcome else {
        panic!("a full cohort is handed over masked: {:?}", result.outcome)
    };
    let mut copied = batch.to_matrix().unwrap();
    let row_1 = copied.row(1).clone_owned();
    copied.set_row(0, &row_1);
    result.outcome = MaskingOutcome::Masked {
        batch: WireMatrix::from_matrix(&copied),
    };
    let (status, body) = send_signed(
        &http,
        &identity_of(dir.path(), Party::Provider),
        Party::Collector,
        Method::PUT,
        &format!(
            "{}/api/peer/surveys/{id}/cohorts/0/result",
            t.all.collector.url()
        ),
        Some(&serde_json::to_value(&result).unwrap()),
    )
    .await;
    assert_eq!(
        status, 200,
        "list-consistent and the provider's: believed, then judged: {body}"
    );
    let view = wait_for_view(&http, &t.all, &id, |v| {
        v["cohorts"][0]["status"] != "open" && v["cohorts"][0]["status"] != "closed"
    })
    .await;
    t.all.stop().await;
    view
}

/// Issue 43's adversarial review, the provider alone: instead of an orthogonal `A₂,k` it applies
/// any `M` with `M·1ₙ = 1ₙ` — here its masked batch with row 1 copied over row 0 — so QA passes
/// (the QA column stays `c·1ₙ`), the hand-over is list-consistent and signed by the one party
/// that may send it, and the release would carry `X₁ᵀMᵀMX₁` instead of the raw `X₁ᵀX₁`. The
/// collector spoils the cohort: with a yes/no question, the cohort check already sees that the
/// column's sum of squares is no longer its sum (`Σx² = Σx` for 0/1 answers); with only
/// continuous answers, which no exact identity constrains, the padding check sees a direction of
/// the cohort without padding noise (`padding_check`: `M` is singular). Its participants answer
/// again, as after a failed QA check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_copying_one_masked_row_over_another_spoils_the_cohort() {
    use orthomask_survey::coding::Answer;
    let view = copied_row_fate(draft("copied-row", 12, false, true), answers).await;
    assert_eq!(view["cohorts"][0]["status"], "spoilt", "{view}");
    let note = view["cohorts"][0]["note"].as_str().unwrap();
    assert!(
        note.contains("\"smoker\"") && note.contains("sum of squares"),
        "{note}"
    );

    let continuous = json!({
        "id": "copied-row-continuous",
        "title": "Income and wellbeing (test)",
        "consent": "Test consent.",
        "questions": [
            {"id": "income", "label": "Income", "kind": "number", "min": 0, "max": 250},
            {"id": "score", "label": "Wellbeing score", "kind": "number", "min": 0, "max": 100}
        ],
        "cohort_size": 12, "share_mode": false, "invitations": true
    });
    let view = copied_row_fate(continuous, |i| {
        let mut g = Xorshift::new(7_000 + i);
        vec![
            Answer::Number(10.0 + g.uniform() * 200.0),
            Answer::Number(g.uniform() * 100.0),
        ]
    })
    .await;
    assert_eq!(view["cohorts"][0]["status"], "spoilt", "{view}");
    let note = view["cohorts"][0]["note"].as_str().unwrap();
    assert!(
        note.contains("carries no padding noise") && note.contains("not an orthogonal mask"),
        "{note}"
    );
    assert_eq!(view["spoilt"]["reopened_invitations"], 12, "{view}");
}

/// Issue 43's adversarial review, the provider alone, reading an answer below every allowance:
/// it knows its `A₂,0` (its own survey key) and every upload `x_iB_0`, and adds
/// `δ·(A₂e_r)(x_tB_0)` to its batch for participant `t` (at row `r` of its cohort). QA, the
/// padding check and the cohort check all pass (`δ` = 10⁻¹² on the device's scale); released as
/// it came, the count of yes answers would be off a whole number by `±δ/2`, its sign `t`'s answer
/// (`orthomask_survey` `tests/identity_channel.rs`). The collector stores and releases the cohort
/// snapped (`CohortCheck::snap`): the released count is the honest whole number to rounding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_perturbing_below_every_allowance_reads_nothing_from_the_release() {
    use common::tap::{hold, start_tapped};
    use nalgebra::DMatrix;
    use orthomask_core::key::Key;
    use orthomask_core::protocol::tm2::MaskingServiceProvider;
    use orthomask_server::wire::{CohortResult, MaskingOutcome, WireMatrix};
    /// The provider's perturbation on the device's scale (below the cohort check's allowance
    /// for the count, 3·10⁻¹¹ for this design).
    const DELTA: f64 = 1e-12;
    /// A released count of twelve off a whole number by the release's own rounding: far below
    /// `δ/2`.
    const COUNT_ROUNDING: f64 = 2e-14;
    let dir = tempfile::tempdir().unwrap();
    let t = start_tapped(dir.path(), 0).await;
    let http = client();
    let created = create_survey(&http, &t.all, &draft("below-allowance", 12, false, true)).await;
    let invited = links(&http, &t.all, &created, 12).await;
    t.collector.set_rule(Some(hold(&["/cohorts/0/result"])));
    let mut uploads = Vec::new();
    let mut definition = None;
    for (i, link) in (0..12u64).zip(&invited) {
        let (def, sent) = prepare(&http, link, i, &answers(i)).await;
        let (url, upload) = &sent[0];
        let (status, body) = post_upload(&http, url, upload).await;
        assert_eq!(status, 201, "{body}");
        uploads.push(upload.values.clone());
        definition = Some(def);
    }
    let design = definition.unwrap().design().unwrap();
    let genuine = t.collector.wait_seen("PUT", "/cohorts/0/result").await;
    let mut result: CohortResult = serde_json::from_value(genuine.json()).unwrap();
    let MaskingOutcome::Masked { batch } = &result.outcome else {
        panic!("a full cohort is handed over masked")
    };
    let batch = batch.to_matrix().unwrap();
    // What the provider holds: its key (hence A₂,0) and its cohort's uploads in its own order.
    let keys: Value = serde_json::from_str(
        &std::fs::read_to_string(t.data_dir("msp").join("msp-keys.json")).unwrap(),
    )
    .unwrap();
    let key = Key::from_hex(keys["surveys"]["below-allowance"].as_str().unwrap()).unwrap();
    let p = design.p();
    let provider = MaskingServiceProvider::new(key, design);
    let a2 = provider
        .mask_cohort(
            0,
            &DMatrix::from_fn(12, p, |i, j| f64::from(u8::from(i == j))),
        )
        .unwrap()
        .columns(0, 12)
        .into_owned();
    let own_order = a2.transpose() * &batch;
    let smokes = |i: usize| {
        matches!(
            answers(i as u64)[0],
            orthomask_survey::coding::Answer::YesNo(true)
        )
    };
    let honest = (0..12).filter(|&i| smokes(i)).count() as f64;
    let target = 0;
    let upload = DMatrix::from_row_slice(1, p, &uploads[target]);
    let row = (0..12)
        .find(|&r| (own_order.row(r) - &upload).norm() < 1e-6 * upload.norm())
        .expect("the provider finds the upload in its cohort");
    let forged = &batch + DELTA * a2.column(row) * &upload;
    result.outcome = MaskingOutcome::Masked {
        batch: WireMatrix::from_matrix(&forged),
    };
    let (status, body) = send_signed(
        &http,
        &identity_of(dir.path(), Party::Provider),
        Party::Collector,
        Method::PUT,
        &format!(
            "{}/api/peer/surveys/below-allowance/cohorts/0/result",
            t.all.collector.url()
        ),
        Some(&serde_json::to_value(&result).unwrap()),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let view = wait_for_view(&http, &t.all, "below-allowance", |v| {
        v["cohorts"][0]["status"] != "open" && v["cohorts"][0]["status"] != "closed"
    })
    .await;
    assert_eq!(
        view["cohorts"][0]["status"], "received",
        "every check passes: {view}"
    );
    let (status, _) = admin_post(&http, &t.all, "/api/admin/surveys/below-allowance/close").await;
    assert_eq!(status, 200);
    let (csv, _) = wait_for_release(&http, t.all.collector.url(), "below-allowance", 60).await;
    let table = orthomask_formats::csv::parse_table(csv.as_bytes(), "release.csv").unwrap();
    let count: f64 = table.data().column(0).sum();
    assert!(
        (count - honest).abs() < COUNT_ROUNDING,
        "the released count {count} is off the honest {honest} by {:e}",
        count - honest
    );
    t.all.stop().await;
}
