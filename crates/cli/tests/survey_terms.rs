//! `orthomask survey` with model terms (issue 22 §1): `survey check` lists each term with its
//! formula and derived range, and `survey code` writes the terms' columns after the answers',
//! computed as a device computes them (0 when an input was left unanswered); a definition whose
//! term names no answer is refused in one line.

mod common;

use common::{failure, json, ok, orthomask, read};
use orthomask_survey::tolerance::HAND_COMPUTED;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The bundled wellbeing survey (smoker yes/no, drinks 0–100 optional, sleep 0–24, mood
/// Likert 5 optional, work categorical optional) with three terms.
fn with_terms(dir: &Path, terms: serde_json::Value) -> PathBuf {
    let bundled =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../www/surveys/wellbeing-optional.json");
    let mut definition: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundled).unwrap()).unwrap();
    definition["terms"] = terms;
    let path = dir.join("terms.json");
    std::fs::write(&path, serde_json::to_string_pretty(&definition).unwrap()).unwrap();
    path
}

fn three_terms() -> serde_json::Value {
    json!([
        {"id": "sleep_sq", "kind": "power", "of": "sleep", "exponent": 2},
        {"id": "sleep_x_smoker", "kind": "product", "of": ["sleep", "smoker"]},
        {"id": "log1p_drinks", "kind": "log1p", "of": "drinks"}
    ])
}

/// By hand: sleep 7.5 → sleep² 56.25, 7.5 × smoker yes → 7.5, log1p(0 drinks) = 0; a second
/// participant who skipped drinks gets log1p_drinks 0 (not log1p of the midpoint 50) and
/// sleep 6 × no → 0. Ranges: sleep² over [0, 24] is [0, 576], sleep·smoker over [0, 24]×[0, 1]
/// is [0, 24], log1p over [0, 100] is [0, ln 101].
#[test]
fn survey_code_writes_the_terms_columns_after_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    let survey = with_terms(dir.path(), three_terms());
    let checked = json(&["survey", "check", "--json", survey.to_str().unwrap()]);
    let terms = checked["terms"].as_array().unwrap();
    let by_hand = [
        ("sleep_sq", "sleep^2", 0.0, 576.0),
        ("sleep_x_smoker", "sleep*smoker", 0.0, 24.0),
        ("log1p_drinks", "log1p(drinks)", 0.0, 101f64.ln()),
    ];
    assert_eq!(terms.len(), by_hand.len());
    for (term, (id, formula, lo, hi)) in terms.iter().zip(by_hand) {
        assert_eq!(
            (term["id"].as_str(), term["formula"].as_str()),
            (Some(id), Some(formula))
        );
        let range = [
            term["range"][0].as_f64().unwrap(),
            term["range"][1].as_f64().unwrap(),
        ];
        assert!((range[0] - lo).abs() < HAND_COMPUTED && (range[1] - hi).abs() < HAND_COMPUTED);
    }
    let text = ok(&orthomask(&["survey", "check", survey.to_str().unwrap()]));
    assert!(
        text.contains("  sleep_sq = sleep^2, range [0, 576]"),
        "{text}"
    );

    let answers = dir.path().join("answers.csv");
    std::fs::write(
        &answers,
        "smoker,drinks,sleep,mood,work\nyes,0,7.5,4,student\nno,,6,,\n",
    )
    .unwrap();
    let coded = dir.path().join("coded.csv");
    ok(&orthomask(&[
        "survey",
        "code",
        "--survey",
        survey.to_str().unwrap(),
        "--answers",
        answers.to_str().unwrap(),
        "--out",
        coded.to_str().unwrap(),
    ]));
    let (names, data) = read(&coded);
    let n = names.len();
    assert_eq!(
        names[n - 3..],
        ["sleep_sq", "sleep_x_smoker", "log1p_drinks"]
    );
    assert_eq!(checked["columns"].as_array().unwrap().len(), n);
    let expected = [[56.25, 7.5, 0.0], [36.0, 0.0, 0.0]];
    for (row, want) in expected.iter().enumerate() {
        for (j, w) in want.iter().enumerate() {
            let got = data[(row, n - 3 + j)];
            assert!(
                (got - w).abs() < HAND_COMPUTED,
                "row {row} {}: {got}",
                names[n - 3 + j]
            );
        }
    }
}

#[test]
fn a_term_naming_no_answer_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let survey = with_terms(
        dir.path(),
        json!([{"id": "t", "kind": "log", "of": "weight"}]),
    );
    let e = failure(&orthomask(&["survey", "check", survey.to_str().unwrap()]));
    assert!(
        e.contains("terms[0].of: no answer column \"weight\"") && e.trim().lines().count() == 1,
        "{e}"
    );
}
