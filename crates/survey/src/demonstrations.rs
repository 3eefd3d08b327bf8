//! The live demonstrations `orthomask serve all` creates (issue 12 §1): the practice
//! surveys the web app bundles (`www/surveys/*.json`, which send nothing) as drafts the running
//! services plan and collect, so a newcomer can take one, get a receipt, let simulated
//! participants fill the cohort, close it and read the release.
//!
//! Every draft is a [`SurveyDraft::demonstration`]: open to anyone without an invitation, which
//! in the basic protocol hands the cohort's device key to whoever opens it — the weakness of
//! teaching keys, and labelled as such in the definition, the plan and the manifest. Cohorts are
//! the smallest the plan accepts (`p₁ + 1`, seed 000's `p₁ < n`), so a handful of simulated
//! participants closes one.
//!
//! The questions and their translations are those of the bundled files, word for word (tested
//! against them).

use crate::definition::{
    Condition, ConditionValue, Question, QuestionKind, QuestionTranslation, ShowIf, Translation,
};
use crate::draft::SurveyDraft;
use std::collections::BTreeMap;

/// The demonstration drafts, in the order a newcomer meets them. `shares-demo` (share mode) is
/// included only when `share_mode_available`: the deployment runs at least
/// [`crate::policy::MIN_SHARE_SERVICES`] right-masking services (the plan refuses share mode
/// over fewer).
pub fn demonstration_drafts(share_mode_available: bool) -> Vec<SurveyDraft> {
    let mut drafts = vec![leaps(), wellbeing(), habits()];
    if share_mode_available {
        drafts.push(shares());
    }
    drafts
}

fn question(id: &str, label: &str, kind: QuestionKind) -> Question {
    Question {
        id: id.into(),
        label: label.into(),
        help: None,
        optional: false,
        show_if: None,
        kind,
    }
}

fn optional(q: Question) -> Question {
    Question {
        optional: true,
        ..q
    }
}

fn demonstration(
    id: &str,
    title: &str,
    description: &str,
    consent: &str,
    questions: Vec<Question>,
    cohort_size: usize,
) -> SurveyDraft {
    SurveyDraft {
        id: id.into(),
        title: title.into(),
        description: Some(description.into()),
        consent: consent.into(),
        language: crate::languages::default_language(),
        translations: std::collections::BTreeMap::new(),
        questions,
        terms: Vec::new(),
        cohort_size: Some(cohort_size),
        min_cohort_size: None,
        dp: None,
        share_mode: false,
        invitations: false,
        demonstration: true,
    }
}

/// What every demonstration's consent adds: its device key is not a secret.
const NOT_PRIVATE: &str = "Because anyone may open it, the key that scrambles your answers is \
    handed to everyone who does: do not enter real personal information.";

/// The LEAPS questions of seed 003, Table 2: 8 answer columns, `p₁ = 9`, cohorts of 10.
fn leaps() -> SurveyDraft {
    use QuestionKind::{Integer, Number, YesNo};
    let mut bbs = question(
        "bbs",
        "Berg Balance Scale score",
        Integer { min: 0, max: 56 },
    );
    bbs.help = Some("Sitting, standing, reaching, shifting weight and turning; 0 to 56.".into());
    demonstration(
        "leaps-demo",
        "Walking after a stroke (live demonstration)",
        "A demonstration copy of the LEAPS questions of Wu et al. (2017), Table 2, collected by \
         the running services. Your answers are masked on this device before anything is sent.",
        &format!(
            "This is a demonstration survey. Your answers are combined with random noise and \
             scrambled on this device; only the scrambled numbers are sent. The published table \
             preserves only averages and correlations. {NOT_PRIVATE}"
        ),
        vec![
            question(
                "response",
                "Did your walking improve to a higher functional level one year after the stroke?",
                YesNo,
            ),
            question(
                "group",
                "Were you in the locomotor training program (rather than home exercise)?",
                YesNo,
            ),
            question(
                "delta",
                "Change in walking speed from 2 to 12 months after the stroke (metres per second)",
                Number {
                    min: -1.0,
                    max: 2.0,
                },
            ),
            question(
                "age",
                "Age at the time of the stroke (years)",
                Integer { min: 18, max: 100 },
            ),
            bbs,
            question(
                "ih",
                "Were you admitted to hospital after the start of the study?",
                YesNo,
            ),
            question(
                "mif",
                "Did you have multiple or injurious falls after the start of the study?",
                YesNo,
            ),
            question(
                "adl",
                "Activities of daily living score (0 to 100)",
                Number {
                    min: 0.0,
                    max: 100.0,
                },
            ),
        ],
        10,
    )
}

/// Every question type, some optional: 10 answer columns (an optional question adds its
/// `_answered` column, a categorical one a dummy per option but the first), `p₁ = 11`, cohorts
/// of 12.
fn wellbeing() -> SurveyDraft {
    use QuestionKind::{Categorical, Integer, Likert, Number, YesNo};
    demonstration(
        "wellbeing-optional",
        "Health and wellbeing (live demonstration with optional questions)",
        "A demonstration of every question type: yes/no, whole numbers, numbers, a Likert scale \
         and a categorical item, some of them optional. Skipped optional questions are coded \
         explicitly: a column id_answered is 0 and the value takes a neutral value.",
        &format!(
            "This is a demonstration survey. Your answers are padded with random noise and \
             scrambled on this device; only scrambled numbers are sent. You may skip the \
             optional questions and stop at any time. {NOT_PRIVATE}"
        ),
        vec![
            question("smoker", "Do you currently smoke?", YesNo),
            optional(question(
                "drinks",
                "How many alcoholic drinks did you have last week?",
                Integer { min: 0, max: 100 },
            )),
            question(
                "sleep",
                "Average hours of sleep per night",
                Number {
                    min: 0.0,
                    max: 24.0,
                },
            ),
            optional(question(
                "mood",
                "How would you rate your mood over the past month?",
                Likert {
                    points: 5,
                    low_label: "very poor".into(),
                    high_label: "very good".into(),
                },
            )),
            optional(question(
                "work",
                "Which best describes your work?",
                Categorical {
                    options: ["employed", "self-employed", "student", "not working"]
                        .map(String::from)
                        .to_vec(),
                },
            )),
        ],
        12,
    )
}

/// Skip logic and a second language (issue 13 §2–3): every kind of condition, and the whole
/// survey in Spanish. 15 answer columns (each conditional question adds its `_answered` column),
/// `p₁ = 16`, cohorts of 17.
fn habits() -> SurveyDraft {
    use QuestionKind::{Categorical, Integer, Likert, Number, YesNo};
    let when = |question: &str, condition| {
        Some(ShowIf {
            question: question.into(),
            condition,
        })
    };
    let text = |t: &str| ConditionValue::Text(t.into());
    let mut cigarettes = question(
        "cigarettes",
        "How many cigarettes do you smoke on a typical day?",
        Integer { min: 1, max: 60 },
    );
    cigarettes.help = Some("Count roll-ups and cigars as cigarettes.".into());
    cigarettes.show_if = when("smokes", Condition::Equals(text("yes")));
    let mut relax = question(
        "relax",
        "What helps you most to unwind?",
        Categorical {
            options: ["Reading", "Sport", "Music", "Nothing in particular"]
                .map(String::from)
                .to_vec(),
        },
    );
    relax.show_if = when("stress", Condition::Range { min: 4.0, max: 5.0 });
    let mut per_week = question(
        "drinks_per_week",
        "About how many alcoholic drinks do you have in a week?",
        Integer { min: 1, max: 50 },
    );
    per_week.show_if = when(
        "drinks",
        Condition::OneOf(vec![text("Weekly"), text("Daily")]),
    );
    let draft = demonstration(
        "habits-branching",
        "Everyday habits (live demonstration of branching, English and Spanish)",
        "A demonstration of skip logic and of a survey in two languages: some questions are \
         asked only after certain answers, and a question that is not asked is coded like a \
         skipped optional one (its column id_answered is 0). Choose English or Spanish.",
        &format!(
            "This is a demonstration survey. Your answers are padded with random noise and \
             scrambled on this device; only scrambled numbers are sent. Questions that do not \
             apply to you are skipped automatically. You may stop at any time. {NOT_PRIVATE}"
        ),
        vec![
            question("smokes", "Do you smoke tobacco, even occasionally?", YesNo),
            cigarettes,
            question(
                "exercise_days",
                "On how many days last week did you exercise for at least 30 minutes?",
                Integer { min: 0, max: 7 },
            ),
            question(
                "sleep_hours",
                "How many hours do you sleep on an average night?",
                Number {
                    min: 3.0,
                    max: 12.0,
                },
            ),
            question(
                "stress",
                "How stressed have you felt over the past month?",
                Likert {
                    points: 5,
                    low_label: "not at all".into(),
                    high_label: "extremely".into(),
                },
            ),
            relax,
            question(
                "drinks",
                "How often do you drink alcohol?",
                Categorical {
                    options: ["Never", "Monthly", "Weekly", "Daily"]
                        .map(String::from)
                        .to_vec(),
                },
            ),
            per_week,
        ],
        17,
    );
    SurveyDraft {
        translations: BTreeMap::from([("es".to_owned(), habits_in_spanish())]),
        ..draft
    }
}

/// The Spanish texts of [`habits`].
fn habits_in_spanish() -> Translation {
    let label = label_only;
    let options = |label: &str, options: [&str; 4]| QuestionTranslation {
        options: Some(options.map(String::from).to_vec()),
        ..label_only(label)
    };
    let questions = [
        (
            "smokes",
            label("¿Fuma tabaco, aunque sea de vez en cuando?"),
        ),
        (
            "cigarettes",
            QuestionTranslation {
                help: Some("Cuente los cigarrillos liados y los puros como cigarrillos.".into()),
                ..label("¿Cuántos cigarrillos fuma en un día normal?")
            },
        ),
        (
            "exercise_days",
            label("¿Cuántos días de la semana pasada hizo ejercicio al menos 30 minutos?"),
        ),
        (
            "sleep_hours",
            label("¿Cuántas horas duerme en una noche normal?"),
        ),
        (
            "stress",
            QuestionTranslation {
                low_label: Some("nada".into()),
                high_label: Some("muchísimo".into()),
                ..label("¿Cuánto estrés ha sentido durante el último mes?")
            },
        ),
        (
            "relax",
            options(
                "¿Qué le ayuda más a relajarse?",
                [
                    "Leer",
                    "Hacer deporte",
                    "Escuchar música",
                    "Nada en particular",
                ],
            ),
        ),
        (
            "drinks",
            options(
                "¿Con qué frecuencia bebe alcohol?",
                ["Nunca", "Cada mes", "Cada semana", "A diario"],
            ),
        ),
        (
            "drinks_per_week",
            label("¿Cuántas bebidas alcohólicas toma, más o menos, en una semana?"),
        ),
    ];
    Translation {
        title: "Hábitos cotidianos (demostración en vivo de preguntas condicionales, inglés y \
                español)"
            .into(),
        description: Some(
            "Una demostración de preguntas condicionales y de una encuesta en dos idiomas: \
             algunas preguntas solo se hacen después de ciertas respuestas, y una pregunta que \
             no se hace se codifica como una pregunta opcional omitida (su columna id_answered \
             vale 0). Elija inglés o español."
                .into(),
        ),
        consent: "Esta es una encuesta de demostración. Sus respuestas se completan con ruido \
                  aleatorio y se enmascaran en este dispositivo; solo se envían números \
                  enmascarados. Las preguntas que no le corresponden se omiten automáticamente. \
                  Puede parar en cualquier momento. Como cualquiera puede abrirla, la clave que \
                  enmascara sus respuestas se entrega a todo el que la abre: no introduzca \
                  información personal real."
            .into(),
        questions: questions
            .into_iter()
            .map(|(id, t)| (id.to_owned(), t))
            .collect(),
    }
}

fn label_only(label: &str) -> QuestionTranslation {
    QuestionTranslation {
        label: label.into(),
        ..QuestionTranslation::default()
    }
}

/// Share mode (seed 000 §3.5): 2 answer columns, `p₁ = 3`, cohorts of 5 (the policy's anonymity set). No device key exists,
/// so it would not need the demonstration exception; it is labelled all the same.
fn shares() -> SurveyDraft {
    use QuestionKind::{Integer, YesNo};
    SurveyDraft {
        share_mode: true,
        ..demonstration(
            "shares-demo",
            "Collusion-resistant collection (live demonstration of share mode)",
            "The record is split into random additive shares, one for each right-masking \
             service, so no single device key can unmask it (Ding, Miao and Wu 2020, section \
             3.5).",
            "This is a demonstration survey. Your answers are padded with random noise and \
             split into random parts on this device; each part goes to a different service and \
             none of them alone says anything about you. Do not enter real personal information.",
            vec![
                question(
                    "ih",
                    "Were you admitted to hospital in the past year?",
                    YesNo,
                ),
                question("age", "Age (years)", Integer { min: 18, max: 100 }),
            ],
            // The policy's anonymity set (five), the smallest cohort any survey may have.
            5,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::SurveyDefinition;
    use crate::draft::{DraftError, Endpoints, plan_survey};
    use crate::tolerance::HAND_COMPUTED;
    use orthomask_core::key::Key;

    const BUNDLED: [(&str, &str); 4] = [
        (
            "leaps-demo",
            include_str!("../../../www/surveys/leaps-demo.json"),
        ),
        (
            "wellbeing-optional",
            include_str!("../../../www/surveys/wellbeing-optional.json"),
        ),
        (
            "habits-branching",
            include_str!("../../../www/surveys/habits-branching.json"),
        ),
        (
            "shares-demo",
            include_str!("../../../www/surveys/shares-demo.json"),
        ),
    ];

    fn endpoints(rights: &[String]) -> Endpoints<'_> {
        Endpoints {
            provider: "http://127.0.0.1:8081",
            right_services: rights,
        }
    }

    fn three_rights() -> Vec<String> {
        vec![
            "http://127.0.0.1:8082".into(),
            "http://127.0.0.1:8083".into(),
            "http://127.0.0.1:8084".into(),
        ]
    }

    #[test]
    fn every_demonstration_plans_with_the_smallest_cohort_the_plan_accepts() {
        let rights = three_rights();
        for draft in demonstration_drafts(true) {
            let planned = plan_survey(&draft, endpoints(&rights))
                .unwrap_or_else(|e| panic!("{}: {e}", draft.id));
            assert!(planned.plan.demonstration, "{}", draft.id);
            assert!(planned.template.masking.teaching, "{}", draft.id);
            assert!(!planned.plan.invitations, "{}", draft.id);
            assert_eq!(
                draft.cohort_size,
                Some(crate::policy::cohort_floor(planned.plan.masking.p1)),
                "{}: seed 000 needs p1 < n, the policy an anonymity set of five",
                draft.id
            );
            assert_eq!(Some(planned.plan.min_cohort_size), draft.cohort_size);
            let smaller = SurveyDraft {
                cohort_size: draft.cohort_size.map(|m| m - 1),
                ..draft.clone()
            };
            assert!(matches!(
                plan_survey(&smaller, endpoints(&rights)),
                Err(DraftError::CohortTooSmall { .. })
            ));
            assert!(draft.title.contains("demonstration"), "{}", draft.id);
            assert!(draft.consent.contains("demonstration"), "{}", draft.id);
        }
    }

    #[test]
    fn share_mode_only_where_it_is_available() {
        let ids = |v: Vec<SurveyDraft>| v.into_iter().map(|d| d.id).collect::<Vec<_>>();
        assert_eq!(
            ids(demonstration_drafts(true)),
            [
                "leaps-demo",
                "wellbeing-optional",
                "habits-branching",
                "shares-demo"
            ]
        );
        assert_eq!(
            ids(demonstration_drafts(false)),
            ["leaps-demo", "wellbeing-optional", "habits-branching"]
        );
        for draft in demonstration_drafts(false) {
            assert!(plan_survey(&draft, endpoints(&[])).is_ok(), "{}", draft.id);
        }
        let shares = demonstration_drafts(true);
        assert!(shares.iter().filter(|d| d.share_mode).count() == 1);
    }

    #[test]
    fn ids_are_unique() {
        let drafts = demonstration_drafts(true);
        let mut ids: Vec<&str> = drafts.iter().map(|d| d.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), drafts.len());
    }

    #[test]
    fn the_questions_are_the_bundled_practice_surveys() {
        let drafts = demonstration_drafts(true);
        for (id, text) in BUNDLED {
            let bundled = SurveyDefinition::parse(text, id).unwrap();
            let draft = drafts.iter().find(|d| d.id == id).unwrap();
            assert_eq!(draft.questions, bundled.questions, "{id}");
            assert_eq!(draft.language, bundled.language, "{id}");
            // The questions' translations word for word; the titles and consents differ as
            // the English ones do (live or practice).
            let questions = |t: &BTreeMap<String, Translation>| {
                t.iter()
                    .map(|(tag, t)| (tag.clone(), t.questions.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                questions(&draft.translations),
                questions(&bundled.translations),
                "{id}"
            );
        }
    }

    /// The bundled practice copy is the live demonstration as the collector plans it: the same
    /// masking parameters for the same cohort size, a teaching key, every condition kind and a
    /// complete Spanish translation.
    #[test]
    fn the_branching_demonstration_is_planned_as_bundled() {
        let draft = habits();
        let bundled = SurveyDefinition::parse(BUNDLED[2].1, BUNDLED[2].0).unwrap();
        let planned = plan_survey(&draft, endpoints(&[])).unwrap();
        let m = &bundled.masking;
        let planned_m = &planned.template.masking;
        assert_eq!(
            (m.p2, m.cohort_size, m.scaling, m.qa_constant),
            (
                planned_m.p2,
                planned_m.cohort_size,
                planned_m.scaling,
                planned_m.qa_constant
            )
        );
        assert!((m.sigma - planned_m.sigma).abs() <= HAND_COMPUTED * planned_m.sigma);
        assert!(m.teaching);
        assert_eq!(
            bundled.right_mask_key().unwrap().to_hex(),
            Key::teaching(13).to_hex()
        );
        assert_eq!(bundled.columns(), planned.template.columns());
        assert_eq!(bundled.languages(), ["en", "es"]);
        let kinds: Vec<&str> = bundled
            .questions
            .iter()
            .filter_map(|q| q.show_if.as_ref())
            .map(|s| match s.condition {
                Condition::Equals(_) => "equals",
                Condition::OneOf(_) => "one_of",
                Condition::Range { .. } => "range",
            })
            .collect();
        assert_eq!(kinds, ["equals", "range", "one_of"]);
        assert_eq!(bundled.texts("es").questions[6].options[3], "A diario");
    }
}
