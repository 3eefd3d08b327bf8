//! What became of a participant's cohort after the receipt (issue 20 §8), as the collector's
//! public `GET /api/surveys/{id}/cohorts/{k}/fate` says it and the participant's page reads it:
//! one word, no counts. A cohort is *spoilt* when someone in it sent invalid data: the collector
//! leaves the whole cohort out of the release and reopens its invitations. A cohort is
//! *regrouped* when it closed with too few records to be masked while the survey still takes
//! participants (the survey team closed it early, issue 43 §3): nothing of it is released and
//! its invitations are reopened too, so no answer is lost. Exactly then its participants are
//! asked to answer again ([`Fate::answer_again`], the one rule both sides use).

use serde::{Deserialize, Serialize};

/// A cohort's fate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// Still taking participants.
    Open,
    /// Closed; its hand-over is not settled yet.
    Processing,
    /// Its records will be in the release.
    Included,
    /// Too few records, and the survey no longer takes participants: nothing of it is released.
    Withheld,
    /// Too few records while the survey still takes participants: nothing of it is released,
    /// its invitations were reopened, and its participants answer again in a new cohort.
    Regrouped,
    /// Closed without records.
    Empty,
    /// Someone in it sent invalid data: it was left out and its invitations were reopened.
    Spoilt,
    /// Left out by the survey team (a hand-over that never came or was never believed).
    LeftOut,
    /// A word this version does not know (a newer collector): settled, nothing to do. The
    /// collector never says it.
    #[serde(other)]
    Other,
}

impl Fate {
    /// Whether the collector may still change it (a page keeps asking).
    pub fn pending(self) -> bool {
        matches!(self, Self::Open | Self::Processing)
    }

    /// Whether the cohort's participants should take a new place and answer again: exactly when
    /// it was spoilt or regrouped.
    pub fn answer_again(self) -> bool {
        matches!(self, Self::Spoilt | Self::Regrouped)
    }
}

/// The collector's answer about one cohort.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CohortFate {
    /// The survey.
    pub survey: String,
    /// The cohort.
    pub cohort: u32,
    /// Its fate.
    pub fate: Fate,
    /// Whether its participants should answer again ([`Fate::answer_again`]).
    pub answer_again: bool,
}

impl CohortFate {
    /// The answer for cohort `cohort` of `survey` in `fate`.
    pub fn of(survey: &str, cohort: u32, fate: Fate) -> Self {
        Self {
            survey: survey.to_owned(),
            cohort,
            fate,
            answer_again: fate.answer_again(),
        }
    }
}

/// Why an answer is not the fate of the cohort asked about.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FateError {
    /// Not the collector's JSON.
    #[error("the cohort's fate is unreadable: {0}")]
    Malformed(String),
    /// The fate of another survey or cohort.
    #[error(
        "the collector answered for survey {survey:?} cohort {cohort}, not the one asked about"
    )]
    Other {
        /// The survey it named.
        survey: String,
        /// The cohort it named.
        cohort: u32,
    },
}

/// Read the fate of cohort `cohort` of `survey` from the collector's answer.
///
/// # Errors
/// [`FateError`]: not the JSON of a fate, or the fate of another cohort.
pub fn read_fate(text: &str, survey: &str, cohort: u32) -> Result<CohortFate, FateError> {
    let fate: CohortFate =
        serde_json::from_str(text).map_err(|e| FateError::Malformed(e.to_string()))?;
    if fate.survey != survey || fate.cohort != cohort {
        return Err(FateError::Other {
            survey: fate.survey,
            cohort: fate.cohort,
        });
    }
    Ok(fate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fate_is_read_for_the_cohort_asked_about() {
        let spoilt = read_fate(
            r#"{"survey": "s", "cohort": 2, "fate": "spoilt", "answer_again": true}"#,
            "s",
            2,
        )
        .unwrap();
        assert_eq!(spoilt.fate, Fate::Spoilt);
        assert!(spoilt.answer_again && !spoilt.fate.pending());
        for (word, fate, pending) in [
            ("open", Fate::Open, true),
            ("processing", Fate::Processing, true),
            ("included", Fate::Included, false),
            ("withheld", Fate::Withheld, false),
            ("regrouped", Fate::Regrouped, false),
            ("empty", Fate::Empty, false),
            ("left_out", Fate::LeftOut, false),
            ("archived", Fate::Other, false),
        ] {
            let text = format!(
                r#"{{"survey": "s", "cohort": 0, "fate": "{word}", "answer_again": false}}"#
            );
            let f = read_fate(&text, "s", 0).unwrap();
            assert_eq!((f.fate, f.fate.pending()), (fate, pending), "{word}");
        }
        assert!(matches!(
            read_fate(
                r#"{"survey": "t", "cohort": 0, "fate": "spoilt", "answer_again": true}"#,
                "s",
                0
            ),
            Err(FateError::Other { .. })
        ));
        let e = read_fate("<html>", "s", 0).unwrap_err().to_string();
        assert!(
            e.starts_with("the cohort's fate is unreadable") && !e.contains('\n'),
            "{e}"
        );
    }

    /// What the collector writes is what a page reads, word for word; only a spoilt or a
    /// regrouped cohort asks again.
    #[test]
    fn the_collectors_answer_round_trips() {
        for fate in [
            Fate::Open,
            Fate::Processing,
            Fate::Included,
            Fate::Withheld,
            Fate::Regrouped,
            Fate::Empty,
            Fate::Spoilt,
            Fate::LeftOut,
        ] {
            let said = serde_json::to_string(&CohortFate::of("s", 4, fate)).unwrap();
            let read = read_fate(&said, "s", 4).unwrap();
            assert_eq!(read.fate, fate, "{said}");
            assert_eq!(
                read.answer_again,
                matches!(fate, Fate::Spoilt | Fate::Regrouped)
            );
        }
    }
}
