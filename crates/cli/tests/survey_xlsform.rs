//! `orthomask survey import` and `survey export-xlsform` (issue 29 §1): a bundled survey
//! definition written as an XLSForm and read back is the same survey; a form openpyxl wrote
//! (`crates/xlsform/tests/forms/make_forms.py`) becomes a draft the collector plans; a refused
//! row is the command's one error line naming the file and the row.

mod common;

use common::{failure, ok, orthomask};
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::draft::{Endpoints, SurveyDraft, plan_survey};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("survey-xlsform")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_definition_exported_and_imported_is_the_same_survey() {
    let dir = scratch("definition");
    let definition_path = repo("www/surveys/habits-branching.json");
    let definition = SurveyDefinition::parse(
        &std::fs::read_to_string(&definition_path).unwrap(),
        "habits-branching.json",
    )
    .unwrap();
    let form = dir.join("habits.xlsx");
    let said = ok(&orthomask(&[
        "survey",
        "export-xlsform",
        s(&definition_path),
        "-o",
        s(&form),
    ]));
    assert!(said.contains("habits.xlsx"), "{said}");
    // Standard output: the draft's JSON.
    let printed = ok(&orthomask(&["survey", "import", s(&form)]));
    let draft: SurveyDraft = serde_json::from_str(&printed).unwrap();
    assert_eq!(draft.id, definition.id);
    assert_eq!(draft.title, definition.title);
    assert_eq!(draft.consent, definition.consent);
    assert_eq!(draft.questions, definition.questions);
    assert_eq!(draft.translations, definition.translations);
    assert_eq!(draft.terms, definition.terms);
    assert_eq!(draft.cohort_size, Some(definition.masking.cohort_size));
    // -o writes the same draft to a file.
    let out = dir.join("draft.json");
    let said = ok(&orthomask(&["survey", "import", s(&form), "-o", s(&out)]));
    assert!(
        said.contains(&format!("imported {}", definition.id)),
        "{said}"
    );
    let written: SurveyDraft =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written, draft);
}

#[test]
fn a_draft_exported_and_imported_is_the_same_draft() {
    let dir = scratch("draft");
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo("docs/draft-cases.json")).unwrap())
            .unwrap();
    let case = &cases["valid"][0];
    let draft_path = dir.join("draft.json");
    std::fs::write(&draft_path, case.to_string()).unwrap();
    let form = dir.join("form.xlsx");
    ok(&orthomask(&[
        "survey",
        "export-xlsform",
        s(&draft_path),
        "-o",
        s(&form),
    ]));
    let back: SurveyDraft =
        serde_json::from_str(&ok(&orthomask(&["survey", "import", s(&form)]))).unwrap();
    let original: SurveyDraft = serde_json::from_value(case.clone()).unwrap();
    assert_eq!(back, original);
}

/// The forms openpyxl writes (the Python of ORTHOMASK_PYTHON, else target/py-test-venv).
fn openpyxl_forms(dir: &Path) -> PathBuf {
    let python = std::env::var_os("ORTHOMASK_PYTHON").map_or_else(
        || {
            std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| repo("target"), PathBuf::from)
                .join("py-test-venv/bin/python")
        },
        PathBuf::from,
    );
    let forms = dir.join("forms");
    let out = Command::new(&python)
        .arg(repo("crates/xlsform/tests/forms/make_forms.py"))
        .arg(&forms)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup-python.sh)", python.display()));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    forms
}

#[test]
fn a_teams_xlsform_becomes_a_plannable_draft_and_refusals_name_the_row() {
    let dir = scratch("openpyxl");
    let forms = openpyxl_forms(&dir);
    let output = orthomask(&["survey", "import", s(&forms.join("accepted.xlsx"))]);
    let draft: SurveyDraft = serde_json::from_str(&ok(&output)).unwrap();
    assert_eq!(draft.id, "health-habits");
    assert_eq!(draft.questions.len(), 13);
    // What was left out is said on standard error, one line each with its row.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("accepted.xlsx: left out: survey sheet, row 2: start: a timestamp"),
        "{stderr}"
    );
    plan_survey(
        &draft,
        Endpoints {
            provider: "http://m",
            right_services: &[],
        },
    )
    .unwrap();
    let line = failure(&orthomask(&[
        "survey",
        "import",
        s(&forms.join("refuse_location.xlsx")),
    ]));
    assert!(line.starts_with("error: "), "{line}");
    assert!(
        line.contains(
            "refuse_location.xlsx: survey sheet, row 5: type \"geopoint\" records a location"
        ),
        "{line}"
    );
    let not_a_form = dir.join("form.xlsx");
    std::fs::write(&not_a_form, "type,name\ntext,x\n").unwrap();
    let line = failure(&orthomask(&["survey", "import", s(&not_a_form)]));
    assert!(line.contains("not an XLSForm workbook (.xlsx)"), "{line}");
}
