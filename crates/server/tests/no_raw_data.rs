//! No raw data anywhere in any store: the test reads every database (and its write-ahead log)
//! of the collector, the provider and both right-masking services — while uploads wait in their
//! cohorts and again after the release — and proves that no participant's answer is in them.
//!
//! The generated answers have full double precision (`income`, `score`), so a stored copy in any
//! form this code could write — a little- or big-endian double in a BLOB, a REAL column, decimal
//! text in JSON or CSV — would be found. Positive controls show the scanner does find numbers
//! that are stored: the masked uploads `x·B` while they wait, and the collector's left-masked
//! cohorts, whose column sums equal the raw ones although no single value does.

mod common;

use common::*;
use orthomask_core::tolerance::LEFT_MASKED_SUM;
use orthomask_survey::tolerance::EQUALS_ANSWER_RELATIVE;
use rusqlite::{Connection, OpenFlags, types::ValueRef};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Every number stored in a database: REAL and INTEGER cells, BLOBs read as little-endian
/// doubles, and numbers written as text (JSON, CSV).
fn stored_numbers(db: &Path) -> Vec<f64> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut out = Vec::new();
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            for j in 0..columns {
                match row.get_ref(j).unwrap() {
                    ValueRef::Real(v) => out.push(v),
                    ValueRef::Integer(v) => out.push(v as f64),
                    ValueRef::Blob(b) => {
                        if let Ok(json) = serde_json::from_slice::<serde_json::Value>(b) {
                            numbers_in_json(&json, &mut out);
                        } else if b.len() % 8 == 0 {
                            out.extend(
                                b.chunks_exact(8)
                                    .map(|c| f64::from_le_bytes(c.try_into().unwrap())),
                            );
                        }
                    }
                    ValueRef::Text(t) => out.extend(numbers_in_text(&String::from_utf8_lossy(t))),
                    _ => {}
                }
            }
        }
    }
    out
}

/// Numbers in a JSON hand-over (outbox bodies): JSON numbers, and matrices carried as base64
/// doubles.
fn numbers_in_json(value: &serde_json::Value, out: &mut Vec<f64>) {
    use base64::Engine as _;
    match value {
        serde_json::Value::Number(n) => out.extend(n.as_f64()),
        serde_json::Value::String(s) => {
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(s)
                && bytes.len() % 8 == 0
            {
                out.extend(
                    bytes
                        .chunks_exact(8)
                        .map(|c| f64::from_le_bytes(c.try_into().unwrap())),
                );
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| numbers_in_json(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| numbers_in_json(v, out)),
        _ => {}
    }
}

/// Numbers written as decimal text.
fn numbers_in_text(text: &str) -> Vec<f64> {
    text.split(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | 'e' | 'E' | '+')))
        .filter_map(|t| t.parse::<f64>().ok())
        .collect()
}

/// The distinctive raw values (full-precision answers).
fn distinctive(raw: &[Vec<f64>]) -> Vec<f64> {
    raw.iter().flat_map(|r| [r[2], r[3]]).collect()
}

/// Every place a raw value is found in a store: as raw bytes (a double in either byte order,
/// decimal text at full or 6-decimal precision) or as a decoded value (cells, BLOBs, JSON,
/// base64).
fn findings(data: &Path, raw: &[Vec<f64>]) -> Vec<String> {
    let secrets = distinctive(raw);
    let doubles: HashSet<[u8; 8]> = secrets
        .iter()
        .flat_map(|v| [v.to_le_bytes(), v.to_be_bytes()])
        .collect();
    let texts: HashSet<String> = secrets
        .iter()
        .flat_map(|v| [format!("{v}"), format!("{v:.6}")])
        .collect();
    let mut found = Vec::new();
    for file in store_files(data) {
        let name = file.display().to_string();
        let bytes = std::fs::read(&file).unwrap();
        if bytes.windows(8).any(|w| doubles.contains(w)) {
            found.push(format!("{name}: a raw answer as a double"));
        }
        for run in bytes.split(|b| !(b.is_ascii_digit() || b".-".contains(b))) {
            let text = String::from_utf8_lossy(run);
            if texts.contains(text.as_ref()) {
                found.push(format!("{name}: the raw answer {text} as text"));
            }
        }
        if file.extension().is_some_and(|e| e == "sqlite3") {
            let numbers = stored_numbers(&file);
            for v in &secrets {
                if numbers
                    .iter()
                    .any(|s| relative(*s, *v) <= EQUALS_ANSWER_RELATIVE)
                {
                    found.push(format!("{name}: a stored number equals the raw answer {v}"));
                }
            }
        }
    }
    found
}

fn assert_no_raw_value(data: &Path, raw: &[Vec<f64>]) {
    let found = findings(data, raw);
    assert!(found.is_empty(), "raw data in a store: {found:?}");
}

/// Wait until every service closed its database (the write-ahead logs are checkpointed and
/// removed), so the last scan reads the final files.
async fn wait_for_clean_close(data: &Path) {
    poll_until(
        "the stores to close cleanly (their write-ahead logs removed)",
        HANG_GUARD,
        || async move {
            let logs: Vec<PathBuf> = store_files(data)
                .into_iter()
                .filter(|f| f.to_string_lossy().ends_with("-wal"))
                .collect();
            if logs.is_empty() {
                Ok(())
            } else {
                Err(format!("{logs:?}"))
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_store_of_any_service_holds_a_raw_answer() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_owned();
    let all = start(&data, 3, None).await;
    let http = client();
    let basic = create_survey(&http, &all, &draft("basic", 12, false, true)).await;
    let shares = create_survey(&http, &all, &draft("shares", 12, true, false)).await;
    let invited = links(&http, &all, &basic, 18).await;
    let mut raw_basic = Vec::new();
    let mut raw_shares = Vec::new();
    let mut uploaded = Vec::new();
    for (i, link) in (0..18u64).zip(&invited) {
        let (record, sent) = participate(&http, link, i).await;
        raw_basic.push((record, sent[0].receipt.cohort));
        uploaded.push(sent[0].upload.values.clone());
        let (record, _) =
            participate(&http, shares["definition_url"].as_str().unwrap(), 100 + i).await;
        raw_shares.push(record);
    }
    let all_raw: Vec<Vec<f64>> = raw_basic
        .iter()
        .map(|(r, _)| r.clone())
        .chain(raw_shares.iter().cloned())
        .collect();

    // While cohort 1 waits at the provider: its masked uploads are stored (the scanner finds
    // them), the answers are not.
    assert_no_raw_value(&data, &all_raw);
    let msp_numbers = stored_numbers(&data.join("msp/msp.sqlite3"));
    let waiting = &uploaded[17];
    assert!(
        waiting
            .iter()
            .all(|v| msp_numbers.iter().any(|s| s.to_bits() == v.to_bits())),
        "control: the scanner sees the stored masked upload x·B"
    );

    // Control, before the release (which erases them, issue 20 §1): the collector's stored
    // cohorts A₂,k X₁,k are readable numbers whose income column sums to the raw cohort's sum
    // (left masks keep 1ₙ), yet no single value is an answer.
    wait_for_view(&http, &all, "basic", |v| {
        v["cohorts"][0]["status"] == "received"
    })
    .await;
    let collector_db = data.join("collector/collector.sqlite3");
    let conn =
        Connection::open_with_flags(&collector_db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let (records, blob): (usize, Vec<u8>) = conn
        .query_row(
            "SELECT records, data FROM cohorts WHERE survey = 'basic' AND cohort = 0",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let stored: Vec<f64> = blob
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let p1 = 5;
    assert_eq!(stored.len(), records * p1);
    let stored_income: f64 = (0..records).map(|i| stored[i * p1 + 2]).sum();
    let raw_income: f64 = raw_basic
        .iter()
        .filter(|(_, c)| *c == 0)
        .map(|(r, _)| r[2])
        .sum();
    assert!(
        relative(stored_income, raw_income) < LEFT_MASKED_SUM,
        "{stored_income} vs {raw_income}"
    );
    drop(conn);

    for survey in ["basic", "shares"] {
        let (status, _) =
            admin_post(&http, &all, &format!("/api/admin/surveys/{survey}/close")).await;
        assert_eq!(status, 200);
    }
    let (csv, _) = wait_for_release(&http, all.collector.url(), "basic", 60).await;
    wait_for_release(&http, all.collector.url(), "shares", 60).await;
    assert_same_regression(
        &raw_basic.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>(),
        &csv,
    );

    // After the release (and after the provider erased the uploads it handed on).
    assert_no_raw_value(&data, &all_raw);
    // Erased means erased in the files too, while the services run: neither the provider's
    // database nor its write-ahead log holds the bytes of a handed-over x·B (issue 10 §7). The
    // provider erases and checkpoints once it has recorded the collector's acknowledgement,
    // which may come just after the release is published: wait for that step, not for a time.
    let handed_over = f64s_bytes(&uploaded[0]);
    let holding = || -> Vec<PathBuf> {
        files_holding(
            ["msp/msp.sqlite3", "msp/msp.sqlite3-wal"].map(|file| data.join(file)),
            &handed_over,
        )
    };
    let holding = &holding;
    poll_until(
        "the provider's files to hold no erased x·B",
        HANG_GUARD,
        || async move {
            let files = holding();
            if files.is_empty() {
                Ok(())
            } else {
                Err(format!("{files:?} still hold it"))
            }
        },
    )
    .await;
    let erased: i64 = Connection::open_with_flags(
        data.join("msp/msp.sqlite3"),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap()
    .query_row(
        "SELECT COUNT(*) FROM uploads WHERE masked IS NOT NULL",
        [],
        |r| r.get(0),
    )
    .unwrap();
    assert_eq!(
        erased, 0,
        "the provider keeps no x·B after the collector has the batch"
    );
    all.stop().await;
    // Once more with every write-ahead log checkpointed into its database.
    wait_for_clean_close(&data).await;
    assert_no_raw_value(&data, &all_raw);
}

/// Little-endian bytes of a vector, as the services store it.
fn f64s_bytes(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The scanner is not blind: an answer planted in a store in any of the forms the services could
/// write is found.
#[test]
fn the_scanner_finds_a_planted_answer() {
    let raw = vec![vec![
        1.0,
        42.0,
        123.456_789_012_345_67,
        55.555_555_555_555_55,
    ]];
    let v = raw[0][2];
    use base64::Engine as _;
    let plants: Vec<(&str, rusqlite::types::Value)> = vec![
        ("real", rusqlite::types::Value::Real(v)),
        (
            "blob",
            rusqlite::types::Value::Blob(
                [7.0f64, v].iter().flat_map(|x| x.to_le_bytes()).collect(),
            ),
        ),
        (
            "text",
            rusqlite::types::Value::Text(format!("{{\"income\": {v:.6}}}")),
        ),
        (
            "base64",
            rusqlite::types::Value::Blob(
                format!(
                    "{{\"data\": \"{}\"}}",
                    base64::engine::general_purpose::STANDARD.encode(v.to_le_bytes())
                )
                .into_bytes(),
            ),
        ),
    ];
    for (form, value) in plants {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("svc")).unwrap();
        let conn = Connection::open(dir.path().join("svc/s.sqlite3")).unwrap();
        conn.execute("CREATE TABLE t (x)", []).unwrap();
        conn.execute("INSERT INTO t VALUES (?1)", [value]).unwrap();
        drop(conn);
        assert!(!findings(dir.path(), &raw).is_empty(), "planted as {form}");
    }
    let clean = tempfile::tempdir().unwrap();
    std::fs::create_dir(clean.path().join("svc")).unwrap();
    let conn = Connection::open(clean.path().join("svc/s.sqlite3")).unwrap();
    conn.execute("CREATE TABLE t (x)", []).unwrap();
    conn.execute("INSERT INTO t VALUES (?1)", [v + 1e-3])
        .unwrap();
    drop(conn);
    assert!(findings(clean.path(), &raw).is_empty());
}
