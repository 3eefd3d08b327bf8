//! Why a signed survey is refused as a weak plan (issue 20 §3), in the participant's language:
//! the survey crate's typed [`FloorError`] (whose English `Display` the services and the command
//! line show) mapped to the catalogue. Numbers are shown as the page prints them.

use orthomask_survey::floors::FloorError;

use super::AppLanguage;
use crate::model::format::sig;
use crate::t;

/// The reason for `error` in `language`, to go inside `survey-weak-plan`.
pub fn floor_reason(language: AppLanguage, error: &FloorError) -> String {
    match error {
        FloorError::NoQaColumn => t!(language, "floor-no-qa"),
        FloorError::CohortBelowFloor { found, floor } => {
            t!(language, "floor-cohort", found = found, floor = floor)
        }
        FloorError::TooFewNoiseColumns {
            found,
            needed,
            cohort,
        } => t!(
            language,
            "floor-noise-columns",
            found = found,
            needed = needed,
            cohort = cohort
        ),
        FloorError::NoiseBelowBound { found, needed } => t!(
            language,
            "floor-noise-level",
            found = sig(*found, 4),
            needed = sig(*needed, 4)
        ),
        FloorError::Unchecked(reason) => t!(language, "floor-unchecked", reason = reason),
    }
}
