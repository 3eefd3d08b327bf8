//! Issue 27 §2, threat-model row "the collector serves altered code": every upload names the app
//! build that made it; the accepting services (the provider, and every right-masking service in
//! share mode) refuse a build the deployment does not publish as accepted, with one line and
//! nothing stored; and the receipt lists and the release manifest count the uploads of each
//! build, so an auditor can compare them with the public builds.

mod common;

use common::*;
use orthomask_core::key::Key;
use orthomask_formats::manifest::{BuildCount, Manifest};
use orthomask_server::run::{AllConfig, AllRunning, start_all};
use orthomask_survey::client as device;
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::trust::{Deployment, UploadCredential};
use orthomask_survey::upload::Upload;
use serde_json::Value;
use std::path::Path;

/// An earlier build the team still accepts (any 64 hexadecimal digits: the services compare
/// digests, they do not rebuild).
const EARLIER: &str = "e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0";
/// A build nobody published.
const UNKNOWN: &str = "0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de";

/// A tiny served app: a service worker naming two files.
fn write_app(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("sw.js"),
        "const APP_FILES = [\n  './',\n  'app.js',\n];\n",
    )
    .unwrap();
    std::fs::write(dir.join("index.html"), "<!doctype html><title>t</title>").unwrap();
    std::fs::write(dir.join("app.js"), "console.log('app');\n").unwrap();
}

async fn started_with_app(dir: &Path, rights: usize) -> AllRunning {
    write_app(&dir.join("dist"));
    start_all(AllConfig {
        accepted_builds: vec![EARLIER.to_owned()],
        ..config(&dir.join("data"), rights, Some(&dir.join("dist")), false)
    })
    .await
    .unwrap()
}

async fn deployment(http: &reqwest::Client, all: &AllRunning) -> Deployment {
    let (status, text) = get_text(http, &format!("{}/api/deployment", all.collector.url())).await;
    assert_eq!(status, 200, "{text}");
    serde_json::from_str(&text).unwrap()
}

/// Participant `i`'s uploads, made by the app build `build` from the definition and credential
/// it loaded.
fn uploads_of(
    (def, credential): &(SurveyDefinition, UploadCredential),
    i: u64,
    build: &str,
) -> Vec<(String, Upload)> {
    device::Client::new(def)
        .unwrap()
        .with_credential(credential.clone())
        .with_build(build)
        .prepare(&answers(i), &token(i), &Key::teaching(50_000 + i))
        .unwrap()
        .destinations
        .into_iter()
        .map(|d| (d.url, d.upload))
        .collect()
}

fn refused_line(status: u16, body: &Value) -> &str {
    assert_eq!(status, 403, "{body}");
    let line = body["error"].as_str().unwrap();
    assert!(!line.contains('\n'), "{line}");
    line
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_name_their_build_and_the_release_counts_each() {
    let dir = tempfile::tempdir().unwrap();
    let all = started_with_app(dir.path(), 0).await;
    let http = client();

    // The deployment publishes the build it serves, then the earlier one.
    let deployed = deployment(&http, &all).await;
    let served = deployed
        .build
        .clone()
        .expect("the collector serves a build");
    assert_eq!(deployed.builds, [served.clone(), EARLIER.to_owned()]);

    let created = create_survey(&http, &all, &draft("builds", 12, false, true)).await;
    let invited = links(&http, &all, &created, 12).await;
    let mut loaded = Vec::new();
    for link in &invited {
        loaded.push(load(&http, link).await);
    }

    // An upload claiming a build nobody published, and one naming none, are refused, and the
    // cohort stays empty.
    for (i, claim) in [(0, UNKNOWN), (1, "")] {
        let uploads = uploads_of(&loaded[i], i as u64, claim);
        let (url, upload) = &uploads[0];
        let (status, body) = post_upload(&http, url, upload).await;
        let line = refused_line(status, &body);
        assert!(
            line.contains(&format!("app build {claim:?}")) && line.contains("does not accept"),
            "{line}"
        );
    }
    let view = admin_view(&http, &all, "builds").await;
    assert_eq!(
        view["services"][0]["status"]["cohorts"][0]["uploads"], 0,
        "{view}"
    );

    // Seven participants run the served build, five the earlier one (the two refused above
    // among them, with the credential their refused upload left unused): the cohort fills.
    for (i, device) in loaded.iter().enumerate() {
        let build = if i < 7 { served.as_str() } else { EARLIER };
        for (url, upload) in uploads_of(device, i as u64, build) {
            let (status, body) = post_upload(&http, &url, &upload).await;
            assert_eq!(status, 201, "{body}");
        }
    }
    let expected = {
        let mut e = vec![
            BuildCount {
                digest: served.clone(),
                uploads: 7,
            },
            BuildCount {
                digest: EARLIER.to_owned(),
                uploads: 5,
            },
        ];
        e.sort();
        e
    };

    // The release manifest counts them.
    let (status, view) = admin_post(&http, &all, "/api/admin/surveys/builds/close").await;
    assert_eq!(status, 200, "{view}");
    let (_, manifest) = wait_for_release(&http, all.collector.url(), "builds", 60).await;
    let manifest = Manifest::parse(&manifest, "manifest.json").unwrap();
    assert_eq!(manifest.n, 12);
    assert_eq!(manifest.builds, expected);

    // So do the provider's receipt lists, which the manifest copies cohort by cohort.
    let mut listed: Vec<BuildCount> = Vec::new();
    for root in &manifest.receipt_roots {
        let (status, list) = send(
            &http,
            reqwest::Method::GET,
            &format!(
                "{}/api/surveys/builds/cohorts/{}/receipts",
                all.msp.url(),
                root.cohort
            ),
            None,
            None,
        )
        .await;
        assert_eq!(status, 200, "{list}");
        let builds: Vec<BuildCount> = serde_json::from_value(list["builds"].clone()).unwrap();
        assert_eq!(builds, root.builds);
        assert_eq!(builds.iter().map(|b| b.uploads).sum::<usize>(), root.count);
        for b in builds {
            match listed.iter_mut().find(|l| l.digest == b.digest) {
                Some(l) => l.uploads += b.uploads,
                None => listed.push(b),
            }
        }
    }
    listed.sort();
    assert_eq!(listed, expected);
    all.stop().await;
}

/// Share mode: every right-masking service applies the same rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_right_masking_service_refuses_an_unknown_build() {
    let dir = tempfile::tempdir().unwrap();
    let all = started_with_app(dir.path(), 3).await;
    let http = client();
    let served = deployment(&http, &all).await.build.unwrap();
    let created = create_survey(&http, &all, &draft("shared", 12, true, false)).await;
    let definition_url = created["definition_url"].as_str().unwrap().to_owned();

    let device = load(&http, &definition_url).await;
    let uploads = uploads_of(&device, 0, UNKNOWN);
    assert_eq!(uploads.len(), 3);
    for (url, upload) in &uploads {
        let (status, body) = post_upload(&http, url, upload).await;
        refused_line(status, &body);
    }
    // The same participant's device running the served build is taken by both.
    for (url, upload) in uploads_of(&device, 0, &served) {
        let (status, body) = post_upload(&http, &url, &upload).await;
        assert_eq!(status, 201, "{body}");
    }
    all.stop().await;
}
