//! The coalition tables of `docs/threat-model.md` (issue 20 §1 and §9), row by row: each test
//! gives a coalition exactly the views its members hold on a real deployment — what their taps
//! recorded (`common::tap`: every request each service received), their key files, and what the
//! test's participants sent to them — runs that coalition's best linear-algebra attack, and
//! shows the stated outcome: the records are recovered, or the attack's error is as large as the
//! masks and the share noise say.
//!
//! Records are compared on the device's scale (answers scaled to `[−1, 1]` by their declared
//! ranges), where every party's matrices live.

mod common;

use common::tap::{Tapped, start_tapped};
use common::*;
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::Mask;
use orthomask_core::protocol::collusion::LeftProvider;
use orthomask_core::protocol::share_handover::FixedMatrix;
use orthomask_core::protocol::tm2::{DataCollector, right_mask_from_device_key};
use orthomask_core::tolerance::{ATTACK_CONSTRAINT_FIT, NOT_RECOVERED, NOTHING_READ, RECOVERED};
use orthomask_survey::definition::SurveyDefinition;
use serde_json::Value;

/// One cohort of `n` participants, run to its hand-over behind taps.
struct Run {
    t: Tapped,
    def: SurveyDefinition,
    /// The participants' answers on the device's scale (answer columns only), by participant.
    truth: Vec<Vec<f64>>,
}

/// The answers of participant `i` on the device's scale.
fn scaled(def: &SurveyDefinition, i: u64) -> Vec<f64> {
    let design = def.design().unwrap();
    design
        .scaler()
        .unwrap()
        .scale_row(&def.encode(&answers(i)).unwrap())
        .unwrap()
}

/// Participant `i` answers through `link` (one place taken), and the definition it accepted.
async fn answer(http: &reqwest::Client, link: &str, i: u64) -> SurveyDefinition {
    let (def, _, sent) = participate_with_definition(http, link, i).await;
    for s in &sent {
        assert_eq!(s.status, 201, "{:?}", s.receipt);
    }
    def
}

async fn run(dir: &std::path::Path, rights: usize, n: usize) -> Run {
    let t = start_tapped(dir, rights).await;
    let http = client();
    let share = rights > 0;
    let created = create_survey(&http, &t.all, &draft("coalition", n, share, !share)).await;
    let invited = links(&http, &t.all, &created, n).await;
    let mut def = None;
    let mut truth = Vec::new();
    for (i, link) in (0..n as u64).zip(&invited) {
        let loaded = answer(&http, link, i).await;
        truth.push(scaled(&loaded, i));
        def = Some(loaded);
    }
    // The cohort is full: wait until the collector holds it.
    wait_for_view(&http, &t.all, "coalition", |v| {
        v["cohorts"][0]["status"] == "received"
    })
    .await;
    Run {
        t,
        def: def.unwrap(),
        truth,
    }
}

/// The JSON bodies `tap` received for requests matching `method` and `fragment`.
fn bodies(tap: &common::tap::Tap, method: &str, fragment: &str) -> Vec<Value> {
    tap.seen_matching(method, fragment)
        .iter()
        .map(common::tap::Seen::json)
        .collect()
}

fn wire_matrix(v: &Value) -> DMatrix<f64> {
    serde_json::from_value::<orthomask_server::wire::WireMatrix>(v.clone())
        .unwrap()
        .to_matrix()
        .unwrap()
}

fn wire_fixed(v: &Value) -> FixedMatrix {
    serde_json::from_value::<orthomask_server::wire::WireFixed>(v.clone())
        .unwrap()
        .to_fixed()
        .unwrap()
}

/// A party's survey key from its key file.
fn survey_key(t: &Tapped, party: &str, file: &str) -> Key {
    let text = std::fs::read_to_string(t.data_dir(party).join(file)).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    Key::from_hex(file["surveys"]["coalition"].as_str().unwrap()).unwrap()
}

/// Whether every estimated row is within [`RECOVERED`] of a distinct true record.
fn recovers(estimate: &DMatrix<f64>, truth: &[Vec<f64>]) -> bool {
    let mut used = vec![false; truth.len()];
    (0..estimate.nrows()).all(|r| {
        let found = truth.iter().enumerate().position(|(i, t)| {
            !used[i]
                && t.iter()
                    .enumerate()
                    .all(|(j, v)| (estimate[(r, j)] - v).abs() < RECOVERED)
        });
        found.map(|i| used[i] = true).is_some()
    })
}

/// The best matching of estimated rows to records: the mean over records of the smallest
/// distance to an estimated row, relative to the records' spread around their mean (0: read,
/// about 1 or more: nothing learned beyond the means).
fn relative_error(estimate: &DMatrix<f64>, truth: &[Vec<f64>]) -> f64 {
    let a = truth[0].len();
    let distance = truth
        .iter()
        .map(|t| {
            (0..estimate.nrows())
                .map(|r| {
                    (0..a)
                        .map(|j| (estimate[(r, j)] - t[j]).powi(2))
                        .sum::<f64>()
                        .sqrt()
                })
                .fold(f64::INFINITY, f64::min)
        })
        .sum::<f64>()
        / truth.len() as f64;
    distance / spread(truth)
}

/// The smallest distance from any record to any estimated row, relative to the records' spread.
fn closest(estimate: &DMatrix<f64>, truth: &[Vec<f64>]) -> f64 {
    let a = truth[0].len();
    let nearest = truth
        .iter()
        .flat_map(|t| {
            (0..estimate.nrows()).map(move |r| {
                (0..a)
                    .map(|j| (estimate[(r, j)] - t[j]).powi(2))
                    .sum::<f64>()
                    .sqrt()
            })
        })
        .fold(f64::INFINITY, f64::min);
    nearest / spread(truth)
}

/// The records' mean distance from their mean.
fn spread(truth: &[Vec<f64>]) -> f64 {
    let a = truth[0].len();
    let mean: Vec<f64> = (0..a)
        .map(|j| truth.iter().map(|t| t[j]).sum::<f64>() / truth.len() as f64)
        .collect();
    truth
        .iter()
        .map(|t| {
            t.iter()
                .zip(&mean)
                .map(|(x, m)| (x - m).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .sum::<f64>()
        / truth.len() as f64
}

/// The answer columns of the records a collector's data `A X_q` (or a recovered `X`) hold.
fn answer_columns(m: &DMatrix<f64>, answers: usize) -> DMatrix<f64> {
    m.columns(0, answers).into_owned()
}

/// Basic protocol, cohort of twelve. The collector's view: the provider's hand-over with `B_k`
/// removed (its own key); the provider's: the uploads `x·B_k` and its key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_protocol_coalitions() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(dir.path(), 0, 12).await;
    let design = r.def.design().unwrap();
    let answers = design.answers();
    let p = design.p();
    let uploads: Vec<Vec<f64>> = bodies(&r.t.msp, "POST", "/uploads")
        .iter()
        .map(|u| serde_json::from_value(u["values"].clone()).unwrap())
        .collect();
    assert_eq!(uploads.len(), 12);
    let xb = DMatrix::from_fn(12, p, |i, j| uploads[i][j]);
    let collector_key = survey_key(&r.t, "collector", "collector-keys.json");
    let collector = DataCollector::new(collector_key.clone(), design.clone()).unwrap();
    let b = right_mask_from_device_key(&design, &collector.device_key(0), 0).unwrap();
    let handover = bodies(&r.t.collector, "PUT", "/cohorts/0/result");
    let batch = wire_matrix(&handover[0]["batch"]);
    let mut a2x = batch.clone();
    b.right_apply_inverse(&mut a2x).unwrap();

    // Provider + collector: the collector's B_k removed from the provider's uploads — every
    // record (seed 003 §3.1: the two must not collude).
    let mut x = xb.clone();
    b.right_apply_inverse(&mut x).unwrap();
    assert!(recovers(&answer_columns(&x, answers), &r.truth));

    // Provider + one participant of the cohort: the device key in that participant's
    // definition gives B_k — the whole cohort.
    let device = right_mask_from_device_key(&design, &r.def.right_mask_key().unwrap(), 0).unwrap();
    let mut x = xb.clone();
    device.right_apply_inverse(&mut x).unwrap();
    assert!(recovers(&answer_columns(&x, answers), &r.truth));

    // The provider alone: without B_k its best linear guess reads the uploads as they are.
    let e = relative_error(&answer_columns(&xb, answers), &r.truth);
    assert!(e > NOT_RECOVERED, "provider alone: {e}");

    // The collector alone (and with a participant, who adds only the row it knows): A₂,k X₁,k
    // is the orbit of the records; its rows are not records.
    let e = closest(&answer_columns(&a2x, answers), &r.truth);
    assert!(e > NOTHING_READ, "collector alone: {e}");
    // What it does read exactly: the column sums (left masks keep 1ₙ) — the n − 1 attack below.
    let sums: Vec<f64> = (0..answers).map(|j| a2x.column(j).sum()).collect();
    for (j, s) in sums.iter().enumerate() {
        let truth: f64 = r.truth.iter().map(|t| t[j]).sum();
        assert!((s - truth).abs() < RECOVERED * 12.0, "column {j}");
    }
    r.t.all.stop().await;
}

/// Issue 20 §9, the n − 1 attack. The collector can issue itself credentials: filling all but
/// one place of a cohort with records it chose, it reads the last one exactly from the cohort's
/// column sums. An outsider holding all but one place of one cohort of a release that mixes
/// several cohorts sees only the release's sums over everybody, and its estimate of the last
/// record is off by the other cohorts' spread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_n_minus_1_attack() {
    // The collector's attack: participants 0–10 are its own (it knows their answers), 11 is the
    // target.
    let dir = tempfile::tempdir().unwrap();
    let r = run(dir.path(), 0, 12).await;
    let design = r.def.design().unwrap();
    let answers = design.answers();
    let collector = DataCollector::new(
        survey_key(&r.t, "collector", "collector-keys.json"),
        design.clone(),
    )
    .unwrap();
    let b = right_mask_from_device_key(&design, &collector.device_key(0), 0).unwrap();
    let mut a2x = wire_matrix(&bodies(&r.t.collector, "PUT", "/cohorts/0/result")[0]["batch"]);
    b.right_apply_inverse(&mut a2x).unwrap();
    let target: Vec<f64> = (0..answers)
        .map(|j| a2x.column(j).sum() - r.truth[..11].iter().map(|t| t[j]).sum::<f64>())
        .collect();
    for (j, (got, want)) in target.iter().zip(&r.truth[11]).enumerate() {
        assert!(
            (got - want).abs() < RECOVERED,
            "column {j}: {got} vs {want}"
        );
    }
    r.t.all.stop().await;

    // The outsider's attack on an open share-mode survey released in two cohorts: it holds 11
    // places of cohort 0 and reads the release.
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 3, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("outsider", 12, true, false)).await;
    let url = created["definition_url"].as_str().unwrap();
    let mut truth = Vec::new();
    let mut def = None;
    for i in 0..24u64 {
        let d = answer(&http, url, i).await;
        truth.push(d.encode(&common::answers(i)).unwrap());
        def = Some(d);
    }
    let def = def.unwrap();
    let (status, _) = admin_post(&http, &all, "/api/admin/surveys/outsider/close").await;
    assert_eq!(status, 200);
    let (csv, _) = wait_for_release(&http, all.collector.url(), "outsider", 90).await;
    let table = orthomask_formats::csv::parse_table(csv.as_bytes(), "release.csv").unwrap();
    let release = table.data();
    let columns = def.columns().len();
    // Cohort 0 is participants 0–11 (first come); the outsider holds 0–10, targets 11.
    let known: Vec<f64> = (0..columns)
        .map(|j| truth[..11].iter().map(|t| t[j]).sum())
        .collect();
    // Its best linear estimate: the release's sums minus its own, minus twelve times its own
    // mean for the cohort it cannot see.
    let estimate: Vec<f64> = (0..columns)
        .map(|j| release.column(j).sum() - known[j] - 12.0 * known[j] / 11.0)
        .collect();
    let ranges: Vec<f64> = def
        .columns()
        .iter()
        .map(|c| c.range.1 - c.range.0)
        .collect();
    let error: f64 = (0..columns)
        .map(|j| ((estimate[j] - truth[11][j]) / ranges[j]).abs())
        .fold(0.0, f64::max);
    assert!(
        error > NOT_RECOVERED,
        "the outsider's estimate is off by {error} of a range"
    );
    all.stop().await;
}

/// Share mode views: each right-masking service's raw shares (its uploads), its key, what it was
/// handed on and the left-masked block it unmasked; the provider's blocks and key; the
/// collector's parts.
struct ShareViews {
    /// Raw shares by service, rows in upload order.
    shares: Vec<DMatrix<f64>>,
    /// The tokens of each service's uploads (to line rows up as the provider does).
    tokens: Vec<Vec<String>>,
    /// The collector's sum of the parts, `A X_q`, on the device's scale.
    ax_q: DMatrix<f64>,
    /// The parts as the collector received them, by sending service.
    parts: Vec<FixedMatrix>,
    /// The provider's `A` (dense, from its key).
    a: DMatrix<f64>,
    /// The provider's aligned row order: tokens sorted by their SHA-256.
    order: Vec<String>,
}

fn share_views(r: &Run, k: usize) -> ShareViews {
    let design = r.def.design().unwrap();
    let p = design.p();
    let mut shares = Vec::new();
    let mut tokens: Vec<Vec<String>> = Vec::new();
    for i in 0..k {
        let ups = bodies(&r.t.rights[i], "POST", "/uploads");
        tokens.push(
            ups.iter()
                .map(|u| u["token"].as_str().unwrap().to_owned())
                .collect(),
        );
        let rows: Vec<Vec<f64>> = ups
            .iter()
            .map(|u| serde_json::from_value(u["values"].clone()).unwrap())
            .collect();
        shares.push(DMatrix::from_fn(rows.len(), p, |a, b| rows[a][b]));
    }
    let mut order: Vec<String> = tokens[0].clone();
    order.sort_by_key(|t| orthomask_survey::merkle::sha256_hex(t.as_bytes()));
    let mut parts = vec![None; k];
    for body in bodies(&r.t.collector, "PUT", "/parts/") {
        let index = body["index"].as_u64().unwrap() as usize;
        parts[index] = Some(wire_fixed(&body["block"]));
    }
    let parts: Vec<FixedMatrix> = parts.into_iter().map(Option::unwrap).collect();
    let mut sum = parts[0].clone();
    for part in &parts[1..] {
        sum.wrapping_add(part).unwrap();
    }
    let provider_key = survey_key(&r.t, "msp", "msp-keys.json");
    let left = LeftProvider::new(
        provider_key.derive(StreamId::ProviderLeftMask { cohort: 0 }),
        0,
    );
    let n = order.len();
    let a = left.mask(&DMatrix::identity(n, n)).unwrap();
    ShareViews {
        shares,
        tokens,
        ax_q: sum.decode(),
        parts,
        a,
        order,
    }
}

/// Service `i`'s raw shares in the provider's row order.
fn aligned(v: &ShareViews, i: usize) -> DMatrix<f64> {
    let rows: Vec<usize> = v
        .order
        .iter()
        .map(|t| v.tokens[i].iter().position(|u| u == t).unwrap())
        .collect();
    DMatrix::from_fn(rows.len(), v.shares[i].ncols(), |r, c| {
        v.shares[i][(rows[r], c)]
    })
}

/// The subset-sum attack on a yes/no answer column (issue 20 §1): knowing the column's sum and
/// its inner products with `q` known vectors, find the 0/1 vector that fits — for a cohort of
/// twelve, every one of the 2¹² candidates is tried. `None` when no candidate fits.
fn subset_sum(sum: f64, dots: &[(Vec<f64>, f64)], n: usize) -> Option<Vec<f64>> {
    // On the device's scale a yes/no answer is −1 or 1.
    let mut fits = Vec::new();
    for bits in 0u32..(1 << n) {
        let x: Vec<f64> = (0..n)
            .map(|i| if bits >> i & 1 == 1 { 1.0 } else { -1.0 })
            .collect();
        if (x.iter().sum::<f64>() - sum).abs() > ATTACK_CONSTRAINT_FIT {
            continue;
        }
        let fit = dots.iter().all(|(v, d)| {
            let dot: f64 = x.iter().zip(v).map(|(a, b)| a * b).sum();
            (dot - d).abs() < ATTACK_CONSTRAINT_FIT * (1.0 + d.abs())
        });
        if fit {
            fits.push(x);
        }
    }
    (fits.len() == 1).then(|| fits.remove(0))
}

/// The collector with one right-masking service `j`, attacking the yes/no column of the cohort
/// by the projections `X_qᵀ Sʲ_q = (A X_q)ᵀ (A Sʲ_q)`, which need `A Sʲ_q` for the share `Sʲ` the
/// service holds: with two services the service's own part is exactly that; with three the
/// coalition's best stand-in is the sum minus the part service `j` computed,
/// `A X_q − Y_{j−1} = A(Sʲ + S^{j+1})_q` — the other parts are masked apart.
fn collector_and_one_service(
    v: &ShareViews,
    service: usize,
    a_own_q: &DMatrix<f64>,
    answers: usize,
) -> Option<Vec<f64>> {
    let own = aligned(v, service);
    let q = answers + 1;
    let smoker = 0;
    let dots: Vec<(Vec<f64>, f64)> = (0..q)
        .map(|c| {
            let s: Vec<f64> = own.column(c).iter().copied().collect();
            (s, v.ax_q.column(smoker).dot(&a_own_q.column(c)))
        })
        .collect();
    subset_sum(v.ax_q.column(smoker).sum(), &dots, own.nrows())
}

/// `Y_{j−1}` as service `j` computed it: the left-masked block it received times the key it was
/// handed on.
fn unmasked_by(r: &Run, j: usize) -> DMatrix<f64> {
    let block = wire_matrix(&bodies(&r.t.rights[j], "PUT", "/left-masked")[0]["block"]);
    let key = wire_matrix(&bodies(&r.t.rights[j], "PUT", "/hand-on/")[0]["key"]);
    block * key
}

/// The rows every number `k` of services shares: the provider with the collector, all the
/// services together, and the collector holding all but one place read records; the collector
/// alone and each service alone read none.
fn rows_for_any_number_of_services(truth: &[Vec<f64>], v: &ShareViews, k: usize, answers: usize) {
    // Provider + collector: Aᵀ(A X_q) — every record.
    let x_q = v.a.transpose() * &v.ax_q;
    assert!(recovers(&answer_columns(&x_q, answers), truth));
    // All the services: the shares sum to the records.
    let mut sum = aligned(v, 0);
    for j in 1..k {
        sum += aligned(v, j);
    }
    assert!(recovers(&answer_columns(&sum, answers), truth));
    // The collector alone: the orbit — no record.
    let e = closest(&answer_columns(&v.ax_q, answers), truth);
    assert!(e > NOTHING_READ, "collector alone: {e}");
    // The collector with all but the last place (an open survey: it takes places like
    // anyone): the cohort's sums, which every mask keeps, minus its own records.
    let (last, own) = truth.split_last().unwrap();
    let read: Vec<f64> = (0..answers)
        .map(|c| v.ax_q.column(c).sum() - own.iter().map(|t| t[c]).sum::<f64>())
        .collect();
    assert!(recovers(
        &DMatrix::from_row_slice(1, answers, &read),
        &[last[..answers].to_vec()]
    ));
    // One service alone: one share, whose answers are buried in noise a hundred times their
    // range (the share carries x/k).
    for j in 0..k {
        let alone = answer_columns(&aligned(v, j), answers) * k as f64;
        let e = relative_error(&alone, truth);
        assert!(e > NOT_RECOVERED, "service {j} alone: {e}");
    }
}

/// Share mode with three services (the default): the table's rows for `K ≥ 3`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_mode_coalitions_with_three_services() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(dir.path(), 3, 12).await;
    let design = r.def.design().unwrap();
    let answers = design.answers();
    let v = share_views(&r, 3);
    let truth_in_order: Vec<Vec<f64>> = v
        .order
        .iter()
        .map(|t| {
            let i: u64 = t.trim_start_matches("participant-token-").parse().unwrap();
            r.truth[i as usize].clone()
        })
        .collect();

    rows_for_any_number_of_services(&r.truth, &v, 3, answers);
    // Two services: two shares (and `A` on the span of one share's columns, useless without the
    // collector's data) — the answers under noise.
    for j in 0..3 {
        let two = (aligned(&v, j) + aligned(&v, (j + 1) % 3)) * 1.5;
        let e = relative_error(&answer_columns(&two, answers), &r.truth);
        assert!(e > NOT_RECOVERED, "services {j} and {}: {e}", (j + 1) % 3);
    }
    for j in 0..3 {
        // The provider with one service: two shares, whose answers are buried in noise a
        // hundred times their range.
        let before =
            orthomask_core::protocol::share_handover::share_unmasked_by(j as u32, 3) as usize;
        // The provider removes W_{j−1} (handed on to j) from its block of share j − 1.
        let hand_on = &bodies(&r.t.rights[j], "PUT", "/hand-on/")[0];
        let w = wire_matrix(&hand_on["key"]);
        let blocks = bodies(&r.t.msp, "PUT", &format!("/shares/{before}"));
        let block = wire_matrix(&blocks[0]["block"]);
        let share_before = &block * &w;
        let rows: Vec<String> = serde_json::from_value(blocks[0]["rows"].clone()).unwrap();
        assert_eq!(rows.len(), share_before.nrows());
        let two = answer_columns(&aligned(&v, j), answers);
        let mut pair = DMatrix::zeros(two.nrows(), answers);
        // Line the block's rows (by token hash) up with the provider's order.
        for (r_i, t) in v.order.iter().enumerate() {
            let h = orthomask_survey::merkle::sha256_hex(t.as_bytes());
            let from = rows.iter().position(|x| *x == h).unwrap();
            for c in 0..answers {
                pair[(r_i, c)] = two[(r_i, c)] + share_before[(from, c)];
            }
        }
        let e = relative_error(&(pair * 1.5), &truth_in_order);
        assert!(e > NOT_RECOVERED, "provider with service {j}: {e}");
        // The collector with one service: the attack that reads a yes/no column with two
        // services finds nothing here, because the parts it would need are masked.
        let stand_in = &v.ax_q - unmasked_by(&r, j);
        let found = collector_and_one_service(&v, j, &stand_in, answers);
        let smoker: Vec<f64> = truth_in_order.iter().map(|t| t[0]).collect();
        assert!(
            found.as_ref() != Some(&smoker),
            "collector with service {j} read the answers"
        );
    }
    r.t.all.stop().await;
}

/// Share mode with two services: the table's rows for `K = 2` — the collector with either
/// service reads a yes/no answer column of the cohort (the table's break for `K = 2`), which is
/// why share mode needs three (`orthomask_survey::policy::MIN_SHARE_SERVICES`). Every party of a
/// deployment refuses two services since issue 43 (`party_attacks`), so the parties' views are
/// made here by their own code in one process, as a deployment of two would have made them: the
/// devices' split (`collusion::split_into_shares`), the provider's `A` (`LeftProvider`), and each
/// service's part, which with two services is `A` times its own share's leading columns
/// (`share_handover`: no ring, no cancelling masks).
#[test]
fn share_mode_with_two_services_breaks_with_the_collector_and_one_service() {
    let survey = direct_survey(
        "coalition",
        12,
        &[
            "http://r0.invalid".to_owned(),
            "http://r1.invalid".to_owned(),
            "http://r2.invalid".to_owned(),
        ],
        orthomask_survey::trust::CollectorSigningKey::from_secret([1; 32]),
    );
    let def = &survey.template;
    let design = def.design().unwrap();
    let answer_count = design.answers();
    let p = design.p();
    let tau = def.masking.share_mode.as_ref().unwrap().share_sigma;
    let n = 12;
    let tokens: Vec<String> = (0..n).map(|i| format!("participant-token-{i}")).collect();
    let mut truth = Vec::new();
    let mut shares = vec![DMatrix::zeros(n, p), DMatrix::zeros(n, p)];
    for i in 0..n {
        let device = Key::teaching(60_000 + i as u64);
        let mut noise = device
            .stream(StreamId::ParticipantNoise { participant: 0 })
            .rng();
        let record = design
            .pad(&def.encode(&answers(i as u64)).unwrap(), &mut noise)
            .unwrap();
        let mut split = device
            .stream(StreamId::ParticipantNoise { participant: 1 })
            .rng();
        let parts = orthomask_core::protocol::collusion::split_into_shares(
            &record,
            answer_count,
            2,
            tau,
            &mut split,
        )
        .unwrap();
        for (j, share) in parts.iter().enumerate() {
            for (c, v) in share.iter().enumerate() {
                shares[j][(i, c)] = *v;
            }
        }
        truth.push(record[..answer_count].to_vec());
    }
    let mut order = tokens.clone();
    order.sort_by_key(|t| orthomask_survey::merkle::sha256_hex(t.as_bytes()));
    let in_order = |m: &DMatrix<f64>| {
        DMatrix::from_fn(n, m.ncols(), |r, c| {
            let i = tokens.iter().position(|t| *t == order[r]).unwrap();
            m[(i, c)]
        })
    };
    let a = LeftProvider::new(Key::teaching(77), 0)
        .mask(&DMatrix::identity(n, n))
        .unwrap();
    let q = design.p1();
    let parts: Vec<FixedMatrix> = shares
        .iter()
        .map(|share| FixedMatrix::encode(&(&a * in_order(share).columns(0, q))).unwrap())
        .collect();
    let mut sum = parts[0].clone();
    sum.wrapping_add(&parts[1]).unwrap();
    let v = ShareViews {
        shares,
        tokens: vec![tokens.clone(), tokens.clone()],
        ax_q: sum.decode(),
        parts,
        a,
        order,
    };
    let smoker: Vec<f64> = v
        .order
        .iter()
        .map(|t| {
            let i: usize = t.trim_start_matches("participant-token-").parse().unwrap();
            truth[i][0]
        })
        .collect();
    rows_for_any_number_of_services(&truth, &v, 2, answer_count);
    for j in 0..2 {
        // The provider with one service: with two services each unmasks its own share, so the
        // pair removes `A` from that service's part — and holds one share again.
        let share = v.a.transpose() * v.parts[j].decode();
        let e = relative_error(&(answer_columns(&share, answer_count) * 2.0), &truth);
        assert!(e > NOT_RECOVERED, "provider with service {j}: {e}");
    }
    for j in 0..2 {
        // Its own part is A Sʲ_q: the projections of the yes/no column on its shares are exact,
        // and the one ±1 column that fits them is the participants' answers, in the provider's
        // row order — which the service knows, since it is the order of its uploads' tokens.
        let own_part = v.parts[j].decode();
        let found = collector_and_one_service(&v, j, &own_part, answer_count)
            .expect("the collector with one service reads the yes/no column");
        assert_eq!(found, smoker, "each participant's answer, by token");
    }
}
