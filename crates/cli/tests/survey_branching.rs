//! `orthomask survey`: a branching survey's answers coded into its columns, masked by the
//! pipeline and analysed — the release gives the raw coded data's regression and counts — and
//! every bad table of answers refused in one line naming the file, row, column and reason.

mod common;

use common::{failure, json, ok, orthomask, pipeline, read};
use orthomask_core::tolerance::PRESERVED_STATISTICS;
use orthomask_stats::tolerance::relative_difference as relative;
use orthomask_survey::coding::Answer;
use orthomask_survey::definition::{QuestionKind, SurveyDefinition};
use orthomask_survey::simulate::simulated_answers;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use std::path::{Path, PathBuf};

/// Regression estimates, standard errors, t, p and intervals on a release agree with the raw
/// data's to this relative error: XᵀX is preserved to PRESERVED_STATISTICS and solving the normal
/// equations amplifies that by the design's condition number (dummies and answered indicators of
/// 60 participants: below 10³). The same allowance as `tests/analysis.rs`.
const REGRESSION_AGREEMENT: f64 = PRESERVED_STATISTICS * 1000.0;

/// χ² and p-values of tables whose counts round to the same integers agree to this.
const COUNTS_AGREEMENT: f64 = 1e-9;

/// Participants in the generated table.
const PARTICIPANTS: u64 = 60;

fn habits_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../www/surveys/habits-branching.json")
}

/// `orthomask survey code` of the bundled branching survey on `answers`, to `out` or stdout.
fn code_habits(answers: &Path, out: Option<&Path>) -> std::process::Output {
    let (survey, answers) = (habits_path(), answers.to_path_buf());
    let mut args = vec![
        "survey".to_owned(),
        "code".to_owned(),
        "--survey".to_owned(),
        survey.display().to_string(),
        "--answers".to_owned(),
        answers.display().to_string(),
    ];
    if let Some(out) = out {
        args.extend(["--out".to_owned(), out.display().to_string()]);
    }
    orthomask(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn habits() -> SurveyDefinition {
    SurveyDefinition::parse(
        &std::fs::read_to_string(habits_path()).unwrap(),
        "habits-branching.json",
    )
    .unwrap()
}

/// What a form holds for an answer, categorical options by their main-language text.
fn cell(survey: &SurveyDefinition, question: usize, answer: &Answer) -> String {
    match (answer, &survey.questions[question].kind) {
        (Answer::Skipped, _) => String::new(),
        (Answer::YesNo(yes), _) => (if *yes { "yes" } else { "no" }).to_owned(),
        (Answer::Integer(v), _) => v.to_string(),
        (Answer::Number(v), _) => v.to_string(),
        (Answer::Likert(p), _) => p.to_string(),
        (Answer::Category(k), QuestionKind::Categorical { options }) => options[*k].clone(),
        (other, _) => panic!("unexpected {other:?}"),
    }
}

fn quoted(text: &str) -> String {
    if text.contains([',', '"']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// The simulated participants' answers, and their table with the columns in reverse order (the
/// header may list the questions in any order).
fn answers_table(survey: &SurveyDefinition) -> (Vec<Vec<Answer>>, String) {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let answers: Vec<Vec<Answer>> = (0..PARTICIPANTS)
        .map(|_| simulated_answers(survey, &mut rng))
        .collect();
    let order: Vec<usize> = (0..survey.questions.len()).rev().collect();
    let mut text = order
        .iter()
        .map(|&i| survey.questions[i].id.clone())
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    for a in &answers {
        let row: Vec<String> = order
            .iter()
            .map(|&i| quoted(&cell(survey, i, &a[i])))
            .collect();
        text.push_str(&row.join(","));
        text.push('\n');
    }
    (answers, text)
}

#[test]
fn check_prints_languages_columns_and_branches() {
    let out = ok(&orthomask(&[
        "survey",
        "check",
        habits_path().to_str().unwrap(),
    ]));
    assert!(out.contains("survey habits-branching: valid"), "{out}");
    assert!(out.contains("languages: en, es"), "{out}");
    assert!(out.contains("cigarettes_answered"), "{out}");
    for branch in [
        "cigarettes: shown when smokes is yes",
        "relax: shown when stress is from 4 to 5",
        "drinks_per_week: shown when drinks is Weekly or Daily",
    ] {
        assert!(out.contains(branch), "{branch}\n{out}");
    }
    let v = json(&["survey", "check", habits_path().to_str().unwrap(), "--json"]);
    let columns: Vec<String> = habits().columns().into_iter().map(|c| c.name).collect();
    assert_eq!(v["columns"], serde_json::json!(columns));
    assert_eq!(v["branches"].as_array().unwrap().len(), 3);

    // An invalid definition: one line naming the field.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    let text = std::fs::read_to_string(habits_path())
        .unwrap()
        .replace(r#""question": "smokes""#, r#""question": "drinks""#);
    std::fs::write(&bad, text).unwrap();
    let e = failure(&orthomask(&["survey", "check", bad.to_str().unwrap()]));
    assert!(
        e.contains("questions[1].show_if.question") && e.contains("comes later"),
        "{e}"
    );
}

/// The coded table is what `encode` gives for every participant; masked by `pipeline` with its
/// default flags, the release gives the raw coded data's regression (the answered subgroup
/// through the `_answered` column) and contingency tables.
#[test]
fn coded_answers_through_the_pipeline_give_the_raw_analyses() {
    let survey = habits();
    let dir = tempfile::tempdir().unwrap();
    let (answers, text) = answers_table(&survey);
    // Both branches of every condition occur among the participants.
    for q in [1, 5, 7] {
        let hidden = answers.iter().filter(|a| a[q] == Answer::Skipped).count();
        assert!(
            hidden > 0 && hidden < answers.len(),
            "question {q}: {hidden}"
        );
    }
    let table = dir.path().join("answers.csv");
    std::fs::write(&table, text).unwrap();
    let raw = dir.path().join("raw.csv");
    let out = ok(&code_habits(&table, Some(&raw)));
    assert!(
        out.contains("coded 60 participants into 15 columns"),
        "{out}"
    );
    let (headers, coded) = read(&raw);
    let names: Vec<String> = survey.columns().into_iter().map(|c| c.name).collect();
    assert_eq!(headers, names);
    for (i, a) in answers.iter().enumerate() {
        let expected = survey.encode(a).unwrap();
        let row: Vec<f64> = coded.row(i).iter().copied().collect();
        // Written at round-trip precision: the very numbers `encode` gives.
        assert_eq!(row, expected, "participant {i}");
    }
    // Without --out the same CSV goes to standard output.
    let stdout = ok(&code_habits(&table, None));
    assert_eq!(stdout, std::fs::read_to_string(&raw).unwrap());

    let released = dir.path().join("out");
    ok(&pipeline(&raw, &released, &[]));
    let release = released.join("release.csv");
    let (release_headers, _) = read(&release);
    assert_eq!(release_headers[..names.len()], names[..]);

    let regress = |input: &Path| {
        json(&[
            "regress",
            "--input",
            input.to_str().unwrap(),
            "--y",
            "cigarettes",
            "--x",
            "exercise_days,sleep_hours,stress,cigarettes_answered",
            "--json",
        ])
    };
    let (a, b) = (regress(&raw), regress(&release));
    assert_eq!(a["n"], 60);
    assert_eq!(a["df_resid"], b["df_resid"]);
    for field in ["r_squared", "f_statistic", "sigma"] {
        let (x, y) = (a[field].as_f64().unwrap(), b[field].as_f64().unwrap());
        assert!(relative(x, y) < REGRESSION_AGREEMENT, "{field}: {x} vs {y}");
    }
    let (ac, bc) = (
        a["coefficients"].as_array().unwrap(),
        b["coefficients"].as_array().unwrap(),
    );
    assert_eq!(ac.len(), 5);
    for (x, y) in ac.iter().zip(bc) {
        assert_eq!(x["name"], y["name"]);
        for field in ["estimate", "std_error", "t", "p", "ci_low", "ci_high"] {
            let (u, v) = (x[field].as_f64().unwrap(), y[field].as_f64().unwrap());
            assert!(
                relative(u, v) < REGRESSION_AGREEMENT,
                "{} {field}: {u} vs {v}",
                x["name"]
            );
        }
    }

    let contingency = |input: &Path, row: &str, col: &str| {
        json(&[
            "contingency",
            "--input",
            input.to_str().unwrap(),
            "--row",
            row,
            "--col",
            col,
            "--col-reference",
            "Never",
            "--json",
        ])
    };
    for (row, col) in [
        ("smokes", "drinks=Monthly,drinks=Weekly,drinks=Daily"),
        ("cigarettes_answered", "drinks_per_week_answered"),
    ] {
        let (a, b) = (contingency(&raw, row, col), contingency(&release, row, col));
        assert_eq!(a["table"], b["table"], "{row} × {col}");
        assert_eq!(a["n"], 60);
        for field in ["chi_square", "p_value"] {
            let (x, y) = (a[field].as_f64().unwrap(), b[field].as_f64().unwrap());
            assert!(relative(x, y) < COUNTS_AGREEMENT, "{row} × {col} {field}");
        }
    }
    // A hidden question is answered by nobody: cigarettes_answered is smokes, row for row.
    let smokers = answers
        .iter()
        .filter(|a| a[0] == Answer::YesNo(true))
        .count();
    let answered = coded.column(2).iter().filter(|v| **v > 0.5).count();
    assert_eq!(answered, smokers);
}

#[test]
fn bad_tables_of_answers_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let header = "smokes,cigarettes,exercise_days,sleep_hours,stress,relax,drinks,drinks_per_week";
    let good = "yes,10,3,7.5,4,Music,Weekly,6";
    let code = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        failure(&code_habits(&path, None))
    };
    let cases = [
        (
            "hidden.csv",
            format!("{header}\n{good}\nno,5,3,7.5,2,,Never,\n"),
            ":3:2: question \"cigarettes\": this question is not asked after the earlier answer; \
             leave it empty",
        ),
        (
            "hidden_chain.csv",
            format!("{header}\nyes,10,3,7.5,2,Reading,Never,\n"),
            ":2:6: question \"relax\": this question is not asked",
        ),
        (
            "option.csv",
            format!("{header}\nyes,10,3,7.5,4,Music,Sometimes,6\n"),
            ":2:7: question \"drinks\": \"Sometimes\" is not one of the options (Never, Monthly, \
             Weekly, Daily)",
        ),
        (
            "nan.csv",
            format!("{header}\nyes,10,3,NaN,4,Music,Weekly,6\n"),
            ":2:4: question \"sleep_hours\": enter a number from 3 to 12",
        ),
        (
            "missing_answer.csv",
            format!("{header}\nyes,,3,7.5,4,Music,Weekly,6\n"),
            ":2:2: question \"cigarettes\": this question needs an answer",
        ),
        (
            "missing_header.csv",
            format!(
                "{}\n{}\n",
                header.replace(",stress", ""),
                good.replace(",4,", ",")
            ),
            ":1: no column for question \"stress\"",
        ),
        (
            "unknown_header.csv",
            format!("{header},surprise\n{good},1\n"),
            ":1:9: no question \"surprise\" in",
        ),
        (
            "duplicate_header.csv",
            format!("{header},smokes\n{good},yes\n"),
            ":1:9: duplicate column name \"smokes\"",
        ),
        (
            "ragged.csv",
            format!("{header}\nyes,10\n"),
            ":2: row has 2 cells but the header has 8",
        ),
    ];
    for (name, text, expected) in cases {
        let e = code(name, &text);
        assert!(
            e.starts_with("error: ") && e.contains(&format!("{name}{expected}")),
            "{name}: {e}"
        );
    }
    let e = failure(&orthomask(&[
        "survey",
        "code",
        "--survey",
        dir.path().join("absent.json").to_str().unwrap(),
        "--answers",
        dir.path().join("hidden.csv").to_str().unwrap(),
    ]));
    assert!(e.contains("absent.json"), "{e}");
}
