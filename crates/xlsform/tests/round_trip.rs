//! Import ∘ export is the identity on our drafts: every valid draft of `docs/draft-cases.json`
//! (the cases the schema and the team's editor agree on) and a draft with every question kind,
//! two translations, every form of `show_if` on every kind it applies to, model terms of every
//! kind and every collector choice comes back equal after a trip through an XLSForm.

use orthomask_survey::draft::SurveyDraft;
use orthomask_xlsform::{export, import};

fn round_trip(draft: &SurveyDraft) {
    let bytes = export(draft).unwrap_or_else(|e| panic!("{}: {e}", draft.id));
    let back = import(&bytes, "anything.xlsx").unwrap_or_else(|e| panic!("{}: {e}", draft.id));
    assert_eq!(back.draft, *draft, "{}", draft.id);
    assert!(back.ignored.is_empty(), "{}: {:?}", draft.id, back.ignored);
}

#[test]
fn the_draft_cases_come_back_unchanged() {
    let cases: serde_json::Value =
        serde_json::from_str(include_str!("../../../docs/draft-cases.json")).unwrap();
    let valid = cases["valid"].as_array().unwrap();
    assert!(valid.len() >= 5);
    for case in valid {
        let draft: SurveyDraft = serde_json::from_value(case.clone()).unwrap();
        round_trip(&draft);
    }
}

const EVERYTHING: &str = r#"{
  "id": "everything", "title": "Everything", "description": "Every kind, every condition.\n\nTwo paragraphs.",
  "consent": "I agree that my answers are masked.", "language": "fr",
  "questions": [
    {"id": "smokes", "label": "Do you smoke?", "help": "Even rarely.", "kind": "yes_no"},
    {"id": "cigs", "label": "Cigarettes a day", "kind": "integer", "min": 1, "max": 60, "show_if": {"question": "smokes", "equals": "yes"}},
    {"id": "quit", "label": "Tried to quit?", "kind": "yes_no", "optional": true, "show_if": {"question": "smokes", "one_of": ["no"]}},
    {"id": "income", "label": "Income", "kind": "number", "min": -2.5, "max": 1250.75, "optional": true},
    {"id": "rich", "label": "Rich?", "kind": "yes_no", "show_if": {"question": "income", "range": {"min": 0.1, "max": 1250.75}}},
    {"id": "exact", "label": "Exact?", "kind": "yes_no", "show_if": {"question": "income", "equals": 100.5}},
    {"id": "stress", "label": "Stress", "kind": "likert", "points": 7, "low_label": "none", "high_label": "a lot"},
    {"id": "calm", "label": "Calm?", "kind": "yes_no", "show_if": {"question": "stress", "range": {"min": 1, "max": 3}}},
    {"id": "calm2", "label": "Calm again?", "kind": "yes_no", "show_if": {"question": "stress", "one_of": [1, 2]}},
    {"id": "calm3", "label": "Calm once more?", "kind": "yes_no", "show_if": {"question": "stress", "equals": 4}},
    {"id": "region", "label": "Region", "kind": "categorical", "options": ["North 'n' East", "South", "West"]},
    {"id": "south", "label": "South?", "kind": "yes_no", "show_if": {"question": "region", "equals": "South"}},
    {"id": "not_north", "label": "Not north?", "kind": "yes_no", "show_if": {"question": "region", "one_of": ["South", "West"]}},
    {"id": "one_region", "label": "One region?", "kind": "yes_no", "show_if": {"question": "region", "one_of": ["West"]}},
    {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 99},
    {"id": "young", "label": "Young?", "kind": "yes_no", "show_if": {"question": "age", "range": {"min": 18, "max": 30}}},
    {"id": "forty", "label": "Forty?", "kind": "yes_no", "show_if": {"question": "age", "one_of": [40]}},
    {"id": "fifty", "label": "Fifty or sixty?", "kind": "yes_no", "show_if": {"question": "age", "one_of": [50, 60]}}
  ],
  "translations": {
    "es": {"title": "Todo", "description": "Cada tipo.\n\nDos párrafos.", "consent": "Acepto.",
      "questions": {
        "smokes": {"label": "¿Fuma?", "help": "Aunque sea poco."}, "cigs": {"label": "Cigarrillos"},
        "quit": {"label": "¿Intentó dejarlo?"}, "income": {"label": "Ingresos"}, "rich": {"label": "¿Rico?"},
        "exact": {"label": "¿Exacto?"},
        "stress": {"label": "Estrés", "low_label": "nada", "high_label": "mucho"},
        "calm": {"label": "¿Calma?"}, "calm2": {"label": "¿Calma 2?"}, "calm3": {"label": "¿Calma 3?"},
        "region": {"label": "Región", "options": ["Norte", "Sur", "Oeste"]},
        "south": {"label": "¿Sur?"}, "not_north": {"label": "¿No norte?"}, "one_region": {"label": "¿Una región?"},
        "age": {"label": "Edad"}, "young": {"label": "¿Joven?"}, "forty": {"label": "¿Cuarenta?"},
        "fifty": {"label": "¿Cincuenta?"}}},
    "pt-BR": {"title": "Tudo", "description": "Cada tipo.", "consent": "Aceito.",
      "questions": {
        "smokes": {"label": "Fuma?", "help": "Mesmo pouco."}, "cigs": {"label": "Cigarros"},
        "quit": {"label": "Tentou parar?"}, "income": {"label": "Renda"}, "rich": {"label": "Rico?"},
        "exact": {"label": "Exato?"},
        "stress": {"label": "Estresse", "low_label": "nada", "high_label": "muito"},
        "calm": {"label": "Calmo?"}, "calm2": {"label": "Calmo 2?"}, "calm3": {"label": "Calmo 3?"},
        "region": {"label": "Região", "options": ["Norte", "Sul", "Oeste"]},
        "south": {"label": "Sul?"}, "not_north": {"label": "Não norte?"}, "one_region": {"label": "Uma região?"},
        "age": {"label": "Idade"}, "young": {"label": "Jovem?"}, "forty": {"label": "Quarenta?"},
        "fifty": {"label": "Cinquenta?"}}}
  },
  "terms": [
    {"id": "age_sq", "kind": "power", "of": "age", "exponent": 2},
    {"id": "age_south", "kind": "product", "of": ["age", "region=South"]},
    {"id": "log_age", "kind": "log", "of": "age"},
    {"id": "log1p_cigs", "kind": "log1p", "of": "cigs"},
    {"id": "age_c", "kind": "centre", "of": "age", "at": 40.5}
  ],
  "cohort_size": 40, "min_cohort_size": 35, "dp": {"epsilon": 0.7, "delta": 0.000001},
  "share_mode": true, "invitations": false, "demonstration": true
}"#;

#[test]
fn a_draft_with_everything_comes_back_unchanged() {
    let draft: SurveyDraft = serde_json::from_str(EVERYTHING).unwrap();
    draft.validate_content().unwrap();
    round_trip(&draft);
    // And a second trip gives the same bytes' meaning again (nothing drifts).
    let once = import(&export(&draft).unwrap(), "x.xlsx").unwrap().draft;
    assert_eq!(
        import(&export(&once).unwrap(), "x.xlsx").unwrap().draft,
        draft
    );
}

#[test]
fn a_draft_that_fails_its_own_check_is_not_exported() {
    let mut draft: SurveyDraft = serde_json::from_str(EVERYTHING).unwrap();
    draft.questions[1].id = "smokes".into();
    let e = export(&draft).unwrap_err().to_string();
    assert!(e.contains("duplicate"), "{e}");
}

/// Bad input is one line, never a panic: a workbook cut short anywhere, or with bytes flipped,
/// is refused (or, where a cut leaves a readable zip, read) without panicking.
#[test]
fn damaged_workbooks_are_refused_in_one_line() {
    let draft: SurveyDraft = serde_json::from_str(EVERYTHING).unwrap();
    let bytes = export(&draft).unwrap();
    let mut refused = 0;
    let cuts = (0..bytes.len()).step_by(bytes.len() / 97 + 1);
    let flips = (0..bytes.len()).step_by(bytes.len() / 53 + 1).map(|at| {
        let mut b = bytes.clone();
        b[at] ^= 0x5a;
        b
    });
    for damaged in cuts.map(|n| bytes[..n].to_vec()).chain(flips) {
        let outcome = std::panic::catch_unwind(|| import(&damaged, "damaged.xlsx"));
        match outcome {
            Err(_) => panic!("a damaged workbook of {} bytes panicked", damaged.len()),
            Ok(Err(e)) => {
                refused += 1;
                assert!(!e.to_string().contains('\n'), "{e}");
            }
            Ok(Ok(_)) => {}
        }
    }
    assert!(
        refused > 50,
        "only {refused} damaged workbooks were refused"
    );
}
