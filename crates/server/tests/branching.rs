//! Issue 13 §2–3 through the services: a survey with skip logic (`show_if`) and a Spanish
//! translation is created through `POST /api/admin/surveys`, its signed definition keeps both
//! (the signature covers them), invited participants whose answers go through the branches —
//! some questions hidden — prepare their uploads with the participant client the web app runs,
//! and the release gives the regression and the counts of the raw answers coded by `encode`.

mod common;

use common::*;
use nalgebra::DMatrix;
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use orthomask_stats::tolerance::RELEASE_REGRESSION_RELATIVE;
use orthomask_survey::client as device;
use orthomask_survey::coding::Answer;
use orthomask_survey::definition::{Condition, ConditionValue, ShowIf};
use orthomask_survey::trust::{DefinitionOffer, Deployment, TrustError};
use orthomask_survey::upload::Receipt;
use serde_json::{Value, json};

/// Cohorts of 12 (p₁ = 10: nine answer columns and QA); 24 participants fill two.
const COHORT: usize = 12;
const PARTICIPANTS: u64 = 24;

/// smokes; cigarettes only for smokers; age; stress; relax only under stress 4–5; drinks; score.
fn branching_draft() -> Value {
    json!({
        "id": "habits",
        "title": "Habits (test)",
        "description": "Skip logic and Spanish.",
        "consent": "Test consent.",
        "language": "en",
        "translations": {
            "es": {
                "title": "Hábitos (prueba)",
                "description": "Preguntas condicionales y español.",
                "consent": "Consentimiento de prueba.",
                "questions": {
                    "smokes": {"label": "¿Fuma?"},
                    "cigarettes": {"label": "Cigarrillos al día"},
                    "age": {"label": "Edad"},
                    "stress": {"label": "Estrés", "low_label": "nada", "high_label": "mucho"},
                    "relax": {"label": "¿Cómo se relaja?", "options": ["Leyendo", "Deporte", "Música"]},
                    "score": {"label": "Puntuación de bienestar"}
                }
            }
        },
        "questions": [
            {"id": "smokes", "label": "Do you smoke?", "kind": "yes_no"},
            {"id": "cigarettes", "label": "Cigarettes a day", "kind": "integer", "min": 1, "max": 60,
             "show_if": {"question": "smokes", "equals": "yes"}},
            {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90},
            {"id": "stress", "label": "Stress", "kind": "likert", "points": 5,
             "low_label": "none", "high_label": "a lot"},
            {"id": "relax", "label": "How do you relax?", "kind": "categorical",
             "options": ["Reading", "Sport", "Music"],
             "show_if": {"question": "stress", "range": {"min": 4, "max": 5}}},
            {"id": "score", "label": "Wellbeing score", "kind": "number", "min": 0, "max": 100}
        ],
        "cohort_size": COHORT,
        "invitations": true
    })
}

/// Participant `i`'s answers, through the branches: hidden questions are skipped.
fn branching_answers(i: u64) -> Vec<Answer> {
    let mut g = Xorshift::new(13_000 + i);
    let smokes = g.uniform() < 0.4;
    let cigarettes = 1 + (g.uniform() * 30.0) as i64;
    let age = 18 + (g.uniform() * 72.0) as i64;
    let stress = 1 + (g.uniform() * 5.0) as u8;
    let relax = (g.uniform() * 3.0) as usize;
    let score = (70.0
        - 0.3 * age as f64
        - 0.5 * cigarettes as f64 * f64::from(u8::from(smokes))
        - 4.0 * f64::from(stress)
        + 10.0 * g.uniform())
    .clamp(0.0, 100.0);
    vec![
        Answer::YesNo(smokes),
        if smokes {
            Answer::Integer(cigarettes)
        } else {
            Answer::Skipped
        },
        Answer::Integer(age),
        Answer::Likert(stress),
        if stress >= 4 {
            Answer::Category(relax)
        } else {
            Answer::Skipped
        },
        Answer::Number(score),
    ]
}

/// `score ~ age + stress + cigarettes + cigarettes_answered` (the smokers' slope on cigarettes,
/// the answered indicator absorbing the neutral value of the hidden ones).
fn fit(names: Vec<String>, values: DMatrix<f64>) -> LinearRegression {
    let data = Dataset::new(names, values).expect("dataset");
    LinearRegression::fit(
        &data,
        "score",
        &["age", "stress", "cigarettes", "cigarettes_answered"],
        Intercept::Included,
    )
    .expect("fit")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branching_bilingual_survey_releases_the_raw_regression_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let all = start(dir.path(), 0, None).await;
    let http = client();
    let created = create_survey(&http, &all, &branching_draft()).await;
    assert_eq!(created["p1"], 10);
    let invited = links(&http, &all, &created, PARTICIPANTS as usize).await;

    // The definition the collector serves keeps the translation and the conditions, signed.
    let (def, _) = load(&http, &invited[0]).await;
    assert_eq!(def.languages(), ["en", "es"]);
    assert_eq!(def.texts("es").title, "Hábitos (prueba)");
    assert_eq!(
        def.texts("es").questions[4].options,
        ["Leyendo", "Deporte", "Música"]
    );
    assert_eq!(
        def.questions[1].show_if,
        Some(ShowIf {
            question: "smokes".into(),
            condition: Condition::Equals(ConditionValue::Text("yes".into())),
        })
    );
    assert_eq!(
        def.condition_text(4).as_deref(),
        Some("shown when stress is from 4 to 5")
    );
    // The signature covers them: a definition whose condition or translation was changed on
    // the way is refused by the device.
    let (status, text) = take_place(&http, &invited[1]).await;
    assert_eq!(status, 200, "{text}");
    let offer: DefinitionOffer = serde_json::from_str(&text).unwrap();
    let (_, deployment) = get_text(&http, &format!("{}/api/deployment", all.collector.url())).await;
    let deployment: Deployment = serde_json::from_str(&deployment).unwrap();
    for (from, to) in [
        ("\"equals\": \"yes\"", "\"equals\": \"no\""),
        ("Hábitos (prueba)", "Hábitos (otra)"),
    ] {
        assert!(offer.signed.definition.contains(from), "{from}");
        let mut forged = offer.clone();
        forged.signed.definition = forged.signed.definition.replace(from, to);
        assert!(matches!(
            deployment.accept(&forged, "forged"),
            Err(TrustError::DefinitionSignature { .. })
        ));
    }
    assert!(deployment.accept(&offer, "genuine").is_ok());

    // Participants answer through the branches; the device refuses an answer to a question
    // an earlier answer hides, in the participant's words.
    let mut hidden = branching_answers(0);
    hidden[0] = Answer::YesNo(false);
    hidden[1] = Answer::Integer(5);
    let e = device::Client::new(&def)
        .unwrap()
        .prepare(&hidden, &token(999), &orthomask_core::key::Key::teaching(1))
        .unwrap_err();
    assert!(
        e.to_string().contains("not asked after the earlier answer"),
        "{e}"
    );

    let mut raw = Vec::new();
    let mut tasks = Vec::new();
    for (i, link) in (0..PARTICIPANTS).zip(&invited) {
        let (http, url) = (http.clone(), link.clone());
        tasks.push(tokio::spawn(async move {
            let answers = branching_answers(i);
            let (def, uploads) = prepare(&http, &url, i, &answers).await;
            for (url, upload) in uploads {
                let (status, body) = post_upload(&http, &url, &upload).await;
                assert!(status == 201 || status == 200, "{status} {body}");
                let receipt: Receipt = serde_json::from_value(body).unwrap();
                device::verify_receipt(&upload, &receipt).unwrap();
            }
            (answers, def.encode(&branching_answers(i)).unwrap())
        }));
    }
    let mut hidden_count = [0usize; 2];
    for t in tasks {
        let (answers, record) = t.await.unwrap();
        hidden_count[0] += usize::from(answers[1] == Answer::Skipped);
        hidden_count[1] += usize::from(answers[4] == Answer::Skipped);
        raw.push(record);
    }
    // Both branches of both conditions occur.
    for h in hidden_count {
        assert!(h > 0 && h < PARTICIPANTS as usize, "{hidden_count:?}");
    }

    let (status, view) = admin_post(&http, &all, "/api/admin/surveys/habits/close").await;
    assert_eq!(status, 200, "{view}");
    let (csv, manifest) = wait_for_release(&http, all.collector.url(), "habits", 60).await;
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["n"], PARTICIPANTS);
    assert_eq!(manifest["qa"]["passed"], true);
    // The conditional questions' answered columns are binary columns, as optional ones are.
    let names: Vec<String> = def.columns().into_iter().map(|c| c.name).collect();
    assert_eq!(
        manifest["binary_columns"],
        json!(def.binary_columns()),
        "{manifest}"
    );
    assert!(def.binary_columns().contains(&"relax_answered".to_owned()));

    let table = orthomask_formats::csv::parse_table(csv.as_bytes(), "release.csv").unwrap();
    assert_eq!(table.headers()[..names.len()], names[..]);
    let n = raw.len();
    let raw_matrix = DMatrix::from_fn(n, names.len(), |i, j| raw[i][j]);
    let released = fit(table.headers().to_vec(), table.data().clone());
    let truth = fit(names.clone(), raw_matrix);
    for (a, b) in truth.coefficients().iter().zip(released.coefficients()) {
        assert_eq!(a.name(), b.name());
        for (x, y) in [(a.estimate(), b.estimate()), (a.std_error(), b.std_error())] {
            assert!(
                relative(x, y) < RELEASE_REGRESSION_RELATIVE,
                "{}: {x} vs {y}",
                a.name()
            );
        }
    }
    assert!(relative(truth.r_squared(), released.r_squared()) < RELEASE_REGRESSION_RELATIVE);
    // Counts of every 0/1 column (the column sums, preserved by the left masks' 1ₙ): the
    // smokers, the answered indicators — hidden questions counted as unanswered — and the
    // relaxation options.
    for name in def.binary_columns() {
        let j = names.iter().position(|c| *c == name).unwrap();
        let raw_count: f64 = raw.iter().map(|r| r[j]).sum();
        let released_count: f64 = table.data().column(j).sum();
        assert!(
            (released_count - raw_count).abs() < RELEASE_REGRESSION_RELATIVE * n as f64,
            "{name}: {released_count} vs {raw_count}"
        );
    }
    let answered = |q: usize| raw.len() - hidden_count[q];
    let count = |name: &str| {
        let j = names.iter().position(|c| c == name).unwrap();
        raw.iter().map(|r| r[j]).sum::<f64>().round() as usize
    };
    assert_eq!(count("cigarettes_answered"), answered(0));
    assert_eq!(count("relax_answered"), answered(1));
    all.stop().await;
}
