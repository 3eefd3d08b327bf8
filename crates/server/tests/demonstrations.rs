//! Issue 12 §1: the demonstration loop on the running services. `serve all` creates live
//! demonstrations (`orthomask_survey::demonstrations`), `GET /api/surveys` lists them and only
//! them, anyone may take one without an invitation, restarts create no duplicates and follow a
//! closed demonstration with the next of its family, and a demonstration's release says it used
//! a key anyone could have. The team's views count invitations, never name a participant.

mod common;

use common::*;
use orthomask_server::run::{AllConfig, start_all};
use orthomask_survey::client as device;
use orthomask_survey::coding::Answer;
use orthomask_survey::upload::Receipt;
use reqwest::Method;
use serde_json::{Value, json};

/// The public list of surveys taking participants.
async fn public_list(http: &reqwest::Client, collector: &str) -> Vec<Value> {
    let (status, body) = send(
        http,
        Method::GET,
        &format!("{collector}/api/surveys"),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["surveys"].as_array().expect("surveys").clone()
}

fn ids(list: &[Value]) -> Vec<&str> {
    list.iter().map(|s| s["survey"].as_str().unwrap()).collect()
}

/// The administrator's list of every survey.
async fn admin_list(http: &reqwest::Client, all: &orthomask_server::AllRunning) -> Vec<Value> {
    let (status, body) = send(
        http,
        Method::GET,
        &format!("{}/api/admin/surveys", all.collector.url()),
        None,
        Some(&all.admin_token),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["surveys"].as_array().expect("surveys").clone()
}

/// Answers to the LEAPS demonstration's eight questions, participant `i`.
fn leaps_answers(i: u64) -> Vec<Answer> {
    let mut g = Xorshift::new(7000 + i);
    vec![
        Answer::YesNo(g.uniform() < 0.5),
        Answer::YesNo(g.uniform() < 0.5),
        Answer::Number(-1.0 + 3.0 * g.uniform()),
        Answer::Integer(18 + (g.uniform() * 80.0) as i64),
        Answer::Integer((g.uniform() * 56.0) as i64),
        Answer::YesNo(g.uniform() < 0.2),
        Answer::YesNo(g.uniform() < 0.2),
        Answer::Number(100.0 * g.uniform()),
    ]
}

/// Load a definition without an invitation, prepare with the participant client and upload:
/// every destination acknowledges exactly the upload.
async fn take(http: &reqwest::Client, definition_url: &str, i: u64, answers: &[Answer]) -> u32 {
    let (def, uploads) = prepare(http, definition_url, i, answers).await;
    assert!(
        def.masking.teaching,
        "a demonstration is labelled on the device"
    );
    let mut cohort = None;
    for (url, upload) in uploads {
        let (status, body) = post_upload(http, &url, &upload).await;
        assert!(status == 201 || status == 200, "{status} {body}");
        let receipt: Receipt = serde_json::from_value(body).unwrap();
        device::verify_receipt(&upload, &receipt).unwrap();
        cohort = Some(receipt.cohort);
    }
    cohort.expect("at least one destination")
}

fn definition_url(collector: &str, survey: &str) -> String {
    format!("{collector}/api/surveys/{survey}/definition")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demonstrations_are_listed_alone_and_anyone_may_take_one() {
    let dir = tempfile::tempdir().unwrap();
    let all = start_all(config(dir.path(), 3, None, true)).await.unwrap();
    let collector = all.collector.url().to_owned();
    let http = client();
    let made: Vec<(&str, bool)> = all
        .demonstrations
        .iter()
        .map(|d| (d.survey.as_str(), d.created))
        .collect();
    assert_eq!(
        made,
        [
            ("leaps-demo", true),
            ("wellbeing-optional", true),
            ("habits-branching", true),
            ("shares-demo", true)
        ]
    );

    // The team's survey, with invitations, and an open share-mode one: neither is public.
    create_survey(&http, &all, &draft("private", 6, false, true)).await;
    create_survey(&http, &all, &draft("open-shares", 6, true, false)).await;
    let list = public_list(&http, &collector).await;
    assert_eq!(
        ids(&list),
        [
            "leaps-demo",
            "wellbeing-optional",
            "habits-branching",
            "shares-demo"
        ]
    );
    for s in &list {
        let id = s["survey"].as_str().unwrap();
        assert_eq!(
            s["participant_url"],
            format!("{collector}/#/participate?survey={id}"),
        );
        assert_eq!(s["status"], "open");
        assert_eq!(s["share_mode"], id == "shares-demo");
        assert!(s["title"].as_str().unwrap().contains("demonstration"));
        assert!(s["description"].is_string());
        assert!(s["cohort_size"].as_u64().unwrap() >= 4);
    }

    // Anyone may take one: the definition loads without an invitation and the upload is taken,
    // in the basic protocol and in share mode.
    let cohort = take(
        &http,
        &definition_url(&collector, "leaps-demo"),
        1,
        &leaps_answers(1),
    )
    .await;
    assert_eq!(cohort, 0);
    take(
        &http,
        &definition_url(&collector, "shares-demo"),
        2,
        &[Answer::YesNo(true), Answer::Integer(44)],
    )
    .await;

    // The team's views label demonstrations; a survey without invitations has no counts.
    let view = admin_view(&http, &all, "leaps-demo").await;
    assert_eq!(view["demonstration"], true);
    assert_eq!(view["invitations"], Value::Null);
    assert_eq!(view["cohorts"][0]["assigned"], 1);
    let (status, public) = send(
        &http,
        Method::GET,
        &format!("{collector}/api/surveys/leaps-demo/status"),
        None,
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(public["demonstration"], true);
    let listed = admin_list(&http, &all).await;
    let by_id = |id: &str| listed.iter().find(|s| s["survey"] == id).unwrap().clone();
    assert_eq!(by_id("leaps-demo")["demonstration"], true);
    assert_eq!(by_id("private")["demonstration"], false);
    assert_eq!(by_id("private")["title"], "Health and income (test)");
    assert_eq!(listed.len(), 6);

    // Issue 10 §2 stands for every survey that is not a demonstration: an open basic survey is
    // refused, in one line that says what to do.
    let (status, body) = send(
        &http,
        Method::POST,
        &format!("{collector}/api/admin/surveys"),
        Some(&draft("open-basic", 6, false, false)),
        Some(&all.admin_token),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let e = body["error"].as_str().unwrap();
    assert!(!e.contains('\n') && e.contains("invitations"), "{e}");
    assert!(!ids(&public_list(&http, &collector).await).contains(&"open-basic"));
    all.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_keep_open_demonstrations_and_follow_closed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let http = client();
    let created = |all: &orthomask_server::AllRunning| -> Vec<(String, bool)> {
        all.demonstrations
            .iter()
            .map(|d| (d.survey.clone(), d.created))
            .collect()
    };
    let pairs = |v: &[(&str, bool)]| -> Vec<(String, bool)> {
        v.iter().map(|(s, c)| ((*s).to_owned(), *c)).collect()
    };

    // Restarts on the same addresses, as `scripts/run.sh` restarts on its fixed ports.
    let port = free_port_pair();
    let fixed = || AllConfig {
        port,
        ..config(dir.path(), 0, None, true)
    };
    // First start: both basic-protocol demonstrations (no right-masking services).
    let all = start_all(fixed()).await.unwrap();
    assert_eq!(
        created(&all),
        pairs(&[
            ("leaps-demo", true),
            ("wellbeing-optional", true),
            ("habits-branching", true)
        ])
    );
    // Simulated participants fill leaps-demo's cohort of 10; the team closes it.
    let collector = all.collector.url().to_owned();
    let url = definition_url(&collector, "leaps-demo");
    let mut tasks = Vec::new();
    for i in 0..10u64 {
        let (http, url) = (http.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            take(&http, &url, i, &leaps_answers(i)).await
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), 0);
    }
    let (status, view) = admin_post(&http, &all, "/api/admin/surveys/leaps-demo/close").await;
    assert_eq!(status, 200, "{view}");
    let (_, manifest) = wait_for_release(&http, &collector, "leaps-demo", 120).await;
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["n"], 10);
    assert_eq!(manifest["teaching_keys"], true);
    let first = manifest["warnings"][0].as_str().unwrap();
    assert!(
        first.contains("demonstration") && first.contains("device key"),
        "{first}"
    );
    assert!(!ids(&public_list(&http, &collector).await).contains(&"leaps-demo"));
    all.stop().await;

    // Second start: leaps-demo is released, so leaps-demo-2; wellbeing-optional still takes
    // participants and is kept.
    let all = start_all(fixed()).await.unwrap();
    assert_eq!(
        created(&all),
        pairs(&[
            ("leaps-demo-2", true),
            ("wellbeing-optional", false),
            ("habits-branching", false)
        ])
    );
    let collector = all.collector.url().to_owned();
    assert_eq!(
        ids(&public_list(&http, &collector).await),
        ["wellbeing-optional", "habits-branching", "leaps-demo-2"]
    );
    all.stop().await;

    // Third start: nothing new, no duplicate.
    let all = start_all(fixed()).await.unwrap();
    assert_eq!(
        created(&all),
        pairs(&[
            ("leaps-demo-2", false),
            ("wellbeing-optional", false),
            ("habits-branching", false)
        ])
    );
    let listed = admin_list(&http, &all).await;
    let mut surveys: Vec<&str> = listed
        .iter()
        .map(|s| s["survey"].as_str().unwrap())
        .collect();
    surveys.sort_unstable();
    assert_eq!(
        surveys,
        [
            "habits-branching",
            "leaps-demo",
            "leaps-demo-2",
            "wellbeing-optional"
        ]
    );
    all.stop().await;

    // Fourth start on other ports: the open demonstrations upload to addresses every device
    // would refuse, so they are neither kept nor listed; fresh ones are made at these addresses.
    let all = start_all(config(dir.path(), 0, None, true)).await.unwrap();
    assert_eq!(
        created(&all),
        pairs(&[
            ("leaps-demo-3", true),
            ("wellbeing-optional-2", true),
            ("habits-branching-2", true)
        ])
    );
    let collector = all.collector.url().to_owned();
    assert_eq!(
        ids(&public_list(&http, &collector).await),
        ["leaps-demo-3", "wellbeing-optional-2", "habits-branching-2"]
    );
    take(
        &http,
        &definition_url(&collector, "leaps-demo-3"),
        0,
        &leaps_answers(0),
    )
    .await;
    all.stop().await;
}

/// A loopback port `p` with `p + 1` free too (the collector and the provider of `serve all`
/// without right-masking services), found by binding both; released before use.
fn free_port_pair() -> u16 {
    for _ in 0..100 {
        let first = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let p = first.local_addr().unwrap().port();
        if p < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", p + 1)).is_ok() {
            return p;
        }
    }
    panic!("no two consecutive free loopback ports");
}

/// The team sees how many invitations were issued, opened (a definition was loaded with them)
/// and used (their upload arrived in the cohort's hand-over) — counts, never who.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invitation_counts_go_issued_opened_used() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("invited", 6, false, true)).await;
    assert_eq!(created["demonstration"], false);
    let counts = |v: &Value| v["invitations"].clone();
    assert_eq!(
        counts(&admin_view(&http, &all, "invited").await),
        json!({"issued": 0, "opened": 0, "used": 0})
    );
    let invited = links(&http, &all, &created, 7).await;
    assert_eq!(
        counts(&admin_view(&http, &all, "invited").await),
        json!({"issued": 7, "opened": 0, "used": 0})
    );
    let mut prepared = Vec::new();
    for (i, link) in (0..6u64).zip(&invited) {
        prepared.push(prepare(&http, link, i, &answers(i)).await.1);
    }
    assert_eq!(
        counts(&admin_view(&http, &all, "invited").await),
        json!({"issued": 7, "opened": 6, "used": 0})
    );
    for uploads in prepared {
        for (url, upload) in uploads {
            let (status, body) = post_upload(&http, &url, &upload).await;
            assert_eq!(status, 201, "{body}");
        }
    }
    // The full cohort is handed over; once released, every hand-over is in.
    let (status, view) = admin_post(&http, &all, "/api/admin/surveys/invited/close").await;
    assert_eq!(status, 200, "{view}");
    let (_, manifest) = wait_for_release(&http, all.collector.url(), "invited", 120).await;
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["teaching_keys"], false);
    let status = admin_view(&http, &all, "invited").await;
    assert_eq!(
        counts(&status),
        json!({"issued": 7, "opened": 6, "used": 6})
    );
    assert_eq!(status["demonstration"], false);
    all.stop().await;
}
