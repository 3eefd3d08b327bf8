//! Why an answer does not fit, in the participant's language: the survey crate's typed
//! [`AnswerError`] (whose English `Display` the command line shows) mapped to the catalogue.

use orthomask_survey::coding::AnswerError;

use super::AppLanguage;
use crate::t;

/// The message for `error` in `language`.
pub fn answer_error(language: AppLanguage, error: &AnswerError) -> String {
    match error {
        AnswerError::Missing => t!(language, "answer-missing"),
        AnswerError::NotYesNo => t!(language, "answer-not-yes-no"),
        AnswerError::Integer { min, max } => t!(language, "answer-integer", min = min, max = max),
        AnswerError::Number { min, max } => t!(language, "answer-number", min = min, max = max),
        AnswerError::Likert { points } => t!(language, "answer-likert", points = points),
        AnswerError::Category { count } => t!(language, "answer-category", count = count),
        AnswerError::WrongKind => t!(language, "answer-wrong-kind"),
        AnswerError::NoSuchQuestion { number } => {
            t!(language, "answer-no-such-question", number = number)
        }
        AnswerError::NotShown => t!(language, "answer-not-shown"),
        AnswerError::UnknownOption { given, options } => t!(
            language,
            "answer-unknown-option",
            given = format!("{given:?}"),
            options = options.join(", ")
        ),
        AnswerError::Count { expected, found } => {
            t!(language, "answer-count", expected = expected, found = found)
        }
    }
}
