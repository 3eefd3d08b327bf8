//! The question builder: form fields as typed (text until the draft is made), every question
//! kind of the survey definition, and the one function that turns them into a draft
//! ([`DraftForm::draft`]) — the JSON the collector's `POST /api/admin/surveys` takes — and back
//! ([`DraftForm::from_draft`]) for the JSON editor.
//!
//! The draft is built as JSON and read with serde, so fields the builder does not know (kept in
//! [`DraftForm::extra`], e.g. `demonstration`, `language` and `translations`, which are edited in
//! the JSON editor) pass through, and the code compiles whatever fields `SurveyDraft` gains with
//! `#[serde(default)]`.
//!
//! A question's skip logic ("Show only when …", `show_if`) is [`ShowIfForm`]: an earlier
//! question, a condition its kind allows ([`ConditionKind::allowed`]) and the value(s), typed as
//! the referenced question's answers are (numbers for integer, number and Likert questions, text
//! otherwise). A condition the survey cannot hold (a later question, an unknown option) is still
//! written to the draft, never dropped: the draft's validation names it.

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

/// The kinds of condition of `show_if`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConditionKind {
    /// The answer is this value.
    #[default]
    Equals,
    /// The answer is one of these values.
    OneOf,
    /// The answer is a number from `min` to `max`.
    Range,
}

impl ConditionKind {
    /// Every condition kind, with its JSON key and its label in the builder.
    pub const ALL: [(ConditionKind, &'static str, &'static str); 3] = [
        (ConditionKind::Equals, "equals", "is"),
        (ConditionKind::OneOf, "one_of", "is one of"),
        (ConditionKind::Range, "range", "is from … to …"),
    ];

    /// The JSON key.
    pub fn key(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, ..)| *k == self)
            .map_or("equals", |(_, key, _)| key)
    }

    /// The kind of a JSON key.
    pub fn from_key(key: &str) -> Option<ConditionKind> {
        Self::ALL
            .iter()
            .find(|(_, k, _)| *k == key)
            .map(|(c, ..)| *c)
    }

    /// The conditions a question of `kind` can be the subject of: a yes/no answer is one value,
    /// a category one or several, a number also a range.
    pub fn allowed(kind: Kind) -> &'static [ConditionKind] {
        match kind {
            Kind::YesNo => &[ConditionKind::Equals],
            Kind::Categorical => &[ConditionKind::Equals, ConditionKind::OneOf],
            Kind::Integer | Kind::Number | Kind::Likert => &[
                ConditionKind::Equals,
                ConditionKind::OneOf,
                ConditionKind::Range,
            ],
        }
    }
}

/// "Show only when …": a question's `show_if`, as typed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShowIfForm {
    /// Whether the question is shown only under the condition.
    pub enabled: bool,
    /// Id of the earlier question whose answer decides.
    pub question: String,
    /// The kind of condition.
    pub condition: ConditionKind,
    /// The value of `equals`.
    pub value: String,
    /// The values of `one_of`: one per line (numbers may also be separated by commas).
    pub values: String,
    /// The smallest value of `range`.
    pub min: String,
    /// The largest value of `range`.
    pub max: String,
}

impl ShowIfForm {
    /// The `one_of` values, for a question of `kind`: lines, and for numbers commas too.
    pub fn value_list(&self, kind: Option<Kind>) -> Vec<String> {
        let numeric = matches!(kind, Some(Kind::Integer | Kind::Number | Kind::Likert));
        self.values
            .split(|c| c == '\n' || (numeric && c == ','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// Whether `value` is among the `one_of` values (a categorical option's checkbox).
    pub fn has(&self, value: &str) -> bool {
        self.values.lines().any(|v| v.trim() == value)
    }

    /// Add `value` to the `one_of` values, or take it out (a checkbox changed).
    pub fn toggle(&mut self, value: &str, on: bool) {
        let mut lines: Vec<String> = self
            .values
            .lines()
            .map(str::trim)
            .filter(|v| !v.is_empty() && *v != value)
            .map(str::to_owned)
            .collect();
        if on {
            lines.push(value.to_owned());
        }
        self.values = lines.join("\n");
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
    /// Skip logic.
    pub show_if: ShowIfForm,
}

impl QuestionForm {
    /// The categorical options as the draft will have them.
    pub fn option_list(&self) -> Vec<&str> {
        self.options
            .lines()
            .map(str::trim)
            .filter(|o| !o.is_empty())
            .collect()
    }

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
            show_if: ShowIfForm::default(),
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
            // Empty: the plan's choice (orthomask_survey::cohort_choice), as the CLI's default.
            cohort_size: String::new(),
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
    /// The questions before question `i` that a condition may name (those with an id).
    pub fn earlier_questions(&self, i: usize) -> Vec<&QuestionForm> {
        self.questions
            .iter()
            .take(i)
            .filter(|q| !q.id.trim().is_empty())
            .collect()
    }

    /// The earlier question question `i`'s condition names, if there is one.
    pub fn condition_subject(&self, i: usize) -> Option<&QuestionForm> {
        let wanted = self.questions.get(i)?.show_if.question.trim();
        self.questions
            .iter()
            .take(i)
            .find(|q| q.id.trim() == wanted)
    }

    /// Make question `i` conditional (or not). Turned on, it starts on the question just before
    /// it, with the first condition that question's kind allows and its first answer.
    pub fn set_conditional(&mut self, i: usize, on: bool) {
        let Some(before) = i
            .checked_sub(1)
            .and_then(|j| self.questions.get(j))
            .cloned()
        else {
            return;
        };
        let Some(q) = self.questions.get_mut(i) else {
            return;
        };
        q.show_if.enabled = on;
        if on && q.show_if.question.trim().is_empty() {
            q.show_if.question = before.id.trim().to_owned();
            choose_subject(&mut q.show_if, &before);
        }
    }

    /// Make question `i`'s condition name the earlier question `id`, resetting the condition to
    /// one that question's kind allows.
    pub fn set_condition_subject(&mut self, i: usize, id: &str) {
        let subject = self
            .questions
            .iter()
            .take(i)
            .find(|q| q.id.trim() == id)
            .cloned();
        if let Some(q) = self.questions.get_mut(i) {
            q.show_if.question = id.to_owned();
            if let Some(subject) = subject {
                choose_subject(&mut q.show_if, &subject);
            }
        }
    }

    /// Question `i`'s `show_if` as JSON, typed as its subject's answers.
    fn show_if_json(&self, i: usize) -> Result<Option<Value>, FormError> {
        let Some(q) = self.questions.get(i) else {
            return Ok(None);
        };
        let s = &q.show_if;
        if !s.enabled {
            return Ok(None);
        }
        let at = |f: &str| format!("question {} show only when {f}", i + 1);
        let kind = self.condition_subject(i).map(|q| q.kind);
        // Numbers for numeric subjects; text otherwise (an unknown subject keeps what parses as
        // a number a number, so the draft's validation judges what was meant).
        let value = |field: &str, text: &str| -> Result<Value, FormError> {
            match kind {
                Some(Kind::Integer | Kind::Number | Kind::Likert) => {
                    Ok(number(&at(field), text)?.into())
                }
                Some(Kind::YesNo | Kind::Categorical) => Ok(text.trim().into()),
                None => Ok(text
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .map_or_else(|| text.trim().into(), Value::from)),
            }
        };
        let mut item = json!({ "question": s.question.trim() });
        match s.condition {
            ConditionKind::Equals => item["equals"] = value("value", &s.value)?,
            ConditionKind::OneOf => {
                item["one_of"] = s
                    .value_list(kind)
                    .iter()
                    .map(|v| value("values", v))
                    .collect::<Result<Vec<_>, _>>()?
                    .into();
            }
            ConditionKind::Range => {
                item["range"] = json!({
                    "min": number(&at("from"), &s.min)?,
                    "max": number(&at("to"), &s.max)?,
                });
            }
        }
        Ok(Some(item))
    }

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
            if let Some(show_if) = self.show_if_json(i)? {
                item["show_if"] = show_if;
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
                Kind::Categorical => item["options"] = q.option_list().into(),
            }
            questions.push(item);
        }
        let mut draft = json!({
            "id": self.id.trim(),
            "title": self.title,
            "consent": self.consent,
            "questions": questions,
            "share_mode": self.share_mode,
            "invitations": self.invitations,
        });
        if let Some(d) = non_empty(&self.description) {
            draft["description"] = d.into();
        }
        if non_empty(&self.cohort_size).is_some() {
            draft["cohort_size"] = count("cohort size", &self.cohort_size)?.into();
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

/// A condition fit for `subject`: its first allowed kind, its first answer as the value.
fn choose_subject(show_if: &mut ShowIfForm, subject: &QuestionForm) {
    let allowed = ConditionKind::allowed(subject.kind);
    if !allowed.contains(&show_if.condition) {
        show_if.condition = allowed[0];
    }
    show_if.value = match subject.kind {
        Kind::YesNo => "yes".into(),
        Kind::Categorical => subject
            .option_list()
            .first()
            .map_or_else(String::new, |o| (*o).to_owned()),
        Kind::Integer | Kind::Number => subject.max.trim().to_owned(),
        Kind::Likert => subject.points.trim().to_owned(),
    };
    show_if.values.clear();
    (show_if.min, show_if.max) = match subject.kind {
        Kind::Integer | Kind::Number => (subject.min.clone(), subject.max.clone()),
        Kind::Likert => ("1".into(), subject.points.clone()),
        Kind::YesNo | Kind::Categorical => (String::new(), String::new()),
    };
}

/// A `show_if` object read back into the builder's fields.
fn show_if_from_json(v: &Value) -> ShowIfForm {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut form = ShowIfForm {
        enabled: true,
        question: v.get("question").map(text).unwrap_or_default(),
        ..ShowIfForm::default()
    };
    if let Some(value) = v.get("equals") {
        form.condition = ConditionKind::Equals;
        form.value = text(value);
    } else if let Some(Value::Array(values)) = v.get("one_of") {
        form.condition = ConditionKind::OneOf;
        form.values = values.iter().map(text).collect::<Vec<_>>().join("\n");
    } else if let Some(range) = v.get("range") {
        form.condition = ConditionKind::Range;
        form.min = range.get("min").map(text).unwrap_or_default();
        form.max = range.get("max").map(text).unwrap_or_default();
    }
    form
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
    if let Some(show_if) = q.get("show_if").filter(|v| v.is_object()) {
        form.show_if = show_if_from_json(show_if);
    }
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
            (Some(20), Some(12), true, false)
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

    /// smokes, cigarettes (when smokes is yes), stress (Likert), relax (when stress is 4 to 5),
    /// drinks (categorical), per_week (when drinks is weekly or daily).
    fn branching() -> DraftForm {
        let q = |kind, id: &str, f: &dyn Fn(&mut QuestionForm)| {
            let mut q = QuestionForm::new(kind, 1);
            q.id = id.into();
            q.label = format!("{id}?");
            f(&mut q);
            q
        };
        let mut form = DraftForm {
            id: "habits".into(),
            title: "Habits".into(),
            consent: "I agree.".into(),
            questions: vec![
                q(Kind::YesNo, "smokes", &|_| {}),
                q(Kind::Integer, "cigarettes", &|q| {
                    (q.min, q.max) = ("1".into(), "60".into())
                }),
                q(Kind::Likert, "stress", &|_| {}),
                q(Kind::Categorical, "relax", &|q| {
                    q.options = "Reading\nSport".into()
                }),
                q(Kind::Categorical, "drinks", &|q| {
                    q.options = "Never\nWeekly\nDaily".into()
                }),
                q(Kind::Integer, "per_week", &|q| {
                    (q.min, q.max) = ("1".into(), "50".into())
                }),
            ],
            ..DraftForm::default()
        };
        // Turned on, a condition starts on the question just before, with its first answer.
        form.set_conditional(1, true);
        assert_eq!(
            (
                form.questions[1].show_if.question.as_str(),
                form.questions[1].show_if.condition,
                form.questions[1].show_if.value.as_str()
            ),
            ("smokes", ConditionKind::Equals, "yes")
        );
        form.set_conditional(3, true);
        form.questions[3].show_if.condition = ConditionKind::Range;
        (form.questions[3].show_if.min, form.questions[3].show_if.max) = ("4".into(), "5".into());
        form.set_conditional(5, true);
        form.questions[5].show_if.condition = ConditionKind::OneOf;
        form.questions[5].show_if.toggle("Daily", true);
        form.questions[5].show_if.toggle("Weekly", true);
        form.questions[5].show_if.toggle("Never", true);
        form.questions[5].show_if.toggle("Never", false);
        assert!(form.questions[5].show_if.has("Weekly") && !form.questions[5].show_if.has("Never"));
        form
    }

    #[test]
    fn conditions_become_the_drafts_show_if() {
        let (json, draft) = branching().draft().unwrap();
        assert_eq!(
            json["questions"][1]["show_if"],
            json!({"question": "smokes", "equals": "yes"})
        );
        assert_eq!(
            json["questions"][3]["show_if"],
            json!({"question": "stress", "range": {"min": 4.0, "max": 5.0}})
        );
        assert_eq!(
            json["questions"][5]["show_if"],
            json!({"question": "drinks", "one_of": ["Daily", "Weekly"]})
        );
        assert!(json["questions"][0].get("show_if").is_none());
        draft.validate_content().unwrap();
        // Only earlier questions may be named, and only the conditions their kind allows.
        let form = branching();
        let ids: Vec<&str> = form
            .earlier_questions(3)
            .iter()
            .map(|q| q.id.as_str())
            .collect();
        assert_eq!(ids, ["smokes", "cigarettes", "stress"]);
        assert_eq!(
            form.condition_subject(3).map(|q| q.kind),
            Some(Kind::Likert)
        );
        assert_eq!(ConditionKind::allowed(Kind::YesNo), [ConditionKind::Equals]);
        assert!(!ConditionKind::allowed(Kind::Categorical).contains(&ConditionKind::Range));
        assert_eq!(ConditionKind::allowed(Kind::Number).len(), 3);
        // Numbers typed with commas for a numeric subject.
        let mut form = branching();
        form.set_condition_subject(5, "stress");
        assert_eq!(
            (
                form.questions[5].show_if.condition,
                form.questions[5].show_if.value.as_str()
            ),
            (ConditionKind::OneOf, "5")
        );
        form.questions[5].show_if.values = "4, 5".into();
        let (json, _) = form.draft().unwrap();
        assert_eq!(
            json["questions"][5]["show_if"],
            json!({"question": "stress", "one_of": [4.0, 5.0]})
        );
        form.questions[5].show_if.values = "4, five".into();
        assert_eq!(
            form.draft().unwrap_err(),
            "question 6 show only when values: \"five\" is not a number"
        );
    }

    /// A condition the survey cannot hold is written, not dropped: the draft's validation names
    /// it (here the subject moved below the question).
    #[test]
    fn an_impossible_condition_is_kept_and_named() {
        let mut form = branching();
        form.questions.swap(0, 1);
        let (json, draft) = form.draft().unwrap();
        assert_eq!(json["questions"][0]["show_if"]["question"], "smokes");
        let e = draft.validate_content().unwrap_err().to_string();
        assert!(
            e.contains("questions[0].show_if.question") && e.contains("comes later"),
            "{e}"
        );
        // Switched off, the condition leaves the draft.
        let mut form = branching();
        form.set_conditional(1, false);
        assert!(
            form.to_json().unwrap()["questions"][1]
                .get("show_if")
                .is_none()
        );
    }

    /// The editor's JSON with conditions, a main language and translations goes through the
    /// builder and back unchanged, and an edit in the builder keeps them.
    #[test]
    fn conditions_and_translations_survive_the_builder_and_the_editor() {
        use crate::model::admin::state::{BuilderAction, BuilderState};
        use std::rc::Rc;
        use yew::Reducible;
        let (mut json, _) = branching().draft().unwrap();
        json["language"] = "es".into();
        let mut translation = json!({"title": "Habits", "consent": "I agree.", "questions": {}});
        for q in json["questions"].as_array().unwrap() {
            let id = q["id"].as_str().unwrap();
            let mut t = json!({"label": format!("{id} (en)")});
            if let Some(options) = q.get("options") {
                t["options"] = options.clone();
            }
            if q["kind"] == "likert" {
                (t["low_label"], t["high_label"]) = ("low".into(), "high".into());
            }
            translation["questions"][id] = t;
        }
        json["translations"] = json!({ "en": translation });
        let text = crate::model::admin::editor::text(&json);
        let draft = crate::model::admin::editor::check(&text).unwrap();
        assert_eq!(draft.language, "es");
        // Builder → draft: the same draft.
        let form = DraftForm::from_draft(&draft);
        assert!(form.questions[1].show_if.enabled);
        assert_eq!(form.draft().unwrap().1, draft);
        // The page: text in the editor, then an edit in the builder.
        let state = Rc::new(BuilderState::default()).reduce(BuilderAction::Text(text));
        assert_eq!(state.text_error, None);
        let state = state.reduce(BuilderAction::Edit(Rc::new(|f| f.title = "Hábitos".into())));
        let after = crate::model::admin::editor::check(&state.text).unwrap();
        assert_eq!(after.title, "Hábitos");
        assert_eq!(after.translations, draft.translations);
        assert_eq!(after.language, "es");
        let conditions =
            |d: &SurveyDraft| -> Vec<_> { d.questions.iter().map(|q| q.show_if.clone()).collect() };
        assert_eq!(conditions(&after), conditions(&draft));
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
        form.cohort_size = " ".into();
        form.dp = false;
        let (json, draft) = form.draft().unwrap();
        assert_eq!((json.get("min_cohort_size"), json.get("dp")), (None, None));
        assert_eq!((draft.min_cohort_size, draft.dp), (None, None));
        // An empty cohort size leaves it to the plan (orthomask_survey::cohort_choice).
        assert_eq!((json.get("cohort_size"), draft.cohort_size), (None, None));
        assert_eq!(DraftForm::default().cohort_size, "");
    }
}
