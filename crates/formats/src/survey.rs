//! Survey definitions: what a participant's browser loads, and the data-transfer types of an
//! upload and its receipt.
//!
//! A definition lists the questions and how each becomes numeric columns of the record `x₁`, the
//! masking parameters (`p₂`, σ, QA constant, optional DP, and the method) and where to upload. The
//! method is told by which of two fields is present, so the two can never disagree: a cohort's
//! right-mask key `masking.right_mask_key` means the modified TM² of seed 000 §2 (the device
//! right-multiplies by `B_k`); `masking.share_mode` means the collusion-resistant extension of
//! §3.5 (the device splits its record into additive shares). Exactly one must be given. The JSON
//! Schema is `docs/survey.schema.json`; samples are in `www/surveys/`.
//!
//! # From answers to columns
//! | kind | columns | range |
//! |---|---|---|
//! | `yes_no` | `id` = 1 for yes, 0 for no | [0, 1] |
//! | `integer`, `number` | `id` = the value | [min, max] |
//! | `likert` | `id` = 1 … points | [1, points] |
//! | `categorical` | `id=option` = 1/0 for every option but the first (the reference) | [0, 1] |
//!
//! An **optional** question adds a column `id_answered` (1 answered, 0 skipped) and, when skipped,
//! its value columns take a neutral value: 0 for yes/no and dummies (the reference), the midpoint
//! of the range for numbers and Likert items. The masked matrix must be complete, so a skipped
//! answer is coded explicitly rather than left empty; analysts include `id_answered` in a model
//! (or restrict to answered rows through it) instead of treating the neutral value as an answer.

use orthomask_core::key::Key;
use orthomask_core::protocol::ProtocolError;
use orthomask_core::protocol::collusion::SHARE_SCALE;
use orthomask_core::protocol::tm2::{DeviceDp, Tm2Design};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

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
    /// The answer type.
    #[serde(flatten)]
    pub kind: QuestionKind,
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

/// One numeric column of the record and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSpec {
    /// Column name.
    pub name: String,
    /// Index of the question it encodes.
    pub question: usize,
    /// Declared range.
    pub range: (f64, f64),
}

/// A participant's answer to one question.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Skipped (only for optional questions).
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
        /// Question id.
        question: String,
        /// What is wrong, for the participant.
        reason: String,
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
        if !valid_identifier(&self.id, &['-']) || self.id.chars().any(|c| c.is_ascii_uppercase()) {
            return Err(invalid("id", "use 1-64 characters from a-z, 0-9, - and _"));
        }
        if self.title.trim().is_empty() {
            return Err(invalid("title", "must not be empty"));
        }
        if self.consent.trim().is_empty() {
            return Err(invalid(
                "consent",
                "must not be empty: participants consent before answering",
            ));
        }
        if self.questions.is_empty() {
            return Err(invalid("questions", "a survey needs at least one question"));
        }
        let mut ids = std::collections::HashSet::new();
        for (i, q) in self.questions.iter().enumerate() {
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
                    if unique.len() != options.len() || options.iter().any(|o| o.trim().is_empty())
                    {
                        return Err(invalid(
                            at("options"),
                            "options must be non-empty and distinct",
                        ));
                    }
                }
                _ => {}
            }
        }
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
                let floor = SHARE_SCALE * self.answers_max();
                if share.share_sigma < floor {
                    return Err(invalid(
                        "masking.share_mode.share_sigma",
                        format!(
                            "{} is below {SHARE_SCALE} × the largest declared answer ({}), so a \
                             single share would show the answers",
                            share.share_sigma,
                            self.answers_max()
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

    /// The numeric columns of a record, in order (QA and noise excluded).
    pub fn columns(&self) -> Vec<ColumnSpec> {
        let mut out = Vec::new();
        for (i, q) in self.questions.iter().enumerate() {
            let spec = |name: String, range| ColumnSpec {
                name,
                question: i,
                range,
            };
            match &q.kind {
                QuestionKind::YesNo => out.push(spec(q.id.clone(), (0.0, 1.0))),
                QuestionKind::Integer { min, max } => {
                    out.push(spec(q.id.clone(), (*min as f64, *max as f64)))
                }
                QuestionKind::Number { min, max } => out.push(spec(q.id.clone(), (*min, *max))),
                QuestionKind::Likert { points, .. } => {
                    out.push(spec(q.id.clone(), (1.0, f64::from(*points))))
                }
                QuestionKind::Categorical { options } => {
                    for option in &options[1..] {
                        out.push(spec(format!("{}={option}", q.id), (0.0, 1.0)));
                    }
                }
            }
            if q.optional {
                out.push(spec(format!("{}_answered", q.id), (0.0, 1.0)));
            }
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
                reason: format!(
                    "expected {} answers, got {}",
                    self.questions.len(),
                    answers.len()
                ),
            });
        }
        let mut out = Vec::new();
        for (q, a) in self.questions.iter().zip(answers) {
            let bad = |reason: String| SurveyError::BadAnswer {
                question: q.id.clone(),
                reason,
            };
            let skipped = matches!(a, Answer::Skipped);
            if skipped && !q.optional {
                return Err(bad("this question needs an answer".into()));
            }
            match (&q.kind, a) {
                (QuestionKind::YesNo, Answer::YesNo(yes)) => out.push(f64::from(u8::from(*yes))),
                (QuestionKind::YesNo, Answer::Skipped) => out.push(0.0),
                (QuestionKind::Integer { min, max }, Answer::Integer(v)) => {
                    if v < min || v > max {
                        return Err(bad(format!("enter a whole number from {min} to {max}")));
                    }
                    out.push(*v as f64);
                }
                (QuestionKind::Integer { min, max }, Answer::Skipped) => {
                    out.push((*min as f64 + *max as f64) / 2.0)
                }
                (QuestionKind::Number { min, max }, Answer::Number(v)) => {
                    if !v.is_finite() || v < min || v > max {
                        return Err(bad(format!("enter a number from {min} to {max}")));
                    }
                    out.push(*v);
                }
                (QuestionKind::Number { min, max }, Answer::Skipped) => out.push((min + max) / 2.0),
                (QuestionKind::Likert { points, .. }, Answer::Likert(v)) => {
                    if *v < 1 || v > points {
                        return Err(bad(format!("choose a point from 1 to {points}")));
                    }
                    out.push(f64::from(*v));
                }
                (QuestionKind::Likert { points, .. }, Answer::Skipped) => {
                    out.push((1.0 + f64::from(*points)) / 2.0)
                }
                (QuestionKind::Categorical { options }, Answer::Category(k)) => {
                    if *k >= options.len() {
                        return Err(bad(format!("choose one of the {} options", options.len())));
                    }
                    out.extend((1..options.len()).map(|j| f64::from(u8::from(j == *k))));
                }
                (QuestionKind::Categorical { options }, Answer::Skipped) => {
                    out.extend(std::iter::repeat_n(0.0, options.len() - 1))
                }
                _ => return Err(bad("the answer does not match the question type".into())),
            }
            if q.optional {
                out.push(if skipped { 0.0 } else { 1.0 });
            }
        }
        Ok(out)
    }

    /// The protocol design this definition describes (modified TM², Haar right mask).
    ///
    /// # Errors
    /// [`SurveyError::Design`] when parameters do not form a valid design.
    pub fn design(&self) -> Result<Tm2Design, SurveyError> {
        let columns = self.columns();
        let m = &self.masking;
        let mut design = Tm2Design::modified(columns.len(), 0, 1.0)?
            .with_qa(m.qa_constant)?
            .with_noise(m.p2, m.sigma)?;
        if let Some(dp) = &m.dp {
            let ranges: Vec<(f64, f64)> = columns.iter().map(|c| c.range).collect();
            design = design.with_dp(DeviceDp::new(&ranges, dp.sigma, dp.epsilon, dp.delta)?)?;
        }
        Ok(design)
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
}

/// What a device uploads: the masked vector (or, in share mode, one share) with an idempotency
/// token so a retried upload is stored once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upload {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// Random token chosen by the device (16–128 characters from `A–Z a–z 0–9 - _`).
    pub token: String,
    /// The masked vector `x·B_k` (length `p`), or the device's share in share mode.
    pub values: Vec<f64>,
}

impl Upload {
    /// SHA-256 over a canonical encoding (survey, cohort, token, then each value's IEEE bits,
    /// little-endian), as lowercase hex: the receipt a participant keeps.
    pub fn hash(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update((self.survey.len() as u64).to_le_bytes());
        hasher.update(self.survey.as_bytes());
        hasher.update(self.cohort.to_le_bytes());
        hasher.update((self.token.len() as u64).to_le_bytes());
        hasher.update(self.token.as_bytes());
        hasher.update((self.values.len() as u64).to_le_bytes());
        for v in &self.values {
            hasher.update(v.to_bits().to_le_bytes());
        }
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Check shape and values against what the survey expects.
    ///
    /// # Errors
    /// A one-line reason: wrong survey, bad token, wrong length (naming both), non-finite value
    /// (naming its index).
    pub fn validate(&self, survey: &str, expected_len: usize) -> Result<(), String> {
        if self.survey != survey {
            return Err(format!(
                "upload is for survey {:?}, not {survey:?}",
                self.survey
            ));
        }
        let token_ok = (16..=128).contains(&self.token.len())
            && self
                .token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !token_ok {
            return Err("idempotency token must be 16-128 characters from A-Z a-z 0-9 - _".into());
        }
        if self.values.len() != expected_len {
            return Err(format!(
                "upload has {} values, the survey expects {expected_len}",
                self.values.len()
            ));
        }
        if let Some(i) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(format!("value {i} is not a finite number"));
        }
        Ok(())
    }
}

/// What the provider returns for an accepted upload; the participant may save it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// Survey id.
    pub survey: String,
    /// Cohort index.
    pub cohort: u32,
    /// [`Upload::hash`] of the stored upload.
    pub upload_hash: String,
    /// When the provider stored it (RFC 3339, UTC).
    pub received_at: String,
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    fn survey_with(kind: QuestionKind, optional: bool) -> SurveyDefinition {
        let mut s = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        s.questions = vec![Question {
            id: "q".into(),
            label: "Q?".into(),
            help: None,
            optional,
            kind,
        }];
        s
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
        let likert = survey_with(
            QuestionKind::Likert {
                points: 5,
                low_label: "no".into(),
                high_label: "yes".into(),
            },
            true,
        );
        assert_eq!(likert.encode(&[Answer::Skipped]).unwrap(), vec![3.0, 0.0]);
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
    }

    #[test]
    fn invalid_definitions_name_the_field() {
        let mut s = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        s.questions[1].id = s.questions[0].id.clone();
        assert!(
            s.validate()
                .unwrap_err()
                .to_string()
                .contains("questions[1].id: duplicate")
        );
        let mut s = SurveyDefinition::parse(SAMPLE, "x").unwrap();
        s.masking.right_mask_key = Some("abc".into());
        assert!(
            s.validate()
                .unwrap_err()
                .to_string()
                .contains("masking.right_mask_key")
        );
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
        let e = s.validate().unwrap_err().to_string();
        assert!(
            e.contains("masking.share_mode.share_sigma") && e.contains("largest declared answer"),
            "{e}"
        );
        let e = SurveyDefinition::parse("{\"id\": 1}", "s.json")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.json: not a survey definition"), "{e}");
    }

    #[test]
    fn upload_hash_and_validation() {
        let u = Upload {
            survey: "s".into(),
            cohort: 0,
            token: "abcdefghijklmnop".into(),
            values: vec![1.0, 2.0],
        };
        assert_eq!(u.hash().len(), 64);
        let mut v = u.clone();
        v.values[1] = 2.000_000_000_000_001;
        assert_ne!(u.hash(), v.hash());
        assert!(u.validate("s", 2).is_ok());
        assert!(u.validate("s", 3).unwrap_err().contains("expects 3"));
        assert!(u.validate("t", 2).is_err());
        let mut bad = u.clone();
        bad.values[0] = f64::NAN;
        assert_eq!(
            bad.validate("s", 2).unwrap_err(),
            "value 0 is not a finite number"
        );
        let mut short = u;
        short.token = "x".into();
        assert!(short.validate("s", 2).is_err());
    }
}
