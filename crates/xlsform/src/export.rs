//! A draft → an XLSForm's bytes (`rust_xlsxwriter`, in memory), written so that
//! [`crate::import`] reads back the same draft:
//!
//! * `settings`: `form_id`, `form_title` (and `form_title::tag (tag)` per translation),
//!   `default_language`, and the collector's choices as `orthomask_*` columns (cohort sizes,
//!   DP, share mode, invitations, demonstration), which other XLSForm tools ignore;
//! * `survey`: the description as a `note`, the consent as an `acknowledge` row, then one row
//!   per question, texts in `label::tag (tag)` and `hint::tag (tag)` columns (the tag is the
//!   language's name too: the draft carries no names);
//! * `choices`: `yes_no` (yes, no), and one list per categorical question (`<id>_options`) and
//!   per Likert scale (`<id>_scale`, `appearance` `likert`), choices named by their position
//!   `1, 2, …` (a Likert point's middle labels are its number);
//! * `orthomask_terms`: the model terms, if any (`name`, `kind`, `of`, `of2`, `exponent`, `at`).

use crate::conditions;
use crate::error::ExportError;
use crate::sheets::TERMS_SHEET;
use orthomask_survey::definition::{QuestionKind, SurveyDefinition, TermKind};
use orthomask_survey::draft::{DpDraft, SurveyDraft};
use rust_xlsxwriter::Workbook;
use std::collections::BTreeSet;

/// A sheet being written: its header, then rows of (column, text).
struct Sheet {
    name: &'static str,
    columns: Vec<String>,
    rows: Vec<Vec<(String, String)>>,
}

impl Sheet {
    fn new(name: &'static str, columns: Vec<String>) -> Self {
        Self {
            name,
            columns,
            rows: Vec::new(),
        }
    }

    fn add(&mut self, cells: Vec<(String, String)>) {
        self.rows.push(cells);
    }

    fn write(&self, book: &mut Workbook) -> Result<(), ExportError> {
        let sheet = book.add_worksheet();
        sheet.set_name(self.name)?;
        for (c, name) in self.columns.iter().enumerate() {
            sheet.write_string(0, c as u16, name)?;
        }
        for (r, cells) in self.rows.iter().enumerate() {
            for (column, text) in cells {
                if text.is_empty() {
                    continue;
                }
                let c = self.columns.iter().position(|x| x == column).unwrap_or(0);
                sheet.write_string(r as u32 + 1, c as u16, text)?;
            }
        }
        Ok(())
    }
}

/// `base::tag (tag)`.
fn in_language(base: &str, tag: &str) -> String {
    format!("{base}::{tag} ({tag})")
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// Write `draft` as an XLSForm.
///
/// # Errors
/// [`ExportError::Draft`] when the draft fails its own check (its XLSForm would not import
/// back), [`ExportError::Write`] if the writer fails.
pub fn export(draft: &SurveyDraft) -> Result<Vec<u8>, ExportError> {
    draft.validate_content()?;
    let tags: Vec<&str> = std::iter::once(draft.language.as_str())
        .chain(draft.translations.keys().map(String::as_str))
        .collect();
    let labels = |base: &str| {
        tags.iter()
            .map(|t| in_language(base, t))
            .collect::<Vec<_>>()
    };
    // Every language's text of one thing: the main one, then each translation's.
    let texts = |base: &str, main: &str, other: &dyn Fn(&str) -> String| {
        let mut cells = vec![(in_language(base, &draft.language), main.to_owned())];
        for tag in draft.translations.keys() {
            cells.push((in_language(base, tag), other(tag)));
        }
        cells
    };

    let mut survey_columns = vec!["type".to_owned(), "name".to_owned()];
    survey_columns.extend(labels("label"));
    survey_columns.extend(labels("hint"));
    survey_columns.extend(["required", "relevant", "constraint", "appearance"].map(String::from));
    let mut survey = Sheet::new("survey", survey_columns);
    let mut choice_columns = vec!["list_name".to_owned(), "name".to_owned()];
    choice_columns.extend(labels("label"));
    let mut choices = Sheet::new("choices", choice_columns);

    // Names for the rows that are not questions, unlike every question id.
    let mut taken: BTreeSet<String> = draft.questions.iter().map(|q| q.id.clone()).collect();
    let mut fresh = |wanted: &str| {
        let mut name = wanted.to_owned();
        while taken.contains(&name) {
            name.push('_');
        }
        taken.insert(name.clone());
        name
    };
    if let Some(description) = &draft.description {
        let mut row = vec![
            ("type".into(), "note".into()),
            ("name".into(), fresh("intro")),
        ];
        row.extend(texts("label", description, &|tag| {
            draft.translations[tag]
                .description
                .clone()
                .unwrap_or_default()
        }));
        survey.add(row);
    }
    let mut row = vec![
        ("type".into(), "acknowledge".into()),
        ("name".into(), fresh("consent")),
    ];
    row.extend(texts("label", &draft.consent, &|tag| {
        draft.translations[tag].consent.clone()
    }));
    survey.add(row);

    let mut yes_no_list = false;
    for q in &draft.questions {
        let translated = |tag: &str| {
            draft.translations[tag]
                .questions
                .get(&q.id)
                .cloned()
                .unwrap_or_default()
        };
        let mut row = vec![("name".to_owned(), q.id.clone())];
        row.extend(texts("label", &q.label, &|tag| translated(tag).label));
        if let Some(help) = &q.help {
            row.extend(texts("hint", help, &|tag| {
                translated(tag).help.unwrap_or_default()
            }));
        }
        if !q.optional {
            row.push(("required".into(), "yes".into()));
        }
        if let Some(show_if) = &q.show_if {
            let target = draft.questions.iter().find(|t| t.id == show_if.question);
            if let Some(target) = target {
                row.push((
                    "relevant".into(),
                    conditions::relevant(show_if, &target.kind),
                ));
            }
        }
        let kind = match &q.kind {
            QuestionKind::YesNo => {
                yes_no_list = true;
                "select_one yes_no".to_owned()
            }
            QuestionKind::Integer { min, max } => {
                row.push((
                    "constraint".into(),
                    conditions::constraint(*min as f64, *max as f64),
                ));
                "integer".to_owned()
            }
            QuestionKind::Number { min, max } => {
                row.push(("constraint".into(), conditions::constraint(*min, *max)));
                "decimal".to_owned()
            }
            QuestionKind::Likert {
                points,
                low_label,
                high_label,
            } => {
                let list = format!("{}_scale", q.id);
                for point in 1..=*points {
                    // A point's label in language `tag`: the end labels, else its number.
                    let label = |tag: Option<&str>| {
                        let t = tag.map(translated);
                        let pick = |main: &String, other: Option<String>| match tag {
                            None => main.clone(),
                            Some(_) => other.unwrap_or_default(),
                        };
                        if point == 1 {
                            pick(low_label, t.and_then(|t| t.low_label))
                        } else if point == *points {
                            pick(high_label, t.and_then(|t| t.high_label))
                        } else {
                            point.to_string()
                        }
                    };
                    let (main, other) = (label(None), |tag: &str| label(Some(tag)));
                    let mut choice = vec![
                        ("list_name".into(), list.clone()),
                        ("name".into(), point.to_string()),
                    ];
                    choice.extend(texts("label", &main, &other));
                    choices.add(choice);
                }
                row.push(("appearance".into(), "likert".into()));
                format!("select_one {list}")
            }
            QuestionKind::Categorical { options } => {
                let list = format!("{}_options", q.id);
                for (k, option) in options.iter().enumerate() {
                    let mut choice = vec![
                        ("list_name".into(), list.clone()),
                        ("name".into(), (k + 1).to_string()),
                    ];
                    choice.extend(texts("label", option, &|tag| {
                        translated(tag)
                            .options
                            .and_then(|o| o.get(k).cloned())
                            .unwrap_or_default()
                    }));
                    choices.add(choice);
                }
                format!("select_one {list}")
            }
        };
        row.push(("type".into(), kind));
        survey.add(row);
    }
    if yes_no_list {
        for answer in ["yes", "no"] {
            let mut choice = vec![
                ("list_name".into(), "yes_no".into()),
                ("name".into(), answer.into()),
            ];
            choice.extend(texts("label", answer, &|_| answer.into()));
            choices.add(choice);
        }
    }

    let mut settings_columns: Vec<String> = ["form_id", "form_title"].map(String::from).to_vec();
    settings_columns.extend(
        draft
            .translations
            .keys()
            .map(|t| in_language("form_title", t)),
    );
    settings_columns.extend(
        [
            "default_language",
            "orthomask_cohort_size",
            "orthomask_min_cohort_size",
            "orthomask_dp_epsilon",
            "orthomask_dp_delta",
            "orthomask_share_mode",
            "orthomask_invitations",
            "orthomask_demonstration",
        ]
        .map(String::from),
    );
    let mut settings = Sheet::new("settings", settings_columns);
    let mut row = vec![
        ("form_id".to_owned(), draft.id.clone()),
        (
            "default_language".into(),
            format!("{0} ({0})", draft.language),
        ),
        ("orthomask_share_mode".into(), yes_no(draft.share_mode)),
        ("orthomask_invitations".into(), yes_no(draft.invitations)),
        (
            "orthomask_demonstration".into(),
            yes_no(draft.demonstration),
        ),
    ];
    row.extend(texts("form_title", &draft.title, &|tag| {
        draft.translations[tag].title.clone()
    }));
    if let Some(m) = draft.cohort_size {
        row.push(("orthomask_cohort_size".into(), m.to_string()));
    }
    if let Some(m) = draft.min_cohort_size {
        row.push(("orthomask_min_cohort_size".into(), m.to_string()));
    }
    if let Some(dp) = &draft.dp {
        row.push((
            "orthomask_dp_epsilon".into(),
            crate::xpath::number(dp.epsilon),
        ));
        row.push(("orthomask_dp_delta".into(), crate::xpath::number(dp.delta)));
    }
    // The main title's column is `form_title` itself.
    for cell in &mut row {
        if cell.0 == in_language("form_title", &draft.language) {
            cell.0 = "form_title".into();
        }
    }
    settings.add(row);

    let mut book = Workbook::new();
    survey.write(&mut book)?;
    choices.write(&mut book)?;
    settings.write(&mut book)?;
    if !draft.terms.is_empty() {
        let columns = ["name", "kind", "of", "of2", "exponent", "at"]
            .map(String::from)
            .to_vec();
        let mut terms = Sheet::new(TERMS_SHEET, columns);
        for term in &draft.terms {
            let mut row = vec![("name".to_owned(), term.id.clone())];
            let (kind, of) = match &term.kind {
                TermKind::Power { of, exponent } => {
                    row.push(("exponent".into(), exponent.to_string()));
                    ("power", of)
                }
                TermKind::Product { of: [a, b] } => {
                    row.push(("of2".into(), b.clone()));
                    ("product", a)
                }
                TermKind::Log { of } => ("log", of),
                TermKind::Log1p { of } => ("log1p", of),
                TermKind::Centre { of, at } => {
                    row.push(("at".into(), crate::xpath::number(*at)));
                    ("centre", of)
                }
            };
            row.push(("kind".into(), kind.into()));
            row.push(("of".into(), of.clone()));
            terms.add(row);
        }
        terms.write(&mut book)?;
    }
    Ok(book.save_to_buffer()?)
}

/// The draft a definition was planned from, as far as the definition tells: its texts,
/// questions and terms, and the collector's choices it carries (cohort sizes, DP, share mode,
/// demonstration). Whether it needed invitations is not in a definition: on, the safe choice.
pub fn draft_of(definition: &SurveyDefinition) -> SurveyDraft {
    let m = &definition.masking;
    SurveyDraft {
        id: definition.id.clone(),
        title: definition.title.clone(),
        description: definition.description.clone(),
        consent: definition.consent.clone(),
        language: definition.language.clone(),
        translations: definition.translations.clone(),
        questions: definition.questions.clone(),
        terms: definition.terms.clone(),
        cohort_size: Some(m.cohort_size),
        min_cohort_size: m.min_cohort_size,
        dp: m.dp.as_ref().map(|dp| DpDraft {
            epsilon: dp.epsilon,
            delta: dp.delta,
        }),
        share_mode: m.share_mode.is_some(),
        invitations: true,
        demonstration: m.teaching,
    }
}
