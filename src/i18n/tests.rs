//! The catalogues are complete: the same message ids and variables in every language, every id
//! the code asks for present, no syntax error — a missing key fails here, not on a participant's
//! screen.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use fluent_syntax::ast;
use orthomask_survey::coding::AnswerError;

use super::*;

/// Message id → the variables its value uses, for one catalogue (panics on a syntax error: this
/// is the test that refuses one).
fn messages(tag: &str, source: &str) -> BTreeMap<String, BTreeSet<String>> {
    let resource = fluent_syntax::parser::parse(source)
        .unwrap_or_else(|(_, errors)| panic!("locales/{tag}.ftl does not parse: {errors:?}"));
    let mut out = BTreeMap::new();
    for entry in resource.body {
        if let ast::Entry::Message(message) = entry {
            let value = message
                .value
                .unwrap_or_else(|| panic!("locales/{tag}.ftl: {} has no text", message.id.name));
            let mut variables = BTreeSet::new();
            for element in &value.elements {
                if let ast::PatternElement::Placeable {
                    expression:
                        ast::Expression::Inline(ast::InlineExpression::VariableReference { id }),
                } = element
                {
                    variables.insert(id.name.to_owned());
                }
            }
            out.insert(message.id.name.to_owned(), variables);
        }
    }
    out
}

/// Every message id given to `t!` in the app's sources (but this module's definition of the
/// macro and these tests' samples).
fn ids_in_sources() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        let own = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src")
            .join("i18n");
        for entry in std::fs::read_dir(dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path == own.join("mod.rs") || path == own.join("tests.rs") {
                continue;
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                out.extend(ids_in(&text));
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out
}

/// The literal ids of `t!(language, "id", …)` calls in `text`: after `t!(`, the first string
/// literal following the first top-level comma.
fn ids_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("t!(") {
        let preceded_by_ident = rest[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        rest = &rest[at + 3..];
        if preceded_by_ident {
            continue;
        }
        let mut depth = 0_i32;
        let Some(comma) = rest.char_indices().find_map(|(i, c)| {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => return Some(i),
                _ => {}
            }
            None
        }) else {
            continue;
        };
        let after = rest[comma + 1..].trim_start();
        if let Some(literal) = after.strip_prefix('"')
            && let Some(end) = literal.find('"')
        {
            out.push(literal[..end].to_owned());
        }
    }
    out
}

#[test]
fn every_catalogue_has_every_message_with_the_same_variables() {
    let english = messages("en", CATALOGUES[0].2);
    assert!(
        english.len() > 50,
        "the English catalogue is the participant's whole form"
    );
    for (_, tag, source) in &CATALOGUES[1..] {
        let other = messages(tag, source);
        let missing: Vec<&String> = english.keys().filter(|k| !other.contains_key(*k)).collect();
        let extra: Vec<&String> = other.keys().filter(|k| !english.contains_key(*k)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "locales/{tag}.ftl: missing {missing:?}, not in English {extra:?}"
        );
        for (id, variables) in &english {
            assert_eq!(
                &other[id], variables,
                "locales/{tag}.ftl: {id} uses other variables"
            );
        }
    }
}

#[test]
fn every_message_the_code_asks_for_exists() {
    let english = messages("en", CATALOGUES[0].2);
    let used = ids_in_sources();
    assert!(
        used.len() > 40,
        "the scan finds the participant form's messages: {used:?}"
    );
    let missing: Vec<&String> = used
        .iter()
        .filter(|id| !english.contains_key(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "asked for but not in locales/en.ftl: {missing:?}"
    );
    // And none is left over: a message nobody shows is a translation nobody needs.
    let unused: Vec<&String> = english
        .keys()
        .filter(|id| !used.contains(*id) && id.as_str() != "language-name")
        .collect();
    assert!(
        unused.is_empty(),
        "in locales/en.ftl but never shown: {unused:?}"
    );
}

#[test]
fn the_scan_reads_ids_after_the_language_argument() {
    let text =
        r#"t!(lang, "a-b"); t!(pick(x, y), "c", n = 1); let _ = format!("t!(x)"); no_t!(l, "d")"#;
    assert_eq!(ids_in(text), ["a-b", "c"]);
}

/// English answer errors are the survey crate's own words (what the command line prints), so
/// the form and the CLI never disagree.
#[test]
fn english_answer_errors_are_the_codings_messages() {
    let errors = [
        AnswerError::Missing,
        AnswerError::NotYesNo,
        AnswerError::Integer { min: 18, max: 100 },
        AnswerError::Number {
            min: -1.0,
            max: 2.5,
        },
        AnswerError::Likert { points: 5 },
        AnswerError::Category { count: 4 },
        AnswerError::WrongKind,
        AnswerError::NoSuchQuestion { number: 9 },
        AnswerError::Count {
            expected: 3,
            found: 2,
        },
        AnswerError::NotShown,
        AnswerError::UnknownOption {
            given: "Tea".into(),
            options: vec!["Never".into(), "Daily".into()],
        },
    ];
    for e in &errors {
        assert_eq!(answer_error(AppLanguage::English, e), e.to_string());
        let spanish = answer_error(AppLanguage::Spanish, e);
        assert!(!spanish.is_empty() && spanish != e.to_string(), "{spanish}");
    }
    assert_eq!(
        answer_error(
            AppLanguage::Spanish,
            &AnswerError::Integer { min: 18, max: 100 }
        ),
        "escriba un número entero de 18 a 100"
    );
}

#[test]
fn languages_follow_the_browsers_preferences() {
    let prefs = |tags: &[&str]| tags.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        AppLanguage::preferred(&prefs(&["es-MX", "en"])),
        AppLanguage::Spanish
    );
    assert_eq!(
        AppLanguage::preferred(&prefs(&["fr-FR", "ES"])),
        AppLanguage::Spanish
    );
    assert_eq!(
        AppLanguage::preferred(&prefs(&["fr", "de"])),
        AppLanguage::English
    );
    assert_eq!(AppLanguage::preferred(&[]), AppLanguage::English);
    assert_eq!(AppLanguage::Spanish.tag(), "es");
    assert_eq!(language_name("es-419"), "Español");
    assert_eq!(language_name("fr"), "Français");
    assert_eq!(language_name("x-klingon"), "x-klingon");
}

#[test]
fn arguments_are_placed_without_isolation_marks_and_unknown_ids_show_themselves() {
    assert_eq!(
        crate::t!(
            AppLanguage::Spanish,
            "question-counter",
            number = 2,
            total = 7
        ),
        "Pregunta 2 de 7"
    );
    assert_eq!(
        tr(AppLanguage::Spanish, "no-such-message", &[]),
        "no-such-message"
    );
}
