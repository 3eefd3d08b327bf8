//! One manifest: the services and `orthomask pipeline` describe a release of the same design in
//! the same words — each run as users run it (issue 21 §5).
//!
//! The services (started on loopback with their own test helpers, `crates/server/tests/common`)
//! plan a survey from a draft, participants upload through the client the web app runs, and the
//! collector publishes `manifest.json`. The command line then runs `orthomask pipeline` itself on
//! the same raw records with the flags a survey team would give it for the same design
//! (`--cohort-size 12`, the questions' `--range`s, a `keygen` key file). The two manifests must
//! agree in every field but those that legitimately differ:
//!
//! * `condition_3_7_margin`: only a simulation can compute it (it needs `X₂`, which no party of
//!   the real protocol ever sees), so the services record none;
//! * `receipt_roots`: only the services issue receipts;
//! * `qa.max_deviation` and `qa.tolerance`: they depend on the masks drawn (other keys);
//! * `column_means` and `cross_products`: computed from two differently masked releases, both
//!   equal to the raw data's to `PRESERVED_STATISTICS`, not bit for bit.

mod common;
#[path = "../../server/tests/common/mod.rs"]
mod services;

use common::{ok, orthomask, pipeline, write};
use nalgebra::DMatrix;
use orthomask_core::tolerance::PRESERVED_STATISTICS;
use orthomask_formats::manifest::Manifest;
use orthomask_survey::definition::SurveyDefinition;
use services::*;

/// Relative distance of two equally shaped lists of numbers, scaled by the largest magnitude.
fn relative_distance(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = a
        .iter()
        .chain(b)
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(1e-300);
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / scale
}

/// Means and `XᵀX` of the raw records with the QA column, as the manifest lists them.
fn raw_statistics(raw: &DMatrix<f64>) -> (Vec<f64>, Vec<f64>) {
    let with_qa = raw.clone().insert_column(raw.ncols(), 888.0);
    let n = with_qa.nrows() as f64;
    let means = with_qa.column_iter().map(|c| c.sum() / n).collect();
    let gram = with_qa.tr_mul(&with_qa);
    (means, gram.transpose().iter().copied().collect())
}

fn flat(rows: &[Vec<f64>]) -> Vec<f64> {
    rows.iter().flatten().copied().collect()
}

/// Two full cohorts of 12 at the services and in `orthomask pipeline`: the same design, the same
/// manifest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_services_and_the_pipeline_write_the_same_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &draft("agree", 12, false, true)).await;
    let invited = links(&http, &all, &created, 24).await;
    // Each definition handed out takes a cohort place, so the definition the pipeline's run
    // reads is the one the participants loaded.
    let mut definition: Option<SurveyDefinition> = None;
    let mut raw_rows = Vec::new();
    for (i, link) in (0..24u64).zip(&invited) {
        let (def, raw, sent) = participate_with_definition(&http, link, i).await;
        for s in &sent {
            assert_eq!(s.status, 201, "{:?}", s.receipt);
        }
        raw_rows.push(raw);
        definition.get_or_insert(def);
    }
    let definition = definition.unwrap();
    let (status, view) = admin_post(&http, &all, "/api/admin/surveys/agree/close").await;
    assert_eq!(status, 200, "{view}");
    let (_, served) = wait_for_release(&http, all.collector.url(), "agree", 60).await;
    let served = Manifest::parse(&served, "manifest.json").unwrap();
    all.stop().await;

    // `orthomask pipeline` on the same records, as a survey team would run it.
    let columns: Vec<String> = definition.columns().into_iter().map(|c| c.name).collect();
    let raw = DMatrix::from_fn(raw_rows.len(), columns.len(), |i, j| raw_rows[i][j]);
    let input = dir.path().join("raw.csv");
    let names: Vec<&str> = columns.iter().map(String::as_str).collect();
    write(&input, &names, &raw);
    let keys = dir.path().join("keys.json");
    ok(&orthomask(&["keygen", "--out", keys.to_str().unwrap()]));
    let ranges: Vec<String> = definition
        .columns()
        .into_iter()
        .map(|c| format!("{}={}:{}", c.name, c.range.0, c.range.1))
        .collect();
    let out = dir.path().join("pipeline");
    ok(&pipeline(
        &input,
        &out,
        &[
            "--cohort-size",
            "12",
            "--range",
            &ranges.join(","),
            "--key-file",
            keys.to_str().unwrap(),
        ],
    ));
    let pipeline = Manifest::parse(
        &std::fs::read_to_string(out.join("manifest.json")).unwrap(),
        "pipeline manifest.json",
    )
    .unwrap();

    // What legitimately differs, checked for what it must be.
    assert!(pipeline.condition_3_7_margin.is_some_and(|m| m > 1.0));
    assert_eq!(served.condition_3_7_margin, None);
    // Only the services issued receipts: the served manifest records each cohort's checked
    // receipt list at the provider, under the upload URL the definitions name (issue 10 §5).
    assert!(pipeline.receipt_roots.is_empty());
    let entries: Vec<(u32, &str, usize)> = served
        .receipt_roots
        .iter()
        .map(|r| (r.cohort, r.service.as_str(), r.count))
        .collect();
    let service = definition.upload_url.as_str();
    assert_eq!(entries, [(0, service, 12), (1, service, 12)]);
    // The services count the uploads by the app build they name (issue 27): this client, not the
    // web app, names none; the pipeline has no uploads to count.
    assert!(pipeline.builds.is_empty());
    assert_eq!(
        served.builds,
        [orthomask_formats::manifest::BuildCount {
            digest: String::new(),
            uploads: 24
        }]
    );
    let (raw_means, raw_gram) = raw_statistics(&raw);
    for m in [&served, &pipeline] {
        let means: Vec<f64> = m.column_means.iter().map(|c| c.mean).collect();
        assert!(relative_distance(&means, &raw_means) < PRESERVED_STATISTICS);
        assert!(relative_distance(&flat(&m.cross_products), &raw_gram) < PRESERVED_STATISTICS);
        assert!(m.qa.as_ref().is_some_and(|q| q.passed));
    }
    // Everything else is the same, field by field.
    let mut expected = pipeline.clone();
    expected.condition_3_7_margin = served.condition_3_7_margin;
    expected.receipt_roots = served.receipt_roots.clone();
    expected.builds = served.builds.clone();
    expected.column_means = served.column_means.clone();
    expected.cross_products = served.cross_products.clone();
    if let (Some(e), Some(s)) = (expected.qa.as_mut(), served.qa.as_ref()) {
        e.max_deviation = s.max_deviation;
        e.tolerance = s.tolerance;
    }
    assert_eq!(served, expected);
    // Spelled out for the fields the two copies of the builder used to disagree on.
    assert_eq!(served.cohorts.sizes, vec![12, 12]);
    assert_eq!(served.binary_columns, ["smoker"]);
    assert!(served.obfuscation.is_some());
}
