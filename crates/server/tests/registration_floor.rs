//! Issue 20 §2: the provider no longer believes the collector's registration. A dishonest
//! collector that registers `p₁ = 1, cohort_size = 2` (whose 2-row batches a left mask keeping
//! `1ₙ` fixed would hand back unmasked: the identity or the swap) while its devices accept the
//! real survey is refused; so is a weak template it signed itself; a lower minimum does not lower
//! the floor the signed template implies; and an upload made for another definition than the one
//! registered is refused. The "collector" here is the test holding the deployment's real signing
//! key, registering straight with the real provider.

mod common;

use common::*;
use orthomask_server::peers::{Identity, Party};
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::trust::{NONCE_BYTES, SignedDefinition};
use reqwest::Method;
use serde_json::{Value, json};

async fn register(
    http: &reqwest::Client,
    msp: &str,
    collector: &Identity,
    reg: &Value,
) -> (u16, Value) {
    let survey = reg["survey"].as_str().unwrap();
    send_signed(
        http,
        collector,
        Party::Provider,
        Method::PUT,
        &format!("{msp}/api/peer/surveys/{survey}"),
        Some(reg),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_derives_the_cohort_rules_from_what_the_devices_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let peer = &identity_of(dir.path(), Party::Collector);
    let msp = all.msp.url();
    let signing = collector_signing_key(dir.path());

    // 1. The attack as the issue states it: the genuine signed template, the numbers of a
    //    one-column survey in cohorts of two.
    let genuine = direct_survey("lying", 12, &[], signing.clone());
    let mut lying = genuine.registration.clone();
    lying["answers"] = json!(0);
    lying["cohort_size"] = json!(2);
    lying["min_cohort_size"] = json!(2);
    let (status, body) = register(&http, msp, peer, &lying).await;
    assert_eq!(status, 400, "{body}");
    assert!(!body["error"].as_str().unwrap().contains('\n'));
    let mut lying = genuine.registration.clone();
    lying["cohort_size"] = json!(2);
    let (status, body) = register(&http, msp, peer, &lying).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("cohort_size differs"),
        "{body}"
    );

    // 2. A weak template the collector signed itself, with consistent numbers: below the floors
    //    devices enforce, so the provider refuses it as they would.
    let mut weak: SurveyDefinition = genuine.template.clone();
    weak.id = "weak".into();
    weak.masking.cohort_size = 2;
    weak.masking.min_cohort_size = Some(2);
    let mut reg = genuine.registration.clone();
    reg["survey"] = json!("weak");
    reg["cohort_size"] = json!(2);
    reg["min_cohort_size"] = json!(2);
    reg["template"] = serde_json::to_value(SignedDefinition::sign(&signing, &weak)).unwrap();
    let (status, body) = register(&http, msp, peer, &reg).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().starts_with("template:"),
        "{body}"
    );

    // 3. The genuine template with a registered minimum of 2: the floor stays the template's
    //    (six for p₁ = 5), so a cohort of three is withheld, never masked.
    let mut low = genuine.registration.clone();
    low["min_cohort_size"] = json!(2);
    let (status, body) = register(&http, msp, peer, &low).await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = send_signed(
        &http,
        peer,
        Party::Provider,
        Method::POST,
        &format!("{msp}/api/peer/surveys/lying/cohorts/0/open"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    for i in 0..3u8 {
        let (url, upload) = genuine.uploads(u64::from(i), 0, [i; NONCE_BYTES]).remove(0);
        let url = url.replace("http://provider.invalid", msp);
        let (status, body) = post_upload(&http, &url, &upload).await;
        assert_eq!(status, 201, "{body}");
    }
    let (status, _) = send_signed(
        &http,
        peer,
        Party::Provider,
        Method::POST,
        &format!("{msp}/api/peer/surveys/lying/cohorts/0/close"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let view = wait_for_peer_view(&http, msp, (peer, Party::Provider), "lying", |v| {
        v["cohorts"][0]["status"] != "closed"
    })
    .await;
    assert_eq!(view["cohorts"][0]["status"], "withheld", "{view}");

    // 4. Devices shown another survey than the one registered: the upload names the digest of
    //    the definition its device accepted, which is not the registered template's.
    let mut shown = direct_survey("shown", 12, &[], signing.clone());
    let registered = direct_survey("shown", 12, &[], signing);
    shown.template.questions[0].label = "Do you smoke? (another wording)".into();
    let (status, body) = register(&http, msp, peer, &registered.registration).await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = send_signed(
        &http,
        peer,
        Party::Provider,
        Method::POST,
        &format!("{msp}/api/peer/surveys/shown/cohorts/0/open"),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let (url, upload) = shown.uploads(0, 0, [9; NONCE_BYTES]).remove(0);
    let url = url.replace("http://provider.invalid", msp);
    let (status, body) = post_upload(&http, &url, &upload).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("another definition"),
        "{body}"
    );
    let (url, upload) = registered.uploads(0, 0, [9; NONCE_BYTES]).remove(0);
    let url = url.replace("http://provider.invalid", msp);
    let (status, body) = post_upload(&http, &url, &upload).await;
    assert_eq!(
        status, 201,
        "the same device with the registered definition: {body}"
    );
    all.stop().await;
}
