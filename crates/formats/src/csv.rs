//! Numeric CSV tables: a header row of unique names, then rows of finite numbers.
//!
//! The dialect is RFC 4180: comma-separated, fields may be double-quoted (`""` inside quotes is a
//! quote), LF or CRLF line ends, an optional UTF-8 byte-order mark, trailing blank lines ignored.
//! Every cell of the body must be a finite number: the masked matrix must be complete, so an empty
//! cell, text, `NaN` or `inf` is an error, never a silent default.
//!
//! [`parse_text_table`] reads the same dialect with the cells left as text (a table of answers as
//! a form would hold them, before they are coded into numbers).
//!
//! # Why our own tokenizer, not the `csv` crate
//! Every refusal must be one typed [`CsvProblem`] with the line and column of the cell, in the
//! same pass that turns cells into finite numbers, and the dialect is deliberately narrow (one
//! delimiter, no comments, no ragged rows). With `csv` we would still walk its records a second
//! time to give those errors; the tokenizer is the small part.

use nalgebra::DMatrix;

mod reader;

pub use reader::TableReader;

/// What went wrong, without the position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CsvProblem {
    /// The input has no bytes (or only blank lines / a byte-order mark).
    #[error("the file is empty; expected a header row and at least one data row")]
    Empty,
    /// Bytes that are not UTF-8.
    #[error("invalid UTF-8 byte 0x{0:02x}; save the file as UTF-8 text")]
    NotUtf8(u8),
    /// A header name is empty.
    #[error("header name is empty; every column needs a name")]
    EmptyHeader,
    /// A header name repeats.
    #[error("duplicate column name {name:?} (first used in column {first})")]
    DuplicateHeader {
        /// The repeated name.
        name: String,
        /// 1-based column of its first use.
        first: usize,
    },
    /// A row with the wrong number of cells.
    #[error("row has {found} cells but the header has {expected}")]
    Ragged {
        /// Cells in the header.
        expected: usize,
        /// Cells in this row.
        found: usize,
    },
    /// An empty cell.
    #[error("empty cell; every value is required (code missing answers explicitly)")]
    EmptyCell,
    /// A cell that is not a number.
    #[error("expected a number, found {0:?}")]
    NotANumber(String),
    /// `NaN` or an infinity.
    #[error("{0:?} is not a finite number")]
    NotFinite(String),
    /// A quoted field that never closes.
    #[error("quoted field is not closed before the end of the file")]
    UnterminatedQuote,
    /// Text after a closing quote.
    #[error("unexpected character {0:?} after a closing quote")]
    AfterQuote(char),
    /// Only a header, no data.
    #[error("the file has a header but no data rows")]
    NoRows,
}

/// A parse error with its position: `source:line:column: problem`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}:{line}{}: {problem}", column.map(|c| format!(":{c}")).unwrap_or_default())]
pub struct CsvError {
    /// The file (or other source) name.
    pub source_name: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (cell index), when the problem is in one cell.
    pub column: Option<usize>,
    /// What went wrong.
    pub problem: CsvProblem,
}

/// A column name that is not in the table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: no column named {name:?}; columns are {}", available.join(", "))]
pub struct UnknownColumn {
    /// The file name.
    pub source_name: String,
    /// The name asked for.
    pub name: String,
    /// The names available.
    pub available: Vec<String>,
}

/// A numeric table with named columns.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    headers: Vec<String>,
    data: DMatrix<f64>,
    source_name: String,
}

impl Table {
    /// A table from names and data (`data.ncols()` must equal the number of names).
    ///
    /// # Errors
    /// A [`CsvError`] for mismatched widths, empty or duplicate names, non-finite values.
    pub fn new(
        source_name: &str,
        headers: Vec<String>,
        data: DMatrix<f64>,
    ) -> Result<Self, CsvError> {
        let at = |line, column, problem| CsvError {
            source_name: source_name.to_owned(),
            line,
            column,
            problem,
        };
        if headers.len() != data.ncols() {
            return Err(at(
                1,
                None,
                CsvProblem::Ragged {
                    expected: headers.len(),
                    found: data.ncols(),
                },
            ));
        }
        check_headers(&headers).map_err(|(column, problem)| at(1, Some(column), problem))?;
        for i in 0..data.nrows() {
            for j in 0..data.ncols() {
                if !data[(i, j)].is_finite() {
                    return Err(at(
                        i + 2,
                        Some(j + 1),
                        CsvProblem::NotFinite(data[(i, j)].to_string()),
                    ));
                }
            }
        }
        Ok(Self {
            headers,
            data,
            source_name: source_name.to_owned(),
        })
    }

    /// Column names.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// The numbers, one row per record.
    pub fn data(&self) -> &DMatrix<f64> {
        &self.data
    }

    /// Take the numbers out.
    pub fn into_data(self) -> DMatrix<f64> {
        self.data
    }

    /// Where the table came from.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// 0-based index of the column `name` (exact match).
    ///
    /// # Errors
    /// [`UnknownColumn`] listing the available names.
    pub fn column_index(&self, name: &str) -> Result<usize, UnknownColumn> {
        self.headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| UnknownColumn {
                source_name: self.source_name.clone(),
                name: name.to_owned(),
                available: self.headers.clone(),
            })
    }

    /// 0-based indices of several columns.
    ///
    /// # Errors
    /// [`UnknownColumn`] for the first name that is missing.
    pub fn column_indices<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<usize>, UnknownColumn> {
        names
            .iter()
            .map(|n| self.column_index(n.as_ref()))
            .collect()
    }
}

fn check_headers(headers: &[String]) -> Result<(), (usize, CsvProblem)> {
    for (j, h) in headers.iter().enumerate() {
        if h.trim().is_empty() {
            return Err((j + 1, CsvProblem::EmptyHeader));
        }
        if let Some(first) = headers[..j].iter().position(|earlier| earlier == h) {
            return Err((
                j + 1,
                CsvProblem::DuplicateHeader {
                    name: h.clone(),
                    first: first + 1,
                },
            ));
        }
    }
    Ok(())
}

/// One record's cells with the line it started on.
struct Record {
    line: usize,
    cells: Vec<String>,
}

/// Records split off the front of a text: the complete ones, the bytes they used and the line
/// the rest starts on.
struct Split {
    records: Vec<Record>,
    consumed: usize,
    next_line: usize,
}

impl Split {
    /// The records before an unfinished one, which starts at byte `consumed` on line `line`.
    fn before(records: Vec<Record>, consumed: usize, line: usize) -> Self {
        Self {
            records,
            consumed,
            next_line: line,
        }
    }
}

/// Split text into records of cells, honouring quotes; `first_line` is the line `text` starts on.
///
/// With `at_end` the text is all there is: a last record without a line end is complete and an
/// open quote is an error. Without it more text may follow (a file read in chunks,
/// [`TableReader`]): splitting stops before the first record that is not ended by a line feed,
/// whose bytes are left for the next call (`consumed` counts the bytes of the records returned).
/// A chunk boundary is therefore invisible: a record cut anywhere — inside quotes, between `\r`
/// and `\n`, after a quote that may be doubled — is split again whole once its end has arrived.
fn split_records(
    text: &str,
    first_line: usize,
    at_end: bool,
) -> Result<Split, (usize, Option<usize>, CsvProblem)> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    let mut line = first_line;
    let mut consumed = 0;
    while chars.peek().is_some() {
        let start_line = line;
        let mut cells = Vec::new();
        let mut cell = String::new();
        let mut quoted_cell = false;
        loop {
            match chars.next().map(|(_, c)| c) {
                None if !at_end => return Ok(Split::before(out, consumed, start_line)),
                None => {
                    cells.push(std::mem::take(&mut cell));
                    break;
                }
                Some('"') if cell.is_empty() && !quoted_cell => {
                    quoted_cell = true;
                    loop {
                        match chars.next().map(|(_, c)| c) {
                            None if !at_end => {
                                return Ok(Split::before(out, consumed, start_line));
                            }
                            None => {
                                return Err((
                                    start_line,
                                    Some(cells.len() + 1),
                                    CsvProblem::UnterminatedQuote,
                                ));
                            }
                            Some('"') if chars.peek().map(|&(_, c)| c) == Some('"') => {
                                chars.next();
                                cell.push('"');
                            }
                            Some('"') => break,
                            Some(c) => {
                                if c == '\n' {
                                    line += 1;
                                }
                                cell.push(c);
                            }
                        }
                    }
                    match chars.peek().map(|&(_, c)| c) {
                        None | Some(',') | Some('\n') | Some('\r') => {}
                        Some(c) => {
                            return Err((line, Some(cells.len() + 1), CsvProblem::AfterQuote(c)));
                        }
                    }
                }
                Some(',') => {
                    cells.push(std::mem::take(&mut cell));
                    quoted_cell = false;
                }
                Some('\r') if chars.peek().map(|&(_, c)| c) == Some('\n') => {}
                Some('\n') => {
                    line += 1;
                    cells.push(std::mem::take(&mut cell));
                    break;
                }
                Some(c) => cell.push(c),
            }
        }
        consumed = chars.peek().map_or(text.len(), |&(at, _)| at);
        let blank = cells.len() == 1 && cells[0].trim().is_empty() && !quoted_cell;
        if !blank {
            out.push(Record {
                line: start_line,
                cells,
            });
        }
    }
    Ok(Split {
        records: out,
        consumed,
        next_line: line,
    })
}

/// A table whose cells are text: unique header names, then rows of as many cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextTable {
    /// The header names, trimmed.
    pub headers: Vec<String>,
    /// The rows, in order.
    pub rows: Vec<TextRow>,
}

/// One row of a [`TextTable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextRow {
    /// 1-based line of the file on which the row starts.
    pub line: usize,
    /// The cells, as written (quotes removed), one per header.
    pub cells: Vec<String>,
}

/// Parse a table of text cells from raw bytes, in the dialect of [`parse_table`] (empty cells
/// allowed). `source_name` is used in error messages.
///
/// # Errors
/// A [`CsvError`] naming the line and column of the first problem: not UTF-8, no header, empty
/// or duplicate names, a row of another width, an unclosed quote, no rows.
pub fn parse_text_table(bytes: &[u8], source_name: &str) -> Result<TextTable, CsvError> {
    let (headers, records) = parse_records(bytes, source_name)?;
    let mut rows = Vec::with_capacity(records.len());
    for record in records {
        check_width(&record, headers.len(), source_name)?;
        rows.push(TextRow {
            line: record.line,
            cells: record.cells,
        });
    }
    Ok(TextTable { headers, rows })
}

/// The header names and the rows of a CSV text, each row as wide as the header.
fn parse_records(bytes: &[u8], source_name: &str) -> Result<(Vec<String>, Vec<Record>), CsvError> {
    let at = |line, column, problem| CsvError {
        source_name: source_name.to_owned(),
        line,
        column,
        problem,
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            // Position of the bad byte: lines so far, characters since the last newline.
            let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
            let last_line = valid.rsplit(|&b| b == b'\n').next().unwrap_or(valid);
            let column = String::from_utf8_lossy(last_line).chars().count() + 1;
            return Err(at(
                line,
                Some(column),
                CsvProblem::NotUtf8(bytes[e.valid_up_to()]),
            ));
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let records = split_records(text, 1, true)
        .map_err(|(line, column, problem)| at(line, column, problem))?
        .records;
    let mut records = records.into_iter();
    let header = records
        .next()
        .ok_or_else(|| at(1, None, CsvProblem::Empty))?;
    let headers: Vec<String> = header.cells.iter().map(|h| h.trim().to_owned()).collect();
    check_headers(&headers).map_err(|(column, problem)| at(header.line, Some(column), problem))?;
    let body: Vec<Record> = records.collect();
    if body.is_empty() {
        return Err(at(header.line + 1, None, CsvProblem::NoRows));
    }
    Ok((headers, body))
}

/// A row with as many cells as the header has names, or where it is not.
fn check_width(record: &Record, width: usize, source_name: &str) -> Result<(), CsvError> {
    if record.cells.len() == width {
        return Ok(());
    }
    Err(CsvError {
        source_name: source_name.to_owned(),
        line: record.line,
        column: None,
        problem: CsvProblem::Ragged {
            expected: width,
            found: record.cells.len(),
        },
    })
}

/// Parse a numeric table from raw bytes. `source_name` is used in error messages.
///
/// # Errors
/// A [`CsvError`] naming the line and column of the first problem.
pub fn parse_table(bytes: &[u8], source_name: &str) -> Result<Table, CsvError> {
    let mut reader = TableReader::new(source_name);
    let mut values = Vec::new();
    reader.push(bytes, &mut values)?;
    reader.finish(&mut values)?;
    let headers = reader.headers().unwrap_or_default().to_vec();
    let data = DMatrix::from_row_slice(reader.rows_read(), headers.len(), &values);
    Ok(Table {
        headers,
        data,
        source_name: source_name.to_owned(),
    })
}

fn parse_number(cell: &str) -> Result<f64, CsvProblem> {
    let text = cell.trim();
    if text.is_empty() {
        return Err(CsvProblem::EmptyCell);
    }
    // Rust accepts "inf", "infinity" and "nan" (any case) and overflows like "1e999" as
    // non-finite values; all of them are refused here.
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(CsvProblem::NotFinite(truncate(text))),
        Err(_) => Err(CsvProblem::NotANumber(truncate(text))),
    }
}

/// Keep error messages one short line even for megabytes of junk in one cell.
fn truncate(text: &str) -> String {
    const LIMIT: usize = 40;
    if text.chars().count() <= LIMIT {
        text.to_owned()
    } else {
        let head: String = text.chars().take(LIMIT).collect();
        format!("{head}…")
    }
}

/// The fixed number of decimals a CSV body was printed with, or `None` when it carries full
/// precision (any cell in exponent notation or with more than 12 significant digits, which only a
/// round-trip writer produces). Auditors derive their tolerances from it.
pub fn printed_decimals(bytes: &[u8]) -> Option<u8> {
    let text = String::from_utf8_lossy(bytes);
    let mut decimals = 0usize;
    for line in text.lines().skip(1) {
        for cell in line.split(',') {
            let cell = cell.trim().trim_matches('"');
            if cell.contains(['e', 'E']) {
                return None;
            }
            let digits = cell.chars().filter(char::is_ascii_digit).count();
            if digits > 12 {
                return None;
            }
            if let Some((_, fraction)) = cell.split_once('.') {
                decimals = decimals.max(fraction.len());
            }
        }
    }
    u8::try_from(decimals).ok()
}

/// How many digits to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// Shortest text that parses back to the same `f64` (so `XᵀX` survives the file).
    RoundTrip,
    /// Fixed decimals, like the papers' tables.
    Decimals(u8),
}

fn quote_if_needed(name: &str) -> String {
    if name.contains([',', '"', '\n', '\r']) || name.trim() != name {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_owned()
    }
}

/// Format one number.
pub fn format_number(value: f64, precision: Precision) -> String {
    match precision {
        // Rust's `Display` for f64 is the shortest representation that round-trips.
        Precision::RoundTrip => {
            let text = value.to_string();
            if text == "-0" { "0".to_owned() } else { text }
        }
        Precision::Decimals(d) => {
            let text = format!("{value:.prec$}", prec = usize::from(d));
            // "-0.00" reads badly in a released table.
            if text
                .trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                text.trim_start_matches('-').to_owned()
            } else {
                text
            }
        }
    }
}

/// Write a table as CSV text (LF line ends, header first).
pub fn write_table(headers: &[String], data: &DMatrix<f64>, precision: Precision) -> String {
    let mut out = header_line(headers);
    for row in data.row_iter() {
        out.push_str(&row_line(row.iter().copied(), precision));
    }
    out
}

/// The header row of a CSV table, line end included: names quoted where needed.
pub fn header_line(headers: &[String]) -> String {
    let mut line = headers
        .iter()
        .map(|h| quote_if_needed(h))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

/// One row of numbers as a CSV line, line end included (a writer streams a table row by row with
/// [`header_line`] and this; [`write_table`] is the two for a table in memory).
pub fn row_line(values: impl Iterator<Item = f64>, precision: Precision) -> String {
    let mut line = values
        .map(|v| format_number(v, precision))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &[u8]) -> CsvError {
        parse_table(text, "t.csv").unwrap_err()
    }

    #[test]
    fn parses_a_simple_table() {
        let t = parse_table(
            b"\xef\xbb\xbfa,\"b, quoted\"\r\n1,2.5\r\n-3,4e2\n\n",
            "t.csv",
        )
        .unwrap();
        assert_eq!(t.headers(), ["a", "b, quoted"]);
        assert_eq!(
            t.data(),
            &DMatrix::from_row_slice(2, 2, &[1.0, 2.5, -3.0, 400.0])
        );
        assert_eq!(t.column_index("b, quoted").unwrap(), 1);
        assert!(
            t.column_index("c")
                .unwrap_err()
                .to_string()
                .contains("columns are a, b, quoted")
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        assert_eq!(
            problem(b"a,b\n1,2\n3\n").to_string(),
            "t.csv:3: row has 1 cells but the header has 2"
        );
        assert_eq!(
            problem(b"a,b\n1,x\n").to_string(),
            "t.csv:2:2: expected a number, found \"x\""
        );
        assert_eq!(
            problem(b"a,b\n1,NaN\n").to_string(),
            "t.csv:2:2: \"NaN\" is not a finite number"
        );
        assert_eq!(
            problem(b"a,b\n1,inf\n").problem,
            CsvProblem::NotFinite("inf".into())
        );
        assert_eq!(
            problem(b"a,b\n1,1e999\n").problem,
            CsvProblem::NotFinite("1e999".into())
        );
        assert_eq!(problem(b"").problem, CsvProblem::Empty);
        assert_eq!(problem(b"\n\n").problem, CsvProblem::Empty);
        assert_eq!(problem(b"a,b\n").problem, CsvProblem::NoRows);
        assert_eq!(
            problem(b"a,b,a\n1,2,3\n").to_string(),
            "t.csv:1:3: duplicate column name \"a\" (first used in column 1)"
        );
        assert_eq!(problem(b"a,,b\n1,2,3\n").problem, CsvProblem::EmptyHeader);
        assert_eq!(
            problem(b"a,b\n1,\n").to_string(),
            "t.csv:2:2: empty cell; every value is required (code missing answers explicitly)"
        );
        assert_eq!(
            problem(b"a,b\n\"1,2\n").problem,
            CsvProblem::UnterminatedQuote
        );
        assert_eq!(
            problem(b"a,b\n\"1\"x,2\n").problem,
            CsvProblem::AfterQuote('x')
        );
        let bad_utf8 = problem(b"a,b\n1,2\n3,\xff\n");
        assert_eq!((bad_utf8.line, bad_utf8.column), (3, Some(3)));
        assert_eq!(bad_utf8.problem, CsvProblem::NotUtf8(0xff));
    }

    #[test]
    fn text_tables_keep_their_cells_and_lines() {
        let t = parse_text_table(
            b"\xef\xbb\xbfa, b\r\nyes,\"Weekly, or more\"\n\n,3\n",
            "answers.csv",
        )
        .unwrap();
        assert_eq!(t.headers, ["a", "b"]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].cells, ["yes", "Weekly, or more"]);
        assert_eq!((t.rows[1].line, t.rows[1].cells[0].as_str()), (4, ""));
        let e = parse_text_table(b"a,b\nyes\n", "answers.csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "answers.csv:2: row has 1 cells but the header has 2"
        );
        let e = parse_text_table(b"a,a\n1,2\n", "answers.csv").unwrap_err();
        assert_eq!((e.line, e.column), (1, Some(2)));
        let e = parse_text_table(b"a,b\n", "answers.csv").unwrap_err();
        assert_eq!(e.problem, CsvProblem::NoRows);
    }

    #[test]
    fn long_junk_is_truncated_in_messages() {
        let mut text = b"a\n".to_vec();
        text.extend(std::iter::repeat_n(b'z', 10_000));
        let message = problem(&text).to_string();
        assert!(message.len() < 120, "{message}");
    }

    #[test]
    fn round_trip_precision_survives_the_file() {
        let data = DMatrix::from_row_slice(
            2,
            3,
            &[
                0.1 + 0.2,
                -1e-300,
                123_456_789.123_456_78,
                1.0 / 3.0,
                -0.0,
                5e20,
            ],
        );
        let text = write_table(
            &["x".into(), "y\"q".into(), "z".into()],
            &data,
            Precision::RoundTrip,
        );
        let back = parse_table(text.as_bytes(), "w.csv").unwrap();
        assert_eq!(back.headers()[1], "y\"q");
        assert_eq!(back.data(), &data.map(|v| if v == 0.0 { 0.0 } else { v }));
    }

    #[test]
    fn printed_decimals_are_inferred() {
        assert_eq!(printed_decimals(b"a,b\n0.82,888\n1.5,888\n"), Some(2));
        assert_eq!(printed_decimals(b"a\n888\n"), Some(0));
        assert_eq!(printed_decimals(b"a\n0.30000000000000004\n"), None);
        assert_eq!(printed_decimals(b"a\n1e-7\n"), None);
    }

    #[test]
    fn decimals_round_like_the_papers() {
        assert_eq!(format_number(811.1249, Precision::Decimals(2)), "811.12");
        assert_eq!(format_number(-0.001, Precision::Decimals(2)), "0.00");
        assert_eq!(format_number(888.0, Precision::Decimals(0)), "888");
    }

    #[test]
    fn table_new_validates() {
        assert!(Table::new("x", vec!["a".into()], DMatrix::zeros(2, 2)).is_err());
        assert!(Table::new("x", vec!["a".into(), "a".into()], DMatrix::zeros(2, 2)).is_err());
        let mut nan = DMatrix::zeros(2, 1);
        nan[(1, 0)] = f64::NAN;
        assert_eq!(Table::new("x", vec!["a".into()], nan).unwrap_err().line, 3);
    }
}
