//! XLSForms as the world writes them: `tests/forms/make_forms.py` writes them with openpyxl at
//! every run (the Python of `ORTHOMASK_PYTHON`, else `target/py-test-venv`, which
//! `scripts/setup-python.sh` prepares), so the import is tested on workbooks our exporter did
//! not make. The expected drafts are read off the forms by hand, by the mapping the crate
//! documents; every refusal reason has its own form, and its line must name the sheet and row.

use orthomask_core::key::Key;
use orthomask_survey::definition::{ConditionValue, QuestionKind};
use orthomask_survey::draft::{Endpoints, SurveyDraft, hydrate, plan_survey};
use orthomask_xlsform::{ImportError, import};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("ORTHOMASK_PYTHON") {
        return p.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("py-test-venv/bin/python")
}

/// The directory of forms, written once per test run.
fn forms() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xlsform-forms");
        let _ = std::fs::remove_dir_all(&dir);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/forms/make_forms.py");
        let python = python();
        let out = Command::new(&python)
            .arg(&script)
            .arg(&dir)
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (run scripts/setup-python.sh, or set ORTHOMASK_PYTHON to a Python \
                     with openpyxl)",
                    python.display()
                )
            });
        assert!(
            out.status.success(),
            "make_forms.py: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(forms().join(name)).unwrap()
}

fn accepted() -> SurveyDraft {
    import(&read("accepted.xlsx"), "accepted.xlsx")
        .unwrap()
        .draft
}

#[test]
fn every_accepted_type_becomes_its_question() {
    let draft = accepted();
    assert_eq!(draft.id, "health-habits");
    assert_eq!(draft.title, "Health habits");
    assert_eq!(draft.language, "en");
    assert_eq!(
        draft.description.as_deref(),
        Some("A survey of health habits.")
    );
    assert_eq!(draft.consent, "I agree to take part.");
    let ids: Vec<&str> = draft.questions.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "age",
            "height",
            "smokes",
            "cigarettes",
            "satisfied",
            "region",
            "fruits_apple",
            "fruits_banana",
            "apples",
            "coast",
            "city",
            "retired",
            "doctor"
        ]
    );
    let q = |id: &str| draft.questions.iter().find(|q| q.id == id).unwrap();
    // integer with ". >= 18 and . <= 99"; decimal with "(. >= 0.5) and (. <= 2.5)"; an integer's
    // "> 0 and < 61" is 1 to 60.
    assert_eq!(q("age").kind, QuestionKind::Integer { min: 18, max: 99 });
    assert_eq!(
        q("height").kind,
        QuestionKind::Number { min: 0.5, max: 2.5 }
    );
    assert_eq!(
        q("cigarettes").kind,
        QuestionKind::Integer { min: 1, max: 60 }
    );
    assert_eq!(q("smokes").kind, QuestionKind::YesNo);
    assert_eq!(
        q("satisfied").kind,
        QuestionKind::Likert {
            points: 5,
            low_label: "Strongly disagree".into(),
            high_label: "Strongly agree".into()
        }
    );
    assert_eq!(
        q("region").kind,
        QuestionKind::Categorical {
            options: vec!["North".into(), "South".into(), "East".into()]
        }
    );
    // required yes / no.
    assert!(!q("age").optional && q("height").optional && !q("smokes").optional);
    // A hint is help.
    assert_eq!(q("age").help.as_deref(), Some("In years"));
    assert_eq!(q("height").help, None);
    // Model terms from the orthomask_terms sheet; the collector's cohort size from settings;
    // invitations on by default.
    assert_eq!(draft.terms.len(), 2);
    assert_eq!(
        serde_json::to_value(&draft.terms).unwrap(),
        serde_json::json!([
            {"id": "age_sq", "kind": "power", "of": "age", "exponent": 2},
            {"id": "age_smokes", "kind": "product", "of": ["age", "smokes"]}
        ])
    );
    assert_eq!(draft.cohort_size, Some(40));
    assert!(draft.invitations && !draft.share_mode && !draft.demonstration);
}

#[test]
fn a_select_multiple_is_one_yes_no_question_per_choice() {
    let draft = accepted();
    let apple = &draft.questions[6];
    let banana = &draft.questions[7];
    assert_eq!(apple.label, "Which fruits do you eat?: Apples");
    assert_eq!(banana.label, "Which fruits do you eat?: Bananas");
    assert!(apple.kind == QuestionKind::YesNo && banana.kind == QuestionKind::YesNo);
    assert!(apple.optional && banana.optional);
    assert_eq!(apple.help.as_deref(), Some("Tick all"));
    assert_eq!(banana.help, None);
    // selected(${fruits}, 'apple') is the apple column's yes.
    let show = draft.questions[8].show_if.as_ref().unwrap();
    assert_eq!(show.question, "fruits_apple");
    assert_eq!(
        serde_json::to_value(show).unwrap(),
        serde_json::json!({"question": "fruits_apple", "equals": "yes"})
    );
}

#[test]
fn relevant_becomes_show_if() {
    let draft = accepted();
    let show = |id: &str| {
        let q = draft.questions.iter().find(|q| q.id == id).unwrap();
        serde_json::to_value(q.show_if.as_ref().unwrap()).unwrap()
    };
    use serde_json::json;
    assert_eq!(
        show("cigarettes"),
        json!({"question": "smokes", "equals": "yes"})
    );
    // Choice names become the options' texts.
    assert_eq!(
        show("coast"),
        json!({"question": "region", "one_of": ["South", "East"]})
    );
    assert_eq!(
        show("city"),
        json!({"question": "region", "one_of": ["South", "East"]})
    );
    // One bound: the other is the question's declared one (age ≤ 99).
    assert_eq!(
        show("retired"),
        json!({"question": "age", "range": {"min": 65.0, "max": 99.0}})
    );
    // A group's relevant reaches the question inside; Likert choice names become points.
    assert_eq!(
        show("doctor"),
        json!({"question": "satisfied", "one_of": [1.0, 2.0]})
    );
    let doctor = draft.questions.iter().find(|q| q.id == "doctor").unwrap();
    assert!(matches!(
        doctor.show_if.as_ref().unwrap().condition,
        orthomask_survey::definition::Condition::OneOf(ref v) if v[0] == ConditionValue::Number(1.0)
    ));
    // The questions in a group without relevant are not conditional.
    assert!(draft.questions[0].show_if.is_none());
}

#[test]
fn notes_become_help_and_the_description() {
    let draft = accepted();
    let satisfied = draft
        .questions
        .iter()
        .find(|q| q.id == "satisfied")
        .unwrap();
    assert_eq!(
        satisfied.help.as_deref(),
        Some("Now your health.\n\nThink of this year")
    );
    let es = &draft.translations["es"];
    assert_eq!(
        es.questions["satisfied"].help.as_deref(),
        Some("Ahora su salud.\n\nPiense en este año")
    );
    assert_eq!(es.description.as_deref(), Some("Una encuesta de hábitos."));
}

#[test]
fn language_columns_become_translations() {
    let draft = accepted();
    assert_eq!(draft.translations.keys().collect::<Vec<_>>(), ["es"]);
    let es = &draft.translations["es"];
    assert_eq!(es.consent, "Acepto participar.");
    // settings has no form_title::Español (es): the main title stands in.
    assert_eq!(es.title, "Health habits");
    assert_eq!(es.questions["age"].label, "¿Qué edad tiene?");
    assert_eq!(es.questions["age"].help.as_deref(), Some("En años"));
    assert_eq!(
        es.questions["satisfied"].low_label.as_deref(),
        Some("Muy en desacuerdo")
    );
    assert_eq!(
        es.questions["satisfied"].high_label.as_deref(),
        Some("Muy de acuerdo")
    );
    assert_eq!(
        es.questions["region"].options.as_deref(),
        Some(&["Norte".to_owned(), "Sur".to_owned(), "Este".to_owned()][..])
    );
    assert_eq!(
        es.questions["fruits_banana"].label,
        "¿Qué frutas come?: Plátanos"
    );
    assert_eq!(es.questions["smokes"].options, None);
}

#[test]
fn timestamps_group_labels_and_middle_likert_labels_are_reported_as_left_out() {
    let imported = import(&read("accepted.xlsx"), "accepted.xlsx").unwrap();
    let rows: Vec<u32> = imported.ignored.iter().map(|i| i.row).collect();
    assert_eq!(rows, [2, 3, 4, 7, 14]);
    let lines: Vec<String> = imported.ignored.iter().map(|i| i.to_string()).collect();
    assert!(
        lines[0].starts_with("survey sheet, row 2: start: a timestamp"),
        "{lines:?}"
    );
    assert!(lines[3].contains("About you"), "{lines:?}");
    assert!(lines[4].contains("middle points"), "{lines:?}");
}

/// The imported draft is a survey the collector plans (the same `plan_survey` the services
/// run), docs/survey.schema.json accepts it as a draft, and the definition a device receives
/// (the planned template with a cohort's key) as a definition (jsonschema, as check_schemas.py).
#[test]
fn the_imported_draft_is_plannable_and_the_schema_accepts_it() {
    let draft = accepted();
    let planned = plan_survey(
        &draft,
        Endpoints {
            provider: "http://m",
            right_services: &[],
        },
    )
    .unwrap();
    assert_eq!(planned.template.questions.len(), 13);
    let definition = hydrate(&planned.template, 0, 0, &Key::from_bytes([7; 32]));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let draft_path = dir.join("xlsform-imported-draft.json");
    let definition_path = dir.join("xlsform-imported-definition.json");
    std::fs::write(&draft_path, serde_json::to_string(&draft).unwrap()).unwrap();
    std::fs::write(&definition_path, definition.to_json()).unwrap();
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/survey.schema.json");
    let check = r##"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
as_draft = jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/draft"})
as_definition = jsonschema.Draft202012Validator(schema)
errors = [f"draft {'/'.join(map(str, e.path))}: {e.message}" for e in as_draft.iter_errors(json.load(open(sys.argv[2])))]
errors += [f"definition {'/'.join(map(str, e.path))}: {e.message}" for e in as_definition.iter_errors(json.load(open(sys.argv[3])))]
print("\n".join(errors)); sys.exit(1 if errors else 0)
"##;
    let out = Command::new(python())
        .args(["-c", check])
        .arg(&schema)
        .arg(&draft_path)
        .arg(&definition_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One test per refusal reason: the form `refuse_<reason>.xlsx`, the sheet and row its one line
/// must name, and words of the reason.
macro_rules! refused {
    ($($reason:ident: $sheet:literal, $row:literal, $words:expr;)*) => {$(
        #[test]
        fn $reason() {
            refused_at(stringify!($reason), $sheet, $row, $words);
        }
    )*};
}

fn refused_at(form: &str, sheet: &str, row: u32, words: &str) {
    let file = format!("refuse_{form}.xlsx");
    let e = import(&read(&file), &file).expect_err(form);
    let line = e.to_string();
    assert!(!line.contains('\n'), "{form}: {line}");
    let at = format!("{sheet} sheet, row {row}: ");
    assert!(
        line.starts_with(&at),
        "{form}: {line:?} does not start with {at:?}"
    );
    assert!(
        line.contains(words),
        "{form}: {line:?} does not say {words:?}"
    );
}

mod refusal {
    use super::refused_at;

    refused! {
        free_text: "survey", 5, "\"text\" is free text";
        location: "survey", 5, "records a location";
        media: "survey", 5, "a photo, a recording or a file";
        date_time: "survey", 5, "dates and times cannot be masked";
        repeat: "survey", 5, "repeats give each participant";
        calculation: "survey", 5, "a calculate row is not an answer";
        identifying: "survey", 5, "\"deviceid\" identifies the participant";
        external_choices: "survey", 5, "from a file that is not in the workbook";
        or_other: "survey", 5, "remove or_other";
        unsupported_type: "survey", 5, "type \"rank\" is not supported";
        missing_bounds: "survey", 5, "an integer question without bounds";
        constraint: "survey", 5, "regex() and other functions";
        relevant: "survey", 5, "it uses ${age} and ${smokes}";
        required: "survey", 5, "required \"${smokes} = 'yes'\"";
        unknown_list: "survey", 5, "list \"colours\" is not in the choices sheet";
        column: "survey", 5, "column \"choice_filter\" cannot be expressed";
        name: "survey", 5, "name \"your age\"";
        second_consent: "survey", 5, "a second acknowledge row";
        consent_after_question: "survey", 5, "must come before every question";
        trailing_note: "survey", 5, "no question to help";
        group_relevant: "survey", 6, "both have relevant";
        group: "survey", 5, "end group without a begin group";
        group_unended: "survey", 5, "begin group is never ended";
        draft: "survey", 5, "duplicate";
        language_tag: "survey", 1, "\"label::Spanish\": name the language with its tag";
        untranslated: "survey", 3, "\"label::Español (es)\" is empty";
        duplicate_choice: "choices", 4, "choice \"yes\" appears twice";
        setting: "settings", 2, "\"orthomask_cohort_size\": \"many\" is not a whole number";
        term: "orthomask_terms", 3, "kind \"spline\"";
    }
}

#[test]
fn a_form_without_consent_is_refused_as_a_whole() {
    let e = import(&read("refuse_no_consent.xlsx"), "x.xlsx").unwrap_err();
    assert!(matches!(e, ImportError::Form(_)));
    assert!(e.to_string().contains("no acknowledge row"), "{e}");
}

#[test]
fn a_workbook_that_is_not_an_xlsform_is_refused() {
    let e = import(&read("refuse_no_survey.xlsx"), "x.xlsx").unwrap_err();
    assert_eq!(e.to_string(), "the XLSForm has no \"survey\" sheet");
    let e = import(&read("refuse_no_type_column.xlsx"), "x.xlsx").unwrap_err();
    assert_eq!(e.to_string(), "survey sheet: no \"type\" column");
    let e = import(b"name,label\nage,Age\n", "form.csv").unwrap_err();
    assert!(matches!(e, ImportError::NotXlsx(_)), "{e}");
    assert!(!e.to_string().contains('\n'));
}

/// Without form_id the id is the file name's stem, as pyxform does, and the title the id.
#[test]
fn without_form_id_the_file_name_gives_the_id() {
    let draft = import(&read("no_settings.xlsx"), "/tmp/My Form.xlsx")
        .unwrap()
        .draft;
    assert_eq!(
        (draft.id.as_str(), draft.title.as_str()),
        ("my-form", "my-form")
    );
    // A form with a form_id keeps it, whatever its file is called.
    let bytes = read("accepted.xlsx");
    assert_eq!(
        import(&bytes, "Other Name.xlsx").unwrap().draft.id,
        "health-habits"
    );
}
