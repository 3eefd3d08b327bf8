//! Peer flood benchmark (not a test): a pinned peer floods the collector with the largest
//! hand-overs a survey's design allows, all at once (issue 43 §4).
//!
//! `scripts/peer-flood.sh` starts `orthomask serve all` (no right-masking services) and runs
//! this against it:
//!
//! ```text
//! cargo bench -p orthomask-server --bench peer_flood -- --services DIR --services-pid PID \
//!     [--bodies 24] [--cohort 2000] [--answers 20]
//! ```
//!
//! It creates a basic-protocol survey of `answers` questions in cohorts of `cohort` (planned by
//! the collector's own planner, so its `p` is a real survey's), and sends `bodies` hand-overs of
//! cohort 0 to the collector at once, each signed as the provider — the one party that may send
//! them — and each exactly as large as the design allows (`wire::PeerBodyLimits::cohort_result`:
//! a full masked batch of `m × p` doubles, `m` credential nonces): the worst a dishonest provider,
//! or a thief of its key, can send without being refused before the body is read. The collector
//! reads at most `PEER_BODY_BUDGET` bytes of peer bodies at once and answers the rest 503 with
//! `Retry-After`; every body it reads it then judges (here: refused, none is a real cohort).
//!
//! Reported: the body size, how many were read (and then judged: refused, since none is a real
//! cohort's) and how many were answered busy for the budget, the services' peak resident memory before and after the flood (`VmHWM` of the process serving them), and the
//! growth as a multiple of the budget and of what reading every body at once would need. Nothing
//! is timed: the figure is memory.

use orthomask_server::peer_auth::{PEER_BODY_BUDGET, apply, sign};
use orthomask_server::peers::{IDENTITY_KEY_FILE, Identity, Party};
use orthomask_server::wire::PeerBodyLimits;
use orthomask_survey::draft::{Endpoints, SurveyDraft, plan_survey};
use std::path::Path;

fn argument(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn number(name: &str, default: usize) -> usize {
    argument(name).map_or(default, |v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} takes a whole number, not {v:?}"))
    })
}

/// The draft: `answers` number questions in 0–100, cohorts of `m`, by invitation.
fn draft(answers: usize, m: usize) -> serde_json::Value {
    let questions: Vec<serde_json::Value> = (0..answers)
        .map(|j| serde_json::json!({"id": format!("x{j}"), "label": format!("Value {j}"), "kind": "number", "min": 0, "max": 100}))
        .collect();
    serde_json::json!({
        "id": "flood", "title": "Peer flood", "consent": "Benchmark.", "questions": questions,
        "cohort_size": m, "invitations": true, "share_mode": false,
    })
}

/// A process's peak resident memory in MiB (`VmHWM`, Linux).
fn peak_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("/proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .expect("VmHWM in /proc/PID/status")
}

/// A hand-over of exactly `size` bytes: a cohort result whose batch is `rows × p` zeros (the
/// base64 of zeros), padded with spaces JSON allows.
fn body_of_size(size: usize, rows: usize, p: usize) -> Vec<u8> {
    use base64::Engine as _;
    let data = base64::engine::general_purpose::STANDARD.encode(vec![0u8; rows * p * 8]);
    let nonces: Vec<String> = (0..rows).map(|i| format!("{i:032x}")).collect();
    let mut body = serde_json::to_vec(&serde_json::json!({
        "survey": "flood", "cohort": 0, "uploads": rows, "merkle_root": "00".repeat(32),
        "nonces": nonces, "outcome": "masked",
        "batch": {"rows": rows, "cols": p, "data": data},
    }))
    .expect("JSON");
    assert!(
        body.len() <= size,
        "the batch alone is {} > {size}",
        body.len()
    );
    body.resize(size, b' ');
    body
}

fn main() {
    let dir = argument("--services").expect("--services DIR (the serve all data directory)");
    let pid: u32 = argument("--services-pid")
        .expect("--services-pid PID")
        .parse()
        .expect("a process id");
    let bodies = number("--bodies", 24);
    let m = number("--cohort", 2000);
    let answers = number("--answers", 20);
    let dir = Path::new(&dir);
    let services: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("services.json")).expect("services.json"),
    )
    .expect("services.json is JSON");
    let collector = services["collector"]
        .as_str()
        .expect("collector")
        .to_owned();
    let admin = std::fs::read_to_string(dir.join("admin-token")).expect("admin-token");
    let provider =
        Identity::load_or_create(&dir.join("msp").join(IDENTITY_KEY_FILE), Party::Provider)
            .expect("the provider's identity");

    let draft_json = draft(answers, m);
    let planned = plan_survey(
        &serde_json::from_value::<SurveyDraft>(draft_json.clone()).expect("a draft"),
        Endpoints {
            provider: "http://127.0.0.1:9",
            right_services: &[],
        },
    )
    .expect("the collector plans this draft");
    let (p1, p) = (
        planned.plan.masking.p1,
        planned.plan.masking.p1 + planned.plan.masking.p2,
    );
    let limit = PeerBodyLimits::of(m, p1, p).cohort_result;
    let size = usize::try_from(limit).expect("a body that fits in memory");
    let body = body_of_size(size, m, p);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let http = reqwest::Client::new();
    let before = peak_mib(pid);
    let statuses = runtime.block_on(async {
        let created = http
            .post(format!("{collector}/api/admin/surveys"))
            .bearer_auth(admin.trim())
            .header("content-type", "application/json")
            .body(draft_json.to_string())
            .send()
            .await
            .expect("the collector answers");
        assert_eq!(created.status().as_u16(), 201, "{:?}", created.text().await);
        let url = format!("{collector}/api/peer/surveys/flood/cohorts/0/result");
        let mut tasks = Vec::new();
        for _ in 0..bodies {
            let (http, url, body, provider) =
                (http.clone(), url.clone(), body.clone(), provider.clone());
            tasks.push(tokio::spawn(async move {
                let headers = sign(
                    &provider,
                    Party::Collector,
                    &reqwest::Method::PUT,
                    &url,
                    &body,
                )
                .await
                .expect("a signature");
                let request = http.put(&url).header("content-type", "application/json");
                match apply(request, &headers).body(body).send().await {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let text = r.text().await.unwrap_or_default();
                        // A 503 for the budget says so; another (the receipt list it is judged
                        // against is not published: the cohort is open) came after the read.
                        (status, status == 503 && text.contains("peer bodies"))
                    }
                    Err(_) => (0, false),
                }
            }));
        }
        let mut statuses = Vec::new();
        for t in tasks {
            statuses.push(t.await.expect("a task"));
        }
        statuses
    });
    let after = peak_mib(pid);
    let busy = statuses.iter().filter(|(_, budget)| *budget).count();
    let read = statuses
        .iter()
        .filter(|(s, budget)| *s != 0 && !budget)
        .count();
    let statuses: Vec<u16> = statuses
        .iter()
        .filter(|(_, budget)| !budget)
        .map(|(s, _)| *s)
        .collect();
    let mib = |bytes: f64| bytes / (1024.0 * 1024.0);
    let growth = after - before;
    let budget = mib(PEER_BODY_BUDGET as f64);
    let all_at_once = mib(size as f64) * bodies as f64;
    println!(
        "peer flood: {bodies} hand-overs of {:.1} MiB (cohorts of {m}, p = {p}) signed as the \
         provider; read and judged {read} (answers {:?}), answered busy for the budget {busy}",
        mib(size as f64),
        statuses
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<u16>>()
    );
    println!(
        "RESULT body_mib={:.1} bodies={bodies} read={read} busy={busy} before_mib={before:.0} \
         after_mib={after:.0} growth_mib={growth:.0} budget_mib={budget:.0} \
         growth_per_budget={:.2} all_at_once_mib={all_at_once:.0} growth_per_all_at_once={:.2}",
        mib(size as f64),
        growth / budget,
        growth / all_at_once
    );
}
