//! Skip logic: a question shown only when an earlier answer meets a condition (issue 13 §2).
//!
//! ```json
//! "show_if": {"question": "smokes", "equals": "yes"}
//! "show_if": {"question": "drinks", "one_of": ["Weekly", "Daily"]}
//! "show_if": {"question": "stress", "range": {"min": 4, "max": 5}}
//! ```
//!
//! A condition compares the answer to an **earlier** question: `"yes"`/`"no"` for a yes/no
//! question, an option's text in the main language for a categorical one, a number for integer,
//! number and Likert questions (`range` is inclusive and only for those three). Question `i` is
//! shown when it has no condition, or when its referenced question is shown, answered and meets
//! the condition — so a chain A → B → C hides C whenever B is hidden.
//!
//! The masked matrix must be complete, so a conditional question always has its `id_answered`
//! column and a hidden one is coded exactly like a skipped optional item ([`crate::coding`]):
//! analysts restrict to the answered subgroup through that column.
//!
//! The condition as written ([`ShowIf`], [`Condition`], [`ConditionValue`]) is part of the
//! definition's JSON shape, [`crate::definition`]; this module says what it means: which
//! questions are shown, which conditions a definition may hold (`validate_show_if`, run by
//! [`crate::validation`]), and the one line the team's preview shows.

use crate::coding::Answer;
use crate::definition::{
    Condition, ConditionValue, Question, QuestionKind, ShowIf, SurveyDefinition,
};
use crate::error::{SurveyError, invalid};

impl std::fmt::Display for ConditionValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Number(x) => write!(f, "{x}"),
            Self::Text(t) => f.write_str(t),
        }
    }
}

/// An answer as a condition sees it.
enum Observed<'a> {
    Number(f64),
    Text(&'a str),
}

/// The answer `answer` to a question of kind `kind` as a condition compares it (`None`:
/// skipped, or not of the question's kind).
fn observe<'a>(kind: &'a QuestionKind, answer: &Answer) -> Option<Observed<'a>> {
    match (kind, answer) {
        (QuestionKind::YesNo, Answer::YesNo(yes)) => {
            Some(Observed::Text(if *yes { "yes" } else { "no" }))
        }
        (QuestionKind::Integer { .. }, Answer::Integer(v)) => Some(Observed::Number(*v as f64)),
        (QuestionKind::Number { .. }, Answer::Number(v)) => Some(Observed::Number(*v)),
        (QuestionKind::Likert { .. }, Answer::Likert(p)) => Some(Observed::Number(f64::from(*p))),
        (QuestionKind::Categorical { options }, Answer::Category(k)) => {
            options.get(*k).map(|o| Observed::Text(o.as_str()))
        }
        _ => None,
    }
}

impl ConditionValue {
    fn matches(&self, observed: &Observed<'_>) -> bool {
        match (self, observed) {
            // Exact comparison is the meaning: integer and Likert answers and the validated
            // values are whole numbers, exactly representable; a number question's `equals`
            // holds for the very number typed.
            (Self::Number(x), Observed::Number(v)) => x == v,
            (Self::Text(t), Observed::Text(o)) => t == o,
            _ => false,
        }
    }
}

impl Condition {
    /// Whether `answer` to a question of kind `kind` meets the condition (a skipped answer
    /// meets none).
    pub fn holds(&self, kind: &QuestionKind, answer: &Answer) -> bool {
        let Some(observed) = observe(kind, answer) else {
            return false;
        };
        match self {
            Self::Equals(value) => value.matches(&observed),
            Self::OneOf(values) => values.iter().any(|v| v.matches(&observed)),
            Self::Range { min, max } => {
                matches!(observed, Observed::Number(v) if *min <= v && v <= *max)
            }
        }
    }
}

impl SurveyDefinition {
    /// Which questions are shown, given the answers (question i shown iff no show_if, or its
    /// referenced question is shown, answered (not Skipped) and meets the condition).
    ///
    /// Total on any input: a missing answer counts as skipped, and a condition on an unknown or
    /// later question (which validation refuses) hides its question.
    pub fn shown(&self, answers: &[Answer]) -> Vec<bool> {
        let mut shown: Vec<bool> = Vec::with_capacity(self.questions.len());
        for i in 0..self.questions.len() {
            let visible = self.shown_given(i, answers, &shown);
            shown.push(visible);
        }
        shown
    }

    /// Whether question `i` is shown, given the answers and the visibility of the questions
    /// before it (`shown_before[j]` for `j < i`): what [`Self::shown`] and the simulated
    /// participants decide in order.
    pub(crate) fn shown_given(&self, i: usize, answers: &[Answer], shown_before: &[bool]) -> bool {
        let Some(question) = self.questions.get(i) else {
            return false;
        };
        let Some(show_if) = &question.show_if else {
            return true;
        };
        let Some(j) = self.questions[..i]
            .iter()
            .position(|q| q.id == show_if.question)
        else {
            return false;
        };
        shown_before.get(j).copied().unwrap_or(false)
            && answers
                .get(j)
                .is_some_and(|a| show_if.condition.holds(&self.questions[j].kind, a))
    }

    /// Same from the form's text fields (a field that does not parse counts as not answered).
    pub fn shown_from_inputs(&self, inputs: &[String]) -> Vec<bool> {
        let answers: Vec<Answer> = self
            .questions
            .iter()
            .enumerate()
            .map(|(i, q)| {
                q.parse_input(crate::coding::field(inputs, i))
                    .unwrap_or(Answer::Skipped)
            })
            .collect();
        self.shown(&answers)
    }

    /// English one-line description for the team's preview, e.g. "shown when smokes is yes",
    /// "shown when drinks is weekly or daily", "shown when stress is from 4 to 5"; None without
    /// show_if (or past the last question).
    pub fn condition_text(&self, question: usize) -> Option<String> {
        Some(self.questions.get(question)?.show_if.as_ref()?.text())
    }
}

impl ShowIf {
    /// The condition in one English line, as [`SurveyDefinition::condition_text`] gives it (the
    /// survey team's preview of a draft calls it directly).
    pub fn text(&self) -> String {
        let what = match &self.condition {
            Condition::Equals(v) => v.to_string(),
            Condition::OneOf(values) => {
                let words: Vec<String> = values.iter().map(ToString::to_string).collect();
                match words.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} or {last}", rest.join(", "))
                    }
                    _ => words.concat(),
                }
            }
            Condition::Range { min, max } => format!("from {min} to {max}"),
        };
        format!("shown when {} is {what}", self.question)
    }
}

/// The kinds of condition (`show_if`'s one key besides `question`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConditionKey {
    /// `equals`: the answer is this value.
    Equals,
    /// `one_of`: the answer is one of these values.
    OneOf,
    /// `range`: the answer is a number from `min` to `max`.
    Range,
}

impl ConditionKey {
    /// The kind of a condition.
    pub fn of(condition: &Condition) -> Self {
        match condition {
            Condition::Equals(_) => Self::Equals,
            Condition::OneOf(_) => Self::OneOf,
            Condition::Range { .. } => Self::Range,
        }
    }
}

/// The kinds of condition an answer of `kind` can meet: any answer equals a value or is one of
/// several; a numeric one (integer, number, Likert: those with declared answers,
/// `numeric_answers`) also lies in a range — the rule `validate_show_if` applies, and the
/// survey team's builder offers.
pub fn conditions_for(kind: &QuestionKind) -> &'static [ConditionKey] {
    if numeric_answers(kind).is_some() {
        &[
            ConditionKey::Equals,
            ConditionKey::OneOf,
            ConditionKey::Range,
        ]
    } else {
        &[ConditionKey::Equals, ConditionKey::OneOf]
    }
}

/// Check question `i`'s `show_if` against the questions before it (called by
/// [`crate::validation::validate_content`] once every question's own fields are checked).
///
/// # Errors
/// [`SurveyError::Invalid`] naming `questions[i].show_if.…`: an unknown, later or the same
/// question; a value of the wrong type or outside the referenced question's answers; an empty
/// `one_of`; a range with `min > max`, non-finite, or holding for no answer.
pub(crate) fn validate_show_if(questions: &[Question], i: usize) -> Result<(), SurveyError> {
    let Some(show_if) = questions.get(i).and_then(|q| q.show_if.as_ref()) else {
        return Ok(());
    };
    let at = |f: &str| format!("questions[{i}].show_if.{f}");
    let target = &show_if.question;
    if *target == questions[i].id {
        return Err(invalid(
            at("question"),
            "a question cannot depend on its own answer",
        ));
    }
    let Some(j) = questions.iter().position(|q| q.id == *target) else {
        return Err(invalid(
            at("question"),
            format!("there is no question {target:?} in this survey"),
        ));
    };
    if j > i {
        return Err(invalid(
            at("question"),
            format!("{target:?} comes later; a condition may only use an earlier question"),
        ));
    }
    let kind = &questions[j].kind;
    match &show_if.condition {
        Condition::Equals(value) => {
            check_value(target, kind, value).map_err(|reason| invalid(at("equals"), reason))
        }
        Condition::OneOf(values) => {
            if values.is_empty() {
                return Err(invalid(at("one_of"), "list at least one value"));
            }
            for (k, value) in values.iter().enumerate() {
                let field = at(&format!("one_of[{k}]"));
                check_value(target, kind, value)
                    .map_err(|reason| invalid(field.clone(), reason))?;
                if values[..k].contains(value) {
                    return Err(invalid(field, format!("{value} is listed twice")));
                }
            }
            Ok(())
        }
        Condition::Range { min, max } => {
            check_range(target, kind, *min, *max).map_err(|reason| invalid(at("range"), reason))
        }
    }
}

/// The declared answers of a numeric question: its range and whether answers are whole.
fn numeric_answers(kind: &QuestionKind) -> Option<(f64, f64, bool)> {
    match kind {
        QuestionKind::Integer { min, max } => Some((*min as f64, *max as f64, true)),
        QuestionKind::Number { min, max } => Some((*min, *max, false)),
        QuestionKind::Likert { points, .. } => Some((1.0, f64::from(*points), true)),
        QuestionKind::YesNo | QuestionKind::Categorical { .. } => None,
    }
}

/// Why `value` can never be an answer to `target` (of kind `kind`), if it cannot.
fn check_value(target: &str, kind: &QuestionKind, value: &ConditionValue) -> Result<(), String> {
    match (kind, value) {
        (QuestionKind::YesNo, ConditionValue::Text(t)) if t == "yes" || t == "no" => Ok(()),
        (QuestionKind::YesNo, _) => Err(format!(
            "{target} is a yes/no question: use \"yes\" or \"no\""
        )),
        (QuestionKind::Categorical { options }, ConditionValue::Text(t)) => {
            if options.contains(t) {
                Ok(())
            } else {
                Err(format!(
                    "{t:?} is not an option of {target} ({})",
                    options.join(", ")
                ))
            }
        }
        (QuestionKind::Categorical { .. }, ConditionValue::Number(_)) => Err(format!(
            "{target} is categorical: use an option's text in the main language"
        )),
        (_, ConditionValue::Text(t)) => Err(format!("{target} takes numbers, not {t:?}")),
        (_, ConditionValue::Number(x)) => {
            let Some((lo, hi, whole)) = numeric_answers(kind) else {
                return Err(format!("{target} does not take numbers"));
            };
            if !x.is_finite() {
                return Err(format!("{x} is not a finite number"));
            }
            if whole && x.fract() != 0.0 {
                return Err(format!("{target} takes whole numbers, so {x} never occurs"));
            }
            if *x < lo || *x > hi {
                return Err(format!(
                    "{x} is outside {target}'s answers {lo} to {hi}, so the condition never holds"
                ));
            }
            Ok(())
        }
    }
}

/// Why `[min, max]` is not a usable range condition on `target`, if it is not.
fn check_range(target: &str, kind: &QuestionKind, min: f64, max: f64) -> Result<(), String> {
    let Some((lo, hi, whole)) = numeric_answers(kind) else {
        return Err(format!(
            "{target} is not a number, integer or Likert question: use equals or one_of"
        ));
    };
    if !(min.is_finite() && max.is_finite()) {
        return Err("min and max must be finite numbers".into());
    }
    if min > max {
        return Err(format!("min {min} exceeds max {max}"));
    }
    // The answers that meet it: [min, max] ∩ [lo, hi], whole numbers only for integer and
    // Likert questions. An empty set is a question no participant could ever see.
    let (from, to) = (min.max(lo), max.min(hi));
    let empty = if whole {
        from.ceil() > to.floor()
    } else {
        from > to
    };
    if empty {
        return Err(format!(
            "no answer of {target} ({lo} to {hi}) lies from {min} to {max}, so the condition \
             never holds"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::AnswerError;
    use crate::definition::QuestionKind::{Categorical, Integer, Likert, Number, YesNo};

    const SAMPLE: &str = include_str!("../../../www/surveys/leaps-demo.json");

    fn question(id: &str, kind: QuestionKind, show_if: Option<ShowIf>) -> Question {
        Question {
            id: id.into(),
            label: format!("{id}?"),
            help: None,
            optional: false,
            show_if,
            kind,
        }
    }

    fn when(question: &str, condition: Condition) -> Option<ShowIf> {
        Some(ShowIf {
            question: question.into(),
            condition,
        })
    }

    fn text(t: &str) -> ConditionValue {
        ConditionValue::Text(t.into())
    }

    /// The builder offers exactly the conditions the validation accepts: for a subject of every
    /// kind, each kind of condition with a value the subject can answer is accepted exactly when
    /// `conditions_for` lists it.
    #[test]
    fn the_conditions_offered_are_the_conditions_accepted() {
        let subjects = [
            (YesNo, text("yes")),
            (
                Categorical {
                    options: vec!["a".into(), "b".into()],
                },
                text("a"),
            ),
            (Integer { min: 0, max: 10 }, ConditionValue::Number(5.0)),
            (
                Number {
                    min: 0.0,
                    max: 10.0,
                },
                ConditionValue::Number(5.0),
            ),
            (
                Likert {
                    points: 5,
                    low_label: "low".into(),
                    high_label: "high".into(),
                },
                ConditionValue::Number(3.0),
            ),
        ];
        for (kind, value) in subjects {
            for condition in [
                Condition::Equals(value.clone()),
                Condition::OneOf(vec![value.clone()]),
                Condition::Range { min: 1.0, max: 3.0 },
            ] {
                let key = ConditionKey::of(&condition);
                let questions = [
                    question("subject", kind.clone(), None),
                    question("follow", YesNo, when("subject", condition)),
                ];
                assert_eq!(
                    validate_show_if(&questions, 1).is_ok(),
                    conditions_for(&kind).contains(&key),
                    "{kind:?} with {key:?}"
                );
            }
        }
    }

    fn survey(questions: Vec<Question>) -> SurveyDefinition {
        let mut s = SurveyDefinition::parse(SAMPLE, "leaps-demo.json").unwrap();
        s.questions = questions;
        s
    }

    /// smokes (yes/no); cigarettes 1–60 when smokes is yes; stress Likert 5; relax
    /// (a, b) when stress is 4 to 5; drinks (never, weekly, daily); per_week 1–50 when drinks is
    /// weekly or daily.
    fn habits() -> SurveyDefinition {
        survey(vec![
            question("smokes", YesNo, None),
            question(
                "cigarettes",
                Integer { min: 1, max: 60 },
                when("smokes", Condition::Equals(text("yes"))),
            ),
            question(
                "stress",
                Likert {
                    points: 5,
                    low_label: "low".into(),
                    high_label: "high".into(),
                },
                None,
            ),
            question(
                "relax",
                Categorical {
                    options: vec!["a".into(), "b".into()],
                },
                when("stress", Condition::Range { min: 4.0, max: 5.0 }),
            ),
            question(
                "drinks",
                Categorical {
                    options: vec!["never".into(), "weekly".into(), "daily".into()],
                },
                None,
            ),
            question(
                "per_week",
                Integer { min: 1, max: 50 },
                when(
                    "drinks",
                    Condition::OneOf(vec![text("weekly"), text("daily")]),
                ),
            ),
        ])
    }

    /// Columns: every conditional question has its `_answered` column. A participant who does
    /// not smoke, has stress 4 (relax shown, b) and never drinks: cigarettes hidden → midpoint
    /// 30.5 and 0; relax=b 1, answered 1; per_week hidden → midpoint 25.5 and 0.
    #[test]
    fn a_branching_survey_is_coded_by_hand() {
        let s = habits();
        s.validate().unwrap();
        let names: Vec<String> = s.columns().into_iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "smokes",
                "cigarettes",
                "cigarettes_answered",
                "stress",
                "relax=b",
                "relax_answered",
                "drinks=weekly",
                "drinks=daily",
                "per_week",
                "per_week_answered",
            ]
        );
        assert_eq!(
            s.binary_columns(),
            [
                "smokes",
                "cigarettes_answered",
                "relax=b",
                "relax_answered",
                "drinks=weekly",
                "drinks=daily",
                "per_week_answered",
            ]
        );
        let answers = [
            Answer::YesNo(false),
            Answer::Skipped,
            Answer::Likert(4),
            Answer::Category(1),
            Answer::Category(0),
            Answer::Skipped,
        ];
        assert_eq!(s.shown(&answers), [true, false, true, true, true, false]);
        assert_eq!(
            s.encode(&answers).unwrap(),
            [0.0, 30.5, 0.0, 4.0, 1.0, 1.0, 0.0, 0.0, 25.5, 0.0]
        );
        // Every question shown and answered.
        let answers = [
            Answer::YesNo(true),
            Answer::Integer(10),
            Answer::Likert(5),
            Answer::Category(0),
            Answer::Category(2),
            Answer::Integer(7),
        ];
        assert_eq!(s.shown(&answers), [true; 6]);
        assert_eq!(
            s.encode(&answers).unwrap(),
            [1.0, 10.0, 1.0, 5.0, 0.0, 1.0, 0.0, 1.0, 7.0, 1.0]
        );
    }

    #[test]
    fn a_hidden_question_must_stay_empty_and_a_shown_one_needs_an_answer() {
        let s = habits();
        let mut answers = vec![
            Answer::YesNo(false),
            Answer::Integer(10),
            Answer::Likert(1),
            Answer::Skipped,
            Answer::Category(0),
            Answer::Skipped,
        ];
        let e = s.encode(&answers).unwrap_err();
        assert_eq!(
            e,
            SurveyError::BadAnswer {
                question: "cigarettes".into(),
                reason: AnswerError::NotShown
            }
        );
        assert_eq!(
            e.to_string(),
            "question \"cigarettes\": this question is not asked after the earlier answer; \
             leave it empty"
        );
        answers[0] = Answer::YesNo(true);
        s.encode(&answers).unwrap();
        answers[1] = Answer::Skipped;
        assert_eq!(
            s.encode(&answers).unwrap_err(),
            SurveyError::BadAnswer {
                question: "cigarettes".into(),
                reason: AnswerError::Missing
            }
        );
    }

    /// A → B → C: C depends on B, which is hidden, so C is hidden whatever B's stale answer.
    #[test]
    fn a_chain_hides_everything_below_a_hidden_question() {
        let s = survey(vec![
            question("a", YesNo, None),
            question("b", YesNo, when("a", Condition::Equals(text("yes")))),
            question("c", YesNo, when("b", Condition::Equals(text("yes")))),
        ]);
        s.validate().unwrap();
        let yes = Answer::YesNo(true);
        assert_eq!(
            s.shown(&[yes.clone(), yes.clone(), Answer::Skipped]),
            [true; 3]
        );
        assert_eq!(
            s.shown(&[Answer::YesNo(false), yes.clone(), yes.clone()]),
            [true, false, false]
        );
        assert_eq!(
            s.shown(&[yes.clone(), Answer::Skipped, Answer::Skipped]),
            [true, true, false]
        );
        let inputs = |v: [&str; 3]| v.map(String::from).to_vec();
        // The form keeps text typed before the participant changed an earlier answer.
        assert_eq!(
            s.shown_from_inputs(&inputs(["no", "yes", "yes"])),
            [true, false, false]
        );
        assert_eq!(
            s.shown_from_inputs(&inputs(["yes", "maybe", "yes"])),
            [true, true, false]
        );
        // Hidden fields are read as skipped and checked for nothing.
        let hidden = inputs(["no", "yes", "not even an answer"]);
        assert_eq!(s.input_errors(&hidden), [None, None, None]);
        assert_eq!(
            s.answers_from_inputs(&hidden).unwrap(),
            [Answer::YesNo(false), Answer::Skipped, Answer::Skipped]
        );
        assert_eq!(
            s.encode(&s.answers_from_inputs(&hidden).unwrap()).unwrap(),
            [0.0, 0.0, 0.0, 0.0, 0.0]
        );
        // Shown, required and empty: the usual message.
        let shown_empty = inputs(["yes", "", ""]);
        assert_eq!(
            s.input_errors(&shown_empty),
            [None, Some(AnswerError::Missing), None]
        );
    }

    #[test]
    fn each_condition_kind_holds_where_it_should() {
        let likert = Likert {
            points: 5,
            low_label: "l".into(),
            high_label: "h".into(),
        };
        let range = Condition::Range { min: 4.0, max: 5.0 };
        let holds: Vec<bool> = (1..=5)
            .map(|p| range.holds(&likert, &Answer::Likert(p)))
            .collect();
        assert_eq!(holds, [false, false, false, true, true]);
        assert!(!range.holds(&likert, &Answer::Skipped));
        let number = Number {
            min: 3.0,
            max: 12.0,
        };
        let short = Condition::Range { min: 3.0, max: 6.5 };
        assert!(short.holds(&number, &Answer::Number(6.5)));
        assert!(!short.holds(&number, &Answer::Number(6.51)));
        let equals = Condition::Equals(ConditionValue::Number(8.0));
        assert!(equals.holds(&number, &Answer::Number(8.0)));
        assert!(!equals.holds(&number, &Answer::Number(8.5)));
        let options = Categorical {
            options: vec!["never".into(), "weekly".into(), "daily".into()],
        };
        let often = Condition::OneOf(vec![text("weekly"), text("daily")]);
        let holds: Vec<bool> = (0..4)
            .map(|k| often.holds(&options, &Answer::Category(k)))
            .collect();
        assert_eq!(holds, [false, true, true, false]);
        let no = Condition::Equals(text("no"));
        assert!(no.holds(&YesNo, &Answer::YesNo(false)));
        assert!(!no.holds(&YesNo, &Answer::YesNo(true)));
        // An answer of another kind meets nothing.
        assert!(!no.holds(&YesNo, &Answer::Integer(0)));
        let integer = Integer { min: 0, max: 7 };
        assert!(
            Condition::OneOf(vec![ConditionValue::Number(0.0)])
                .holds(&integer, &Answer::Integer(0))
        );
    }

    #[test]
    fn the_preview_describes_each_condition_in_one_line() {
        let s = habits();
        let texts: Vec<Option<String>> = (0..7).map(|i| s.condition_text(i)).collect();
        assert_eq!(
            texts,
            [
                None,
                Some("shown when smokes is yes".into()),
                None,
                Some("shown when stress is from 4 to 5".into()),
                None,
                Some("shown when drinks is weekly or daily".into()),
                None,
            ]
        );
        let mut s = habits();
        s.questions[5].show_if = when(
            "drinks",
            Condition::OneOf(vec![text("never"), text("weekly"), text("daily")]),
        );
        assert_eq!(
            s.condition_text(5).unwrap(),
            "shown when drinks is never, weekly or daily"
        );
    }

    #[test]
    fn every_impossible_condition_is_refused_naming_its_field() {
        let refusal = |question: usize, show_if: Option<ShowIf>| {
            let mut s = habits();
            s.questions[question].show_if = show_if;
            let e = s.validate().unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
            e
        };
        let cases: Vec<(usize, Option<ShowIf>, &str)> = vec![
            (
                1,
                when("nobody", Condition::Equals(text("yes"))),
                "questions[1].show_if.question: there is no question \"nobody\"",
            ),
            (
                1,
                when("stress", Condition::Equals(ConditionValue::Number(4.0))),
                "questions[1].show_if.question: \"stress\" comes later",
            ),
            (
                1,
                when("cigarettes", Condition::Equals(ConditionValue::Number(4.0))),
                "questions[1].show_if.question: a question cannot depend on its own answer",
            ),
            (
                1,
                when("smokes", Condition::Equals(ConditionValue::Number(1.0))),
                "questions[1].show_if.equals: smokes is a yes/no question",
            ),
            (
                1,
                when("smokes", Condition::Equals(text("Yes"))),
                "questions[1].show_if.equals: smokes is a yes/no question",
            ),
            (
                5,
                when("drinks", Condition::Equals(text("monthly"))),
                "questions[5].show_if.equals: \"monthly\" is not an option of drinks",
            ),
            (
                5,
                when("drinks", Condition::Equals(ConditionValue::Number(1.0))),
                "questions[5].show_if.equals: drinks is categorical",
            ),
            (
                3,
                when("stress", Condition::Equals(text("4"))),
                "questions[3].show_if.equals: stress takes numbers",
            ),
            (
                3,
                when("stress", Condition::Equals(ConditionValue::Number(6.0))),
                "questions[3].show_if.equals: 6 is outside stress's answers 1 to 5",
            ),
            (
                3,
                when("stress", Condition::Equals(ConditionValue::Number(4.5))),
                "questions[3].show_if.equals: stress takes whole numbers",
            ),
            (
                5,
                when("drinks", Condition::OneOf(vec![])),
                "questions[5].show_if.one_of: list at least one value",
            ),
            (
                5,
                when(
                    "drinks",
                    Condition::OneOf(vec![text("daily"), text("daily")]),
                ),
                "questions[5].show_if.one_of[1]: daily is listed twice",
            ),
            (
                5,
                when(
                    "drinks",
                    Condition::OneOf(vec![text("daily"), text("hourly")]),
                ),
                "questions[5].show_if.one_of[1]: \"hourly\" is not an option",
            ),
            (
                3,
                when("stress", Condition::Range { min: 5.0, max: 4.0 }),
                "questions[3].show_if.range: min 5 exceeds max 4",
            ),
            (
                3,
                when(
                    "stress",
                    Condition::Range {
                        min: f64::NEG_INFINITY,
                        max: 4.0,
                    },
                ),
                "questions[3].show_if.range: min and max must be finite",
            ),
            (
                3,
                when("stress", Condition::Range { min: 6.0, max: 9.0 }),
                "questions[3].show_if.range: no answer of stress (1 to 5) lies from 6 to 9",
            ),
            (
                3,
                when("stress", Condition::Range { min: 4.2, max: 4.8 }),
                "questions[3].show_if.range: no answer of stress",
            ),
            (
                5,
                when("drinks", Condition::Range { min: 1.0, max: 2.0 }),
                "questions[5].show_if.range: drinks is not a number, integer or Likert question",
            ),
        ];
        for (question, show_if, expected) in cases {
            let e = refusal(question, show_if);
            assert!(
                e.starts_with(&format!("survey definition: {expected}")),
                "{e}\nexpected: {expected}"
            );
        }
    }

    #[test]
    fn show_if_keeps_its_json_shape() {
        let s = habits();
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json["questions"][1]["show_if"],
            serde_json::json!({"question": "smokes", "equals": "yes"})
        );
        assert_eq!(
            json["questions"][3]["show_if"],
            serde_json::json!({"question": "stress", "range": {"min": 4.0, "max": 5.0}})
        );
        assert_eq!(
            json["questions"][5]["show_if"],
            serde_json::json!({"question": "drinks", "one_of": ["weekly", "daily"]})
        );
        assert!(json["questions"][0].get("show_if").is_none());
        let back = SurveyDefinition::parse(&s.to_json(), "again").unwrap();
        assert_eq!(back, s);
        // Integers in JSON read as numbers.
        let parsed: ShowIf =
            serde_json::from_str(r#"{"question": "stress", "range": {"min": 4, "max": 5}}"#)
                .unwrap();
        assert_eq!(parsed.condition, Condition::Range { min: 4.0, max: 5.0 });
        // Two conditions, none, or a misspelt key are refused rather than half read.
        for bad in [
            r#"{"question": "a", "equals": "yes", "one_of": ["no"]}"#,
            r#"{"question": "a"}"#,
            r#"{"question": "a", "equal": "yes"}"#,
        ] {
            assert!(serde_json::from_str::<ShowIf>(bad).is_err(), "{bad}");
        }
    }
}
