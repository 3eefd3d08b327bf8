//! # orthomask-xlsform
//!
//! XLSForm in and out: a questionnaire written for ODK, KoboToolbox, SurveyCTO or Enketo (an
//! `.xlsx` with `survey`, `choices` and `settings` sheets) becomes an Orthomask survey draft —
//! the type the survey team's page, the collector and `orthomask survey` use
//! ([`orthomask_survey::draft::SurveyDraft`]) — and a draft is written back as an XLSForm
//! ([`export`], behind the default `export` feature, which the web app leaves off: the page only
//! imports). Bytes in, draft out: no file, no network; calamine reads the workbook from memory.
//!
//! ## What each survey row becomes
//!
//! | XLSForm | draft |
//! |---|---|
//! | `integer`, `decimal` with `constraint` `. >= a and . <= b` | integer / number question on `[a, b]` (bounds are required: masking scales by them) |
//! | `select_one L` with `appearance` `likert` (ODK's own appearance) | Likert scale: one point per choice, in order; the end choices' labels are its labels (middle labels are not kept) |
//! | `select_one L` whose choice names are exactly `yes` and `no` | yes/no (the page shows its own yes/no words) |
//! | any other `select_one L` | categorical: the choices' labels are the options, in order |
//! | `select_multiple L` | one yes/no question `<name>_<choice>` per choice, labelled `label: choice label` (the hint goes on the first) |
//! | `required` yes / empty | required / optional |
//! | `relevant` | `show_if` on one earlier question (the subset and its meaning: `conditions.rs`) |
//! | `note` | help text of the next question (with its `hint` after); notes before the consent row are the survey's description |
//! | the first `acknowledge` row | the consent text (it must precede every question) |
//! | `begin group` / `end group` | flattened: a group's `relevant` goes to each question in it (a question with its own is refused); its label is not kept |
//! | `start`, `end`, `today` | left out and reported: a survey records no time of answering |
//! | `label::Name (tag)`, `hint::…`, settings `form_title::…` | translations; `default_language` names the main one |
//! | settings `form_id`, `form_title` | the draft's id (else the file name's stem) and title (else the id) |
//! | settings `orthomask_*` | the collector's choices: `cohort_size`, `min_cohort_size`, `dp_epsilon` + `dp_delta`, `share_mode`, `invitations` (default **yes**: a basic-protocol survey must not be open), `demonstration` |
//! | sheet `orthomask_terms` | model terms computed on the device (`name`, `kind`, `of`, `of2`, `exponent`, `at`) |
//!
//! Refused, with one line naming the sheet row and why ([`Refusal`]): free text (`text`,
//! `barcode`, `or_other`), locations, photos/recordings/files, dates and times, repeats,
//! `calculate`, metadata that identifies the participant or the device (`deviceid`,
//! `phonenumber`, `username`, `email`, `audit`, …), choices from external files, any other
//! type, columns whose meaning a draft cannot carry (`choice_filter`, `default`, `read_only`,
//! media), bounds or conditions outside the subset, incomplete translations, and whatever the
//! draft's own check refuses (named at the row it came from).
//!
//! Read in this order:
//!
//! * [`error`] — why a workbook is refused, one reason per variant;
//! * `sheets` — the workbook as tables of text (calamine);
//! * `languages` — language columns and complete translations;
//! * `xpath` — the XPath subset of `relevant` and `constraint`;
//! * `conditions` — what that subset means: declared ranges and `show_if`, both ways;
//! * [`import()`] — the survey sheet, row by row, into a draft;
//! * [`export()`] — a draft into an XLSForm (feature `export`).

pub mod error;

mod sheets;

mod languages;

mod xpath;

mod conditions;

mod import;

#[cfg(feature = "export")]
mod export;

pub use error::{ExportError, ImportError, Refusal};
#[cfg(feature = "export")]
pub use export::{draft_of, export};
pub use import::{Ignored, Imported, import};
