//! What a right-masking service keeps at rest (threat model, "Stores", the `right.sqlite3` row):
//! since issue 24 a share is stored as uploaded, `xⁱ`, until its cohort is handed over, and the
//! cohort's shares are then masked with `Bᵢ` in one blocked product. These tests read the
//! services' stores and the messages between the parties (behind taps) and show that
//! * a stored share is exactly the share the device sent, one of `K` additive shares whose sum is
//!   the record and which alone is dominated by its noise;
//! * the block handed to the provider is `Xⁱ Bᵢ` as the old mask-on-arrival path made it (each
//!   row masked alone with `Bᵢ` from the service's key), and the shares are erased once it is
//!   queued;
//! * the release still has the raw data's `XᵀX` and column means, and the raw regression;
//! * a data directory written by the old version — shares already masked on arrival, no
//!   `right_masked` column — opens, takes new shares into the same cohort and hands the mixed
//!   cohort over correctly.

mod common;

use common::tap::{Tapped, start_tapped};
use common::*;
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::collusion::RightProvider;
use orthomask_core::tolerance::{
    BLOCKED_AGREES_WITH_SCALAR, CLEARLY_CHANGED, ORTHOGONALITY, PRESERVED_STATISTICS, SHARES_SUM,
};
use orthomask_survey::definition::SurveyDefinition;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// A stored upload row of a right-masking service: its vector (`None` once erased) and whether
/// it is stored with its right mask.
struct StoredRow {
    values: Option<Vec<f64>>,
    right_masked: bool,
}

fn doubles(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn blob(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The rows service `dir` stores for `cohort` of `survey`, by idempotency token.
fn stored_rows(dir: &Path, survey: &str, cohort: u32) -> HashMap<String, StoredRow> {
    let conn =
        Connection::open_with_flags(dir.join("right.sqlite3"), OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT token, masked, right_masked FROM uploads WHERE survey = ?1 AND cohort = ?2",
        )
        .unwrap();
    stmt.query_map((survey, cohort), |r| {
        Ok((
            r.get::<_, String>(0)?,
            StoredRow {
                values: r.get::<_, Option<Vec<u8>>>(1)?.map(|b| doubles(&b)),
                right_masked: r.get(2)?,
            },
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

/// A service's key for `survey`, from its key file.
fn service_key(dir: &Path, survey: &str) -> Key {
    let text = std::fs::read_to_string(dir.join("right-keys.json")).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    Key::from_hex(file["surveys"][survey].as_str().unwrap()).unwrap()
}

/// `xⁱ Bᵢ` for one share alone, as the service computed it on arrival before issue 24: `Bᵢ`
/// from the service's key (`RightMaskKey { cohort }`, `AttributeMask { i }`) applied to a
/// single row, which takes the core's scalar reflector-by-reflector path, not the blocked one.
fn masked_alone(key: &Key, index: u32, cohort: u32, share: &[f64]) -> Vec<f64> {
    let provider = RightProvider::new(
        &key.derive(StreamId::RightMaskKey { cohort }),
        index,
        share.len(),
    )
    .unwrap();
    provider
        .mask_shares(&DMatrix::from_row_slice(1, share.len(), share))
        .unwrap()
        .iter()
        .copied()
        .collect()
}

fn max_abs<'a>(values: impl IntoIterator<Item = &'a f64>) -> f64 {
    values.into_iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// The released table's `XᵀX` and column means equal the raw records' (the release's first four
/// columns are the raw ones, in order), to [`PRESERVED_STATISTICS`] of the largest entry.
fn assert_same_moments(raw: &[Vec<f64>], release_csv: &str) {
    let table = orthomask_formats::csv::parse_table(release_csv.as_bytes(), "release.csv")
        .expect("release parses");
    let n = raw.len();
    let released = table.data().columns(0, 4).into_owned();
    assert_eq!(released.nrows(), n, "every record is released");
    let truth = DMatrix::from_fn(n, 4, |i, j| raw[i][j]);
    let (gram, released_gram) = (truth.transpose() * &truth, released.transpose() * &released);
    let scale = max_abs(gram.iter());
    assert!(
        (&gram - &released_gram).amax() <= PRESERVED_STATISTICS * scale,
        "XᵀX differs: {gram} vs {released_gram}"
    );
    for j in 0..4 {
        let (mean, released_mean) = (truth.column(j).mean(), released.column(j).mean());
        assert!(
            (mean - released_mean).abs() <= PRESERVED_STATISTICS * mean.abs().max(1.0),
            "mean of column {j}: {mean} vs {released_mean}"
        );
    }
    // Not the raw rows themselves (the release is masked).
    assert!((&truth - &released).amax() > PRESERVED_STATISTICS * max_abs(truth.iter()));
}

/// The answers of participant `i` on the device's scale (the answer columns of its record).
fn scaled(def: &SurveyDefinition, i: u64) -> Vec<f64> {
    def.design()
        .unwrap()
        .scaler()
        .unwrap()
        .scale_row(&def.encode(&answers(i)).unwrap())
        .unwrap()
}

/// Threat model, stores, `right.sqlite3`: while its cohort is open a service holds the share
/// its device sent — one of `K` additive shares of the record, which alone is its noise with the
/// record's `1/K` under it — and nothing else of the record; at the hand-over the cohort's
/// shares leave as `Xⁱ Bᵢ`, exactly the rows the old mask-on-arrival path made, and are erased;
/// the release keeps the raw data's `XᵀX`, means and regression.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shares_are_stored_as_uploaded_and_leave_masked_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let k = 3;
    let t: Tapped = start_tapped(dir.path(), k).await;
    let http = client();
    let created = create_survey(&http, &t.all, &draft("stored", 12, true, false)).await;
    let url = created["definition_url"].as_str().unwrap().to_owned();
    let mut raw = Vec::new();
    let mut def = None;
    let mut scaled_by_token = HashMap::new();
    let mut sent_by_service: Vec<HashMap<String, Vec<f64>>> = vec![HashMap::new(); k];
    for i in 0..20u64 {
        let (loaded, record, sent) = participate_with_definition(&http, &url, i).await;
        assert_eq!(sent.len(), k);
        for (service, s) in sent.iter().enumerate() {
            assert_eq!(s.status, 201);
            sent_by_service[service].insert(s.upload.token.clone(), s.upload.values.clone());
        }
        scaled_by_token.insert(sent[0].upload.token.clone(), scaled(&loaded, i));
        raw.push(record);
        def = Some(loaded);
    }
    let design = def.unwrap().design().unwrap();
    let (p, answers) = (design.p(), design.answers());

    // Cohort 0 is full and handed over: wait until every service's block reached the provider.
    for i in 0..k {
        t.msp
            .wait_seen("PUT", &format!("/cohorts/0/shares/{i}"))
            .await;
    }

    // Cohort 1 (eight uploads) is open: each service stores each share exactly as its device
    // sent it, marked as not yet masked.
    let mut shares_of: HashMap<String, Vec<Vec<f64>>> = HashMap::new();
    for (i, sent) in sent_by_service.iter().enumerate() {
        let stored = stored_rows(&t.data_dir(&format!("right-{i}")), "stored", 1);
        assert_eq!(stored.len(), 8, "service {i}");
        for (token, row) in &stored {
            assert!(!row.right_masked, "service {i} stores {token} unmasked");
            let values = row
                .values
                .as_ref()
                .expect("the share is kept until the hand-over");
            let uploaded = &sent[token];
            assert!(
                values
                    .iter()
                    .zip(uploaded)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "service {i} stores {token} bit for bit as uploaded"
            );
            shares_of
                .entry(token.clone())
                .or_default()
                .push(values.clone());
        }
    }
    // What the protocol says a stored share is (`collusion::split_into_shares`): the K stored
    // shares of a record sum to it, and one share alone is noise far above the record's 1/K.
    for (token, shares) in &shares_of {
        assert_eq!(shares.len(), k);
        let record = &scaled_by_token[token];
        let bound = SHARES_SUM * k as f64 * max_abs(shares.iter().flatten());
        for (j, x) in record.iter().enumerate().take(answers) {
            let sum: f64 = shares.iter().map(|s| s[j]).sum();
            assert!((sum - x).abs() <= bound, "{token} column {j}: {sum} vs {x}");
        }
        for share in shares {
            let noise: Vec<f64> = (0..answers)
                .map(|j| share[j] - record[j] / k as f64)
                .collect();
            assert!(
                max_abs(&noise) > max_abs(&record[..answers]),
                "one share alone is dominated by its noise ({noise:?})"
            );
        }
    }

    // Cohort 0: the shares are erased (the block in the outbox is the service's only copy), and
    // the block the provider received is Xⁱ Bᵢ row for row — the per-share mask of before.
    for (i, sent) in sent_by_service.iter().enumerate() {
        let service = t.data_dir(&format!("right-{i}"));
        let stored = stored_rows(&service, "stored", 0);
        assert_eq!(stored.len(), 12);
        assert!(
            stored.values().all(|r| r.values.is_none()),
            "service {i} erased the shares it handed over"
        );
        let seen = t
            .msp
            .wait_seen("PUT", &format!("/cohorts/0/shares/{i}"))
            .await;
        let body = seen.json();
        let block =
            serde_json::from_value::<orthomask_server::wire::WireMatrix>(body["block"].clone())
                .unwrap()
                .to_matrix()
                .unwrap();
        let rows: Vec<String> = serde_json::from_value(body["rows"].clone()).unwrap();
        assert_eq!((block.nrows(), block.ncols()), (12, p));
        let key = service_key(&service, "stored");
        let by_hash: HashMap<String, &Vec<f64>> = sent
            .iter()
            .map(|(token, v)| (orthomask_survey::merkle::sha256_hex(token.as_bytes()), v))
            .collect();
        for (r, hash) in rows.iter().enumerate() {
            let share = by_hash[hash];
            let expected = masked_alone(&key, i as u32, 0, share);
            let scale = max_abs(share.iter());
            let got: Vec<f64> = block.row(r).iter().copied().collect();
            let off = got
                .iter()
                .zip(&expected)
                .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(
                off <= BLOCKED_AGREES_WITH_SCALAR * scale,
                "service {i} row {r}: the blocked product differs from the share masked alone by {off}"
            );
            // Independently of the core: an orthogonal mask keeps each row's length.
            let (norm, masked_norm) = (
                share.iter().map(|v| v * v).sum::<f64>().sqrt(),
                got.iter().map(|v| v * v).sum::<f64>().sqrt(),
            );
            assert!((norm - masked_norm).abs() <= ORTHOGONALITY * norm);
            let moved: Vec<f64> = got.iter().zip(share).map(|(a, b)| a - b).collect();
            assert!(
                max_abs(&moved) > CLEARLY_CHANGED * scale,
                "row {r} is masked"
            );
        }
    }

    let (status, view) = admin_post(&http, &t.all, "/api/admin/surveys/stored/close").await;
    assert_eq!(status, 200, "{view}");
    let (csv, _) = wait_for_release(&http, t.all.collector.url(), "stored", 60).await;
    assert_same_moments(&raw, &csv);
    assert_same_regression(&raw, &csv);
    t.all.stop().await;
}

/// A directory the old version wrote: its shares masked on arrival, its `uploads` table without
/// the `right_masked` column. Made here from a current one — stopped with six shares waiting in
/// cohort 0 at each service — by masking each stored share alone with the service's `Bᵢ`, as
/// the old upload path did, and dropping the column. Restarted, each service gains the column
/// (the old rows read as already masked), takes the cohort's other six shares as uploaded, and
/// hands the mixed cohort over: the release has the raw `XᵀX`, means and regression.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_with_shares_masked_on_arrival_still_hands_over() {
    let dir = tempfile::tempdir().unwrap();
    let k = 3;
    let t = start_tapped(dir.path(), k).await;
    let http = client();
    let created = create_survey(&http, &t.all, &draft("older", 12, true, false)).await;
    let url = created["definition_url"].as_str().unwrap().to_owned();
    let url = url.as_str();
    let mut raw = Vec::new();
    let mut sent_before: Vec<HashMap<String, Vec<f64>>> = vec![HashMap::new(); k];
    for i in 0..6u64 {
        let (record, sent) = participate(&http, url, i).await;
        for (service, s) in sent.iter().enumerate() {
            sent_before[service].insert(s.upload.token.clone(), s.upload.values.clone());
        }
        raw.push(record);
    }
    let taps = t.stop().await;

    for (i, sent) in sent_before.iter().enumerate() {
        let service = dir.path().join(format!("right-{i}"));
        let key = service_key(&service, "older");
        let conn = Connection::open(service.join("right.sqlite3")).unwrap();
        let stored = stored_rows(&service, "older", 0);
        assert_eq!(stored.len(), 6);
        for (token, row) in &stored {
            let share = row.values.as_ref().unwrap();
            assert_eq!(share, &sent[token]);
            let masked = masked_alone(&key, i as u32, 0, share);
            conn.execute(
                "UPDATE uploads SET masked = ?2 WHERE survey = 'older' AND token = ?1",
                (token, blob(&masked)),
            )
            .unwrap();
        }
        conn.execute_batch("ALTER TABLE uploads DROP COLUMN right_masked")
            .unwrap();
    }

    // Behind the same taps: the addresses the signed template names stay the same.
    let t = taps.start().await;
    for i in 0..k {
        let stored = stored_rows(&dir.path().join(format!("right-{i}")), "older", 0);
        assert_eq!(stored.len(), 6);
        assert!(
            stored
                .values()
                .all(|r| r.right_masked && r.values.is_some()),
            "the old rows read as masked on arrival"
        );
    }
    for i in 6..20u64 {
        let (record, _) = participate(&http, url, i).await;
        raw.push(record);
    }
    let (status, view) = admin_post(&http, &t.all, "/api/admin/surveys/older/close").await;
    assert_eq!(status, 200, "{view}");
    let (csv, _) = wait_for_release(&http, t.all.collector.url(), "older", 60).await;
    assert_same_moments(&raw, &csv);
    assert_same_regression(&raw, &csv);
    t.all.stop().await;
}
