//! The question builder: form fields as typed (text until the draft is made), every question
//! kind of the survey definition, and the one function that turns them into a draft
//! ([`DraftForm::draft`]) — the JSON the collector's `POST /api/admin/surveys` takes — and back
//! ([`DraftForm::from_draft`]) for the JSON editor.
//!
//! The draft is built as JSON and read with serde, so fields the builder does not know (kept in
//! [`DraftForm::extra`], e.g. `demonstration`) pass through, and the code compiles whatever
//! fields `SurveyDraft` gains with `#[serde(default)]`.

use orthomask_survey::draft::SurveyDraft;
use serde_json::{Map, Value, json};

/// The answer types of the definition (`QuestionKind`'s `kind` tags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// Yes or no.
    #[default]
    YesNo,
    /// A whole number in `[min, max]`.
    Integer,
    /// A number in `[min, max]`.
    Number,
    /// A Likert scale of `points` points.
    Likert,
    /// One of several options.
    Categorical,
}

impl Kind {
    /// Every kind, with its JSON tag and its label in the builder.
    pub const ALL: [(Kind, &'static str, &'static str); 5] = [
        (Kind::YesNo, "yes_no", "Yes / no"),
        (Kind::Integer, "integer", "Whole number"),
        (Kind::Number, "number", "Number"),
        (Kind::Likert, "likert", "Likert scale"),
        (Kind::Categorical, "categorical", "Categories"),
    ];

    /// The JSON tag.
    pub fn tag(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, ..)| *k == self)
            .map_or("yes_no", |(_, t, _)| t)
    }

    /// The kind of a JSON tag.
    pub fn from_tag(tag: &str) -> Option<Kind> {
        Self::ALL
            .iter()
            .find(|(_, t, _)| *t == tag)
            .map(|(k, ..)| *k)
    }
}

/// One question as the builder holds it; fields of other kinds are kept while the kind changes.
#[derive(Clone, Debug, PartialEq)]
pub struct QuestionForm {
    /// Identifier (column name).
    pub id: String,
    /// The question as shown.
    pub label: String,
    /// Help text (empty: none).
    pub help: String,
    /// Whether the participant may skip it.
    pub optional: bool,
    /// The answer type.
    pub kind: Kind,
    /// Smallest value (integer, number).
    pub min: String,
    /// Largest value (integer, number).
    pub max: String,
    /// Likert points.
    pub points: String,
    /// Likert label of point 1.
    pub low_label: String,
    /// Likert label of the last point.
    pub high_label: String,
    /// Categorical options, one per line.
    pub options: String,
}

impl QuestionForm {
    /// A new question of `kind` with usable defaults, numbered `n` (1-based).
    pub fn new(kind: Kind, n: usize) -> Self {
        Self {
            id: format!("q{n}"),
            label: String::new(),
            help: String::new(),
            optional: false,
            kind,
            min: "0".into(),
            max: "10".into(),
            points: "5".into(),
            low_label: "disagree".into(),
            high_label: "agree".into(),
            options: String::new(),
        }
    }
}

/// The whole builder.
#[derive(Clone, Debug, PartialEq)]
pub struct DraftForm {
    /// Survey id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Introduction (empty: none).
    pub description: String,
    /// Consent text.
    pub consent: String,
    /// The questions in order.
    pub questions: Vec<QuestionForm>,
    /// Participants per cohort.
    pub cohort_size: String,
    /// Fewest records released (empty: the collector's default).
    pub min_cohort_size: String,
    /// One-use invitation tokens.
    pub invitations: bool,
    /// Share mode.
    pub share_mode: bool,
    /// Device-side DP asked for.
    pub dp: bool,
    /// DP ε.
    pub epsilon: String,
    /// DP δ.
    pub delta: String,
    /// Draft fields the builder has no control for, kept as the editor gave them.
    pub extra: Map<String, Value>,
}

impl Default for DraftForm {
    fn default() -> Self {
        Self {
            id: String::new(),
            title: String::new(),
            description: String::new(),
            consent: String::new(),
            questions: vec![QuestionForm::new(Kind::YesNo, 1)],
            cohort_size: "20".into(),
            min_cohort_size: String::new(),
            // The basic protocol needs invitations (its definition carries the device key).
            invitations: true,
            share_mode: false,
            dp: false,
            epsilon: "1".into(),
            delta: "1e-6".into(),
            extra: Map::new(),
        }
    }
}

/// Why the builder's fields do not make a draft: one line naming the field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct FormError {
    /// Which field, as the page labels it.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

fn form_error(field: impl Into<String>, reason: impl Into<String>) -> FormError {
    FormError {
        field: field.into(),
        reason: reason.into(),
    }
}

fn whole(field: &str, text: &str) -> Result<i64, FormError> {
    text.trim()
        .parse()
        .map_err(|_| form_error(field, format!("{:?} is not a whole number", text.trim())))
}

fn count(field: &str, text: &str) -> Result<u64, FormError> {
    text.trim().parse().map_err(|_| {
        form_error(
            field,
            format!("{:?} is not a count (0, 1, 2, …)", text.trim()),
        )
    })
}

fn number(field: &str, text: &str) -> Result<f64, FormError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| form_error(field, format!("{:?} is not a number", text.trim())))
}

fn non_empty(text: &str) -> Option<&str> {
    Some(text.trim()).filter(|t| !t.is_empty())
}

impl DraftForm {
    /// The draft as JSON, exactly what `POST /api/admin/surveys` receives.
    ///
    /// # Errors
    /// [`FormError`] for a field that is not a number where one is needed. Everything else
    /// (ids, ranges, cohort sizes) is judged by `plan_survey`, with the API's words.
    pub fn to_json(&self) -> Result<Value, FormError> {
        let mut questions = Vec::with_capacity(self.questions.len());
        for (i, q) in self.questions.iter().enumerate() {
            let at = |f: &str| format!("question {} {f}", i + 1);
            let mut item = json!({ "id": q.id.trim(), "label": q.label, "kind": q.kind.tag() });
            if let Some(help) = non_empty(&q.help) {
                item["help"] = help.into();
            }
            if q.optional {
                item["optional"] = true.into();
            }
            match q.kind {
                Kind::YesNo => {}
                Kind::Integer => {
                    item["min"] = whole(&at("min"), &q.min)?.into();
                    item["max"] = whole(&at("max"), &q.max)?.into();
                }
                Kind::Number => {
                    item["min"] = number(&at("min"), &q.min)?.into();
                    item["max"] = number(&at("max"), &q.max)?.into();
                }
                Kind::Likert => {
                    let points = count(&at("points"), &q.points)?;
                    if points > u64::from(u8::MAX) {
                        return Err(form_error(at("points"), "use 2 to 11 points"));
                    }
                    item["points"] = points.into();
                    item["low_label"] = q.low_label.as_str().into();
                    item["high_label"] = q.high_label.as_str().into();
                }
                Kind::Categorical => {
                    let options: Vec<&str> = q
                        .options
                        .lines()
                        .map(str::trim)
                        .filter(|o| !o.is_empty())
                        .collect();
                    item["options"] = options.into();
                }
            }
            questions.push(item);
        }
        let mut draft = json!({
            "id": self.id.trim(),
            "title": self.title,
            "consent": self.consent,
            "questions": questions,
            "cohort_size": count("cohort size", &self.cohort_size)?,
            "share_mode": self.share_mode,
            "invitations": self.invitations,
        });
        if let Some(d) = non_empty(&self.description) {
            draft["description"] = d.into();
        }
        if non_empty(&self.min_cohort_size).is_some() {
            draft["min_cohort_size"] = count("minimum cohort size", &self.min_cohort_size)?.into();
        }
        if self.dp {
            draft["dp"] = json!({
                "epsilon": number("DP epsilon", &self.epsilon)?,
                "delta": number("DP delta", &self.delta)?,
            });
        }
        for (k, v) in &self.extra {
            draft[k.as_str()] = v.clone();
        }
        Ok(draft)
    }

    /// The draft, read by serde as the collector reads it.
    ///
    /// # Errors
    /// One line: a [`FormError`], or serde's message for a draft it refuses.
    pub fn draft(&self) -> Result<(Value, SurveyDraft), String> {
        let json = self.to_json().map_err(|e| e.to_string())?;
        let draft = serde_json::from_value(json.clone()).map_err(|e| e.to_string())?;
        Ok((json, draft))
    }

    /// The builder's fields for a draft (from the JSON editor). Fields the builder has no
    /// control for land in [`extra`](Self::extra).
    pub fn from_draft(draft: &SurveyDraft) -> Self {
        let Ok(Value::Object(mut all)) = serde_json::to_value(draft) else {
            return Self::default();
        };
        let mut take = |k: &str| all.remove(k).unwrap_or(Value::Null);
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let id = text(&take("id"));
        let title = text(&take("title"));
        let description = text(&take("description"));
        let consent = text(&take("consent"));
        let questions = match take("questions") {
            Value::Array(qs) => qs
                .iter()
                .enumerate()
                .map(|(i, q)| question_from_json(q, i + 1))
                .collect(),
            _ => Vec::new(),
        };
        let cohort_size = text(&take("cohort_size"));
        let min_cohort_size = text(&take("min_cohort_size"));
        let dp = take("dp");
        let share_mode = take("share_mode").as_bool().unwrap_or(false);
        let invitations = take("invitations").as_bool().unwrap_or(false);
        let defaults = Self::default();
        // Defaults serde filled in are not worth keeping as "extra" fields.
        all.retain(|_, v| !matches!(v, Value::Null | Value::Bool(false)));
        Self {
            id,
            title,
            description,
            consent,
            questions,
            cohort_size,
            min_cohort_size,
            invitations,
            share_mode,
            dp: dp.is_object(),
            epsilon: dp.get("epsilon").map_or(defaults.epsilon, text),
            delta: dp.get("delta").map_or(defaults.delta, text),
            extra: all,
        }
    }
}

fn question_from_json(q: &Value, n: usize) -> QuestionForm {
    let s = |k: &str| match q.get(k) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    let kind = q
        .get("kind")
        .and_then(Value::as_str)
        .and_then(Kind::from_tag)
        .unwrap_or_default();
    let mut form = QuestionForm::new(kind, n);
    form.id = s("id").unwrap_or_default();
    form.label = s("label").unwrap_or_default();
    form.help = s("help").unwrap_or_default();
    form.optional = q.get("optional").and_then(Value::as_bool).unwrap_or(false);
    if let (Some(min), Some(max)) = (s("min"), s("max")) {
        (form.min, form.max) = (min, max);
    }
    if let Some(points) = s("points") {
        form.points = points;
        form.low_label = s("low_label").unwrap_or_default();
        form.high_label = s("high_label").unwrap_or_default();
    }
    if let Some(Value::Array(options)) = q.get("options") {
        form.options = options
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("\n");
    }
    form
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_survey::definition::QuestionKind;

    /// One question of every kind, one of them optional and with help.
    pub(crate) fn every_kind() -> DraftForm {
        let q = |kind, n, f: &dyn Fn(&mut QuestionForm)| {
            let mut q = QuestionForm::new(kind, n);
            q.label = format!("Question {n}?");
            f(&mut q);
            q
        };
        DraftForm {
            id: "health-2026".into(),
            title: "Health".into(),
            description: "About you.".into(),
            consent: "I agree.".into(),
            questions: vec![
                q(Kind::YesNo, 1, &|q| q.id = "smoker".into()),
                q(Kind::Integer, 2, &|q| {
                    q.id = "age".into();
                    (q.min, q.max) = ("18".into(), "90".into());
                }),
                q(Kind::Number, 3, &|q| {
                    q.id = "income".into();
                    (q.min, q.max) = ("0".into(), "250.5".into());
                    q.help = "In hundreds.".into();
                }),
                q(Kind::Likert, 4, &|q| {
                    q.id = "mood".into();
                    q.points = "7".into();
                    q.optional = true;
                }),
                q(Kind::Categorical, 5, &|q| {
                    q.id = "region".into();
                    q.options = "north\n south \n\neast".into();
                }),
            ],
            cohort_size: "20".into(),
            min_cohort_size: "12".into(),
            dp: true,
            ..DraftForm::default()
        }
    }

    #[test]
    fn every_kind_becomes_the_drafts_json() {
        let (json, draft) = every_kind().draft().unwrap();
        assert_eq!(
            json["questions"],
            json!([
                {"id": "smoker", "label": "Question 1?", "kind": "yes_no"},
                {"id": "age", "label": "Question 2?", "kind": "integer", "min": 18, "max": 90},
                {"id": "income", "label": "Question 3?", "kind": "number", "min": 0.0, "max": 250.5, "help": "In hundreds."},
                {"id": "mood", "label": "Question 4?", "kind": "likert", "points": 7, "low_label": "disagree", "high_label": "agree", "optional": true},
                {"id": "region", "label": "Question 5?", "kind": "categorical", "options": ["north", "south", "east"]},
            ])
        );
        assert_eq!(json["dp"], json!({"epsilon": 1.0, "delta": 1e-6}));
        assert_eq!(
            (
                draft.cohort_size,
                draft.min_cohort_size,
                draft.invitations,
                draft.share_mode
            ),
            (20, Some(12), true, false)
        );
        assert_eq!(draft.description.as_deref(), Some("About you."));
        assert!(matches!(
            draft.questions[3].kind,
            QuestionKind::Likert { points: 7, .. }
        ));
        assert!(draft.questions[3].optional && !draft.questions[0].optional);
    }

    #[test]
    fn the_builder_and_the_editor_round_trip() {
        let form = every_kind();
        let (_, draft) = form.draft().unwrap();
        let back = DraftForm::from_draft(&draft);
        assert_eq!(back.draft().unwrap().1, draft);
        assert_eq!(back.questions[4].options, "north\nsouth\neast");
        assert!(back.extra.is_empty(), "{:?}", back.extra);
    }

    #[test]
    fn unknown_draft_fields_pass_through_the_builder() {
        let mut form = every_kind();
        form.extra.insert("no_such_field".into(), true.into());
        // SurveyDraft denies unknown fields: the builder shows serde's refusal.
        let e = form.draft().unwrap_err();
        assert!(e.contains("unknown field `no_such_field`"), "{e}");
    }

    #[test]
    fn fields_that_are_not_numbers_are_named() {
        let mut form = every_kind();
        form.questions[1].min = "eighteen".into();
        assert_eq!(
            form.draft().unwrap_err(),
            "question 2 min: \"eighteen\" is not a whole number"
        );
        let mut form = every_kind();
        form.cohort_size = "-3".into();
        assert!(form.draft().unwrap_err().starts_with("cohort size:"));
        let mut form = every_kind();
        form.min_cohort_size = String::new();
        form.dp = false;
        let (json, draft) = form.draft().unwrap();
        assert_eq!((json.get("min_cohort_size"), json.get("dp")), (None, None));
        assert_eq!((draft.min_cohort_size, draft.dp), (None, None));
    }
}
