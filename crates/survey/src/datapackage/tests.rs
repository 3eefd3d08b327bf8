//! The builder on a hand-written definition: every field's title, codebook, range and role
//! against what the definition says, and the factors' indicators checked on records whose
//! answers are known — raw and masked, the counts by hand.

use super::*;
use crate::coding::Answer;
use crate::manifest::{Provenance, Released};
use crate::plan::{CohortBounds, Plan, PlanRequest};
use crate::tolerance::HAND_COMPUTED;
use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::mask::{FixedSubspaceHaar, Mask};
use orthomask_core::tolerance::PRESERVED_STATISTICS;
use orthomask_formats::manifest::{Cohorts, DpNoise};

/// Smoking (yes/no, optional), how often one exercises (categorical, the reference "Never"
/// shown only to non-smokers), a 3-point Likert item, an age and the term `age_sq`.
const DEFINITION: &str = r#"{
  "id": "habits_2026",
  "title": "Habits",
  "consent": "Test.",
  "questions": [
    {"id": "smoker", "label": "Do you smoke?", "kind": "yes_no", "optional": true},
    {"id": "exercise", "label": "How often do you exercise?", "help": "Any sport counts.",
     "kind": "categorical", "options": ["Never", "Sometimes", "Often"],
     "show_if": {"question": "smoker", "equals": "no"}},
    {"id": "mood", "label": "How is your mood?", "kind": "likert", "points": 3,
     "low_label": "Bad", "high_label": "Good"},
    {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90}
  ],
  "terms": [{"id": "age_sq", "kind": "power", "of": "age", "exponent": 2}],
  "masking": {"p2": 503, "sigma": 938.36, "qa_constant": 888, "cohort": 0, "cohort_size": 20,
    "right_mask_key": "af76cd417516aca78d8e7e06ee1c77a34b41d4b4ab2cf4fc550ed00c82b4d062",
    "teaching": true},
  "upload_url": "http://127.0.0.1:8081/api/surveys/habits_2026/uploads"
}"#;

fn definition() -> SurveyDefinition {
    SurveyDefinition::parse(DEFINITION, "habits.json").unwrap()
}

/// Eight participants: (smoker, exercise option, mood, age); `None` a skip, exercise hidden
/// for smokers and for those who skipped smoking.
fn answers() -> Vec<Vec<Answer>> {
    use Answer::*;
    let row = |s: Option<bool>, e: Option<usize>, m: u8, a: i64| {
        vec![
            s.map_or(Skipped, YesNo),
            e.map_or(Skipped, Category),
            Likert(m),
            Integer(a),
        ]
    };
    vec![
        row(Some(false), Some(0), 1, 20),
        row(Some(false), Some(1), 2, 30),
        row(Some(false), Some(2), 3, 40),
        row(Some(false), Some(2), 3, 50),
        row(Some(true), None, 2, 60),
        row(Some(true), None, 1, 70),
        row(None, None, 3, 80),
        row(Some(false), Some(1), 2, 25),
    ]
}

/// The coded records with the QA column, as the collector releases them (before `A`).
fn coded(def: &SurveyDefinition) -> (Vec<String>, DMatrix<f64>) {
    let rows: Vec<Vec<f64>> = answers()
        .iter()
        .map(|a| {
            let mut r = def.encode(a).unwrap();
            r.push(888.0);
            r
        })
        .collect();
    let mut names: Vec<String> = def.columns().into_iter().map(|c| c.name).collect();
    names.push("QA".to_owned());
    let data = DMatrix::from_fn(rows.len(), names.len(), |i, j| rows[i][j]);
    (names, data)
}

fn manifest_of(names: &[String], data: &DMatrix<f64>) -> Manifest {
    let cohorts = CohortBounds {
        smallest: 20,
        largest: 20,
    };
    let plan = Plan::new(&PlanRequest::new(
        names.len() - 1,
        Some(888.0),
        cohorts,
        888.0,
    ))
    .unwrap();
    crate::manifest::build(
        &plan,
        &Released {
            columns: names,
            data,
            qa: &[],
            decimals: None,
        },
        Provenance::modified(
            Cohorts {
                size: Some(20),
                sizes: vec![data.nrows()],
            },
            vec!["smoker".to_owned()],
        ),
    )
}

fn package() -> (DataPackage, Vec<String>, DMatrix<f64>) {
    let def = definition();
    let (names, data) = coded(&def);
    let manifest = manifest_of(&names, &data);
    let package = build(&Sources {
        manifest: &manifest,
        definition: Some(&def),
        declared_ranges: &[],
    });
    (package, names, data)
}

fn field<'a>(p: &'a DataPackage, name: &str) -> &'a Field {
    p.resources[0]
        .schema
        .as_ref()
        .unwrap()
        .fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no field {name}"))
}

fn labels(codebook: &[Category]) -> Vec<(i64, &str)> {
    codebook
        .iter()
        .map(|c| (c.value, c.label.as_str()))
        .collect()
}

#[test]
fn fields_carry_the_definitions_titles_codebooks_ranges_and_roles() {
    let (p, names, _) = package();
    assert_eq!(p.name, "habits-2026", "a package name has no underscore");
    assert_eq!(p.title.as_deref(), Some("Habits"));
    let fields = &p.resources[0].schema.as_ref().unwrap().fields;
    let listed: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        listed,
        [
            "smoker",
            "smoker_answered",
            "exercise=Sometimes",
            "exercise=Often",
            "exercise_answered",
            "mood",
            "age",
            "age_sq",
            "QA"
        ]
    );
    assert_eq!(listed, names);
    let smoker = field(&p, "smoker");
    assert_eq!(smoker.title.as_deref(), Some("Do you smoke?"));
    assert_eq!(labels(&smoker.codebook), [(1, "yes"), (0, "no")]);
    assert_eq!(smoker.role, Role::Masked);
    // A masked column's values are not codes, nor within the raw range: the descriptor claims
    // neither (frictionless would check both against release.csv).
    assert!(fields.iter().all(|f| f.kind == "number"));
    let json = p.to_json();
    assert!(!json.contains("\"categories\"") && !json.contains("\"constraints\""));
    let often = field(&p, "exercise=Often");
    assert_eq!(
        often.title.as_deref(),
        Some("How often do you exercise?: Often")
    );
    assert!(often.description.starts_with("Any sport counts."));
    assert_eq!(often.source.as_deref(), Some("exercise"));
    let mood = field(&p, "mood");
    assert_eq!(labels(&mood.codebook), [(1, "Bad"), (2, "2"), (3, "Good")]);
    let range = |name: &str| {
        let r = field(&p, name).declared_range.clone().unwrap();
        (r.minimum, r.maximum, r.source)
    };
    assert_eq!(range("mood"), (1.0, 3.0, "declared".to_owned()));
    assert_eq!(range("age"), (18.0, 90.0, "declared".to_owned()));
    assert_eq!(range("age_sq"), (324.0, 8100.0, "derived".to_owned()));
    assert_eq!(field(&p, "age_sq").title.as_deref(), Some("age^2"));
    let qa = field(&p, "QA");
    assert_eq!(qa.role, Role::Qa);
    assert!(qa.description.contains("888"), "{}", qa.description);
    assert_eq!(
        labels(&field(&p, "exercise_answered").codebook),
        [(1, "answered"), (0, NO_ANSWER)]
    );
    // The manifest is the second resource; the package round-trips through its JSON.
    assert_eq!(p.resources[1].path, MANIFEST_PATH);
    assert_eq!(DataPackage::parse(&p.to_json(), "p.json").unwrap(), p);
    assert_eq!(
        DataPackage::parse_factors(&p.to_json(), "p.json").unwrap(),
        p.factors()
    );
}

/// The levels' indicators, evaluated on the raw coded records, are 1 exactly at the level each
/// participant chose (known from `answers()`), and on the masked release their cross-products
/// are the counts of the hand-made table.
#[test]
fn factor_indicators_partition_the_records_raw_and_masked() {
    let (p, names, raw) = package();
    let factors = p.factors();
    let by_name = |n: &str| factors.iter().find(|f| f.name == n).unwrap();
    let levels = |f: &Factor| f.levels.iter().map(|l| l.label.clone()).collect::<Vec<_>>();
    assert_eq!(levels(by_name("smoker")), ["yes", "no", NO_ANSWER]);
    assert_eq!(
        levels(by_name("exercise")),
        ["Never", "Sometimes", "Often", NO_ANSWER]
    );
    // A Likert item and a required integer get no factor (module documentation).
    assert_eq!(
        factors.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        ["smoker", "exercise"]
    );
    let evaluate = |data: &DMatrix<f64>, indicator: &Indicator| {
        let columns: Vec<Vec<f64>> = data
            .column_iter()
            .map(|c| c.iter().copied().collect())
            .collect();
        indicator
            .evaluate(data.nrows(), |name| {
                names
                    .iter()
                    .position(|n| n == name)
                    .map(|j| columns[j].as_slice())
            })
            .unwrap()
    };
    // By hand from answers(): the level index of each participant.
    let chosen_smoker = [1, 1, 1, 1, 0, 0, 2, 1];
    let chosen_exercise = [0, 1, 2, 2, 3, 3, 3, 1];
    for (factor, chosen) in [("smoker", chosen_smoker), ("exercise", chosen_exercise)] {
        for (k, level) in by_name(factor).levels.iter().enumerate() {
            let z = evaluate(&raw, &level.indicator);
            for (i, v) in z.iter().enumerate() {
                let want = if chosen[i] == k { 1.0 } else { 0.0 };
                assert!(
                    (v - want).abs() < HAND_COMPUTED,
                    "{factor} {} row {i}",
                    level.label
                );
            }
        }
    }
    // Masked: A·X with A Haar fixing 1ₙ. Smoker × exercise by hand: the four non-smokers who
    // saw the question (Never 1, Sometimes 2, Often 2 — five), the two smokers and the one who
    // skipped in "no answer".
    let mut masked = raw.clone();
    FixedSubspaceHaar::keyed(
        &DMatrix::from_element(masked.nrows(), 1, 1.0),
        Key::teaching(29).stream(StreamId::CollectorLeftMask),
    )
    .unwrap()
    .left_apply(&mut masked)
    .unwrap();
    let smoker_column = names.iter().position(|n| n == "smoker").unwrap();
    assert!(
        masked
            .column(smoker_column)
            .iter()
            .any(|v| (v - v.round()).abs() > 0.01)
    );
    let want = [
        [0.0, 0.0, 0.0, 2.0],
        [1.0, 2.0, 2.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    for (a, row) in by_name("smoker").levels.iter().enumerate() {
        let z = evaluate(&masked, &row.indicator);
        for (b, column) in by_name("exercise").levels.iter().enumerate() {
            let w = evaluate(&masked, &column.indicator);
            let count: f64 = z.iter().zip(&w).map(|(x, y)| x * y).sum();
            assert!(
                (count - want[a][b]).abs() < PRESERVED_STATISTICS * raw.nrows() as f64 * 888.0,
                "{} × {}: {count}",
                row.label,
                column.label
            );
        }
    }
}

/// Where the release's cross-products are not counts, no factor is offered; without a
/// definition a column's role, declared range and observed 0/1 codebook are what is known.
#[test]
fn factors_only_where_counts_are_exact_and_what_a_csv_tells() {
    let def = definition();
    let (names, data) = coded(&def);
    let mut manifest = manifest_of(&names, &data);
    manifest.dp = Some(DpNoise {
        epsilon: 1.0,
        delta: 1e-6,
        sigma: 0.5,
        smallest_cohort: 20,
        columns: Vec::new(),
        guarantee: None,
    });
    let noisy = build(&Sources {
        manifest: &manifest,
        definition: Some(&def),
        declared_ranges: &[],
    });
    assert!(noisy.factors().is_empty());
    assert!(
        noisy.resources[0]
            .description
            .contains("differential-privacy")
    );
    manifest.dp = None;
    manifest.method = Method::Second;
    let second = build(&Sources {
        manifest: &manifest,
        definition: Some(&def),
        declared_ranges: &[],
    });
    assert!(second.factors().is_empty());
    assert_eq!(field(&second, "age").role, Role::RightMasked);
    // Without a definition (`orthomask pipeline`): a kept 0/1 column and a declared range.
    manifest.method = Method::Modified;
    manifest.kept_columns = vec!["smoker".to_owned()];
    let declared = [DeclaredRange {
        name: "smoker".to_owned(),
        lo: 0.0,
        hi: 1.0,
    }];
    let cli = build(&Sources {
        manifest: &manifest,
        definition: None,
        declared_ranges: &declared,
    });
    assert_eq!(cli.name, "release");
    let smoker = field(&cli, "smoker");
    assert_eq!(smoker.role, Role::Kept);
    assert_eq!(smoker.title, None);
    let range = smoker.declared_range.clone().unwrap();
    assert_eq!((range.minimum, range.maximum), (0.0, 1.0));
    assert_eq!(labels(&smoker.codebook), [(1, "1"), (0, "0")]);
    assert_eq!(field(&cli, "age").declared_range, None);
    assert_eq!(field(&cli, "QA").role, Role::Qa);
    let levels: Vec<&str> = cli.factors()[0]
        .levels
        .iter()
        .map(|l| l.label.as_str())
        .collect();
    assert_eq!(
        (cli.factors()[0].name.as_str(), levels),
        ("smoker", vec!["1", "0"])
    );
}
