//! An XLSForm → a survey draft, row by row of the survey sheet. What each row becomes is the
//! crate documentation's table; a row that cannot be expressed stops the import with one line
//! naming it ([`Refusal`]), and a row that is left out on purpose (timestamps, group labels) is
//! reported in [`Imported::ignored`].

use crate::conditions::{self, Known, KnownKind};
use crate::error::{ImportError, Refusal};
use crate::languages::{Languages, TextColumns, Texts};
use crate::sheets::{self, Row, TERMS_SHEET, Table};
use orthomask_survey::definition::{
    Question, QuestionKind, QuestionTranslation, SurveyError, Term, TermKind, Translation,
    valid_question_id,
};
use orthomask_survey::draft::{DpDraft, SurveyDraft};
use std::collections::{BTreeMap, HashMap};

/// A draft read from an XLSForm, and what was left out of it on purpose.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// The draft.
    pub draft: SurveyDraft,
    /// Rows and columns not carried into the draft, each with why.
    pub ignored: Vec<Ignored>,
}

/// A row (or part of one) the import left out on purpose.
#[derive(Clone, Debug, PartialEq)]
pub struct Ignored {
    /// The sheet.
    pub sheet: &'static str,
    /// The row.
    pub row: u32,
    /// What was left out and why.
    pub what: String,
}

impl std::fmt::Display for Ignored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} sheet, row {}: {}", self.sheet, self.row, self.what)
    }
}

/// Columns of the survey sheet whose meaning a draft cannot carry: filled on a row, they refuse
/// it. Every other column not read here is presentation (`appearance` other than `likert`,
/// `constraint_message`, `required_message`, `guidance_hint`, …) and is not carried.
const REFUSED_COLUMNS: &[(&str, &str)] = &[
    (
        "choice_filter",
        "options that depend on earlier answers change the columns' meaning",
    ),
    (
        "default",
        "a prefilled answer is not what the participant chose",
    ),
    (
        "read_only",
        "a participant cannot answer a read-only question",
    ),
    ("calculation", "a calculated value is not an answer"),
    ("trigger", "a recalculation is not an answer"),
    ("repeat_count", "repeats cannot be masked"),
    ("image", "the participant page shows no media"),
    ("audio", "the participant page shows no media"),
    ("video", "the participant page shows no media"),
    ("media", "the participant page shows no media"),
];

/// Metadata that names the participant or their device: refused (the team removes the row, and
/// so knows the survey will not hold it).
const IDENTIFYING: &[&str] = &[
    "deviceid",
    "subscriberid",
    "simserial",
    "phonenumber",
    "username",
    "email",
    "audit",
    "uri:deviceid",
    "uri:subscriberid",
    "uri:simserial",
    "uri:phonenumber",
    "uri:username",
    "uri:email",
];

/// Metadata timestamps (KoboToolbox adds them to every form): left out — a survey records no
/// time of answering, which could link a record to a person seen answering.
const TIMESTAMPS: &[&str] = &["start", "end", "today"];

/// Read an XLSForm's bytes as a draft. `file_name` gives the id when the settings sheet has no
/// `form_id` (as pyxform does): its stem in lower case, other characters than `a-z 0-9 - _`
/// replaced by `-`.
///
/// # Errors
/// [`ImportError`]: one line naming the sheet, the row and the reason.
pub fn import(bytes: &[u8], file_name: &str) -> Result<Imported, ImportError> {
    let book = sheets::read(bytes)?;
    let settings = Settings::read(book.settings.as_ref(), file_name)?;
    let languages = Languages::resolve(&book.survey, settings.default_language.as_deref())
        .map_err(|reason| settings.refusal(reason))?;
    let choices = Choices::read(book.choices.as_ref(), &languages)?;
    let mut walk = Walk::new(&book.survey, &languages, &choices)?;
    for row in &book.survey.rows {
        walk.row(row)?;
    }
    let form = walk.finish()?;
    let terms = match &book.terms {
        Some(table) => read_terms(table)?,
        None => Vec::new(),
    };
    let title = settings
        .title
        .clone()
        .unwrap_or_else(|| settings.id.clone());
    let translations: BTreeMap<String, Translation> = languages
        .others
        .iter()
        .map(|tag| {
            let questions = form.translations.get(tag).cloned().unwrap_or_default();
            (
                tag.clone(),
                Translation {
                    // Titles are rarely translated in XLSForm's settings: the main one stands in.
                    title: settings
                        .titles
                        .get(tag)
                        .cloned()
                        .unwrap_or_else(|| title.clone()),
                    description: form.description.as_ref().map(|d| d.get(tag).to_owned()),
                    consent: form.consent.get(tag).to_owned(),
                    questions,
                },
            )
        })
        .collect();
    let draft = SurveyDraft {
        id: settings.id.clone(),
        title,
        description: form.description.as_ref().map(|d| d.main.clone()),
        consent: form.consent.main.clone(),
        language: languages.main.clone(),
        translations,
        questions: form.questions,
        terms: terms.iter().map(|(_, t)| t.clone()).collect(),
        cohort_size: settings.cohort_size,
        min_cohort_size: settings.min_cohort_size,
        dp: settings.dp.clone(),
        share_mode: settings.share_mode,
        invitations: settings.invitations,
        demonstration: settings.demonstration,
    };
    if let Err(e) = draft.validate_content() {
        return Err(locate(
            e,
            &draft,
            &form.rows,
            form.consent_row,
            &terms,
            &settings,
        ));
    }
    Ok(Imported {
        draft,
        ignored: form.ignored,
    })
}

/// The row a draft's refusal comes from: the question's, the term's, the settings' or the
/// consent's, by the field it names.
fn locate(
    error: SurveyError,
    draft: &SurveyDraft,
    question_rows: &[u32],
    consent_row: u32,
    terms: &[(u32, Term)],
    settings: &Settings,
) -> ImportError {
    let SurveyError::Invalid { field, reason } = &error else {
        return ImportError::Form(Refusal::Draft(error.to_string()));
    };
    let indexed = |prefix: &str| {
        let rest = field.strip_prefix(prefix)?;
        let (index, tail) = rest.split_once(']')?;
        let tail = tail.strip_prefix('.').unwrap_or(tail);
        Some((index.parse::<usize>().ok()?, tail.to_owned()))
    };
    let at = |sheet, row, what: String| ImportError::Row {
        sheet,
        row,
        reason: Refusal::Draft(if what.is_empty() {
            reason.clone()
        } else {
            format!("{what}: {reason}")
        }),
    };
    if let Some((i, tail)) = indexed("questions[")
        && let Some(row) = question_rows.get(i)
    {
        return at("survey", *row, tail);
    }
    if let Some((i, tail)) = indexed("terms[")
        && let Some((row, _)) = terms.get(i)
    {
        return at(TERMS_SHEET, *row, tail);
    }
    if let Some(rest) = field.strip_prefix("translations.") {
        let (tag, tail) = rest.split_once('.').unwrap_or((rest, ""));
        if let Some(q) = tail.strip_prefix("questions.") {
            let (id, text) = q.split_once('.').unwrap_or((q, ""));
            if let Some(i) = draft.questions.iter().position(|x| x.id == id) {
                return at("survey", question_rows[i], format!("{tag} {text}"));
            }
        }
        if tail == "consent" {
            return at("survey", consent_row, format!("{tag} consent"));
        }
    }
    match (field.as_str(), settings.row) {
        ("consent", _) => at("survey", consent_row, field.clone()),
        ("id" | "title" | "language", Some(row)) => at("settings", row, field.clone()),
        _ => ImportError::Form(Refusal::Draft(error.to_string())),
    }
}

/// The settings sheet: the draft's id, title and the collector's choices (`orthomask_*`).
#[derive(Debug)]
struct Settings {
    row: Option<u32>,
    id: String,
    title: Option<String>,
    titles: BTreeMap<String, String>,
    default_language: Option<String>,
    cohort_size: Option<usize>,
    min_cohort_size: Option<usize>,
    dp: Option<DpDraft>,
    share_mode: bool,
    invitations: bool,
    demonstration: bool,
}

impl Settings {
    fn read(table: Option<&Table>, file_name: &str) -> Result<Self, ImportError> {
        let row = table.and_then(|t| {
            t.rows
                .iter()
                .find(|r| (0..t.columns.len()).any(|i| !r.get(Some(i)).is_empty()))
        });
        let get = |name: &str| -> String {
            match (table, row) {
                (Some(t), Some(r)) => r.get(t.column(name)).to_owned(),
                _ => String::new(),
            }
        };
        let number = row.map_or(1, |r| r.number);
        let refuse = |column: &str, why: String| ImportError::Row {
            sheet: "settings",
            row: number,
            reason: Refusal::Setting {
                column: column.into(),
                why,
            },
        };
        let count = |column: &str| -> Result<Option<usize>, ImportError> {
            let text = get(column);
            if text.is_empty() {
                return Ok(None);
            }
            text.parse()
                .map(Some)
                .map_err(|_| refuse(column, format!("{text:?} is not a whole number")))
        };
        let flag = |column: &str, default: bool| -> Result<bool, ImportError> {
            match get(column).to_ascii_lowercase().as_str() {
                "" => Ok(default),
                "yes" | "true" | "true()" | "1" => Ok(true),
                "no" | "false" | "false()" | "0" => Ok(false),
                other => Err(refuse(column, format!("{other:?}: write yes or no"))),
            }
        };
        let real = |column: &str| -> Result<Option<f64>, ImportError> {
            let text = get(column);
            if text.is_empty() {
                return Ok(None);
            }
            text.parse()
                .map(Some)
                .map_err(|_| refuse(column, format!("{text:?} is not a number")))
        };
        let dp = match (real("orthomask_dp_epsilon")?, real("orthomask_dp_delta")?) {
            (Some(epsilon), Some(delta)) => Some(DpDraft { epsilon, delta }),
            (None, None) => None,
            _ => {
                return Err(refuse(
                    "orthomask_dp_epsilon",
                    "give both orthomask_dp_epsilon and orthomask_dp_delta, or neither".into(),
                ));
            }
        };
        let id = match get("form_id") {
            id if !id.is_empty() => id,
            _ => id_from_file_name(file_name),
        };
        let mut titles = BTreeMap::new();
        if let (Some(t), Some(r)) = (table, row) {
            for (i, column) in t.columns.iter().enumerate() {
                let split = crate::languages::split(column);
                if split.base == "form_title"
                    && let Some(language) = split.language
                {
                    let Some(tag) = language.tag else {
                        return Err(ImportError::Row {
                            sheet: "settings",
                            row: t.header_row,
                            reason: Refusal::LanguageTag(column.clone()),
                        });
                    };
                    let text = r.get(Some(i));
                    if !text.is_empty() {
                        titles.insert(tag.to_owned(), text.to_owned());
                    }
                }
            }
        }
        Ok(Self {
            row: row.map(|r| r.number),
            id,
            title: Some(get("form_title")).filter(|t| !t.is_empty()),
            titles,
            default_language: Some(get("default_language")).filter(|t| !t.is_empty()),
            cohort_size: count("orthomask_cohort_size")?,
            min_cohort_size: count("orthomask_min_cohort_size")?,
            dp,
            share_mode: flag("orthomask_share_mode", false)?,
            // A basic-protocol survey must not be open to anyone (its definition carries the
            // device key): without a word from the team, invitations are on.
            invitations: flag("orthomask_invitations", true)?,
            demonstration: flag("orthomask_demonstration", false)?,
        })
    }

    fn refusal(&self, reason: Refusal) -> ImportError {
        match self.row {
            Some(row) => ImportError::Row {
                sheet: "settings",
                row,
                reason,
            },
            None => ImportError::Form(reason),
        }
    }
}

/// A survey id from a file name, as pyxform takes `form_id` from it.
fn id_from_file_name(file_name: &str) -> String {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    let stem = base.rsplit_once('.').map_or(base, |(stem, _)| stem);
    stem.chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-' | '_') => c,
            _ => '-',
        })
        .take(64)
        .collect()
}

/// One choice of a list.
#[derive(Clone, Debug)]
struct Choice {
    name: String,
    row: u32,
    label: Texts,
}

/// The choices sheet: lists by name, each choice with its label in every language.
struct Choices<'a> {
    table: Option<&'a Table>,
    label: Option<TextColumns>,
    lists: HashMap<String, Vec<Choice>>,
}

impl<'a> Choices<'a> {
    fn read(table: Option<&'a Table>, languages: &Languages) -> Result<Self, ImportError> {
        let Some(table) = table else {
            return Ok(Self {
                table: None,
                label: None,
                lists: HashMap::new(),
            });
        };
        let list_column = table
            .column("list_name")
            .or_else(|| table.column("list name"))
            .ok_or(ImportError::MissingColumn {
                sheet: "choices",
                column: "list_name",
            })?;
        let name_column = table.require("name")?;
        let label = TextColumns::find(table, "label", languages)?;
        let mut lists: HashMap<String, Vec<Choice>> = HashMap::new();
        for row in &table.rows {
            let list = row.get(Some(list_column));
            if list.is_empty() {
                continue;
            }
            let name = row.get(Some(name_column)).to_owned();
            let choices = lists.entry(list.to_owned()).or_default();
            if choices.iter().any(|c| c.name == name) {
                return Err(ImportError::Row {
                    sheet: "choices",
                    row: row.number,
                    reason: Refusal::DuplicateChoice {
                        list: list.to_owned(),
                        name,
                    },
                });
            }
            choices.push(Choice {
                name,
                row: row.number,
                label: label.read(row, languages),
            });
        }
        Ok(Self {
            table: Some(table),
            label: Some(label),
            lists,
        })
    }

    /// A list's choices, each label complete in every language.
    fn list(&self, name: &str, languages: &Languages, at: u32) -> Result<&[Choice], ImportError> {
        let choices = self.lists.get(name).ok_or(ImportError::Row {
            sheet: "survey",
            row: at,
            reason: Refusal::UnknownList(name.to_owned()),
        })?;
        if let (Some(table), Some(label)) = (self.table, &self.label) {
            for choice in choices {
                if let Some(row) = table.rows.iter().find(|r| r.number == choice.row) {
                    label.complete(table, row, languages)?;
                }
            }
        }
        Ok(choices)
    }
}

/// What the survey sheet became.
struct Form {
    questions: Vec<Question>,
    rows: Vec<u32>,
    translations: BTreeMap<String, BTreeMap<String, QuestionTranslation>>,
    description: Option<Texts>,
    consent: Texts,
    consent_row: u32,
    ignored: Vec<Ignored>,
}

/// An open `begin group`.
struct Group {
    row: u32,
    relevant: Option<String>,
}

/// The walk over the survey sheet, row by row.
struct Walk<'a> {
    table: &'a Table,
    languages: &'a Languages,
    choices: &'a Choices<'a>,
    column: Columns,
    form: Form,
    consent: Option<u32>,
    notes: Vec<(u32, Texts)>,
    groups: Vec<Group>,
    known: HashMap<String, Known>,
}

/// Where the survey sheet's columns are.
struct Columns {
    kind: usize,
    name: Option<usize>,
    label: TextColumns,
    hint: TextColumns,
    required: Option<usize>,
    relevant: Option<usize>,
    constraint: Option<usize>,
    appearance: Option<usize>,
    refused: Vec<(usize, String, &'static str)>,
}

impl<'a> Walk<'a> {
    fn new(
        table: &'a Table,
        languages: &'a Languages,
        choices: &'a Choices<'a>,
    ) -> Result<Self, ImportError> {
        let refused = table
            .columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let base = crate::languages::split(c).base;
                REFUSED_COLUMNS
                    .iter()
                    .find(|(name, _)| *name == base)
                    .map(|(_, why)| (i, c.clone(), *why))
            })
            .collect();
        let column = Columns {
            kind: table.require("type")?,
            name: Some(table.require("name")?),
            label: TextColumns::find(table, "label", languages)?,
            hint: TextColumns::find(table, "hint", languages)?,
            required: table.column("required"),
            relevant: table.column("relevant"),
            constraint: table.column("constraint"),
            appearance: table.column("appearance"),
            refused,
        };
        Ok(Self {
            table,
            languages,
            choices,
            column,
            form: Form {
                questions: Vec::new(),
                rows: Vec::new(),
                translations: BTreeMap::new(),
                description: None,
                consent: Texts::default(),
                consent_row: 0,
                ignored: Vec::new(),
            },
            consent: None,
            notes: Vec::new(),
            groups: Vec::new(),
            known: HashMap::new(),
        })
    }

    fn refuse(&self, row: &Row, reason: Refusal) -> ImportError {
        ImportError::Row {
            sheet: "survey",
            row: row.number,
            reason,
        }
    }

    fn ignore(&mut self, row: &Row, what: String) {
        self.form.ignored.push(Ignored {
            sheet: "survey",
            row: row.number,
            what,
        });
    }

    fn row(&mut self, row: &Row) -> Result<(), ImportError> {
        let written = row.get(Some(self.column.kind));
        let words: Vec<&str> = written.split_whitespace().collect();
        let Some(first) = words.first() else {
            return Ok(());
        };
        let kind = first.to_ascii_lowercase();
        let refused_type = match kind.as_str() {
            "text" | "string" | "barcode" => Some(Refusal::FreeText(written.into())),
            "geopoint" | "geotrace" | "geoshape" | "start-geopoint" => {
                Some(Refusal::Location(written.into()))
            }
            "image" | "audio" | "video" | "file" | "background-audio" | "background-video" => {
                Some(Refusal::Media(written.into()))
            }
            "date" | "time" | "datetime" => Some(Refusal::DateTime(written.into())),
            "begin_repeat" | "end_repeat" => Some(Refusal::Repeat),
            "begin" | "end"
                if words
                    .get(1)
                    .is_some_and(|w| w.eq_ignore_ascii_case("repeat")) =>
            {
                Some(Refusal::Repeat)
            }
            "calculate" => Some(Refusal::Calculation),
            k if IDENTIFYING.contains(&k) => Some(Refusal::Identifying(written.into())),
            k if k.starts_with("select_one_") || k.starts_with("select_multiple_") => {
                Some(Refusal::ExternalChoices(written.into()))
            }
            _ => None,
        };
        if let Some(reason) = refused_type {
            return Err(self.refuse(row, reason));
        }
        if let Some((_, column, why)) = self
            .column
            .refused
            .iter()
            .find(|(i, _, _)| !row.get(Some(*i)).is_empty())
        {
            return Err(self.refuse(
                row,
                Refusal::Column {
                    column: column.clone(),
                    why,
                },
            ));
        }
        let group = |w: &str| words.get(1).is_some_and(|x| x.eq_ignore_ascii_case(w));
        match kind.as_str() {
            k if TIMESTAMPS.contains(&k) && words.len() == 1 => {
                self.ignore(
                    row,
                    format!(
                        "{written}: a timestamp is not recorded (the time of answering could link a \
                         record to a person seen answering)"
                    ),
                );
                Ok(())
            }
            "begin_group" => self.begin_group(row),
            "begin" if group("group") => self.begin_group(row),
            "end_group" => self.end_group(row),
            "end" if group("group") => self.end_group(row),
            "note" => self.note(row),
            "acknowledge" => self.acknowledge(row),
            "integer" | "int" | "decimal" | "select_one" | "select_multiple" => {
                self.question(row, &kind, &words)
            }
            _ => Err(self.refuse(row, Refusal::UnsupportedType(written.into()))),
        }
    }

    fn relevant_cell(&self, row: &Row) -> String {
        row.get(self.column.relevant).to_owned()
    }

    fn begin_group(&mut self, row: &Row) -> Result<(), ImportError> {
        let relevant = Some(self.relevant_cell(row)).filter(|r| !r.is_empty());
        if relevant.is_some() && self.groups.iter().any(|g| g.relevant.is_some()) {
            return Err(self.refuse(row, Refusal::GroupRelevant));
        }
        let label = self.column.label.read(row, self.languages).main;
        if !label.is_empty() {
            self.ignore(
                row,
                format!("the group label {label:?} is not shown (groups are flattened)"),
            );
        }
        self.groups.push(Group {
            row: row.number,
            relevant,
        });
        Ok(())
    }

    fn end_group(&mut self, row: &Row) -> Result<(), ImportError> {
        if self.groups.pop().is_none() {
            return Err(self.refuse(row, Refusal::Group("end group without a begin group")));
        }
        Ok(())
    }

    fn note(&mut self, row: &Row) -> Result<(), ImportError> {
        if !self.relevant_cell(row).is_empty() || self.groups.iter().any(|g| g.relevant.is_some()) {
            return Err(self.refuse(
                row,
                Refusal::Column {
                    column: "relevant".into(),
                    why: "a note becomes its question's help, shown whenever the question is",
                },
            ));
        }
        let texts = self
            .column
            .label
            .complete(self.table, row, self.languages)?;
        self.notes.push((row.number, texts));
        Ok(())
    }

    fn acknowledge(&mut self, row: &Row) -> Result<(), ImportError> {
        if self.consent.is_some() {
            return Err(self.refuse(row, Refusal::SecondConsent));
        }
        if !self.form.questions.is_empty() {
            return Err(self.refuse(row, Refusal::ConsentAfterQuestion));
        }
        if !self.relevant_cell(row).is_empty() || self.groups.iter().any(|g| g.relevant.is_some()) {
            return Err(self.refuse(
                row,
                Refusal::Column {
                    column: "relevant".into(),
                    why: "every participant is asked for consent",
                },
            ));
        }
        self.form.consent = self
            .column
            .label
            .complete(self.table, row, self.languages)?;
        self.form.consent_row = row.number;
        self.consent = Some(row.number);
        // Notes before the consent introduce the survey: its description.
        if !self.notes.is_empty() {
            let parts: Vec<Texts> = self.notes.drain(..).map(|(_, t)| t).collect();
            self.form.description = Some(Texts::join(&parts));
        }
        Ok(())
    }

    fn question(&mut self, row: &Row, kind: &str, words: &[&str]) -> Result<(), ImportError> {
        let name = row.get(self.column.name).to_owned();
        if !valid_question_id(&name) {
            return Err(self.refuse(row, Refusal::Name(name)));
        }
        let constraint = row.get(self.column.constraint).to_owned();
        let numeric = matches!(kind, "integer" | "int" | "decimal");
        if !numeric && !constraint.is_empty() {
            return Err(self.refuse(
                row,
                Refusal::Column {
                    column: "constraint".into(),
                    why: "only integer and decimal questions take bounds",
                },
            ));
        }
        let optional = match row.get(self.column.required).to_ascii_lowercase().as_str() {
            "" | "no" | "false" | "false()" => true,
            "yes" | "true" | "true()" => false,
            _ => {
                return Err(
                    self.refuse(row, Refusal::Required(row.get(self.column.required).into()))
                );
            }
        };
        let own = self.relevant_cell(row);
        let inherited = self.groups.iter().find_map(|g| g.relevant.clone());
        let relevant = match (own.is_empty(), inherited) {
            (false, Some(_)) => return Err(self.refuse(row, Refusal::GroupRelevant)),
            (false, None) => Some(own),
            (true, inherited) => inherited,
        };
        let show_if = match &relevant {
            Some(expression) => {
                Some(conditions::show_if(expression, &self.known).map_err(|why| {
                    self.refuse(
                        row,
                        Refusal::Relevant {
                            expression: expression.clone(),
                            why,
                        },
                    )
                })?)
            }
            None => None,
        };
        let label = self
            .column
            .label
            .complete(self.table, row, self.languages)?;
        let hint = self.column.hint.complete(self.table, row, self.languages)?;
        let mut parts: Vec<Texts> = self.notes.drain(..).map(|(_, t)| t).collect();
        parts.push(hint);
        let help = Texts::join(&parts);
        if numeric {
            let whole = kind != "decimal";
            if constraint.is_empty() {
                return Err(self.refuse(
                    row,
                    Refusal::MissingBounds(if whole { "an integer" } else { "a decimal" }),
                ));
            }
            let (lo, hi) = conditions::bounds(&constraint, whole).map_err(|why| {
                self.refuse(
                    row,
                    Refusal::Constraint {
                        expression: constraint.clone(),
                        why,
                    },
                )
            })?;
            let (question_kind, known) = if whole {
                let (min, max) = (lo as i64, hi as i64);
                (
                    QuestionKind::Integer { min, max },
                    KnownKind::Integer { min, max },
                )
            } else {
                (
                    QuestionKind::Number { min: lo, max: hi },
                    KnownKind::Number { min: lo, max: hi },
                )
            };
            self.push(
                row,
                &name,
                &label,
                &help,
                optional,
                show_if,
                question_kind,
                None,
            );
            self.known.insert(
                name.clone(),
                Known::Question {
                    id: name,
                    kind: known,
                },
            );
            return Ok(());
        }
        let Some(list) = words.get(1) else {
            return Err(self.refuse(row, Refusal::UnknownList(String::new())));
        };
        if words
            .get(2)
            .is_some_and(|w| w.eq_ignore_ascii_case("or_other"))
        {
            return Err(self.refuse(row, Refusal::OrOther(words.join(" "))));
        }
        let choices = self
            .choices
            .list(list, self.languages, row.number)?
            .to_vec();
        let names: Vec<String> = choices.iter().map(|c| c.name.clone()).collect();
        let appearance = row.get(self.column.appearance).to_ascii_lowercase();
        if kind == "select_multiple" {
            let mut ids = Vec::new();
            for (k, choice) in choices.iter().enumerate() {
                let id = format!("{name}_{}", choice.name);
                let joined = Texts {
                    main: format!("{}: {}", label.main, choice.label.main),
                    others: label
                        .others
                        .iter()
                        .map(|(tag, l)| (tag.clone(), format!("{l}: {}", choice.label.get(tag))))
                        .collect(),
                };
                let help = if k == 0 {
                    help.clone()
                } else {
                    Texts::default()
                };
                self.push(
                    row,
                    &id,
                    &joined,
                    &help,
                    optional,
                    show_if.clone(),
                    QuestionKind::YesNo,
                    None,
                );
                ids.push((choice.name.clone(), id));
            }
            self.known.insert(name, Known::Multiple { choices: ids });
            return Ok(());
        }
        let yes_no = {
            let mut sorted: Vec<&str> = names.iter().map(String::as_str).collect();
            sorted.sort_unstable();
            sorted == ["no", "yes"]
        };
        let known = if appearance.split_whitespace().any(|a| a == "likert") {
            let (first, last) = match (choices.first(), choices.last()) {
                (Some(f), Some(l)) => (f.label.clone(), l.label.clone()),
                _ => (Texts::default(), Texts::default()),
            };
            // Middle points labelled by their number (as export writes them) lose nothing.
            let middle_labelled = choices
                .iter()
                .enumerate()
                .skip(1)
                .take(choices.len().saturating_sub(2))
                .any(|(k, c)| c.label.main != (k + 1).to_string());
            if middle_labelled {
                self.ignore(
                    row,
                    "the labels of a Likert scale's middle points are not kept (the scale carries \
                     its end labels)"
                        .into(),
                );
            }
            let points = u8::try_from(choices.len()).unwrap_or(u8::MAX);
            let kind = QuestionKind::Likert {
                points,
                low_label: first.main.clone(),
                high_label: last.main.clone(),
            };
            self.push(
                row,
                &name,
                &label,
                &help,
                optional,
                show_if,
                kind,
                Some((&first, &last)),
            );
            KnownKind::Likert { names }
        } else if yes_no {
            self.push(
                row,
                &name,
                &label,
                &help,
                optional,
                show_if,
                QuestionKind::YesNo,
                None,
            );
            KnownKind::YesNo
        } else {
            let options: Vec<String> = choices.iter().map(|c| c.label.main.clone()).collect();
            let kind = QuestionKind::Categorical {
                options: options.clone(),
            };
            self.push(row, &name, &label, &help, optional, show_if, kind, None);
            let translated: BTreeMap<String, Vec<String>> = self
                .languages
                .others
                .iter()
                .map(|tag| {
                    (
                        tag.clone(),
                        choices
                            .iter()
                            .map(|c| c.label.get(tag).to_owned())
                            .collect(),
                    )
                })
                .collect();
            for (tag, options) in translated {
                if let Some(t) = self
                    .form
                    .translations
                    .get_mut(&tag)
                    .and_then(|qs| qs.get_mut(&name))
                {
                    t.options = Some(options);
                }
            }
            KnownKind::Categorical { names, options }
        };
        self.known.insert(
            name.clone(),
            Known::Question {
                id: name,
                kind: known,
            },
        );
        Ok(())
    }

    /// Add a question and its texts in every other language.
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        row: &Row,
        id: &str,
        label: &Texts,
        help: &Texts,
        optional: bool,
        show_if: Option<orthomask_survey::definition::ShowIf>,
        kind: QuestionKind,
        scale: Option<(&Texts, &Texts)>,
    ) {
        let has_help = !help.main.is_empty();
        self.form.questions.push(Question {
            id: id.to_owned(),
            label: label.main.clone(),
            help: has_help.then(|| help.main.clone()),
            optional,
            show_if,
            kind,
        });
        self.form.rows.push(row.number);
        for tag in &self.languages.others {
            self.form
                .translations
                .entry(tag.clone())
                .or_default()
                .insert(
                    id.to_owned(),
                    QuestionTranslation {
                        label: label.get(tag).to_owned(),
                        help: has_help.then(|| help.get(tag).to_owned()),
                        options: None,
                        low_label: scale.map(|(low, _)| low.get(tag).to_owned()),
                        high_label: scale.map(|(_, high)| high.get(tag).to_owned()),
                    },
                );
        }
    }

    fn finish(self) -> Result<Form, ImportError> {
        if let Some(group) = self.groups.first() {
            return Err(ImportError::Row {
                sheet: "survey",
                row: group.row,
                reason: Refusal::Group("begin group is never ended (end group)"),
            });
        }
        if let Some((row, _)) = self.notes.first() {
            return Err(ImportError::Row {
                sheet: "survey",
                row: *row,
                reason: Refusal::TrailingNote,
            });
        }
        if self.consent.is_none() {
            return Err(ImportError::Form(Refusal::NoConsent));
        }
        Ok(self.form)
    }
}

/// The `orthomask_terms` sheet: `name`, `kind` (power, product, log, log1p, centre), `of`,
/// `of2` (a product's second column), `exponent` (a power's), `at` (a centre's).
fn read_terms(table: &Table) -> Result<Vec<(u32, Term)>, ImportError> {
    let column = |name| table.column(name);
    let (name, kind, of, of2, exponent, at) = (
        column("name"),
        column("kind"),
        column("of"),
        column("of2"),
        column("exponent"),
        column("at"),
    );
    let mut terms = Vec::new();
    for row in &table.rows {
        let id = row.get(name);
        let written = row.get(kind);
        if id.is_empty() && written.is_empty() {
            continue;
        }
        let refuse = |why: String| ImportError::Row {
            sheet: TERMS_SHEET,
            row: row.number,
            reason: Refusal::Term(why),
        };
        let of_text = row.get(of).to_owned();
        let term_kind = match written.to_ascii_lowercase().as_str() {
            "power" => TermKind::Power {
                of: of_text,
                exponent: row.get(exponent).parse().map_err(|_| {
                    refuse(format!("exponent {:?} is not 2 or 3", row.get(exponent)))
                })?,
            },
            "product" => TermKind::Product {
                of: [of_text, row.get(of2).to_owned()],
            },
            "log" => TermKind::Log { of: of_text },
            "log1p" => TermKind::Log1p { of: of_text },
            "centre" | "center" => TermKind::Centre {
                of: of_text,
                at: row
                    .get(at)
                    .parse()
                    .map_err(|_| refuse(format!("at {:?} is not a number", row.get(at))))?,
            },
            other => {
                return Err(refuse(format!(
                    "kind {other:?}: use power, product, log, log1p or centre"
                )));
            }
        };
        terms.push((
            row.number,
            Term {
                id: id.to_owned(),
                kind: term_kind,
            },
        ));
    }
    Ok(terms)
}
