//! From a participant's answers to the numeric record `x₁`, and from what was typed into a form
//! field to an answer.
//!
//! # From answers to columns
//! | kind | columns | range |
//! |---|---|---|
//! | `yes_no` | `id` = 1 for yes, 0 for no | [0, 1] |
//! | `integer`, `number` | `id` = the value | [min, max] |
//! | `likert` | `id` = 1 … points | [1, points] |
//! | `categorical` | `id=option` = 1/0 for every option but the first (the reference) | [0, 1] |
//!
//! | optional, or with `show_if` | adds `id_answered` = 1 answered, 0 skipped or hidden | [0, 1] |
//!
//! The model terms a definition declares (`terms`: powers, products, logs, centring) follow the
//! questions' columns, one column each, in declaration order; their values, derived ranges and
//! their value (0) when an input is unanswered are [`crate::terms`]'. Then the padded record
//! carries the QA column and the noise.
//!
//! An **optional** question, and a **conditional** one (`show_if`, [`crate::branching`]), adds a
//! column `id_answered` (1 answered, 0 skipped or not shown) and, when skipped or hidden, its
//! value columns take a neutral value: 0 for yes/no and dummies (the reference), the midpoint of
//! the range for numbers and Likert items. A hidden question is coded exactly like a skipped
//! optional one, and must be left empty ([`AnswerError::NotShown`]); a shown conditional question
//! that is not optional needs an answer. The masked matrix must be complete, so a skipped answer
//! is coded explicitly rather than left empty; analysts include `id_answered` in a model (or
//! restrict to answered rows through it) instead of treating the neutral value as an answer.
//!
//! The coding never depends on the language the participant reads ([`crate::languages`]):
//! categorical answers are option indices, column names come from the main language.
//!
//! # From text to answers
//! A form field holds `"yes"`/`"no"`, a number, a Likert point `1…k`, or the 0-based index of a
//! categorical option; empty means not answered. [`SurveyDefinition::parse_answer`] reads it and
//! checks it with the same rules (and messages) as [`SurveyDefinition::encode`]. A field whose
//! question is hidden by an earlier answer reads as skipped whatever it holds: the form may keep
//! text typed before the participant changed that answer, and it must not be sent.
//!
//! A table of answers (one row per participant, [`SurveyDefinition::answers_from_record`], read
//! by `orthomask survey code`) holds the same text except that a categorical cell holds the
//! option's text in the main language; there a value in a hidden question is an error.

use crate::definition::{Question, QuestionKind, SurveyDefinition, SurveyError};

/// Why an answer does not fit its question (written beside [`SurveyError`], which carries it).
pub use crate::error::AnswerError;

/// One numeric column of the record and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSpec {
    /// Column name.
    pub name: String,
    /// The question it codes, or the model term it computes.
    pub source: ColumnSource,
    /// Declared range (a term's is derived from its inputs', [`crate::terms`]).
    pub range: (f64, f64),
}

/// Where a column of the record comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnSource {
    /// It codes the question of this index.
    Question(usize),
    /// It is the model term of this index in `terms`, computed from answer columns.
    Term(usize),
}

/// A participant's answer to one question.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Skipped (only for optional questions), or not shown ([`crate::branching`]).
    Skipped,
    /// Yes or no.
    YesNo(bool),
    /// A whole number.
    Integer(i64),
    /// A number.
    Number(f64),
    /// A Likert point, 1-based.
    Likert(u8),
    /// A categorical option, 0-based.
    Category(usize),
}

/// The first invalid form field: which question, and why.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("question {}: {error}", .question + 1)]
pub struct InputError {
    /// 0-based index of the question.
    pub question: usize,
    /// What is wrong with its field.
    pub error: AnswerError,
}

impl Question {
    /// This question's columns, appended to `out` (`index` is its position in the survey).
    pub(crate) fn push_columns(&self, index: usize, out: &mut Vec<ColumnSpec>) {
        let spec = |name: String, range| ColumnSpec {
            name,
            source: ColumnSource::Question(index),
            range,
        };
        match &self.kind {
            QuestionKind::YesNo => out.push(spec(self.id.clone(), (0.0, 1.0))),
            QuestionKind::Integer { min, max } => {
                out.push(spec(self.id.clone(), (*min as f64, *max as f64)))
            }
            QuestionKind::Number { min, max } => out.push(spec(self.id.clone(), (*min, *max))),
            QuestionKind::Likert { points, .. } => {
                out.push(spec(self.id.clone(), (1.0, f64::from(*points))))
            }
            QuestionKind::Categorical { options } => {
                // `skip(1)`: total even on a definition not yet validated (no options at all).
                for option in options.iter().skip(1) {
                    out.push(spec(format!("{}={option}", self.id), (0.0, 1.0)));
                }
            }
        }
        if self.may_be_unanswered() {
            out.push(spec(self.answered_column(), (0.0, 1.0)));
        }
    }

    /// Name of the `answered` indicator column of an optional or conditional question.
    pub(crate) fn answered_column(&self) -> String {
        format!("{}_answered", self.id)
    }

    /// Code one answer to this question, shown, into its columns, appended to `out` (see the
    /// module documentation).
    ///
    /// # Errors
    /// [`AnswerError`] when the answer is missing, out of range or of another kind.
    pub fn code(&self, answer: &Answer, out: &mut Vec<f64>) -> Result<(), AnswerError> {
        if matches!(answer, Answer::Skipped) && !self.optional {
            return Err(AnswerError::Missing);
        }
        self.code_unchecked_skip(answer, out)
    }

    /// Code this question when an earlier answer hides it: exactly a skipped optional item.
    ///
    /// # Errors
    /// [`AnswerError::NotShown`] for any answer but [`Answer::Skipped`].
    pub fn code_hidden(&self, answer: &Answer, out: &mut Vec<f64>) -> Result<(), AnswerError> {
        if !matches!(answer, Answer::Skipped) {
            return Err(AnswerError::NotShown);
        }
        self.code_unchecked_skip(answer, out)
    }

    /// [`Self::code`] without the rule that only optional questions may be skipped.
    fn code_unchecked_skip(&self, answer: &Answer, out: &mut Vec<f64>) -> Result<(), AnswerError> {
        let skipped = matches!(answer, Answer::Skipped);
        match (&self.kind, answer) {
            (QuestionKind::YesNo, Answer::YesNo(yes)) => out.push(f64::from(u8::from(*yes))),
            (QuestionKind::YesNo, Answer::Skipped) => out.push(0.0),
            (QuestionKind::Integer { min, max }, Answer::Integer(v)) => {
                if v < min || v > max {
                    return Err(AnswerError::Integer {
                        min: *min,
                        max: *max,
                    });
                }
                out.push(*v as f64);
            }
            (QuestionKind::Integer { min, max }, Answer::Skipped) => {
                out.push((*min as f64 + *max as f64) / 2.0)
            }
            (QuestionKind::Number { min, max }, Answer::Number(v)) => {
                if !v.is_finite() || v < min || v > max {
                    return Err(AnswerError::Number {
                        min: *min,
                        max: *max,
                    });
                }
                out.push(*v);
            }
            (QuestionKind::Number { min, max }, Answer::Skipped) => out.push((min + max) / 2.0),
            (QuestionKind::Likert { points, .. }, Answer::Likert(v)) => {
                if *v < 1 || v > points {
                    return Err(AnswerError::Likert { points: *points });
                }
                out.push(f64::from(*v));
            }
            (QuestionKind::Likert { points, .. }, Answer::Skipped) => {
                out.push((1.0 + f64::from(*points)) / 2.0)
            }
            (QuestionKind::Categorical { options }, Answer::Category(k)) => {
                if *k >= options.len() {
                    return Err(AnswerError::Category {
                        count: options.len(),
                    });
                }
                out.extend((1..options.len()).map(|j| f64::from(u8::from(j == *k))));
            }
            (QuestionKind::Categorical { options }, Answer::Skipped) => {
                out.extend(std::iter::repeat_n(0.0, options.len().saturating_sub(1)))
            }
            _ => return Err(AnswerError::WrongKind),
        }
        if self.may_be_unanswered() {
            out.push(if skipped { 0.0 } else { 1.0 });
        }
        Ok(())
    }

    /// Read what was typed or chosen for this question and check it (module documentation).
    ///
    /// # Errors
    /// [`AnswerError`] with the message the form shows next to the field.
    pub fn parse_input(&self, input: &str) -> Result<Answer, AnswerError> {
        let text = input.trim();
        if text.is_empty() {
            return if self.optional {
                Ok(Answer::Skipped)
            } else {
                Err(AnswerError::Missing)
            };
        }
        let answer = match &self.kind {
            QuestionKind::YesNo => match text {
                "yes" => Answer::YesNo(true),
                "no" => Answer::YesNo(false),
                _ => return Err(AnswerError::NotYesNo),
            },
            QuestionKind::Integer { min, max } => {
                Answer::Integer(text.parse::<i64>().map_err(|_| AnswerError::Integer {
                    min: *min,
                    max: *max,
                })?)
            }
            QuestionKind::Number { min, max } => {
                Answer::Number(text.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or(
                    AnswerError::Number {
                        min: *min,
                        max: *max,
                    },
                )?)
            }
            QuestionKind::Likert { points, .. } => Answer::Likert(
                text.parse::<u8>()
                    .map_err(|_| AnswerError::Likert { points: *points })?,
            ),
            QuestionKind::Categorical { options } => {
                Answer::Category(text.parse::<usize>().map_err(|_| AnswerError::Category {
                    count: options.len(),
                })?)
            }
        };
        // The range rules are the coding's own.
        self.code(&answer, &mut Vec::new())?;
        Ok(answer)
    }

    /// Read a cell of a table of answers: as [`Self::parse_input`], except that a categorical
    /// cell holds the option's text in the main language (surrounding spaces ignored).
    ///
    /// # Errors
    /// [`AnswerError::UnknownOption`] for a text that names no option, else as
    /// [`Self::parse_input`].
    pub fn parse_cell(&self, cell: &str) -> Result<Answer, AnswerError> {
        let text = cell.trim();
        match &self.kind {
            QuestionKind::Categorical { options } if !text.is_empty() => options
                .iter()
                .position(|o| o == text)
                .map(Answer::Category)
                .ok_or_else(|| AnswerError::UnknownOption {
                    given: text.chars().take(40).collect(),
                    options: options.clone(),
                }),
            _ => self.parse_input(text),
        }
    }
}

impl SurveyDefinition {
    /// The numeric columns of a record, in order (QA and noise excluded): the questions'
    /// columns in question order, then the model terms' in declaration order
    /// ([`crate::terms`]). The QA column follows them in the padded record, and a release and
    /// its manifest list the columns in this order.
    pub fn columns(&self) -> Vec<ColumnSpec> {
        let mut out = self.answer_columns();
        let terms = crate::terms::term_columns(&out, &self.questions, &self.terms);
        out.extend(terms);
        out
    }

    /// The questions' columns only, in order (what model terms are computed from).
    pub fn answer_columns(&self) -> Vec<ColumnSpec> {
        let mut out = Vec::new();
        for (i, q) in self.questions.iter().enumerate() {
            q.push_columns(i, &mut out);
        }
        out
    }

    /// Encode one participant's answers as the record `x₁` (without QA and noise).
    ///
    /// # Errors
    /// [`SurveyError::BadAnswer`] naming the question, in words a participant understands.
    pub fn encode(&self, answers: &[Answer]) -> Result<Vec<f64>, SurveyError> {
        if answers.len() != self.questions.len() {
            return Err(SurveyError::BadAnswer {
                question: String::new(),
                reason: AnswerError::Count {
                    expected: self.questions.len(),
                    found: answers.len(),
                },
            });
        }
        let shown = self.shown(answers);
        let mut out = Vec::new();
        for ((q, a), shown) in self.questions.iter().zip(answers).zip(shown) {
            let coded = if shown {
                q.code(a, &mut out)
            } else {
                q.code_hidden(a, &mut out)
            };
            coded.map_err(|reason| SurveyError::BadAnswer {
                question: q.id.clone(),
                reason,
            })?;
        }
        if !self.terms.is_empty() {
            crate::terms::code_terms(&self.answer_columns(), &self.terms, answers, &mut out);
        }
        Ok(out)
    }

    /// The largest absolute value any record entry can take (answers and QA constant): the
    /// `x_max` of the Appendix C bound.
    pub fn x_max(&self) -> f64 {
        self.answers_max()
            .max(self.masking.qa_constant.map_or(0.0, f64::abs))
    }

    /// The largest magnitude any answer can take by the declared ranges (the QA constant aside).
    pub fn answers_max(&self) -> f64 {
        self.columns()
            .iter()
            .map(|c| c.range.0.abs().max(c.range.1.abs()))
            .fold(0.0, f64::max)
    }

    /// Columns that code 0/1 answers by construction — yes/no questions, category dummies and
    /// the `answered` indicators — whose counts auditors check. Model terms are not listed, even
    /// a product of two 0/1 columns: they are computed, not answered.
    pub fn binary_columns(&self) -> Vec<String> {
        self.answer_columns()
            .into_iter()
            .filter(|c| {
                let ColumnSource::Question(q) = c.source else {
                    return false;
                };
                let q = &self.questions[q];
                matches!(
                    q.kind,
                    QuestionKind::YesNo | QuestionKind::Categorical { .. }
                ) || (q.may_be_unanswered() && c.name == q.answered_column())
            })
            .map(|c| c.name)
            .collect()
    }

    /// Read the text of question `question`'s field into an [`Answer`].
    ///
    /// # Errors
    /// [`AnswerError::NoSuchQuestion`] past the last question, else as [`Question::parse_input`].
    pub fn parse_answer(&self, question: usize, input: &str) -> Result<Answer, AnswerError> {
        self.questions
            .get(question)
            .ok_or(AnswerError::NoSuchQuestion {
                number: question + 1,
            })?
            .parse_input(input)
    }

    /// Check every field: `None` where the input is fine or its question is hidden, the reason
    /// where it is not.
    pub fn input_errors(&self, inputs: &[String]) -> Vec<Option<AnswerError>> {
        self.shown_from_inputs(inputs)
            .into_iter()
            .enumerate()
            .map(|(i, shown)| {
                shown
                    .then(|| self.parse_answer(i, field(inputs, i)).err())
                    .flatten()
            })
            .collect()
    }

    /// Every answer (hidden questions [`Answer::Skipped`], whatever their field holds), or the
    /// first invalid field.
    ///
    /// # Errors
    /// [`InputError`] naming the first invalid field.
    pub fn answers_from_inputs(&self, inputs: &[String]) -> Result<Vec<Answer>, InputError> {
        self.shown_from_inputs(inputs)
            .into_iter()
            .enumerate()
            .map(|(i, shown)| {
                if !shown {
                    return Ok(Answer::Skipped);
                }
                self.parse_answer(i, field(inputs, i))
                    .map_err(|error| InputError { question: i, error })
            })
            .collect()
    }
}

impl SurveyDefinition {
    /// One participant's row of a table of answers (`cells[i]` is question `i`'s cell, read by
    /// [`Question::parse_cell`]): every answer, hidden questions [`Answer::Skipped`]. Unlike a
    /// form, whose fields may keep text typed before an earlier answer changed, a file holds
    /// what its author meant, so a value in a hidden question is refused rather than dropped.
    ///
    /// # Errors
    /// [`InputError`] naming the first cell, in question order, that is invalid or
    /// ([`AnswerError::NotShown`]) not empty although its question is hidden.
    pub fn answers_from_record(&self, cells: &[String]) -> Result<Vec<Answer>, InputError> {
        let read: Vec<Result<Answer, AnswerError>> = self
            .questions
            .iter()
            .enumerate()
            .map(|(i, q)| q.parse_cell(field(cells, i)))
            .collect();
        // Visibility from the readable answers; an unreadable one is reported below, in order.
        let lenient: Vec<Answer> = read
            .iter()
            .map(|r| r.clone().unwrap_or(Answer::Skipped))
            .collect();
        let shown = self.shown(&lenient);
        read.into_iter()
            .zip(shown)
            .enumerate()
            .map(|(i, (answer, shown))| {
                let at = |error| InputError { question: i, error };
                if shown {
                    answer.map_err(at)
                } else if field(cells, i).trim().is_empty() {
                    Ok(Answer::Skipped)
                } else {
                    Err(at(AnswerError::NotShown))
                }
            })
            .collect()
    }
}

/// The text of field `i` (empty when the form has fewer fields).
pub(crate) fn field(inputs: &[String], i: usize) -> &str {
    inputs.get(i).map_or("", String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tolerance::HAND_COMPUTED;

    const SAMPLE: &str = include_str!("../../../www/surveys/leaps-demo.json");
    const OPTIONAL: &str = include_str!("../../../www/surveys/wellbeing-optional.json");

    fn survey_with(kind: QuestionKind, optional: bool) -> SurveyDefinition {
        let mut s = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        s.questions = vec![Question {
            id: "q".into(),
            label: "Q?".into(),
            help: None,
            optional,
            show_if: None,
            kind,
        }];
        s
    }

    fn demo_inputs() -> Vec<String> {
        ["no", "yes", "0.08", "63", "30", "yes", "yes", "50"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    }

    /// Hand-coded: options (a, b, c), answer b → dummies q=b 1, q=c 0; skipped optional → 0, 0
    /// and q_answered 0.
    #[test]
    fn categorical_and_optional_coding_by_hand() {
        let s = survey_with(
            QuestionKind::Categorical {
                options: vec!["a".into(), "b".into(), "c".into()],
            },
            true,
        );
        let names: Vec<String> = s.columns().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["q=b", "q=c", "q_answered"]);
        assert_eq!(
            s.encode(&[Answer::Category(1)]).unwrap(),
            vec![1.0, 0.0, 1.0]
        );
        assert_eq!(s.encode(&[Answer::Skipped]).unwrap(), vec![0.0, 0.0, 0.0]);
        assert_eq!(s.binary_columns(), names);
        let likert = survey_with(
            QuestionKind::Likert {
                points: 5,
                low_label: "no".into(),
                high_label: "yes".into(),
            },
            true,
        );
        assert_eq!(likert.encode(&[Answer::Skipped]).unwrap(), vec![3.0, 0.0]);
        assert_eq!(likert.binary_columns(), ["q_answered"]);
    }

    #[test]
    fn answers_are_validated_with_participant_friendly_reasons() {
        let s = survey_with(QuestionKind::Integer { min: 18, max: 99 }, false);
        assert_eq!(
            s.encode(&[Answer::Integer(17)]).unwrap_err().to_string(),
            "question \"q\": enter a whole number from 18 to 99"
        );
        assert!(
            s.encode(&[Answer::Skipped])
                .unwrap_err()
                .to_string()
                .contains("needs an answer")
        );
        assert!(s.encode(&[Answer::YesNo(true)]).is_err());
        assert_eq!(
            s.encode(&[]).unwrap_err().to_string(),
            "question \"\": expected 1 answers, got 0"
        );
    }

    #[test]
    fn typed_fields_use_the_codings_messages() {
        let s = SurveyDefinition::parse(SAMPLE, "leaps-demo.json").unwrap();
        let mut inputs = demo_inputs();
        inputs[3] = "17".into();
        inputs[2] = "abc".into();
        inputs[0] = String::new();
        let errors = s.input_errors(&inputs);
        assert_eq!(errors[0], Some(AnswerError::Missing));
        assert_eq!(
            errors[2].as_ref().map(ToString::to_string).as_deref(),
            Some("enter a number from -1 to 2")
        );
        assert_eq!(
            errors[3].as_ref().map(ToString::to_string).as_deref(),
            Some("enter a whole number from 18 to 100")
        );
        assert!(errors[1].is_none());
        let first = s.answers_from_inputs(&inputs).unwrap_err();
        assert_eq!(first.question, 0);
        assert_eq!(
            first.to_string(),
            "question 1: this question needs an answer"
        );
        assert_eq!(
            s.parse_answer(8, "1").unwrap_err(),
            AnswerError::NoSuchQuestion { number: 9 }
        );
        let answers = s.answers_from_inputs(&demo_inputs()).unwrap();
        assert_eq!(
            s.encode(&answers).unwrap(),
            vec![0.0, 1.0, 0.08, 63.0, 30.0, 1.0, 1.0, 50.0]
        );
    }

    #[test]
    fn optional_questions_may_stay_empty() {
        let s = SurveyDefinition::parse(OPTIONAL, "wellbeing-optional.json").unwrap();
        let skipped = vec![String::new(); s.questions.len()];
        let errors = s.input_errors(&skipped);
        for (q, e) in s.questions.iter().zip(&errors) {
            assert_eq!(e.is_some(), !q.optional, "{}", q.id);
        }
    }

    #[test]
    fn a_table_row_names_categorical_options_and_refuses_values_in_hidden_questions() {
        let mut s = SurveyDefinition::parse(OPTIONAL, "wellbeing-optional.json").unwrap();
        s.questions[1].show_if = Some(crate::definition::ShowIf {
            question: "smoker".into(),
            condition: crate::definition::Condition::Equals(
                crate::definition::ConditionValue::Text("yes".into()),
            ),
        });
        let row = |cells: [&str; 5]| cells.map(String::from).to_vec();
        assert_eq!(
            s.answers_from_record(&row(["yes", "4", "7.5", "", " student "]))
                .unwrap(),
            [
                Answer::YesNo(true),
                Answer::Integer(4),
                Answer::Number(7.5),
                Answer::Skipped,
                Answer::Category(2)
            ]
        );
        assert_eq!(
            s.answers_from_record(&row(["no", "", "7.5", "3", ""]))
                .unwrap()[1],
            Answer::Skipped
        );
        let e = s
            .answers_from_record(&row(["no", "4", "7.5", "3", ""]))
            .unwrap_err();
        assert_eq!((e.question, e.error), (1, AnswerError::NotShown));
        let e = s
            .answers_from_record(&row(["yes", "4", "7.5", "3", "2"]))
            .unwrap_err();
        assert_eq!(e.question, 4);
        assert_eq!(
            e.error.to_string(),
            "\"2\" is not one of the options (employed, self-employed, student, not working)"
        );
        let e = s
            .answers_from_record(&row(["yes", "4", "NaN", "3", ""]))
            .unwrap_err();
        assert_eq!(e.to_string(), "question 3: enter a number from 0 to 24");
    }

    /// The declared ranges bound the answers: the demo's largest is 100 (age, ADL), its `x_max`
    /// is the QA constant 888.
    #[test]
    fn declared_maxima_by_hand() {
        let s = SurveyDefinition::parse(SAMPLE, "leaps-demo.json").unwrap();
        assert!((s.answers_max() - 100.0).abs() < HAND_COMPUTED);
        assert!((s.x_max() - 888.0).abs() < HAND_COMPUTED);
        assert_eq!(s.binary_columns(), ["response", "group", "ih", "mif"]);
    }
}
