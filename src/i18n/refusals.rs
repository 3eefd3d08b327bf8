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
        FloorError::TooFewShareServices { found, needed } => t!(
            language,
            "floor-share-services",
            found = found,
            needed = needed
        ),
        FloorError::BeyondServiceLimit { what, found, limit } => t!(
            language,
            "floor-service-limit",
            what = *what,
            found = found,
            limit = limit
        ),
        FloorError::ShareNoiseBelowFloor { found, needed } => t!(
            language,
            "floor-share-noise",
            found = sig(*found, 4),
            needed = sig(*needed, 4)
        ),
        FloorError::QaConstantBelowFloor { found, floor } => t!(
            language,
            "floor-qa-constant",
            found = sig(*found, 4),
            floor = sig(*floor, 4)
        ),
        FloorError::QaCheckBlind { scale, revealed } => t!(
            language,
            "floor-qa-blind",
            scale = sig(*scale, 3),
            revealed = sig(*revealed, 3)
        ),
        FloorError::DpAboveBudget {
            sigma,
            epsilon,
            stated,
            found,
            cohort,
        } => t!(
            language,
            "floor-dp-budget",
            sigma = sig(*sigma, 4),
            epsilon = sig(*epsilon, 4),
            stated = sig(*stated, 3),
            found = sig(*found, 3),
            cohort = cohort
        ),
        FloorError::Unchecked(reason) => t!(language, "floor-unchecked", reason = reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every refusal a device can meet has its own words in every language: none falls back to
    /// the message id, none leaves a placeholder unfilled.
    #[test]
    fn every_floor_refusal_is_worded_in_every_language() {
        let refusals = [
            FloorError::NoQaColumn,
            FloorError::CohortBelowFloor { found: 2, floor: 6 },
            FloorError::TooFewNoiseColumns {
                found: 3,
                needed: 40,
                cohort: 12,
            },
            FloorError::NoiseBelowBound {
                found: 0.1,
                needed: 0.5,
            },
            FloorError::TooFewShareServices {
                found: 2,
                needed: 3,
            },
            FloorError::BeyondServiceLimit {
                what: "p",
                found: 60_000,
                limit: 50_000,
            },
            FloorError::ShareNoiseBelowFloor {
                found: 1.0,
                needed: 100.0,
            },
            FloorError::QaConstantBelowFloor {
                found: 0.0,
                floor: 0.5,
            },
            FloorError::QaCheckBlind {
                scale: 1e7,
                revealed: 0.02,
            },
            FloorError::DpAboveBudget {
                sigma: 0.1,
                epsilon: 1.0,
                stated: 1e-6,
                found: 0.2,
                cohort: 12,
            },
            FloorError::Unchecked("why".into()),
        ];
        for (language, _, _) in crate::i18n::CATALOGUES {
            for refusal in &refusals {
                let words = floor_reason(language, refusal);
                assert!(
                    !words.starts_with("floor-") && !words.contains('{') && !words.is_empty(),
                    "{language:?}: {refusal:?} → {words:?}"
                );
            }
        }
    }
}
