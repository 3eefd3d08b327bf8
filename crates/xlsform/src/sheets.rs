//! The workbook as tables of text: each sheet's header (its first non-empty row) and its rows,
//! numbered as the spreadsheet numbers them. calamine reads the `.xlsx` from memory; nothing
//! here touches a file.

use crate::error::ImportError;
use calamine::{Data, Reader, Xlsx, open_workbook_from_rs};
use std::io::Cursor;

/// One sheet: its columns and its rows below the header.
#[derive(Debug)]
pub(crate) struct Table {
    /// `survey`, `choices`, `settings` or `orthomask_terms`.
    pub name: &'static str,
    /// The header's cells, trimmed.
    pub columns: Vec<String>,
    /// The header's row number.
    pub header_row: u32,
    /// The rows below the header.
    pub rows: Vec<Row>,
}

/// One row's cells as text.
#[derive(Debug)]
pub(crate) struct Row {
    /// The row as the spreadsheet numbers it (from 1).
    pub number: u32,
    cells: Vec<String>,
}

impl Row {
    /// The cell in column `at` ("" when there is no such column or cell).
    pub fn get(&self, at: Option<usize>) -> &str {
        at.and_then(|i| self.cells.get(i))
            .map(String::as_str)
            .unwrap_or("")
    }
}

impl Table {
    /// The column named `name` (case-insensitive, as people write `Type` or `Label`).
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
    }

    /// The column named `name`, or the error that the sheet lacks it.
    pub fn require(&self, name: &'static str) -> Result<usize, ImportError> {
        self.column(name).ok_or(ImportError::MissingColumn {
            sheet: self.name,
            column: name,
        })
    }
}

/// The sheets of an XLSForm.
#[derive(Debug)]
pub(crate) struct Workbook {
    pub survey: Table,
    pub choices: Option<Table>,
    pub settings: Option<Table>,
    pub terms: Option<Table>,
}

/// The name of the sheet of model terms (Orthomask's own; other XLSForm tools ignore it).
pub const TERMS_SHEET: &str = "orthomask_terms";

/// Read the workbook's sheets.
pub(crate) fn read(bytes: &[u8]) -> Result<Workbook, ImportError> {
    let mut book: Xlsx<Cursor<&[u8]>> = open_workbook_from_rs(Cursor::new(bytes))
        .map_err(|e: calamine::XlsxError| ImportError::NotXlsx(one_line(&e.to_string())))?;
    let names = book.sheet_names();
    let mut sheet = |wanted: &'static str| -> Result<Option<Table>, ImportError> {
        let Some(name) = names.iter().find(|n| n.trim().eq_ignore_ascii_case(wanted)) else {
            return Ok(None);
        };
        let range = book.worksheet_range(name).map_err(|e| {
            ImportError::NotXlsx(format!("sheet {wanted}: {}", one_line(&e.to_string())))
        })?;
        let first_row = range.start().map_or(0, |(row, _)| row);
        let first_column = range.start().map_or(0, |(_, column)| column) as usize;
        let mut rows = range.rows().enumerate().map(|(i, cells)| {
            // Cells left of the range's first column are empty: keep column indices absolute.
            let mut text = vec![String::new(); first_column];
            text.extend(cells.iter().map(cell_text));
            Row {
                number: first_row + i as u32 + 1,
                cells: text,
            }
        });
        let Some(header) = rows
            .by_ref()
            .find(|r| r.cells.iter().any(|c| !c.is_empty()))
        else {
            return Ok(Some(Table {
                name: wanted,
                columns: Vec::new(),
                header_row: 1,
                rows: Vec::new(),
            }));
        };
        Ok(Some(Table {
            name: wanted,
            header_row: header.number,
            columns: header.cells,
            rows: rows.collect(),
        }))
    };
    let survey = sheet("survey")?.ok_or(ImportError::MissingSheet("survey"))?;
    Ok(Workbook {
        choices: sheet("choices")?,
        settings: sheet("settings")?,
        terms: sheet(TERMS_SHEET)?,
        survey,
    })
}

/// A cell as the text a person sees: numbers without a trailing `.0`, booleans as
/// `true`/`false` (a `required` typed as TRUE), errors and blanks empty.
fn cell_text(cell: &Data) -> String {
    match cell {
        Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => s.trim().to_owned(),
        Data::Int(i) => i.to_string(),
        Data::Float(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", *x as i64),
        Data::Float(x) => x.to_string(),
        Data::Bool(b) => b.to_string(),
        Data::DateTime(d) => d.as_f64().to_string(),
        Data::Error(_) | Data::Empty => String::new(),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
