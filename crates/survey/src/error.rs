//! What can be wrong with a survey definition or with the answers to it: [`SurveyError`], and
//! [`AnswerError`], the reason an answer does not fit its question in words a participant
//! understands (what [`crate::coding`] refuses).
//!
//! Both sit below everything that checks a definition — its validation, the conditions of
//! [`crate::branching`], the translations of [`crate::languages`], the coding — so that each of
//! them can say what is wrong in the same words. They are re-exported where they have always been
//! named: `definition::SurveyError`, `coding::AnswerError`.

use orthomask_core::protocol::ProtocolError;

/// Errors in a definition or in answers to it.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SurveyError {
    /// Not valid JSON or not a definition.
    #[error("{source_name}: not a survey definition: {reason}")]
    Format {
        /// File or URL.
        source_name: String,
        /// Parser message with line and column.
        reason: String,
    },
    /// A field with an invalid value.
    #[error("survey definition: {field}: {reason}")]
    Invalid {
        /// JSON path of the field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// An answer that does not fit its question.
    #[error("question {question:?}: {reason}")]
    BadAnswer {
        /// Question id (empty when the answers as a whole are wrong, e.g. their number).
        question: String,
        /// What is wrong, in words a participant understands.
        reason: AnswerError,
    },
    /// The masking design cannot be built.
    #[error("survey masking design: {0}")]
    Design(#[from] ProtocolError),
}

/// [`SurveyError::Invalid`]: `field` (a JSON path) and what is wrong with it.
pub(crate) fn invalid(field: impl Into<String>, reason: impl Into<String>) -> SurveyError {
    SurveyError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

/// Why an answer does not fit its question, in words a participant understands.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AnswerError {
    /// A required question was left empty.
    #[error("this question needs an answer")]
    Missing,
    /// A yes/no field holds something else.
    #[error("choose yes or no")]
    NotYesNo,
    /// Not a whole number in the declared range.
    #[error("enter a whole number from {min} to {max}")]
    Integer {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// Not a finite number in the declared range.
    #[error("enter a number from {min} to {max}")]
    Number {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// Not a point of the scale.
    #[error("choose a point from 1 to {points}")]
    Likert {
        /// Points of the scale.
        points: u8,
    },
    /// Not one of the options.
    #[error("choose one of the {count} options")]
    Category {
        /// Number of options.
        count: usize,
    },
    /// An answer of another kind than the question's.
    #[error("the answer does not match the question type")]
    WrongKind,
    /// A question index past the end of the survey.
    #[error("there is no question {number}")]
    NoSuchQuestion {
        /// The 1-based question number asked for.
        number: usize,
    },
    /// A categorical cell of a table of answers that names no option.
    #[error("{given:?} is not one of the options ({})", options.join(", "))]
    UnknownOption {
        /// The text given.
        given: String,
        /// The options in the main language.
        options: Vec<String>,
    },
    /// An answer to a question an earlier answer hides (`show_if`).
    #[error("this question is not asked after the earlier answer; leave it empty")]
    NotShown,
    /// A list of answers of the wrong length.
    #[error("expected {expected} answers, got {found}")]
    Count {
        /// Questions in the survey.
        expected: usize,
        /// Answers given.
        found: usize,
    },
}
