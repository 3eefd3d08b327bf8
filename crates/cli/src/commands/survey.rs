//! `orthomask survey`: read a survey definition (`www/surveys/*.json`, `docs/survey.schema.json`).
//!
//! * `survey check DEFINITION` validates it and prints its id, languages, columns, model terms
//!   (each with its formula and derived range) and branches (the skip logic of `show_if`, one
//!   line each).
//! * `survey code --survey DEFINITION --answers ANSWERS.csv [--out RAW.csv]` codes a table of
//!   answers into the numeric records `x₁` a participant's device would pad (before the QA
//!   column and the noise), with the definition's column names: the raw data `orthomask
//!   pipeline` takes. The columns are the device's, in its order: the questions' columns, then
//!   one per declared model term (`x²`, `x·z`, logs, centring; `orthomask_survey::terms`),
//!   computed from the coded answers exactly as a device computes them.
//! * `survey import FORM.xlsx [-o DRAFT.json]` reads an XLSForm (ODK, KoboToolbox, SurveyCTO,
//!   Enketo) into a survey draft — what the survey team's page and the collector take — and
//!   prints what it left out on purpose; a row it cannot express is one line naming the row.
//! * `survey export-xlsform DEFINITION_OR_DRAFT -o FORM.xlsx` writes an XLSForm of a definition
//!   or a draft, which `survey import` reads back to the same draft.
//!
//! The mapping both ways is `orthomask_xlsform`'s.
//!
//! # The table of answers
//! A header of question ids (any order, every question exactly once), then one row per
//! participant with what the form holds: `yes`/`no`, whole numbers, numbers, a Likert point
//! `1…k`, and for a categorical question **the option's text in the main language** (not an
//! index, not a translation: the text is unambiguous and the file reads as the survey does). An
//! empty cell is not answered: allowed for optional questions and required for questions an
//! earlier answer hides (a value there is an error, as it would be a mistake in the file).
//!
//! The rules — which answers are valid, which questions are shown, how they are coded — are
//! `orthomask_survey::coding`'s; this file reads files and names the row and column of a problem.

use crate::io::{print_json, read_bytes, read_text, write_file, write_file_bytes};
use anyhow::{Context, Result, anyhow};
use clap::{Args, Subcommand};
use nalgebra::DMatrix;
use orthomask_formats::csv::{Precision, parse_text_table, write_table};
use orthomask_survey::definition::SurveyDefinition;
use orthomask_survey::draft::SurveyDraft;
use serde_json::json;
use std::path::{Path, PathBuf};

/// `orthomask survey …`.
#[derive(Subcommand)]
pub enum SurveyCommand {
    /// Validate a survey definition; print its id, languages, columns and branches.
    Check(CheckArgs),
    /// Code a CSV of answers (question ids as header, one row per participant) into the numeric
    /// records the devices would pad, with the definition's column names.
    Code(CodeArgs),
    /// Read an XLSForm (.xlsx: survey, choices, settings sheets) into a survey draft (JSON).
    Import(ImportArgs),
    /// Write an XLSForm (.xlsx) of a survey definition or draft.
    ExportXlsform(ExportArgs),
}

/// Arguments of `survey import`.
#[derive(Args)]
pub struct ImportArgs {
    /// The XLSForm (.xlsx).
    form: PathBuf,
    /// Where to write the draft (default: standard output).
    #[arg(short, long)]
    out: Option<PathBuf>,
}

/// Arguments of `survey export-xlsform`.
#[derive(Args)]
pub struct ExportArgs {
    /// A survey definition or a draft (JSON).
    survey: PathBuf,
    /// Where to write the XLSForm (.xlsx).
    #[arg(short, long)]
    out: PathBuf,
}

/// Arguments of `survey check`.
#[derive(Args)]
pub struct CheckArgs {
    /// The survey definition (JSON).
    definition: PathBuf,
    /// Print JSON on standard output.
    #[arg(long)]
    json: bool,
}

/// Arguments of `survey code`.
#[derive(Args)]
pub struct CodeArgs {
    /// The survey definition (JSON).
    #[arg(long)]
    survey: PathBuf,
    /// The answers: CSV with the question ids as header, one row per participant; categorical
    /// answers as the option's text in the main language, empty cells for no answer.
    #[arg(long)]
    answers: PathBuf,
    /// Where to write the coded records (default: standard output).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Run `survey …`.
pub fn run(command: SurveyCommand) -> Result<()> {
    match command {
        SurveyCommand::Check(args) => check(&args),
        SurveyCommand::Code(args) => code(&args),
        SurveyCommand::Import(args) => import(&args),
        SurveyCommand::ExportXlsform(args) => export_xlsform(&args),
    }
}

fn import(args: &ImportArgs) -> Result<()> {
    let name = args.form.display().to_string();
    let imported = orthomask_xlsform::import(&read_bytes(&args.form)?, &name)
        .map_err(|e| anyhow!("{name}: {e}"))?;
    for ignored in &imported.ignored {
        eprintln!("{name}: left out: {ignored}");
    }
    let json = serde_json::to_string_pretty(&imported.draft)? + "\n";
    match &args.out {
        Some(path) => {
            write_file(path, &json)?;
            let draft = &imported.draft;
            println!(
                "imported {}: {} questions, languages {}; draft written to {}",
                draft.id,
                draft.questions.len(),
                std::iter::once(draft.language.as_str())
                    .chain(draft.translations.keys().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(", "),
                path.display()
            );
        }
        None => print!("{json}"),
    }
    Ok(())
}

fn export_xlsform(args: &ExportArgs) -> Result<()> {
    let name = args.survey.display().to_string();
    let text = read_text(&args.survey)?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{name}: not JSON"))?;
    // A definition carries its masking parameters; a draft does not.
    let draft = if value.get("masking").is_some() {
        orthomask_xlsform::draft_of(&SurveyDefinition::parse(&text, &name)?)
    } else {
        serde_json::from_value::<SurveyDraft>(value)
            .with_context(|| format!("{name}: not a survey definition or draft"))?
    };
    let bytes = orthomask_xlsform::export(&draft).map_err(|e| anyhow!("{name}: {e}"))?;
    write_file_bytes(&args.out, &bytes)?;
    println!(
        "wrote an XLSForm of {} ({} questions) to {}",
        draft.id,
        draft.questions.len(),
        args.out.display()
    );
    Ok(())
}

pub(crate) fn load(path: &Path) -> Result<SurveyDefinition> {
    Ok(SurveyDefinition::parse(
        &read_text(path)?,
        &path.display().to_string(),
    )?)
}

fn check(args: &CheckArgs) -> Result<()> {
    let survey = load(&args.definition)?;
    let all = survey.columns();
    let columns: Vec<String> = all.iter().map(|c| c.name.clone()).collect();
    // Each model term with its formula and the range derived from its inputs' declared ranges.
    let terms: Vec<(String, String, (f64, f64))> = survey
        .terms
        .iter()
        .zip(&all[all.len() - survey.terms.len()..])
        .map(|(t, c)| (t.id.clone(), t.kind.formula(), c.range))
        .collect();
    let branches: Vec<(String, String)> = (0..survey.questions.len())
        .filter_map(|i| {
            survey
                .condition_text(i)
                .map(|text| (survey.questions[i].id.clone(), text))
        })
        .collect();
    if args.json {
        return print_json(&json!({
            "id": survey.id,
            "title": survey.title,
            "languages": survey.languages(),
            "questions": survey.questions.len(),
            "columns": columns,
            "binary_columns": survey.binary_columns(),
            "terms": terms
                .iter()
                .map(|(id, formula, (lo, hi))| json!({"id": id, "formula": formula, "range": [lo, hi]}))
                .collect::<Vec<_>>(),
            "branches": branches
                .iter()
                .map(|(q, text)| json!({"question": q, "condition": text}))
                .collect::<Vec<_>>(),
        }));
    }
    println!("survey {}: valid", survey.id);
    println!("title: {}", survey.title);
    println!("languages: {}", survey.languages().join(", "));
    println!("questions: {}", survey.questions.len());
    println!("columns ({}): {}", columns.len(), columns.join(", "));
    if !terms.is_empty() {
        println!("terms (computed on the device):");
        for (id, formula, (lo, hi)) in &terms {
            println!("  {id} = {formula}, range [{lo}, {hi}]");
        }
    }
    if branches.is_empty() {
        println!("branches: none (every question is shown)");
    } else {
        println!("branches:");
        for (question, text) in &branches {
            println!("  {question}: {text}");
        }
    }
    Ok(())
}

fn code(args: &CodeArgs) -> Result<()> {
    let survey = load(&args.survey)?;
    let name = args.answers.display().to_string();
    let table = parse_text_table(&read_bytes(&args.answers)?, &name)?;
    // Where each question's cell is: the header names every question id exactly once.
    let mut at: Vec<Option<usize>> = vec![None; survey.questions.len()];
    for (column, header) in table.headers.iter().enumerate() {
        let question = survey
            .questions
            .iter()
            .position(|q| q.id == *header)
            .ok_or_else(|| {
                anyhow!(
                    "{name}:1:{}: no question {header:?} in {} (the header names each question id \
                     once)",
                    column + 1,
                    args.survey.display()
                )
            })?;
        at[question] = Some(column);
    }
    let columns: Vec<usize> = survey
        .questions
        .iter()
        .zip(&at)
        .map(|(q, column)| {
            column.ok_or_else(|| {
                anyhow!(
                    "{name}:1: no column for question {:?} (the header names each question id \
                     once)",
                    q.id
                )
            })
        })
        .collect::<Result<_>>()?;
    let names: Vec<String> = survey.columns().into_iter().map(|c| c.name).collect();
    let mut values = Vec::with_capacity(table.rows.len() * names.len());
    for row in &table.rows {
        let cells: Vec<String> = columns.iter().map(|&c| row.cells[c].clone()).collect();
        let answers = survey.answers_from_record(&cells).map_err(|e| {
            anyhow!(
                "{name}:{}:{}: question {:?}: {}",
                row.line,
                columns[e.question] + 1,
                survey.questions[e.question].id,
                e.error
            )
        })?;
        let record = survey
            .encode(&answers)
            .with_context(|| format!("{name}:{}", row.line))?;
        values.extend(record);
    }
    let data = DMatrix::from_row_slice(table.rows.len(), names.len(), &values);
    let csv = write_table(&names, &data, Precision::RoundTrip);
    match &args.out {
        Some(path) => {
            write_file(path, &csv)?;
            println!(
                "coded {} participants into {} columns: {}",
                data.nrows(),
                names.len(),
                path.display()
            );
        }
        None => print!("{csv}"),
    }
    Ok(())
}
