//! Why an XLSForm cannot become a draft: [`ImportError`], always one line naming the sheet and
//! the row (as a spreadsheet numbers it, the header being row 1) and a [`Refusal`] saying why
//! and what to do; and why a draft cannot be written as one ([`ExportError`]).
//!
//! User texts (types, expressions, names) are quoted with `{:?}`, so a cell holding a line break
//! still gives one line.

/// Why an XLSForm workbook was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// The bytes are not an `.xlsx` workbook calamine can read.
    #[error("not an XLSForm workbook (.xlsx): {0}")]
    NotXlsx(String),
    /// A sheet every XLSForm has.
    #[error("the XLSForm has no {0:?} sheet")]
    MissingSheet(&'static str),
    /// A column a sheet needs.
    #[error("{sheet} sheet: no {column:?} column")]
    MissingColumn {
        /// The sheet.
        sheet: &'static str,
        /// The column it needs.
        column: &'static str,
    },
    /// One row cannot be expressed.
    #[error("{sheet} sheet, row {row}: {reason}")]
    Row {
        /// `survey`, `choices`, `settings` or `orthomask_terms`.
        sheet: &'static str,
        /// The row as the spreadsheet numbers it (the header is row 1).
        row: u32,
        /// Why.
        reason: Refusal,
    },
    /// The form as a whole lacks something.
    #[error("{0}")]
    Form(Refusal),
}

/// The reasons a row (or a form) is refused — one variant per reason, each tested.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// `text`, `string`, `barcode`: words cannot be masked.
    #[error(
        "type {0:?} is free text, which cannot be masked (masking needs a number with a declared \
         range): ask with integer, decimal or a select"
    )]
    FreeText(String),
    /// `geopoint`, `geotrace`, `geoshape`.
    #[error("type {0:?} records a location, which identifies the participant and cannot be masked")]
    Location(String),
    /// `image`, `audio`, `video`, `file`, background recordings.
    #[error("type {0:?} records a photo, a recording or a file, which cannot be masked")]
    Media(String),
    /// `date`, `time`, `dateTime`.
    #[error(
        "type {0:?}: dates and times cannot be masked here; ask for a number with its range \
         (an age, a year, a count of days)"
    )]
    DateTime(String),
    /// `begin repeat`.
    #[error(
        "repeats give each participant a varying number of answers; a masked record has fixed \
         columns"
    )]
    Repeat,
    /// `calculate`.
    #[error(
        "a calculate row is not an answer and cannot be masked; model terms computed on the \
         device go in the orthomask_terms sheet"
    )]
    Calculation,
    /// `deviceid`, `phonenumber`, `username`, `email`, `audit`, …: metadata naming the person.
    #[error(
        "type {0:?} identifies the participant or their device, which an Orthomask survey never \
         collects: remove the row"
    )]
    Identifying(String),
    /// `select_one_from_file`, `select_one_external`, …
    #[error(
        "type {0:?} takes its choices from a file that is not in the workbook: list them in the choices sheet"
    )]
    ExternalChoices(String),
    /// `select_one list or_other`.
    #[error("{0:?}: the \"other\" answer is free text, which cannot be masked; remove or_other")]
    OrOther(String),
    /// Any other type (`rank`, `range`, `trigger`, `hidden`, an unknown word).
    #[error(
        "type {0:?} is not supported: use integer, decimal, select_one, select_multiple, note or \
         acknowledge"
    )]
    UnsupportedType(String),
    /// An integer or decimal question without both bounds.
    #[error(
        "{0} question without bounds: give its range in constraint, e.g. \". >= 0 and . <= 120\" \
         (masking scales each answer by it)"
    )]
    MissingBounds(&'static str),
    /// A constraint that is not the subset read as bounds.
    #[error("constraint {expression:?} is not read as bounds (\". >= a and . <= b\"): {why}")]
    Constraint {
        /// The cell.
        expression: String,
        /// What does not fit.
        why: String,
    },
    /// A relevant that no `show_if` can express.
    #[error("relevant {expression:?} cannot be expressed as a condition: {why}")]
    Relevant {
        /// The cell.
        expression: String,
        /// What does not fit.
        why: String,
    },
    /// `required` other than yes/no.
    #[error(
        "required {0:?}: write yes or no (a requirement that depends on answers cannot be expressed)"
    )]
    Required(String),
    /// A select naming a list the choices sheet lacks.
    #[error("list {0:?} is not in the choices sheet")]
    UnknownList(String),
    /// A column whose meaning a draft cannot carry, filled on this row.
    #[error("column {column:?} cannot be expressed: {why}")]
    Column {
        /// The column.
        column: String,
        /// Why.
        why: &'static str,
    },
    /// A name unfit for a question id (it names released columns).
    #[error(
        "name {0:?}: use 1-64 characters from a-z, A-Z, 0-9 and _ (it names the released columns)"
    )]
    Name(String),
    /// A choice name used twice in one list.
    #[error("choice {name:?} appears twice in list {list:?}")]
    DuplicateChoice {
        /// The list.
        list: String,
        /// The name.
        name: String,
    },
    /// A second `acknowledge` row.
    #[error(
        "a second acknowledge row: the survey has one consent text, the first acknowledge row's label"
    )]
    SecondConsent,
    /// An `acknowledge` row after a question.
    #[error(
        "the acknowledge row (the consent) must come before every question: participants consent first"
    )]
    ConsentAfterQuestion,
    /// No `acknowledge` row at all.
    #[error(
        "survey sheet: no acknowledge row: add one before the questions whose label is the consent \
         text participants accept"
    )]
    NoConsent,
    /// A note followed by no question.
    #[error(
        "a note after the last question has no question to help: move it before one or remove it"
    )]
    TrailingNote,
    /// A question with its own `relevant` inside a group with one.
    #[error(
        "this row and its enclosing group both have relevant; a question is shown on one \
         condition: move the condition to one of them"
    )]
    GroupRelevant,
    /// `end group` without `begin group`, or a group never ended.
    #[error("{0}")]
    Group(&'static str),
    /// A language column without a `(tag)`.
    #[error("column {0:?}: name the language with its tag, e.g. \"label::Español (es)\"")]
    LanguageTag(String),
    /// A text given in the main language but not in another.
    #[error(
        "column {0:?} is empty where the main language has a text: every language needs every text"
    )]
    Untranslated(String),
    /// A value of a settings column that cannot be read.
    #[error("{column:?}: {why}")]
    Setting {
        /// The column.
        column: String,
        /// What is wrong.
        why: String,
    },
    /// A row of the `orthomask_terms` sheet that cannot be read.
    #[error("model term: {0}")]
    Term(String),
    /// What the draft's own check refuses (`SurveyDraft::validate_content`).
    #[error("{0}")]
    Draft(String),
}

/// Why a draft cannot be written as an XLSForm.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The writer failed (it writes to memory, so only on a malformed sheet name or cell).
    #[cfg(feature = "export")]
    #[error("writing the XLSForm: {0}")]
    Write(#[from] rust_xlsxwriter::XlsxError),
    /// The draft fails its own check: an XLSForm of it would not import back.
    #[error("{0}")]
    Draft(#[from] orthomask_survey::definition::SurveyError),
}
