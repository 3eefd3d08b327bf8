//! Issue 29 §2 through the real services: a survey with an optional yes/no question, a
//! conditional categorical one ("Never/Sometimes/Often"), a Likert item and an age is answered by
//! twelve participants through the participant client; the collector's `datapackage.json` names
//! every released column with the definition's title, codebook, range and role, and the table of
//! two labelled factors computed from the released columns alone equals the table of the answers
//! the participants gave, counted here from the answers themselves.
//!
//! The files are left in `$CARGO_TARGET_TMPDIR/datapackage-services/` (release.csv,
//! manifest.json, datapackage.json, definition.json and raw.csv, the answers as given) for the
//! independent checks `scripts/check_datapackage.py` runs on them afterwards: `frictionless
//! validate`, and the labelled table in pandas and in R (`scripts/check_datapackage.R`).

mod common;

use common::*;
use orthomask_core::tolerance::PRESERVED_STATISTICS;
use orthomask_formats::csv::parse_table;
use orthomask_survey::coding::Answer;
use orthomask_survey::datapackage::{DataPackage, NO_ANSWER, Role};
use orthomask_survey::definition::SurveyDefinition;
use serde_json::json;
use std::collections::BTreeMap;

const OPTIONS: [&str; 3] = ["Never", "Sometimes", "Often"];

/// Twelve participants: (smoker: Some(yes) or skipped, exercise option when shown — to
/// non-smokers only —, mood 1–3, age).
fn answers() -> Vec<(Option<bool>, Option<usize>, u8, i64)> {
    vec![
        (Some(false), Some(0), 1, 21),
        (Some(false), Some(1), 2, 34),
        (Some(false), Some(2), 3, 45),
        (Some(false), Some(2), 2, 52),
        (Some(false), Some(1), 3, 29),
        (Some(false), Some(0), 1, 67),
        (Some(false), Some(2), 3, 38),
        (Some(true), None, 1, 58),
        (Some(true), None, 2, 44),
        (Some(true), None, 3, 71),
        (None, None, 2, 26),
        (Some(false), Some(1), 1, 80),
    ]
}

fn as_answers(row: &(Option<bool>, Option<usize>, u8, i64)) -> Vec<Answer> {
    vec![
        row.0.map_or(Answer::Skipped, Answer::YesNo),
        row.1.map_or(Answer::Skipped, Answer::Category),
        Answer::Likert(row.2),
        Answer::Integer(row.3),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_collectors_data_package_labels_a_real_release() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let draft = json!({
        "id": "habits",
        "title": "Habits (test)",
        "consent": "Test consent.",
        "questions": [
            {"id": "smoker", "label": "Do you smoke?", "kind": "yes_no", "optional": true},
            {"id": "exercise", "label": "How often do you exercise?", "kind": "categorical",
             "options": OPTIONS, "show_if": {"question": "smoker", "equals": "no"}},
            {"id": "mood", "label": "How is your mood?", "kind": "likert", "points": 3,
             "low_label": "Bad", "high_label": "Good"},
            {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90}
        ],
        "cohort_size": 12,
        "invitations": true
    });
    let created = create_survey(&http, &all, &draft).await;
    let mut definition: Option<SurveyDefinition> = None;
    for (i, (link, row)) in links(&http, &all, &created, 12)
        .await
        .iter()
        .zip(answers())
        .enumerate()
    {
        let (def, uploads) = prepare(&http, link, i as u64, &as_answers(&row)).await;
        for (url, upload) in uploads {
            let (status, body) = post_upload(&http, &url, &upload).await;
            assert_eq!(status, 201, "{body}");
        }
        definition = Some(def);
    }
    let definition = definition.unwrap();
    let (status, view) = admin_post(&http, &all, "/api/admin/surveys/habits/close").await;
    assert_eq!(status, 200, "{view}");
    let base = all.collector.url();
    let (release, manifest) = wait_for_release(&http, base, "habits", 60).await;
    // The survey team's status names the package beside the release and the manifest.
    let view = admin_view(&http, &all, "habits").await;
    let url = view["datapackage_url"]
        .as_str()
        .expect("datapackage_url once released");
    assert_eq!(url, format!("{base}/api/surveys/habits/datapackage.json"));
    let (status, text) = get_text(&http, url).await;
    assert_eq!(status, 200, "{text}");
    let package = DataPackage::parse(&text, "datapackage.json").unwrap();
    // Not released yet, or no such survey: 404 with one line.
    let (status, _) = get_text(&http, &format!("{base}/api/surveys/nope/datapackage.json")).await;
    assert_eq!(status, 404);
    all.stop().await;

    // Every column of the release, in order, with the definition's words.
    let table = parse_table(release.as_bytes(), "release.csv").unwrap();
    let fields = &package.resources[0].schema.as_ref().unwrap().fields;
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, table.headers());
    let field = |name: &str| fields.iter().find(|f| f.name == name).unwrap();
    assert_eq!(field("smoker").title.as_deref(), Some("Do you smoke?"));
    assert_eq!(
        field("exercise=Often").title.as_deref(),
        Some("How often do you exercise?: Often")
    );
    let mood: Vec<&str> = field("mood")
        .codebook
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(mood, ["Bad", "2", "Good"]);
    let age = field("age").declared_range.clone().unwrap();
    assert_eq!((age.minimum, age.maximum), (18.0, 90.0));
    assert_eq!(field("QA").role, Role::Qa);
    assert!(
        fields
            .iter()
            .filter(|f| f.name != "QA")
            .all(|f| f.role == Role::Masked)
    );
    // The masked columns are not codes: the released smoker column holds other numbers.
    let smoker = table.column_index("smoker").unwrap();
    assert!(
        table
            .data()
            .column(smoker)
            .iter()
            .any(|v| *v != 0.0 && *v != 1.0)
    );

    // The labelled table from the released columns alone …
    let column = |name: &str| -> Option<Vec<f64>> {
        let j = table.column_index(name).ok()?;
        Some(table.data().column(j).iter().copied().collect())
    };
    let cache: BTreeMap<String, Vec<f64>> = table
        .headers()
        .iter()
        .map(|h| (h.clone(), column(h).unwrap()))
        .collect();
    let factor = |name: &str| {
        package
            .factors()
            .iter()
            .find(|f| f.name == name)
            .unwrap()
            .clone()
    };
    let (rows, columns) = (factor("smoker"), factor("exercise"));
    let levels = |f: &orthomask_survey::datapackage::Factor| {
        f.levels.iter().map(|l| l.label.clone()).collect::<Vec<_>>()
    };
    assert_eq!(levels(&rows), ["yes", "no", NO_ANSWER]);
    assert_eq!(levels(&columns), ["Never", "Sometimes", "Often", NO_ANSWER]);
    let n = table.data().nrows();
    let indicator = |l: &orthomask_survey::datapackage::Level| {
        l.indicator
            .evaluate(n, |c| cache.get(c).map(Vec::as_slice))
            .unwrap()
    };
    // … equals the answers counted.
    for row in &rows.levels {
        for col in &columns.levels {
            let released: f64 = indicator(row)
                .iter()
                .zip(indicator(col))
                .map(|(a, b)| a * b)
                .sum();
            let counted = answers()
                .iter()
                .filter(|(s, e, ..)| {
                    let s = match s {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => NO_ANSWER,
                    };
                    let e = e.map_or(NO_ANSWER, |k| OPTIONS[k]);
                    (s, e) == (row.label.as_str(), col.label.as_str())
                })
                .count();
            assert!(
                (released - counted as f64).abs() < PRESERVED_STATISTICS * n as f64,
                "{} × {}: release {released}, answers {counted}",
                row.label,
                col.label
            );
        }
    }

    // For the Python and R checks.
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("datapackage-services");
    std::fs::create_dir_all(&out).unwrap();
    let mut raw = String::from("smoker,exercise,mood,age\n");
    for (s, e, m, a) in answers() {
        let s = s.map_or("", |s| if s { "yes" } else { "no" });
        let e = e.map_or("", |k| OPTIONS[k]);
        raw.push_str(&format!("{s},{e},{m},{a}\n"));
    }
    for (name, text) in [
        ("release.csv", release),
        ("manifest.json", manifest),
        ("datapackage.json", text),
        // What every participant of the cohort loaded (a definition `survey code` reads).
        ("definition.json", definition.to_json()),
        ("raw.csv", raw),
    ] {
        std::fs::write(out.join(name), text).unwrap();
    }
}
