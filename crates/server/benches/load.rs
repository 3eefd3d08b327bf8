//! Load benchmark (not a test): N participants upload concurrently to running services.
//!
//! `scripts/load.sh` starts `orthomask serve all` and runs this against it:
//!
//! ```text
//! cargo bench -p orthomask-server --bench load -- --services DIR [--participants 200] [--p 1000]
//! ```
//!
//! It creates a survey whose records have exactly `p` values (answer columns and cohort size
//! chosen so that the collector's own plan makes `p₁ + p₂ = p`),
//! lets every participant load a definition and mask a record with the participant client the
//! web app runs (`orthomask_survey::client`, one set-up device per cohort: deriving `B_k` is the
//! costly part), then sends all uploads at once and prints the latency percentiles of the
//! acknowledgements; finally it closes the survey and times the release (the provider's `A₂`, the
//! hand-over, the collector's unmasking, QA and `A₁`). Every upload must be acknowledged; one
//! answered busy (503 or 429, with `Retry-After`) is sent again after it, with jitter, and
//! counted.

use orthomask_core::key::Key;
use orthomask_survey::client::{Client, verify_receipt};
use orthomask_survey::coding::Answer;
use orthomask_survey::draft::{Endpoints, SurveyDraft, plan_survey};
use orthomask_survey::policy::retry_wait;
use orthomask_survey::trust::{DefinitionOffer, Deployment};
use orthomask_survey::upload::{Receipt, Upload};
use std::time::{Duration, Instant};

fn argument(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The draft the benchmark creates: `answers` number questions in 0–100, cohorts of `m`.
fn load_draft(answers: usize, m: usize) -> serde_json::Value {
    let questions: Vec<serde_json::Value> = (0..answers)
        .map(|j| serde_json::json!({"id": format!("x{j}"), "label": format!("Value {j}"), "kind": "number", "min": 0, "max": 100}))
        .collect();
    serde_json::json!({
        "id": "load", "title": "Load test", "consent": "Load test.", "questions": questions,
        "cohort_size": m, "invitations": true,
    })
}

/// The record length `p₁ + p₂` the collector plans for [`load_draft`] — by the collector's own
/// planner (`orthomask_survey::draft::plan_survey`), so the benchmark's records are the ones a
/// real survey of that shape gets (noise columns for the accuracy target included).
fn planned_p(answers: usize, m: usize) -> Option<usize> {
    let draft: SurveyDraft = serde_json::from_value(load_draft(answers, m)).ok()?;
    let endpoints = Endpoints {
        provider: "http://127.0.0.1:9",
        right_services: &[],
    };
    let planned = plan_survey(&draft, endpoints).ok()?;
    Some(planned.plan.masking.p1 + planned.plan.masking.p2)
}

/// Answer columns `a` (5–39) and cohort size `m` (20–2000) whose planned records have exactly
/// `p` values, the largest `m` first. `p` grows with `m` for a fixed `a`, so each `a` is a
/// binary search.
fn design_for(p: usize) -> Option<(usize, usize)> {
    (5..=39).find_map(|answers| {
        let (mut lo, mut hi) = (20_usize, 2000_usize);
        while lo <= hi {
            let m = lo + (hi - lo) / 2;
            match planned_p(answers, m) {
                Some(q) if q == p => return Some((answers, m)),
                Some(q) if q < p => lo = m + 1,
                _ => hi = m.checked_sub(1)?,
            }
        }
        None
    })
}

/// The first `p` of `candidates` some design gives, as text ("none" if there is none).
fn first_possible(mut candidates: impl Iterator<Item = usize>) -> String {
    candidates
        .find(|&q| design_for(q).is_some())
        .map_or_else(|| "none".to_owned(), |q| q.to_string())
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    let k = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[k.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let Some(dir) = argument("--services") else {
        eprintln!("usage: load --services DIR [--participants N] [--p P]  (see scripts/load.sh)");
        std::process::exit(2);
    };
    let number = |name: &str, default: usize| -> usize {
        argument(name).map_or(default, |v| {
            v.parse().unwrap_or_else(|_| {
                eprintln!("load: {name} must be a whole number, not {v:?}");
                std::process::exit(2)
            })
        })
    };
    let participants = number("--participants", 200);
    let p = number("--p", 1000);
    let dir = std::path::PathBuf::from(dir);
    let services: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("services.json")).expect("services.json"),
    )
    .expect("services.json is JSON");
    let admin = std::fs::read_to_string(dir.join("admin-token")).expect("admin-token");
    let admin = admin.trim();
    let collector = services["collector"]
        .as_str()
        .expect("collector URL")
        .to_owned();
    let Some((answers, m)) = design_for(p) else {
        let smallest = planned_p(5, 20).unwrap_or(0);
        if p < smallest {
            eprintln!(
                "load: no survey has records of p = {p} values: the smallest the collector plans \
                 (5 answer columns, cohorts of 20) has {smallest}"
            );
        } else {
            eprintln!(
                "load: no survey has records of p = {p} values (answer columns 5-39 and a cohort \
                 of 20-2000, as the collector plans them); the nearest possible are {} below and \
                 {} above",
                first_possible((p.saturating_sub(200)..p).rev()),
                first_possible(p + 1..p + 200),
            );
        }
        std::process::exit(2)
    };
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(participants)
        .timeout(Duration::from_secs(300))
        .build()
        .expect("client");

    let draft = load_draft(answers, m);
    let created = http
        .post(format!("{collector}/api/admin/surveys"))
        .bearer_auth(admin)
        .header("content-type", "application/json")
        .body(draft.to_string())
        .send()
        .await
        .expect("create survey");
    assert_eq!(
        created.status().as_u16(),
        201,
        "{}",
        created.text().await.unwrap_or_default()
    );
    let created: serde_json::Value = serde_json::from_str(&created.text().await.unwrap()).unwrap();
    let invitations: serde_json::Value = serde_json::from_str(
        &http
            .post(format!("{collector}/api/admin/surveys/load/invitations"))
            .bearer_auth(admin)
            .header("content-type", "application/json")
            .body(serde_json::json!({ "count": participants }).to_string())
            .send()
            .await
            .expect("invitations")
            .text()
            .await
            .unwrap(),
    )
    .expect("invitations are JSON");
    let links = invitations["invitations"]
        .as_array()
        .expect("invitations")
        .iter()
        .map(|i| {
            (
                i["definition_url"]
                    .as_str()
                    .expect("definition_url")
                    .to_owned(),
                i["token"].as_str().expect("token").to_owned(),
            )
        })
        .collect::<Vec<(String, String)>>();
    let deployment: Deployment = serde_json::from_str(
        &http
            .get(format!("{collector}/api/deployment"))
            .send()
            .await
            .expect("deployment")
            .text()
            .await
            .unwrap(),
    )
    .expect("a deployment");
    println!(
        "survey: p = {} (p1 = {}, p2 = {}), cohorts of m = {m}; {participants} participants",
        created["p1"].as_u64().unwrap() + created["p2"].as_u64().unwrap(),
        created["p1"],
        created["p2"]
    );

    // Each participant loads the definition and masks a record on its own "device".
    let started = Instant::now();
    let mut load_latency = Vec::new();
    let mut prepared: Vec<(String, Upload)> = Vec::new();
    let mut devices: std::collections::HashMap<u32, Client> = std::collections::HashMap::new();
    for (i, (link, token)) in links.iter().enumerate() {
        let t = Instant::now();
        // A place is taken by POST, the invitation in the body (issue 20 §7).
        let text = http
            .post(link)
            .header("content-type", "application/json")
            .body(serde_json::json!({ "invite": token }).to_string())
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        load_latency.push(t.elapsed());
        let offer: DefinitionOffer = serde_json::from_str(&text).expect("a definition offer");
        let def = deployment
            .accept(&offer, link)
            .expect("the device accepts the collector's offer");
        let device = devices
            .entry(def.masking.cohort)
            .or_insert_with(|| Client::new(&def).expect("a usable definition"));
        device.set_credential(offer.credential);
        let record: Vec<Answer> = (0..answers)
            .map(|j| Answer::Number(((i * 37 + j * 11) % 100) as f64 + 0.5))
            .collect();
        let ready = device
            .prepare(
                &record,
                &format!("load-test-participant-{i:06}"),
                &Key::teaching(i as u64),
            )
            .expect("the client masks the record");
        prepared.extend(ready.destinations.into_iter().map(|d| (d.url, d.upload)));
    }
    println!(
        "{participants} definitions loaded and records masked client-side in {:.2} s",
        started.elapsed().as_secs_f64()
    );

    // All uploads at once. A busy answer (429, or 503 from a service at its connection limit)
    // or a refused connection is asked again after the service's Retry-After (at least the
    // back-off), stretched by a random up to half of itself, as every client of the services
    // does; the latency runs from the first attempt to the receipt.
    let burst = Instant::now();
    let tasks: Vec<_> = prepared
        .into_iter()
        .map(|(url, upload)| {
            let http = http.clone();
            tokio::spawn(async move {
                let body = serde_json::to_string(&upload).unwrap();
                let t = Instant::now();
                let mut busy = 0_u32;
                let mut backoff = Duration::from_millis(250);
                loop {
                    let sent = http
                        .post(&url)
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .send()
                        .await;
                    let retry_after = match sent {
                        Ok(r) if matches!(r.status().as_u16(), 429 | 503) => r
                            .headers()
                            .get("retry-after")
                            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok()),
                        Ok(r) => {
                            let status = r.status().as_u16();
                            let text = r.text().await.unwrap_or_default();
                            assert_eq!(status, 201, "upload refused: {text}");
                            let receipt: Receipt = serde_json::from_str(&text).unwrap();
                            verify_receipt(&upload, &receipt)
                                .expect("the receipt acknowledges the upload");
                            return (t.elapsed(), busy);
                        }
                        // Closed at once beyond both caps, or reset: try again.
                        Err(_) => None,
                    };
                    busy += 1;
                    assert!(busy <= 60, "upload still refused after 60 attempts");
                    let unit = getrandom::u32().map_or(0.5, |v| f64::from(v) / 4_294_967_296.0);
                    tokio::time::sleep(retry_wait(
                        backoff,
                        retry_after.map(Duration::from_secs),
                        unit,
                    ))
                    .await;
                    backoff = (backoff * 2).min(Duration::from_secs(30));
                }
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut retried = 0_usize;
    for t in tasks {
        let (latency, busy) = t.await.expect("an upload task failed");
        latencies.push(latency);
        retried += usize::from(busy > 0);
    }
    let wall = burst.elapsed();
    latencies.sort();
    println!(
        "uploads: {} of {participants} acknowledged in {:.2} s ({:.0}/s), {retried} after a busy answer; latency p50 {}, p90 {}, p99 {}, max {}",
        latencies.len(),
        wall.as_secs_f64(),
        latencies.len() as f64 / wall.as_secs_f64(),
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.9)),
        ms(percentile(&latencies, 0.99)),
        ms(*latencies.last().unwrap())
    );
    // One machine-readable line for scripts/load.sh's table.
    println!(
        "RESULT participants={participants} wall_s={:.2} rate={:.0} retried={retried} p50_ms={:.0} p90_ms={:.0} p99_ms={:.0} max_ms={:.0}",
        wall.as_secs_f64(),
        latencies.len() as f64 / wall.as_secs_f64(),
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        percentile(&latencies, 0.9).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().unwrap().as_secs_f64() * 1e3,
    );
    load_latency.sort();
    println!(
        "definition loads (sequential): p50 {}, p99 {}",
        ms(percentile(&load_latency, 0.5)),
        ms(percentile(&load_latency, 0.99))
    );

    let close = Instant::now();
    let closed = http
        .post(format!("{collector}/api/admin/surveys/load/close"))
        .bearer_auth(admin)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status().as_u16(), 200);
    loop {
        let r = http
            .get(format!("{collector}/api/surveys/load/manifest.json"))
            .send()
            .await
            .unwrap();
        if r.status().as_u16() == 200 {
            let manifest: serde_json::Value =
                serde_json::from_str(&r.text().await.unwrap()).unwrap();
            assert_eq!(manifest["n"].as_u64(), Some(participants as u64));
            assert_eq!(manifest["qa"]["passed"], true);
            println!(
                "close → release of {participants} records in cohorts {}: {:.2} s (provider's A2, hand-over, unmasking, QA, A1)",
                manifest["cohorts"]["sizes"],
                close.elapsed().as_secs_f64()
            );
            break;
        }
        assert!(close.elapsed() < Duration::from_secs(300), "no release");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
