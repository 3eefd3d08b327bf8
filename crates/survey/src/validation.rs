//! How a survey definition is checked: [`SurveyDefinition::parse`] and
//! [`SurveyDefinition::validate`], and [`validate_content`] — what the survey team writes, checked
//! for a definition or an administrator's draft alike.
//!
//! The one place that sees every part of a definition at once, so it stands above them all: the
//! id, the texts, each question's own fields and the masking parameters are checked here; each
//! question's condition by [`crate::branching`] (against the questions before it), the model
//! terms by [`crate::terms`] (against the questions' columns) and the translations by
//! [`crate::languages`] (against the main texts). A refusal is
//! [`SurveyError::Invalid`] naming the first offending field by its JSON path.

use crate::branching::validate_show_if;
use crate::definition::{
    Content, QuestionKind, SurveyDefinition, valid_question_id, valid_survey_id,
};
use crate::error::{SurveyError, invalid};
use crate::languages::validate_translations;
use crate::policy::{MIN_SHARE_SERVICES, SHARE_SCALE};
use crate::terms::validate_terms;
use orthomask_core::key::Key;

/// Check what the survey team writes — the id, the texts, the questions, their conditions, the
/// model terms and the translations — for a definition or a draft alike
/// (`SurveyDraft::validate_content`; `plan_survey` runs it before it codes the questions into
/// columns).
///
/// # Errors
/// [`SurveyError::Invalid`] naming the first offending field.
pub fn validate_content(content: &Content<'_>) -> Result<(), SurveyError> {
    let Content {
        id,
        title,
        consent,
        questions,
        ..
    } = *content;
    if !valid_survey_id(id) {
        return Err(invalid("id", "use 1-64 characters from a-z, 0-9, - and _"));
    }
    if title.trim().is_empty() {
        return Err(invalid("title", "must not be empty"));
    }
    if consent.trim().is_empty() {
        return Err(invalid(
            "consent",
            "must not be empty: participants consent before answering",
        ));
    }
    if questions.is_empty() {
        return Err(invalid("questions", "a survey needs at least one question"));
    }
    let mut ids = std::collections::HashSet::new();
    for (i, q) in questions.iter().enumerate() {
        let at = |f: &str| format!("questions[{i}].{f}");
        if !valid_question_id(&q.id) {
            return Err(invalid(
                at("id"),
                "use 1-64 characters from a-z, A-Z, 0-9 and _",
            ));
        }
        if !ids.insert(q.id.as_str()) {
            return Err(invalid(
                at("id"),
                format!("duplicate question id {:?}", q.id),
            ));
        }
        if q.label.trim().is_empty() {
            return Err(invalid(at("label"), "must not be empty"));
        }
        match &q.kind {
            QuestionKind::YesNo => {}
            QuestionKind::Integer { min, max } if min >= max => {
                return Err(invalid(
                    at("max"),
                    format!("must exceed min ({min} >= {max})"),
                ));
            }
            QuestionKind::Number { min, max }
                if !(min.is_finite() && max.is_finite() && min < max) =>
            {
                return Err(invalid(
                    at("max"),
                    format!("need finite min < max, got [{min}, {max}]"),
                ));
            }
            QuestionKind::Likert { points, .. } if !(2..=11).contains(points) => {
                return Err(invalid(
                    at("points"),
                    format!("must be 2 to 11, got {points}"),
                ));
            }
            QuestionKind::Categorical { options } if options.len() < 2 => {
                return Err(invalid(at("options"), "need at least two options"));
            }
            QuestionKind::Categorical { options } => {
                let unique: std::collections::HashSet<&String> = options.iter().collect();
                if unique.len() != options.len() || options.iter().any(|o| o.trim().is_empty()) {
                    return Err(invalid(
                        at("options"),
                        "options must be non-empty and distinct",
                    ));
                }
            }
            _ => {}
        }
    }
    // Conditions refer to earlier questions, whose own fields are checked by now.
    for i in 0..questions.len() {
        validate_show_if(questions, i)?;
    }
    // Terms name the questions' columns, which are well formed by now.
    validate_terms(questions, content.terms)?;
    validate_translations(content)
}

impl SurveyDefinition {
    /// The least share noise τ a share-mode definition may carry: [`SHARE_SCALE`] times the
    /// largest answer the padded record carries (1 when the device scales by the declared
    /// ranges), so that one service's share shows each answer at a signal-to-noise ratio below
    /// `1/SHARE_SCALE` (`orthomask_core::protocol::collusion`). Checked when a definition is
    /// parsed and by the floors every device and accepting service applies (`crate::floors`).
    ///
    /// # Errors
    /// [`SurveyError::Design`] when the design does not build.
    pub fn share_sigma_floor(&self) -> Result<f64, SurveyError> {
        Ok(SHARE_SCALE * self.design()?.record_answer_bound(self.answers_max()))
    }

    /// Parse and validate a definition.
    ///
    /// # Errors
    /// [`SurveyError::Format`] for malformed JSON, [`SurveyError::Invalid`] naming the field.
    pub fn parse(text: &str, source_name: &str) -> Result<Self, SurveyError> {
        let survey: Self = serde_json::from_str(text).map_err(|e| SurveyError::Format {
            source_name: source_name.to_owned(),
            reason: e.to_string(),
        })?;
        survey.validate()?;
        Ok(survey)
    }

    /// Check every field.
    ///
    /// # Errors
    /// [`SurveyError::Invalid`] naming the first offending field.
    pub fn validate(&self) -> Result<(), SurveyError> {
        self.validate_content()?;
        self.validate_masking()
    }

    /// Check what the survey team writes: id, texts and questions (not the masking parameters,
    /// which the collector's plan fills in): [`validate_content`] of this definition's fields.
    ///
    /// # Errors
    /// [`SurveyError::Invalid`] naming the first offending field.
    pub fn validate_content(&self) -> Result<(), SurveyError> {
        validate_content(&self.content())
    }

    fn validate_masking(&self) -> Result<(), SurveyError> {
        let m = &self.masking;
        if !(m.sigma.is_finite() && m.sigma > 0.0) && m.p2 > 0 {
            return Err(invalid(
                "masking.sigma",
                format!("must be finite and positive, got {}", m.sigma),
            ));
        }
        if m.cohort_size == 0 {
            return Err(invalid("masking.cohort_size", "must be at least 1"));
        }
        if let Some(c) = m.qa_constant
            && !c.is_finite()
        {
            return Err(invalid("masking.qa_constant", "must be finite"));
        }
        match (&m.right_mask_key, &m.share_mode) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "masking",
                    "give either right_mask_key or share_mode, not both",
                ));
            }
            (None, None) => {
                return Err(invalid(
                    "masking.right_mask_key",
                    "required unless share_mode is used",
                ));
            }
            (Some(key), None) => {
                Key::from_hex(key).map_err(|e| invalid("masking.right_mask_key", e.to_string()))?;
            }
            (None, Some(share)) => {
                // Two services leave the collector with one of them reading yes/no answers
                // (`policy::MIN_SHARE_SERVICES` derives why three).
                if share.providers.len() < MIN_SHARE_SERVICES {
                    return Err(invalid(
                        "masking.share_mode.providers",
                        format!(
                            "share mode needs at least {MIN_SHARE_SERVICES} right-masking \
                             services, got {}",
                            share.providers.len()
                        ),
                    ));
                }
                if !(share.share_sigma.is_finite() && share.share_sigma > 0.0) {
                    return Err(invalid(
                        "masking.share_mode.share_sigma",
                        "must be finite and positive",
                    ));
                }
                // A device must not trust a definition that would send its answers thinly
                // veiled: every share has to hide them under noise SHARE_SCALE times their size.
                let floor = self.share_sigma_floor()?;
                if share.share_sigma < floor {
                    return Err(invalid(
                        "masking.share_mode.share_sigma",
                        format!(
                            "{} is below {SHARE_SCALE} × the largest answer the record carries \
                             ({}), so a single share would show the answers",
                            share.share_sigma,
                            floor / SHARE_SCALE
                        ),
                    ));
                }
            }
        }
        if let Some(dp) = &m.dp {
            for (name, v) in [
                ("epsilon", dp.epsilon),
                ("delta", dp.delta),
                ("sigma", dp.sigma),
            ] {
                if !(v.is_finite() && v > 0.0) {
                    return Err(invalid(
                        format!("masking.dp.{name}"),
                        "must be finite and positive",
                    ));
                }
            }
            if dp.delta >= 1.0 {
                return Err(invalid("masking.dp.delta", "must be below 1"));
            }
        }
        if self.upload_url.trim().is_empty() {
            return Err(invalid("upload_url", "must not be empty"));
        }
        // The design must build (ranges valid, p₂ and σ consistent).
        self.design()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::ShareMode;

    const SAMPLE: &str = include_str!("../../../www/surveys/leaps-demo.json");

    #[test]
    fn invalid_definitions_name_the_field() {
        let refusal = |s: &SurveyDefinition| s.validate().unwrap_err().to_string();
        let mut s = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        s.questions[1].id = s.questions[0].id.clone();
        assert!(refusal(&s).contains("questions[1].id: duplicate"));
        let mut s = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        s.masking.right_mask_key = Some("abc".into());
        assert!(refusal(&s).contains("masking.right_mask_key"));
        // Share mode: a share scale under 100 × the largest answer would expose the answers.
        let mut s = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        s.masking.right_mask_key = None;
        let floor = SHARE_SCALE * s.answers_max();
        s.masking.share_mode = Some(ShareMode {
            providers: vec![
                "http://a/u".into(),
                "http://b/u".into(),
                "http://c/u".into(),
            ],
            share_sigma: floor,
        });
        s.validate().unwrap();
        // Issue 43: two right-masking services let the collector with one of them read yes/no
        // answers (`policy::MIN_SHARE_SERVICES`).
        let mut two = s.clone();
        two.masking.share_mode.as_mut().unwrap().providers.pop();
        let e = refusal(&two);
        assert!(
            e.contains("masking.share_mode.providers")
                && e.contains("at least 3 right-masking services, got 2")
                && !e.contains('\n'),
            "{e}"
        );
        s.masking.share_mode.as_mut().unwrap().share_sigma = floor * 0.99;
        let e = refusal(&s);
        assert!(
            e.contains("masking.share_mode.share_sigma")
                && e.contains("largest answer the record carries"),
            "{e}"
        );
        let e = SurveyDefinition::parse("{\"id\": 1}", "s.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.json: not a survey definition"), "{e}");
    }
}
