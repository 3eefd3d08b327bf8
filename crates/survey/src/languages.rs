//! A definition's texts in several languages (issue 13 §3): the main texts are in `language`
//! (a BCP 47 tag, `en` by default), and `translations` gives the same texts in other languages.
//!
//! ```json
//! "language": "en",
//! "translations": {"es": {"title": "…", "consent": "…",
//!   "questions": {"smokes": {"label": "…"}, "transport": {"label": "…", "options": ["…", "…"]}}}}
//! ```
//!
//! Every translation is **complete** — a participant never meets a question half in another
//! language: every question has a non-empty label, `help` and `description` exactly where the
//! main texts have one, `options` exactly for categorical questions (as many, non-empty and
//! distinct), `low_label`/`high_label` exactly for Likert questions.
//!
//! Only the words change: answers and their coding never depend on the language (a categorical
//! answer is its option's index, column names come from the main language, conditions compare
//! with the main language's option texts).
//!
//! A translation as written ([`Translation`],
//! [`QuestionTranslation`](crate::definition::QuestionTranslation)) is part of the
//! definition's JSON shape, [`crate::definition`]; this module checks that each is complete
//! (`validate_translations`, run by [`crate::validation`]) and gives a browser its texts in the
//! language it prefers.

use crate::definition::{Content, Question, QuestionKind, SurveyDefinition, Translation};
use crate::error::{SurveyError, invalid};
use std::collections::BTreeMap;

/// The main language's default belongs to the definition's JSON shape; named here too, where
/// the languages are.
pub use crate::definition::{DEFAULT_LANGUAGE, default_language, is_default_language};

/// Everything a participant reads, in one language.
#[derive(Clone, Debug, PartialEq)]
pub struct SurveyTexts<'a> {
    /// The tag of the language these texts are in.
    pub language: &'a str,
    /// The title.
    pub title: &'a str,
    /// The introduction.
    pub description: Option<&'a str>,
    /// The consent text.
    pub consent: &'a str,
    /// Each question's texts, in the survey's order.
    pub questions: Vec<QuestionTexts<'a>>,
}

/// One question's texts, in one language.
#[derive(Clone, Debug, PartialEq)]
pub struct QuestionTexts<'a> {
    /// The question.
    pub label: &'a str,
    /// Help.
    pub help: Option<&'a str>,
    /// A categorical question's options (empty for other kinds).
    pub options: Vec<&'a str>,
    /// A Likert scale's label of point 1.
    pub low_label: Option<&'a str>,
    /// A Likert scale's label of its last point.
    pub high_label: Option<&'a str>,
}

/// Whether `tag` has the shape `^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$` (a BCP 47 primary language
/// and subtags, the schema's pattern).
pub fn valid_language_tag(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let primary = parts.next().unwrap_or_default();
    (2..=3).contains(&primary.len())
        && primary.chars().all(|c| c.is_ascii_lowercase())
        && parts.all(|p| (2..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// The primary language subtag, lower case (`"es-MX"` → `"es"`).
fn primary(tag: &str) -> String {
    tag.split('-')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Check `language` and every translation's completeness (module documentation), after the
/// questions themselves are checked.
///
/// # Errors
/// [`SurveyError::Invalid`] naming the field, e.g. `translations.es.questions.smokes.label:
/// missing`.
pub(crate) fn validate_translations(content: &Content<'_>) -> Result<(), SurveyError> {
    const TAG_RULE: &str = "use a BCP 47 language tag such as en, es or pt-BR";
    if !valid_language_tag(content.language) {
        return Err(invalid("language", TAG_RULE));
    }
    let mut seen: Vec<String> = vec![content.language.to_ascii_lowercase()];
    for (tag, t) in content.translations {
        let at = |f: &str| format!("translations.{tag}.{f}");
        if !valid_language_tag(tag) {
            return Err(invalid(format!("translations.{tag}"), TAG_RULE));
        }
        if tag.eq_ignore_ascii_case(content.language) {
            return Err(invalid(
                format!("translations.{tag}"),
                "is the main language: its texts are the survey's own fields",
            ));
        }
        if seen.contains(&tag.to_ascii_lowercase()) {
            return Err(invalid(
                format!("translations.{tag}"),
                "the same language twice (tags ignore case)",
            ));
        }
        seen.push(tag.to_ascii_lowercase());
        required(&t.title, at("title"))?;
        required(&t.consent, at("consent"))?;
        matching(
            t.description.as_deref(),
            content.description.is_some(),
            at("description"),
            "the main texts have no description",
        )?;
        for id in t.questions.keys() {
            if !content.questions.iter().any(|q| q.id == *id) {
                return Err(invalid(
                    at(&format!("questions.{id}")),
                    "there is no such question",
                ));
            }
        }
        for q in content.questions {
            let id = &q.id;
            let at = |f: &str| format!("translations.{tag}.questions.{id}{f}");
            let Some(qt) = t.questions.get(id) else {
                return Err(invalid(at(""), "missing"));
            };
            required(&qt.label, at(".label"))?;
            matching(
                qt.help.as_deref(),
                q.help.is_some(),
                at(".help"),
                "the question has no help in the main language",
            )?;
            let likert = matches!(q.kind, QuestionKind::Likert { .. });
            matching(
                qt.low_label.as_deref(),
                likert,
                at(".low_label"),
                "only Likert questions have scale labels",
            )?;
            matching(
                qt.high_label.as_deref(),
                likert,
                at(".high_label"),
                "only Likert questions have scale labels",
            )?;
            match (&q.kind, &qt.options) {
                (QuestionKind::Categorical { options }, Some(translated)) => {
                    if translated.len() != options.len() {
                        return Err(invalid(
                            at(".options"),
                            format!(
                                "{} options for the main language's {}",
                                translated.len(),
                                options.len()
                            ),
                        ));
                    }
                    let mut distinct: Vec<&str> = translated.iter().map(|o| o.trim()).collect();
                    distinct.sort_unstable();
                    distinct.dedup();
                    if distinct.len() != translated.len() || distinct.iter().any(|o| o.is_empty()) {
                        return Err(invalid(
                            at(".options"),
                            "options must be non-empty and distinct",
                        ));
                    }
                }
                (QuestionKind::Categorical { .. }, None) => {
                    return Err(invalid(at(".options"), "missing"));
                }
                (_, Some(_)) => {
                    return Err(invalid(
                        at(".options"),
                        "only categorical questions have options",
                    ));
                }
                (_, None) => {}
            }
        }
    }
    Ok(())
}

/// A translated text that must be there and not blank.
fn required(text: &str, field: String) -> Result<(), SurveyError> {
    if text.trim().is_empty() {
        return Err(invalid(field, "missing"));
    }
    Ok(())
}

/// A translated text present exactly when `expected` (then not blank).
fn matching(
    text: Option<&str>,
    expected: bool,
    field: String,
    unexpected: &str,
) -> Result<(), SurveyError> {
    match text {
        None if expected => Err(invalid(field, "missing")),
        Some(_) if !expected => Err(invalid(field, unexpected)),
        Some(t) => required(t, field),
        None => Ok(()),
    }
}

/// The languages a survey offers: the main language first, then the translations in key order
/// (for a definition, [`SurveyDefinition::languages`]; the team's preview of a draft calls it).
pub fn offered<'a>(
    language: &'a str,
    translations: &'a BTreeMap<String, Translation>,
) -> Vec<&'a str> {
    std::iter::once(language)
        .chain(translations.keys().map(String::as_str))
        .collect()
}

impl SurveyDefinition {
    /// The languages offered: the main language first, then the translations in key order.
    pub fn languages(&self) -> Vec<&str> {
        offered(&self.language, &self.translations)
    }

    /// Everything a participant reads, in `language` (the main language for a tag the survey
    /// does not offer; a text a translation lacks, which validation refuses, in the main
    /// language too).
    pub fn texts(&self, language: &str) -> SurveyTexts<'_> {
        let translated = self
            .translations
            .get_key_value(language)
            .filter(|_| language != self.language);
        let Some((tag, t)) = translated else {
            return SurveyTexts {
                language: &self.language,
                title: &self.title,
                description: self.description.as_deref(),
                consent: &self.consent,
                questions: self.questions.iter().map(main_texts).collect(),
            };
        };
        SurveyTexts {
            language: tag,
            title: non_empty(&t.title).unwrap_or(&self.title),
            description: self
                .description
                .as_ref()
                .map(|main| t.description.as_deref().and_then(non_empty).unwrap_or(main)),
            consent: non_empty(&t.consent).unwrap_or(&self.consent),
            questions: self
                .questions
                .iter()
                .map(|q| {
                    let main = main_texts(q);
                    let Some(qt) = t.questions.get(&q.id) else {
                        return main;
                    };
                    let options = match &qt.options {
                        Some(o) if o.len() == main.options.len() => {
                            o.iter().map(String::as_str).collect()
                        }
                        _ => main.options.clone(),
                    };
                    QuestionTexts {
                        label: non_empty(&qt.label).unwrap_or(main.label),
                        help: main
                            .help
                            .map(|h| qt.help.as_deref().and_then(non_empty).unwrap_or(h)),
                        options,
                        low_label: main
                            .low_label
                            .map(|l| qt.low_label.as_deref().and_then(non_empty).unwrap_or(l)),
                        high_label: main
                            .high_label
                            .map(|l| qt.high_label.as_deref().and_then(non_empty).unwrap_or(l)),
                    }
                })
                .collect(),
        }
    }

    /// The language to show a browser whose preferences are `preferences` (its
    /// `navigator.languages`, most preferred first): for each preference in order, an offered
    /// tag equal to it (ignoring case), else one with the same primary subtag (`es-MX` gets
    /// `es`, `es` gets `es-ES`); the main language when none matches.
    pub fn preferred_language(&self, preferences: &[String]) -> &str {
        let offered = self.languages();
        for wanted in preferences {
            if let Some(tag) = offered.iter().find(|t| t.eq_ignore_ascii_case(wanted)) {
                return tag;
            }
            let wanted = primary(wanted);
            if let Some(tag) = offered.iter().find(|t| primary(t) == wanted) {
                return tag;
            }
        }
        &self.language
    }
}

/// A question's texts in the main language.
fn main_texts(q: &Question) -> QuestionTexts<'_> {
    let (options, low_label, high_label) = match &q.kind {
        QuestionKind::Categorical { options } => {
            (options.iter().map(String::as_str).collect(), None, None)
        }
        QuestionKind::Likert {
            low_label,
            high_label,
            ..
        } => (
            Vec::new(),
            Some(low_label.as_str()),
            Some(high_label.as_str()),
        ),
        _ => (Vec::new(), None, None),
    };
    QuestionTexts {
        label: &q.label,
        help: q.help.as_deref(),
        options,
        low_label,
        high_label,
    }
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::Answer;
    use crate::definition::QuestionTranslation;

    const SAMPLE: &str = include_str!("../../../www/surveys/wellbeing-optional.json");

    /// The wellbeing sample (smoker yes/no, drinks integer, sleep number, mood Likert, work
    /// categorical) with a complete Spanish translation and a description.
    fn bilingual() -> SurveyDefinition {
        let mut s = SurveyDefinition::parse(SAMPLE, "wellbeing-optional.json").unwrap();
        s.questions[0].help = Some("Cigarettes, cigars or pipes.".into());
        let q = |label: &str| QuestionTranslation {
            label: label.into(),
            ..QuestionTranslation::default()
        };
        let questions = BTreeMap::from([
            (
                "smoker".to_owned(),
                QuestionTranslation {
                    help: Some("Cigarrillos, puros o pipa.".into()),
                    ..q("¿Fuma actualmente?")
                },
            ),
            (
                "drinks".into(),
                q("¿Cuántas bebidas alcohólicas tomó la semana pasada?"),
            ),
            ("sleep".into(), q("Horas de sueño por noche, en promedio")),
            (
                "mood".into(),
                QuestionTranslation {
                    low_label: Some("muy malo".into()),
                    high_label: Some("muy bueno".into()),
                    ..q("¿Cómo calificaría su ánimo en el último mes?")
                },
            ),
            (
                "work".into(),
                QuestionTranslation {
                    options: Some(
                        [
                            "con empleo",
                            "por cuenta propia",
                            "estudiante",
                            "sin trabajo",
                        ]
                        .map(String::from)
                        .to_vec(),
                    ),
                    ..q("¿Qué describe mejor su trabajo?")
                },
            ),
        ]);
        s.translations.insert(
            "es".into(),
            Translation {
                title: "Salud y bienestar".into(),
                description: Some("Una demostración.".into()),
                consent: "Es una encuesta de demostración.".into(),
                questions,
            },
        );
        s
    }

    #[test]
    fn language_tags_follow_the_schema_pattern() {
        for good in ["en", "es", "pt-BR", "zh-Hant-TW", "ast", "es-419"] {
            assert!(valid_language_tag(good), "{good}");
        }
        for bad in [
            "",
            "E",
            "EN",
            "english",
            "es_MX",
            "es-",
            "es-M",
            "es-toolongtag",
            "es--MX",
        ] {
            assert!(!valid_language_tag(bad), "{bad}");
        }
    }

    #[test]
    fn texts_come_in_the_asked_language_and_fall_back_to_the_main_one() {
        let s = bilingual();
        s.validate().unwrap();
        assert_eq!(s.languages(), ["en", "es"]);
        let es = s.texts("es");
        assert_eq!(es.language, "es");
        assert_eq!(es.title, "Salud y bienestar");
        assert_eq!(es.description, Some("Una demostración."));
        assert_eq!(es.questions[0].help, Some("Cigarrillos, puros o pipa."));
        assert_eq!(es.questions[3].low_label, Some("muy malo"));
        assert_eq!(es.questions[4].options[2], "estudiante");
        assert!(es.questions[1].options.is_empty());
        let en = s.texts("en");
        assert_eq!(en.language, "en");
        assert_eq!(en.title, s.title);
        assert_eq!(en.questions[4].options[2], "student");
        assert_eq!(en.questions[3].high_label, Some("very good"));
        // A tag the survey does not offer gets the main language.
        assert_eq!(s.texts("fr"), en);
    }

    #[test]
    fn the_browser_preferences_choose_the_language() {
        let mut s = bilingual();
        let es = s.translations["es"].clone();
        s.translations.insert("pt-BR".into(), es);
        let pick = |prefs: &[&str]| {
            let prefs: Vec<String> = prefs.iter().map(|p| (*p).to_owned()).collect();
            s.preferred_language(&prefs).to_owned()
        };
        assert_eq!(pick(&["ES"]), "es");
        assert_eq!(pick(&["es-MX", "en"]), "es");
        assert_eq!(pick(&["pt"]), "pt-BR");
        assert_eq!(pick(&["pt-br"]), "pt-BR");
        assert_eq!(pick(&["fr", "pt-PT", "es"]), "pt-BR");
        assert_eq!(pick(&["fr", "de"]), "en");
        assert_eq!(pick(&[]), "en");
        assert_eq!(pick(&["en-GB", "es"]), "en");
    }

    /// The same answers give the same record whichever language the participant read: the
    /// coding reads option indices and the main language's column names.
    #[test]
    fn answers_and_columns_do_not_depend_on_the_language() {
        let s = bilingual();
        let mut only_english = s.clone();
        only_english.translations.clear();
        assert_eq!(s.columns(), only_english.columns());
        let answers = [
            Answer::YesNo(true),
            Answer::Integer(3),
            Answer::Number(7.5),
            Answer::Likert(4),
            Answer::Category(2),
        ];
        assert_eq!(
            s.encode(&answers).unwrap(),
            only_english.encode(&answers).unwrap()
        );
        let names: Vec<String> = s.columns().into_iter().map(|c| c.name).collect();
        assert!(names.contains(&"work=student".to_owned()), "{names:?}");
        assert!(!names.iter().any(|n| n.contains("estudiante")));
    }

    #[test]
    fn an_incomplete_or_misplaced_translation_is_refused_naming_the_field() {
        let refusal = |change: Change| {
            let mut s = bilingual();
            change(&mut s);
            let e = s.validate().unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
            e
        };
        fn es(s: &mut SurveyDefinition) -> &mut Translation {
            s.translations.get_mut("es").unwrap()
        }
        type Change = fn(&mut SurveyDefinition);
        let cases: Vec<(Change, &str)> = vec![
            (|s| s.language = "English".into(), "language: use a BCP 47"),
            (
                |s| {
                    let t = s.translations.remove("es").unwrap();
                    s.translations.insert("ES".into(), t);
                },
                "translations.ES: use a BCP 47",
            ),
            (
                |s| {
                    let t = s.translations["es"].clone();
                    s.translations.insert("en".into(), t);
                },
                "translations.en: is the main language",
            ),
            (|s| es(s).title.clear(), "translations.es.title: missing"),
            (
                |s| es(s).consent = " ".into(),
                "translations.es.consent: missing",
            ),
            (
                |s| es(s).description = None,
                "translations.es.description: missing",
            ),
            (
                |s| s.description = None,
                "translations.es.description: the main texts have no description",
            ),
            (
                |s| {
                    es(s).questions.remove("sleep");
                },
                "translations.es.questions.sleep: missing",
            ),
            (
                |s| es(s).questions.get_mut("smoker").unwrap().label.clear(),
                "translations.es.questions.smoker.label: missing",
            ),
            (
                |s| es(s).questions.get_mut("smoker").unwrap().help = None,
                "translations.es.questions.smoker.help: missing",
            ),
            (
                |s| es(s).questions.get_mut("sleep").unwrap().help = Some("x".into()),
                "translations.es.questions.sleep.help: the question has no help",
            ),
            (
                |s| es(s).questions.get_mut("work").unwrap().options = None,
                "translations.es.questions.work.options: missing",
            ),
            (
                |s| {
                    es(s).questions.get_mut("work").unwrap().options =
                        Some(vec!["a".into(), "b".into()])
                },
                "translations.es.questions.work.options: 2 options for the main language's 4",
            ),
            (
                |s| {
                    es(s).questions.get_mut("work").unwrap().options =
                        Some(["a", "b", "a", "c"].map(String::from).to_vec())
                },
                "translations.es.questions.work.options: options must be non-empty and distinct",
            ),
            (
                |s| es(s).questions.get_mut("sleep").unwrap().options = Some(vec!["a".into()]),
                "translations.es.questions.sleep.options: only categorical questions",
            ),
            (
                |s| es(s).questions.get_mut("mood").unwrap().high_label = None,
                "translations.es.questions.mood.high_label: missing",
            ),
            (
                |s| es(s).questions.get_mut("smoker").unwrap().low_label = Some("x".into()),
                "translations.es.questions.smoker.low_label: only Likert questions",
            ),
            (
                |s| {
                    es(s)
                        .questions
                        .insert("nobody".into(), QuestionTranslation::default());
                },
                "translations.es.questions.nobody: there is no such question",
            ),
        ];
        for (change, expected) in cases {
            let e = refusal(change);
            assert!(
                e.starts_with(&format!("survey definition: {expected}")),
                "{e}\nexpected: {expected}"
            );
        }
    }

    #[test]
    fn language_and_translations_keep_their_json_shape() {
        let s = bilingual();
        let json = serde_json::to_value(&s).unwrap();
        // The default language is not written, so older files keep their shape.
        assert!(json.get("language").is_none());
        assert_eq!(
            json["translations"]["es"]["questions"]["mood"]["low_label"],
            "muy malo"
        );
        assert!(
            json["translations"]["es"]["questions"]["sleep"]
                .get("options")
                .is_none()
        );
        assert_eq!(SurveyDefinition::parse(&s.to_json(), "again").unwrap(), s);
        let mut spanish_first = s.clone();
        spanish_first.language = "pt-BR".into();
        let json = serde_json::to_value(&spanish_first).unwrap();
        assert_eq!(json["language"], "pt-BR");
        // Without translations the definition's JSON has no such field.
        let plain = SurveyDefinition::parse(SAMPLE, "wellbeing-optional.json").unwrap();
        assert!(
            serde_json::to_value(&plain)
                .unwrap()
                .get("translations")
                .is_none()
        );
        assert_eq!(plain.language, "en");
        // A misspelt field of a translation is refused.
        let typo = s
            .to_json()
            .replace("\"low_label\": \"muy malo\"", "\"low_lable\": \"x\"");
        assert!(SurveyDefinition::parse(&typo, "typo").is_err());
    }
}
