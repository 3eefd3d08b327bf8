//! Issue 22 §1, natively: a survey of `y`, `age`, `income` and `smoker` whose devices compute
//! the declared terms `age_sq` (`age²`) and `income_x_smoker`, planned as the collector plans
//! it, coded by each device from the answers' text, padded, masked and unmasked through the
//! core's protocol in two cohorts. The release's fit of `y ~ age + age² + income*smoker` equals
//! R's `lm` on the raw answers — R computes `age²` and the interaction itself, from the raw
//! columns only, so it checks the device's terms as well as the masking.
//!
//! The raw answers are fixed (drawn from a seeded ChaCha stream, rounded to decimals that read
//! back exactly) and written to `$CARGO_TARGET_TMPDIR/model_terms_raw.csv` on every run, so R can
//! be run on them again.

use orthomask_core::key::Key;
use orthomask_core::protocol::design::Strictness;
use orthomask_core::protocol::simulation::{PartyKeys, Safety, run_tm2};
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use orthomask_survey::definition::{Question, QuestionKind, Term, TermKind};
use orthomask_survey::draft::{Endpoints, SurveyDraft, hydrate, plan_survey};
use orthomask_survey::tolerance::RELEASE_FIT_AGAINST_R;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// Participants: two cohorts of 60.
const PARTICIPANTS: usize = 120;

fn question(id: &str, kind: QuestionKind) -> Question {
    Question {
        id: id.into(),
        label: format!("{id}?"),
        help: None,
        optional: false,
        show_if: None,
        kind,
    }
}

fn draft() -> SurveyDraft {
    SurveyDraft {
        id: "terms".into(),
        title: "Terms".into(),
        description: None,
        consent: "ok".into(),
        language: "en".into(),
        translations: Default::default(),
        questions: vec![
            question(
                "y",
                QuestionKind::Number {
                    min: -100.0,
                    max: 300.0,
                },
            ),
            question("age", QuestionKind::Integer { min: 18, max: 90 }),
            question(
                "income",
                QuestionKind::Number {
                    min: 0.0,
                    max: 20.0,
                },
            ),
            question("smoker", QuestionKind::YesNo),
        ],
        terms: vec![
            Term {
                id: "age_sq".into(),
                kind: TermKind::Power {
                    of: "age".into(),
                    exponent: 2,
                },
            },
            Term {
                id: "income_x_smoker".into(),
                kind: TermKind::Product {
                    of: ["income".into(), "smoker".into()],
                },
            },
        ],
        cohort_size: Some(60),
        min_cohort_size: None,
        dp: None,
        share_mode: false,
        invitations: true,
        demonstration: false,
    }
}

/// The raw answers as text cells (y, age, income, smoker): a quadratic in age, an income slope
/// that differs for smokers, and right-skewed errors (a sum of two exponentials).
fn raw_answers() -> Vec<[String; 4]> {
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let mut uniform = || -> f64 { (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 };
    (0..PARTICIPANTS)
        .map(|_| {
            let age = 18 + (uniform() * 73.0) as i64;
            let income = (uniform() * 20_000.0).round() / 1000.0;
            let smoker = uniform() < 0.35;
            let skewed = -(1.0 - uniform()).ln() * 6.0 - (1.0 - uniform()).ln() * 2.0;
            let s = f64::from(u8::from(smoker));
            let a = age as f64;
            let y = 5.0 + 0.8 * a - 0.006 * a * a + 1.5 * income + 3.0 * s - 0.9 * income * s
                + skewed
                - 8.0;
            let y = (y * 1000.0).round() / 1000.0;
            [
                y.to_string(),
                age.to_string(),
                income.to_string(),
                (if smoker { "yes" } else { "no" }).to_owned(),
            ]
        })
        .collect()
}

/// R's coefficients, by our name and R's: R 4.2.2 (2022-11-10 r83330) on the CSV this test
/// writes, run in its directory,
///
/// ```text
/// Rscript -e 'd <- read.csv("model_terms_raw.csv");
///   print(coef(lm(y ~ age + I(age^2) + income*smoker, data = d)), digits = 17)'
/// ```
///
/// (printed to 20 digits; written here as the shortest decimals of the same doubles).
const R_COEFFICIENTS: [(&str, &str, f64); 6] = [
    ("(Intercept)", "(Intercept)", 6.289157769168184),
    ("age", "age", 0.728749299665056),
    ("age_sq", "I(age^2)", -0.0053885980249988134),
    ("income", "income", 1.5318031322262287),
    ("smoker", "smoker", 2.3879734924923683),
    ("income_x_smoker", "income:smoker", -0.897493825809252),
];

#[test]
fn the_release_fits_declared_terms_as_r_fits_the_raw_answers() {
    let planned = plan_survey(
        &draft(),
        Endpoints {
            provider: "http://provider",
            right_services: &[],
        },
    )
    .unwrap();
    assert_eq!(planned.plan.masking.p1, 4 + 2 + 1);
    let definition = hydrate(&planned.template, 0, 0, &Key::from_bytes([7; 32]));
    definition.validate().unwrap();

    // Each device codes its participant's answers, terms included.
    let answers = raw_answers();
    let mut csv = String::from("y,age,income,smoker\n");
    let mut records = Vec::new();
    for cells in &answers {
        let read = definition.answers_from_record(cells).unwrap();
        records.extend(definition.encode(&read).unwrap());
        let smoker = u8::from(cells[3] == "yes");
        csv += &format!("{},{},{},{smoker}\n", cells[0], cells[1], cells[2]);
    }
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("model_terms_raw.csv");
    std::fs::write(&path, csv).unwrap();
    let columns: Vec<String> = definition.columns().into_iter().map(|c| c.name).collect();
    assert_eq!(
        columns,
        ["y", "age", "income", "smoker", "age_sq", "income_x_smoker"]
    );
    let raw = nalgebra::DMatrix::from_row_slice(PARTICIPANTS, columns.len(), &records);

    // Pad, mask and unmask as the devices, the provider and the collector do.
    let design = definition.design().unwrap();
    let run = run_tm2(
        &raw,
        &design,
        &PartyKeys::from_entropy([[1; 32], [2; 32], [3; 32]]),
        Some(definition.masking.cohort_size),
        Safety {
            x_max: planned.plan.masking.x_max,
            delta: planned.plan.masking.delta,
            strictness: Strictness::Refuse,
        },
        false,
    )
    .unwrap();
    assert_eq!(run.cohort_sizes, [60, 60]);
    let mut names = columns.clone();
    names.push("QA".into());
    let release = Dataset::new(names, run.release.data.clone()).unwrap();
    // The release is masked: no column of it is the raw one.
    assert_ne!(release.column("age").unwrap(), raw.column(1));

    let fit = LinearRegression::fit(
        &release,
        "y",
        &["age", "age_sq", "income", "smoker", "income_x_smoker"],
        Intercept::Included,
    )
    .unwrap();
    assert_eq!(fit.coefficients().len(), R_COEFFICIENTS.len());
    for (name, in_r, r) in R_COEFFICIENTS {
        let ours = fit.coefficient(name).unwrap().estimate();
        let relative = (ours - r).abs() / r.abs();
        assert!(
            relative < RELEASE_FIT_AGAINST_R,
            "{name} ({in_r} in R): release {ours} against R's {r}, relative {relative:e}"
        );
    }
}
