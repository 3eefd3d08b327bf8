//! The question builder: form fields as typed (text until the draft is made), every question
//! kind of the survey definition, and the one function that turns them into a typed
//! [`SurveyDraft`] ([`DraftForm::draft`]) — what the collector's `POST /api/admin/surveys`
//! takes, written by serde — and back ([`DraftForm::from_draft`]) for the JSON editor. Every
//! draft field has its place in the form (the model terms in their own control,
//! [`super::terms_form`]; the main language, the translations and the demonstration flag are
//! edited in the JSON editor and kept as they are); a kind of question or
//! of condition the definition gains is a compile error here until the builder handles it.
//!
//! A question's skip logic ("Show only when …", `show_if`) is [`ShowIfForm`]: an earlier
//! question, a condition its kind allows ([`ConditionKind::allowed`]: the definition's own rule,
//! `orthomask_survey::branching::conditions_for`) and the value(s), typed as the referenced
//! question's answers are (numbers for integer, number and Likert questions, text otherwise). A
//! condition the survey cannot hold (a later question, an unknown option) is still written to
//! the draft, never dropped: the draft's validation names it.

use std::collections::BTreeMap;

use orthomask_survey::branching::{ConditionKey, conditions_for};
use orthomask_survey::definition::{
    Condition, ConditionValue, Question, QuestionKind, ShowIf, Term, Translation,
};
use orthomask_survey::draft::{DpDraft, SurveyDraft};
use serde_json::Value;

/// The answer types of the definition, as the builder's kind control offers them.
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
    /// Every kind, with its control's value (the definition's word for it) and its label.
    pub const ALL: [(Kind, &'static str, &'static str); 5] = [
        (Kind::YesNo, "yes_no", "Yes / no"),
        (Kind::Integer, "integer", "Whole number"),
        (Kind::Number, "number", "Number"),
        (Kind::Likert, "likert", "Likert scale"),
        (Kind::Categorical, "categorical", "Categories"),
    ];

    /// The control's value.
    pub fn tag(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, ..)| *k == self)
            .map_or("yes_no", |(_, t, _)| t)
    }

    /// The kind of a control's value.
    pub fn from_tag(tag: &str) -> Option<Kind> {
        Self::ALL
            .iter()
            .find(|(_, t, _)| *t == tag)
            .map(|(k, ..)| *k)
    }

    /// The builder's kind of a definition's question.
    pub fn of(kind: &QuestionKind) -> Kind {
        match kind {
            QuestionKind::YesNo => Kind::YesNo,
            QuestionKind::Integer { .. } => Kind::Integer,
            QuestionKind::Number { .. } => Kind::Number,
            QuestionKind::Likert { .. } => Kind::Likert,
            QuestionKind::Categorical { .. } => Kind::Categorical,
        }
    }

    /// A question of this kind with empty fields: what the definition's rules about a kind
    /// (not its ranges or options) are asked about.
    fn shape(self) -> QuestionKind {
        match self {
            Kind::YesNo => QuestionKind::YesNo,
            Kind::Integer => QuestionKind::Integer { min: 0, max: 0 },
            Kind::Number => QuestionKind::Number { min: 0.0, max: 0.0 },
            Kind::Likert => QuestionKind::Likert {
                points: 0,
                low_label: String::new(),
                high_label: String::new(),
            },
            Kind::Categorical => QuestionKind::Categorical {
                options: Vec::new(),
            },
        }
    }
}

/// The kinds of condition of `show_if`, as the builder's condition control offers them.
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
    /// Every condition kind, with its control's value (the definition's key) and its label.
    pub const ALL: [(ConditionKind, &'static str, &'static str); 3] = [
        (ConditionKind::Equals, "equals", "is"),
        (ConditionKind::OneOf, "one_of", "is one of"),
        (ConditionKind::Range, "range", "is from … to …"),
    ];

    /// The control's value.
    pub fn key(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, ..)| *k == self)
            .map_or("equals", |(_, key, _)| key)
    }

    /// The kind of a control's value.
    pub fn from_key(key: &str) -> Option<ConditionKind> {
        Self::ALL
            .iter()
            .find(|(_, k, _)| *k == key)
            .map(|(c, ..)| *c)
    }

    /// The definition's kind of condition.
    fn condition_key(self) -> ConditionKey {
        match self {
            ConditionKind::Equals => ConditionKey::Equals,
            ConditionKind::OneOf => ConditionKey::OneOf,
            ConditionKind::Range => ConditionKey::Range,
        }
    }

    /// The builder's kind of a definition's condition.
    fn of(condition: &Condition) -> ConditionKind {
        match ConditionKey::of(condition) {
            ConditionKey::Equals => ConditionKind::Equals,
            ConditionKey::OneOf => ConditionKind::OneOf,
            ConditionKey::Range => ConditionKind::Range,
        }
    }

    /// The conditions a question of `kind` can be the subject of: the definition's rule
    /// (`conditions_for`), in the builder's order.
    pub fn allowed(kind: Kind) -> Vec<ConditionKind> {
        let allowed = conditions_for(&kind.shape());
        Self::ALL
            .iter()
            .map(|(c, ..)| *c)
            .filter(|c| allowed.contains(&c.condition_key()))
            .collect()
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
    /// BCP 47 tag of the texts' main language (edited in the JSON editor).
    pub language: String,
    /// The texts in other languages (edited in the JSON editor).
    pub translations: BTreeMap<String, Translation>,
    /// Model terms the devices compute (`x²`, `x·z`, logs, centring; the terms control adds and
    /// removes them, the JSON editor edits them too).
    pub terms: Vec<Term>,
    /// A labelled demonstration (edited in the JSON editor).
    pub demonstration: bool,
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
            language: orthomask_survey::languages::default_language(),
            translations: BTreeMap::new(),
            terms: Vec::new(),
            demonstration: false,
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

fn count(field: &str, text: &str) -> Result<usize, FormError> {
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

/// A number as the builder's text field shows it (`18`, `250.5`).
fn shown(x: f64) -> String {
    x.to_string()
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

    /// Question `i`'s `show_if`, typed as its subject's answers.
    fn show_if(&self, i: usize) -> Result<Option<ShowIf>, FormError> {
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
        let value = |field: &str, text: &str| -> Result<ConditionValue, FormError> {
            match kind {
                Some(Kind::Integer | Kind::Number | Kind::Likert) => {
                    Ok(ConditionValue::Number(number(&at(field), text)?))
                }
                Some(Kind::YesNo | Kind::Categorical) => {
                    Ok(ConditionValue::Text(text.trim().into()))
                }
                None => Ok(text
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .map_or_else(
                        || ConditionValue::Text(text.trim().into()),
                        ConditionValue::Number,
                    )),
            }
        };
        let condition = match s.condition {
            ConditionKind::Equals => Condition::Equals(value("value", &s.value)?),
            ConditionKind::OneOf => Condition::OneOf(
                s.value_list(kind)
                    .iter()
                    .map(|v| value("values", v))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            ConditionKind::Range => Condition::Range {
                min: number(&at("from"), &s.min)?,
                max: number(&at("to"), &s.max)?,
            },
        };
        Ok(Some(ShowIf {
            question: s.question.trim().to_owned(),
            condition,
        }))
    }

    /// Question `i` as the definition has it.
    fn question(&self, i: usize) -> Result<Question, FormError> {
        let q = &self.questions[i];
        let at = |f: &str| format!("question {} {f}", i + 1);
        let kind = match q.kind {
            Kind::YesNo => QuestionKind::YesNo,
            Kind::Integer => QuestionKind::Integer {
                min: whole(&at("min"), &q.min)?,
                max: whole(&at("max"), &q.max)?,
            },
            Kind::Number => QuestionKind::Number {
                min: number(&at("min"), &q.min)?,
                max: number(&at("max"), &q.max)?,
            },
            Kind::Likert => QuestionKind::Likert {
                points: u8::try_from(count(&at("points"), &q.points)?)
                    .map_err(|_| form_error(at("points"), "use 2 to 11 points"))?,
                low_label: q.low_label.clone(),
                high_label: q.high_label.clone(),
            },
            Kind::Categorical => QuestionKind::Categorical {
                options: q.option_list().into_iter().map(str::to_owned).collect(),
            },
        };
        Ok(Question {
            id: q.id.trim().to_owned(),
            label: q.label.clone(),
            help: non_empty(&q.help).map(str::to_owned),
            optional: q.optional,
            show_if: self.show_if(i)?,
            kind,
        })
    }

    /// The answer columns model terms may take, from the questions that are complete (a
    /// question still being typed offers none until it is).
    pub fn term_inputs(&self) -> Vec<orthomask_survey::terms::TermInput> {
        let questions: Vec<Question> = (0..self.questions.len())
            .filter_map(|i| self.question(i).ok())
            .collect();
        orthomask_survey::terms::term_inputs(&questions)
    }

    /// The draft, exactly what `POST /api/admin/surveys` receives.
    ///
    /// # Errors
    /// [`FormError`] for a field that is not a number where one is needed. Everything else
    /// (ids, ranges, cohort sizes) is judged by `plan_survey`, with the API's words.
    pub fn to_draft(&self) -> Result<SurveyDraft, FormError> {
        let questions = (0..self.questions.len())
            .map(|i| self.question(i))
            .collect::<Result<_, _>>()?;
        let optional_count =
            |field: &str, text: &str| non_empty(text).map(|t| count(field, t)).transpose();
        Ok(SurveyDraft {
            id: self.id.trim().to_owned(),
            title: self.title.clone(),
            description: non_empty(&self.description).map(str::to_owned),
            consent: self.consent.clone(),
            language: self.language.clone(),
            translations: self.translations.clone(),
            questions,
            terms: self.terms.clone(),
            cohort_size: optional_count("cohort size", &self.cohort_size)?,
            min_cohort_size: optional_count("minimum cohort size", &self.min_cohort_size)?,
            dp: self
                .dp
                .then(|| -> Result<DpDraft, FormError> {
                    Ok(DpDraft {
                        epsilon: number("DP epsilon", &self.epsilon)?,
                        delta: number("DP delta", &self.delta)?,
                    })
                })
                .transpose()?,
            share_mode: self.share_mode,
            invitations: self.invitations,
            demonstration: self.demonstration,
        })
    }

    /// The draft as the JSON editor shows it and the API receives it.
    ///
    /// # Errors
    /// [`FormError`] as [`to_draft`](Self::to_draft).
    pub fn to_json(&self) -> Result<Value, FormError> {
        let draft = self.to_draft()?;
        serde_json::to_value(&draft).map_err(|e| form_error("draft", e.to_string()))
    }

    /// The draft and its JSON.
    ///
    /// # Errors
    /// One line: a [`FormError`].
    pub fn draft(&self) -> Result<(Value, SurveyDraft), String> {
        let draft = self.to_draft().map_err(|e| e.to_string())?;
        let json = serde_json::to_value(&draft).map_err(|e| e.to_string())?;
        Ok((json, draft))
    }

    /// The builder's fields for a draft (from the JSON editor).
    pub fn from_draft(draft: &SurveyDraft) -> Self {
        let defaults = Self::default();
        let (dp, epsilon, delta) = match &draft.dp {
            Some(d) => (true, shown(d.epsilon), shown(d.delta)),
            None => (false, defaults.epsilon, defaults.delta),
        };
        Self {
            id: draft.id.clone(),
            title: draft.title.clone(),
            description: draft.description.clone().unwrap_or_default(),
            consent: draft.consent.clone(),
            questions: draft
                .questions
                .iter()
                .enumerate()
                .map(|(i, q)| QuestionForm::from_question(q, i + 1))
                .collect(),
            cohort_size: draft.cohort_size.map(|m| m.to_string()).unwrap_or_default(),
            min_cohort_size: draft
                .min_cohort_size
                .map(|m| m.to_string())
                .unwrap_or_default(),
            invitations: draft.invitations,
            share_mode: draft.share_mode,
            dp,
            epsilon,
            delta,
            language: draft.language.clone(),
            translations: draft.translations.clone(),
            terms: draft.terms.clone(),
            demonstration: draft.demonstration,
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

impl ShowIfForm {
    /// A definition's `show_if` in the builder's fields.
    fn from_show_if(show_if: &ShowIf) -> Self {
        let mut form = ShowIfForm {
            enabled: true,
            question: show_if.question.clone(),
            condition: ConditionKind::of(&show_if.condition),
            ..ShowIfForm::default()
        };
        match &show_if.condition {
            Condition::Equals(value) => form.value = value.to_string(),
            Condition::OneOf(values) => {
                form.values = values
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n");
            }
            Condition::Range { min, max } => (form.min, form.max) = (shown(*min), shown(*max)),
        }
        form
    }
}

impl QuestionForm {
    /// A definition's question in the builder's fields, numbered `n` (1-based).
    fn from_question(q: &Question, n: usize) -> Self {
        let mut form = QuestionForm::new(Kind::of(&q.kind), n);
        form.id = q.id.clone();
        form.label = q.label.clone();
        form.help = q.help.clone().unwrap_or_default();
        form.optional = q.optional;
        if let Some(show_if) = &q.show_if {
            form.show_if = ShowIfForm::from_show_if(show_if);
        }
        match &q.kind {
            QuestionKind::YesNo => {}
            QuestionKind::Integer { min, max } => {
                (form.min, form.max) = (min.to_string(), max.to_string())
            }
            QuestionKind::Number { min, max } => (form.min, form.max) = (shown(*min), shown(*max)),
            QuestionKind::Likert {
                points,
                low_label,
                high_label,
            } => {
                form.points = points.to_string();
                form.low_label = low_label.clone();
                form.high_label = high_label.clone();
            }
            QuestionKind::Categorical { options } => form.options = options.join("\n"),
        }
        form
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_survey::definition::QuestionKind;
    use serde_json::json;

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
                {"id": "smoker", "label": "Question 1?", "kind": "yes_no", "optional": false},
                {"id": "age", "label": "Question 2?", "kind": "integer", "min": 18, "max": 90, "optional": false},
                {"id": "income", "label": "Question 3?", "kind": "number", "min": 0.0, "max": 250.5, "help": "In hundreds.", "optional": false},
                {"id": "mood", "label": "Question 4?", "kind": "likert", "points": 7, "low_label": "disagree", "high_label": "agree", "optional": true},
                {"id": "region", "label": "Question 5?", "kind": "categorical", "options": ["north", "south", "east"], "optional": false},
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
        assert_eq!(back, DraftForm::from_draft(&back.draft().unwrap().1));
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
        // The definition's rule: a yes/no answer equals a value or is one of several.
        assert_eq!(
            ConditionKind::allowed(Kind::YesNo),
            [ConditionKind::Equals, ConditionKind::OneOf]
        );
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

    /// Model terms written in the JSON editor pass through the builder unchanged, and an edit in
    /// the builder keeps them; one naming no question is refused by the editor in one line.
    #[test]
    fn model_terms_survive_the_builder_and_the_editor() {
        use crate::model::admin::state::{BuilderAction, BuilderState};
        use std::rc::Rc;
        use yew::Reducible;
        let (mut json, _) = every_kind().draft().unwrap();
        json["terms"] = json!([
            {"id": "age_sq", "kind": "power", "of": "age", "exponent": 2},
            {"id": "income_south", "kind": "product", "of": ["income", "region=south"]},
        ]);
        let text = crate::model::admin::editor::text(&json);
        let draft = crate::model::admin::editor::check(&text).unwrap();
        assert_eq!(draft.terms.len(), 2);
        assert_eq!(DraftForm::from_draft(&draft).draft().unwrap().1, draft);
        let state = Rc::new(BuilderState::default()).reduce(BuilderAction::Text(text));
        assert_eq!(state.text_error, None);
        let state = state.reduce(BuilderAction::Edit(Rc::new(|f| f.title = "Santé".into())));
        let after = crate::model::admin::editor::check(&state.text).unwrap();
        assert_eq!(
            (after.title.as_str(), &after.terms),
            ("Santé", &draft.terms)
        );
        json["terms"][0]["of"] = "weight".into();
        let e = crate::model::admin::editor::check(&crate::model::admin::editor::text(&json))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("terms[0].of: no answer column \"weight\""),
            "{e}"
        );
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
