//! Survey definitions: what a participant's browser loads — every type of its JSON shape, and
//! what follows from a definition alone (its masking design, its template and digest).
//!
//! A definition lists the questions (their coding into numeric columns is [`crate::coding`]), the
//! masking parameters (`p₂`, σ, QA constant, optional DP, and the method) and where to upload. The
//! method is told by which of two fields is present, so the two can never disagree: a cohort's
//! right-mask key `masking.right_mask_key` means the modified TM² of seed 000 §2 (the device
//! right-multiplies by `B_k`); `masking.share_mode` means the collusion-resistant extension of
//! §3.5 (the device splits its record into additive shares). Exactly one must be given. The JSON
//! Schema is `docs/survey.schema.json`; samples are in `www/surveys/`.
//!
//! A question may be shown only after certain earlier answers (`show_if`, a [`ShowIf`]: what it
//! means is [`crate::branching`]), and the texts may come in several languages (`language`,
//! `translations`, each a [`Translation`]: which one a browser gets is [`crate::languages`]).
//! The types are written here, below every rule that reads them; a definition is parsed and
//! checked as a whole — questions, conditions, translations, masking — by [`crate::validation`].

use crate::error::invalid;
use orthomask_core::key::Key;
use orthomask_core::protocol::ProtocolError;
use orthomask_core::protocol::tm2::{DeviceDp, Tm2Design};
use orthomask_core::scaling::RangeScaler;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::error::SurveyError;
pub use orthomask_formats::model_terms::{Term, TermKind};

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
        default = "default_language",
        skip_serializing_if = "is_default_language"
    )]
    pub language: String,
    /// The same texts in other languages, by BCP 47 tag; each is complete
    /// ([`crate::languages`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub translations: BTreeMap<String, Translation>,
    /// The questions, in order.
    pub questions: Vec<Question>,
    /// Model terms the device computes from the coded answers, each one more column after the
    /// answers' ([`crate::terms`]; absent: none, as in definitions made before terms existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<Term>,
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

impl Question {
    /// Whether a participant may leave this question without an answer — optional, or shown
    /// only under a condition — so that its record carries the `id_answered` column.
    pub fn may_be_unanswered(&self) -> bool {
        self.optional || self.show_if.is_some()
    }
}

/// When a question is shown: the answer to an earlier question meets a condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ShowIfJson")]
pub struct ShowIf {
    /// Id of the earlier question whose answer decides.
    pub question: String,
    /// What its answer must be.
    #[serde(flatten)]
    pub condition: Condition,
}

/// What the referenced answer must be (one key of `show_if`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// Exactly this value.
    Equals(ConditionValue),
    /// One of these values.
    OneOf(Vec<ConditionValue>),
    /// A number from `min` to `max`, both included (integer, number and Likert questions).
    Range {
        /// Smallest value that shows the question.
        min: f64,
        /// Largest value that shows the question.
        max: f64,
    },
}

/// A value a condition compares an answer with: a number, or a text (`"yes"`/`"no"`, an option).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConditionValue {
    /// For integer, number and Likert questions.
    Number(f64),
    /// For yes/no (`"yes"`, `"no"`) and categorical questions (an option's text).
    Text(String),
}

/// The JSON shape of `show_if`, read strictly: serde's flattened enum would take the first
/// condition key and ignore a second one or a misspelt field; the schema refuses both, so the
/// parser does too.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShowIfJson {
    question: String,
    #[serde(default)]
    equals: Option<ConditionValue>,
    #[serde(default)]
    one_of: Option<Vec<ConditionValue>>,
    #[serde(default)]
    range: Option<RangeJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RangeJson {
    min: f64,
    max: f64,
}

impl TryFrom<ShowIfJson> for ShowIf {
    type Error = String;

    fn try_from(json: ShowIfJson) -> Result<Self, String> {
        let condition = match (json.equals, json.one_of, json.range) {
            (Some(v), None, None) => Condition::Equals(v),
            (None, Some(vs), None) => Condition::OneOf(vs),
            (None, None, Some(r)) => Condition::Range {
                min: r.min,
                max: r.max,
            },
            _ => {
                return Err(format!(
                    "show_if on {:?} needs exactly one of equals, one_of and range",
                    json.question
                ));
            }
        };
        Ok(Self {
            question: json.question,
            condition,
        })
    }
}

/// The main language when a definition names none.
pub const DEFAULT_LANGUAGE: &str = "en";

/// `"en"`: serde's default for `language`.
pub fn default_language() -> String {
    DEFAULT_LANGUAGE.to_owned()
}

/// Whether `language` is the default (then it is not written out, keeping older files' shape).
pub fn is_default_language(language: &str) -> bool {
    language == DEFAULT_LANGUAGE
}

/// A survey's texts in one other language.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Translation {
    /// The title.
    #[serde(default)]
    pub title: String,
    /// The introduction, exactly when the main texts have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The consent text.
    #[serde(default)]
    pub consent: String,
    /// Every question's texts, by question id.
    #[serde(default)]
    pub questions: BTreeMap<String, QuestionTranslation>,
}

/// One question's texts in another language.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuestionTranslation {
    /// The question.
    #[serde(default)]
    pub label: String,
    /// Help, exactly when the main question has some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// The options of a categorical question, in the main options' order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<String>>,
    /// A Likert scale's label of point 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_label: Option<String>,
    /// A Likert scale's label of its last point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_label: Option<String>,
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
    /// Upload URL of each right-masking service (at least [`crate::policy::MIN_SHARE_SERVICES`]:
    /// with two, the collector and one service read yes/no answers).
    pub providers: Vec<String>,
    /// Standard deviation of the random shares.
    pub share_sigma: f64,
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
    /// The model terms.
    pub terms: &'a [Term],
    /// The main language's tag.
    pub language: &'a str,
    /// The other languages' texts.
    pub translations: &'a BTreeMap<String, Translation>,
}

/// Whether `id` is a valid survey id: 1–64 characters from `a–z 0–9 - _`, as the schema says.
pub fn valid_survey_id(id: &str) -> bool {
    valid_identifier(id, &['-']) && !id.chars().any(|c| c.is_ascii_uppercase())
}

/// Whether `id` is a valid question id: 1–64 characters from `a–z A–Z 0–9 _`, as the schema says
/// (column names are made of it).
pub fn valid_question_id(id: &str) -> bool {
    valid_identifier(id, &[])
}

fn valid_identifier(s: &str, extra: &[char]) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || extra.contains(&c))
}

impl SurveyDefinition {
    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// What the survey team wrote, for `validate_content` ([`crate::validation`]).
    pub fn content(&self) -> Content<'_> {
        Content {
            id: &self.id,
            title: &self.title,
            description: self.description.as_deref(),
            consent: &self.consent,
            questions: &self.questions,
            terms: &self.terms,
            language: &self.language,
            translations: &self.translations,
        }
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

    /// Each answer column's range as the padded record carries it — model terms included, with
    /// their derived ranges ([`crate::terms`]): `[−1, 1]` when the device scales by the declared
    /// ranges, the declared range otherwise.
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
