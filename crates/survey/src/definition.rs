//! Survey definitions: what a participant's browser loads, and how a definition is checked.
//!
//! A definition lists the questions (their coding into numeric columns is [`crate::coding`]), the
//! masking parameters (`p₂`, σ, QA constant, optional DP, and the method) and where to upload. The
//! method is told by which of two fields is present, so the two can never disagree: a cohort's
//! right-mask key `masking.right_mask_key` means the modified TM² of seed 000 §2 (the device
//! right-multiplies by `B_k`); `masking.share_mode` means the collusion-resistant extension of
//! §3.5 (the device splits its record into additive shares). Exactly one must be given. The JSON
//! Schema is `docs/survey.schema.json`; samples are in `www/surveys/`.
//!
//! A question may be shown only after certain earlier answers (`show_if`, [`crate::branching`]),
//! and the texts may come in several languages (`language`, `translations`,
//! [`crate::languages`]); [`validate_content`] checks both with the questions.

use crate::coding::AnswerError;
use crate::policy::SHARE_SCALE;
use std::collections::BTreeMap;

pub use crate::branching::{Condition, ConditionValue, ShowIf};
pub use crate::languages::{QuestionTexts, QuestionTranslation, SurveyTexts, Translation};
use orthomask_core::key::Key;
use orthomask_core::protocol::ProtocolError;
use orthomask_core::protocol::tm2::{DeviceDp, Tm2Design};
use orthomask_core::scaling::RangeScaler;
use serde::{Deserialize, Serialize};

/// A survey definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurveyDefinition {
    /// Identifier: 1–64 characters from `a–z 0–9 - _`.
    pub id: String,
    /// Title shown to participants.
    pub title: String,
    /// Optional introduction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Consent text the participant must accept first.
    pub consent: String,
    /// BCP 47 tag of the language of the texts above (the main language; default `en`).
    #[serde(
        default = "crate::languages::default_language",
        skip_serializing_if = "crate::languages::is_default_language"
    )]
    pub language: String,
    /// The same texts in other languages, by BCP 47 tag; each is complete
    /// ([`crate::languages`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub translations: BTreeMap<String, Translation>,
    /// The questions, in order.
    pub questions: Vec<Question>,
    /// Masking parameters.
    pub masking: Masking,
    /// Where the browser uploads its masked vector (the masking service provider).
    pub upload_url: String,
}

/// One question. (Unknown fields are ignored here: serde cannot deny them across the flattened
/// `kind`; the JSON Schema in `docs/` is strict.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// Identifier, used for column names: 1–64 characters from `a–z A–Z 0–9 _`.
    pub id: String,
    /// The question as shown.
    pub label: String,
    /// Optional help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// Whether the participant may skip it (coded explicitly, see the module documentation).
    #[serde(default)]
    pub optional: bool,
    /// Shown only when an earlier answer meets a condition ([`crate::branching`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub show_if: Option<ShowIf>,
    /// The answer type.
    #[serde(flatten)]
    pub kind: QuestionKind,
}

/// The fields a question of this kind may have — the JSON Schema's per-kind rule
/// (`docs/survey.schema.json`, `$defs/question`). The parser itself ignores others (serde cannot
/// deny them across the flattened `kind`); the survey team's editor refuses them.
pub fn question_fields(kind: &QuestionKind) -> &'static [&'static str] {
    match kind {
        QuestionKind::YesNo => &["id", "label", "help", "optional", "show_if", "kind"],
        QuestionKind::Integer { .. } | QuestionKind::Number { .. } => &[
            "id", "label", "help", "optional", "show_if", "kind", "min", "max",
        ],
        QuestionKind::Likert { .. } => &[
            "id",
            "label",
            "help",
            "optional",
            "show_if",
            "kind",
            "points",
            "low_label",
            "high_label",
        ],
        QuestionKind::Categorical { .. } => &[
            "id", "label", "help", "optional", "show_if", "kind", "options",
        ],
    }
}

/// Answer types.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QuestionKind {
    /// Yes (1) or no (0).
    YesNo,
    /// A whole number in `[min, max]`.
    Integer {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// A number in `[min, max]`.
    Number {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// A point `1 … points` on a Likert scale.
    Likert {
        /// Number of points, 2 to 11.
        points: u8,
        /// Label of point 1.
        low_label: String,
        /// Label of the last point.
        high_label: String,
    },
    /// One of several options; coded as dummies for all options but the first.
    Categorical {
        /// The options; the first is the reference level.
        options: Vec<String>,
    },
}

/// Masking parameters of a survey (the modified TM² of seed 000 unless share mode is used).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Masking {
    /// Noise columns `p₂`.
    pub p2: usize,
    /// Noise standard deviation σ.
    pub sigma: f64,
    /// The QA constant appended to every record (`null`: none).
    pub qa_constant: Option<f64>,
    /// The cohort whose key this definition carries.
    pub cohort: u32,
    /// Participants per cohort.
    pub cohort_size: usize,
    /// The fewest records for which a cohort is masked and released (absent: the policy's
    /// floor, `orthomask_survey::policy::cohort_floor`). Part of what the collector signs, so
    /// the accepting services withhold smaller cohorts by what the devices accepted, never by a
    /// number the collector sends them apart (`crate::floors`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_cohort_size: Option<usize>,
    /// 64 hex digits: the subkey from which the device builds `B_k` (absent in share mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_mask_key: Option<String>,
    /// Whether the keys are guessable teaching keys (demonstrations only).
    #[serde(default)]
    pub teaching: bool,
    /// Device-side differential privacy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp: Option<DpParameters>,
    /// Share mode of seed 000 §3.5: no device holds a right mask.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_mode: Option<ShareMode>,
    /// Whether the device scales every answer by its question's declared range before padding
    /// (absent: not scaled, as in definitions made before scaling existed).
    #[serde(default, skip_serializing_if = "RecordScaling::is_unscaled")]
    pub scaling: RecordScaling,
}

/// How a device puts its answers on one scale before padding (issue 11 §1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordScaling {
    /// Answers are padded in their own units (the papers' worked examples).
    #[default]
    Unscaled,
    /// Each answer `x` is mapped to `2(x − lo)/(hi − lo) − 1 ∈ [−1, 1]` by its question's declared
    /// range; the collector maps the release back (`orthomask_core::scaling`).
    DeclaredRanges,
}

impl RecordScaling {
    /// Whether answers are padded in their own units.
    pub fn is_unscaled(&self) -> bool {
        *self == Self::Unscaled
    }
}

/// Device-side DP parameters (σ on the `[−1, 1]` scale; see seed 004).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DpParameters {
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// σ of the added noise on the `[−1, 1]` scale.
    pub sigma: f64,
}

/// Share mode: the padded record is split into additive shares, one per right-masking service.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareMode {
    /// Upload URL of each right-masking service (at least two).
    pub providers: Vec<String>,
    /// Standard deviation of the random shares.
    pub share_sigma: f64,
}

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

fn invalid(field: impl Into<String>, reason: impl Into<String>) -> SurveyError {
    SurveyError::Invalid {
        field: field.into(),
        reason: reason.into(),
    }
}

fn valid_identifier(s: &str, extra: &[char]) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || extra.contains(&c))
}

/// What the survey team writes, borrowed from a definition or a draft alike.
#[derive(Clone, Copy, Debug)]
pub struct Content<'a> {
    /// The survey id.
    pub id: &'a str,
    /// The title.
    pub title: &'a str,
    /// The introduction, if any.
    pub description: Option<&'a str>,
    /// The consent text.
    pub consent: &'a str,
    /// The questions.
    pub questions: &'a [Question],
    /// The main language's tag.
    pub language: &'a str,
    /// The other languages' texts.
    pub translations: &'a BTreeMap<String, Translation>,
}

/// Check what the survey team writes — the id, the texts, the questions, their conditions and
/// their translations — for a definition or a draft alike
/// ([`crate::draft::SurveyDraft::validate_content`]; `plan_survey` runs it before it codes the
/// questions into columns).
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
        if !valid_identifier(&q.id, &[]) {
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
        crate::branching::validate_show_if(questions, i)?;
    }
    crate::languages::validate_translations(content)
}

/// Whether `id` is a valid survey id: 1–64 characters from `a–z 0–9 - _`, as the schema says.
pub fn valid_survey_id(id: &str) -> bool {
    valid_identifier(id, &['-']) && !id.chars().any(|c| c.is_ascii_uppercase())
}

impl SurveyDefinition {
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

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
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

    /// What the survey team wrote, for [`validate_content`].
    pub fn content(&self) -> Content<'_> {
        Content {
            id: &self.id,
            title: &self.title,
            description: self.description.as_deref(),
            consent: &self.consent,
            questions: &self.questions,
            language: &self.language,
            translations: &self.translations,
        }
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
                if share.providers.len() < 2 {
                    return Err(invalid(
                        "masking.share_mode.providers",
                        "share mode needs at least two right-masking services",
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
                let floor = SHARE_SCALE * self.design()?.record_answer_bound(self.answers_max());
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

    /// The protocol design this definition describes (modified TM², Haar right mask).
    ///
    /// # Errors
    /// [`SurveyError::Design`] when parameters do not form a valid design.
    pub fn design(&self) -> Result<Tm2Design, SurveyError> {
        let columns = self.columns();
        let m = &self.masking;
        let dp = match &m.dp {
            Some(dp) => {
                let ranges: Vec<(f64, f64)> = columns.iter().map(|c| c.range).collect();
                Some(DeviceDp::new(&ranges, dp.sigma, dp.epsilon, dp.delta)?)
            }
            None => None,
        };
        let design = crate::plan::modified_design(columns.len(), m.qa_constant, m.p2, m.sigma, dp)?;
        match (m.scaling, design.scaler()) {
            (RecordScaling::DeclaredRanges, None) => {
                let ranges: Vec<(f64, f64)> = columns.iter().map(|c| c.range).collect();
                Ok(design.with_scaling(RangeScaler::new(&ranges).map_err(ProtocolError::from)?)?)
            }
            _ => Ok(design),
        }
    }

    /// How share mode splits each record (`None` outside share mode).
    pub fn share_split(&self) -> Option<crate::plan::ShareSplit> {
        self.masking
            .share_mode
            .as_ref()
            .map(|s| crate::plan::ShareSplit {
                services: s.providers.len(),
                share_sigma: s.share_sigma,
            })
    }

    /// Each answer column's range as the padded record carries it: `[−1, 1]` when the device
    /// scales by the declared ranges, the declared range otherwise.
    pub fn record_ranges(&self) -> Vec<(f64, f64)> {
        let scaled =
            self.masking.scaling == RecordScaling::DeclaredRanges || self.masking.dp.is_some();
        self.columns()
            .into_iter()
            .map(|c| if scaled { (-1.0, 1.0) } else { c.range })
            .collect()
    }

    /// The largest answer magnitude the padded record carries (1 when scaled).
    pub fn record_answers_max(&self) -> f64 {
        self.record_ranges()
            .iter()
            .map(|r| r.0.abs().max(r.1.abs()))
            .fold(0.0, f64::max)
    }

    /// The device key for the right mask, when not in share mode.
    ///
    /// # Errors
    /// [`SurveyError::Invalid`] when the key is absent or malformed.
    pub fn right_mask_key(&self) -> Result<Key, SurveyError> {
        let hex = self
            .masking
            .right_mask_key
            .as_deref()
            .ok_or_else(|| invalid("masking.right_mask_key", "absent (share mode)"))?;
        Key::from_hex(hex).map_err(|e| invalid("masking.right_mask_key", e.to_string()))
    }

    /// What every cohort's definition of this survey shares: this definition without its
    /// cohort's index and device key (the collector's template, which it registers with the
    /// accepting services — never a key).
    pub fn template(&self) -> Self {
        let mut t = self.clone();
        t.masking.cohort = 0;
        t.masking.right_mask_key = None;
        t
    }

    /// SHA-256 (hex) of [`template`](Self::template)'s JSON text: what a device accepted, named
    /// in each upload so that an accepting service can check that the devices and the collector's
    /// registration speak of the same survey (issue 20 §2). Recomputed from the parsed
    /// definition on both sides, so it does not depend on the whitespace of a signed text.
    pub fn template_digest(&self) -> String {
        crate::merkle::sha256_hex(self.template().to_json().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::Answer;

    const SAMPLE: &str = include_str!("../../../www/surveys/leaps-demo.json");

    #[test]
    fn sample_definition_parses_and_encodes() {
        let s = SurveyDefinition::parse(SAMPLE, "leaps-demo.json").unwrap();
        let names: Vec<String> = s.columns().into_iter().map(|c| c.name).collect();
        assert_eq!(names.first().map(String::as_str), Some("response"));
        let answers: Vec<Answer> = s
            .questions
            .iter()
            .map(|q| match &q.kind {
                QuestionKind::YesNo => Answer::YesNo(true),
                QuestionKind::Integer { min, .. } => Answer::Integer(*min),
                QuestionKind::Number { max, .. } => Answer::Number(*max),
                QuestionKind::Likert { .. } => Answer::Likert(2),
                QuestionKind::Categorical { .. } => Answer::Category(1),
            })
            .collect();
        let record = s.encode(&answers).unwrap();
        assert_eq!(record.len(), names.len());
        let design = s.design().unwrap();
        assert_eq!(design.answers(), names.len());
        assert!(s.right_mask_key().is_ok());
        // The JSON shape round-trips exactly (what docs/survey.schema.json describes).
        assert_eq!(SurveyDefinition::parse(&s.to_json(), "again").unwrap(), s);
    }

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
            providers: vec!["http://a/u".into(), "http://b/u".into()],
            share_sigma: floor,
        });
        s.validate().unwrap();
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

    #[test]
    fn survey_ids_follow_the_schema() {
        for good in ["a", "health-2026", "x_1"] {
            assert!(valid_survey_id(good), "{good}");
        }
        let long = "a".repeat(65);
        for bad in ["", "Has Spaces", "Upper", "dot.s", long.as_str()] {
            assert!(!valid_survey_id(bad), "{bad}");
        }
    }
}
