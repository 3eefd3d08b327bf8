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

use crate::io::{print_json, read_bytes, read_text, write_file};
use anyhow::{Context, Result, anyhow};
use clap::{Args, Subcommand};
use nalgebra::DMatrix;
use orthomask_formats::csv::{Precision, parse_text_table, write_table};
use orthomask_survey::definition::SurveyDefinition;
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
    }
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
