//! A numeric table read a piece at a time: bytes in, rows of numbers out, in bounded memory.
//!
//! `orthomask pipeline` reads surveys of any size cohort by cohort (issue 23 §2): the caller
//! feeds the file's bytes in chunks of any size ([`TableReader::push`]) and takes the rows that
//! are complete; only the tail of an unfinished record (and of an unfinished UTF-8 character) is
//! kept between chunks. The dialect, the checks and every error — file, line and column — are
//! those of [`parse_table`](super::parse_table), which is this reader fed the whole file at once.

use super::{CsvError, CsvProblem, check_headers, parse_number, split_records};

/// The UTF-8 byte-order mark, dropped from the start of a file.
const BYTE_ORDER_MARK: &[u8] = b"\xef\xbb\xbf";

/// An incremental reader of a numeric CSV table (module documentation).
#[derive(Clone, Debug)]
pub struct TableReader {
    source_name: String,
    /// Bytes received but not yet part of a complete record.
    pending: Vec<u8>,
    /// The line `pending` starts on.
    line: usize,
    /// Whether a byte-order mark may still come (nothing has been read yet).
    at_start: bool,
    /// The header names, once read, and the line they were on.
    headers: Option<(Vec<String>, usize)>,
    /// Data rows read so far.
    rows: usize,
}

impl TableReader {
    /// A reader of the table called `source_name` in error messages.
    pub fn new(source_name: &str) -> Self {
        Self {
            source_name: source_name.to_owned(),
            pending: Vec::new(),
            line: 1,
            at_start: true,
            headers: None,
            rows: 0,
        }
    }

    /// The header names, once the header row has been read.
    pub fn headers(&self) -> Option<&[String]> {
        self.headers.as_ref().map(|(names, _)| names.as_slice())
    }

    /// Data rows read so far.
    pub fn rows_read(&self) -> usize {
        self.rows
    }

    /// The file name errors carry.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// Bytes held between chunks: the unfinished record (at most one record plus the last chunk).
    pub fn buffered_bytes(&self) -> usize {
        self.pending.len()
    }

    /// Feed the next bytes of the file; every row they complete is appended to `values` (row
    /// after row, as many numbers as the header has names). Returns the rows appended.
    ///
    /// # Errors
    /// The first problem in the file, as [`parse_table`](super::parse_table) reports it.
    pub fn push(&mut self, bytes: &[u8], values: &mut Vec<f64>) -> Result<usize, CsvError> {
        self.pending.extend_from_slice(bytes);
        self.drain(false, values)
    }

    /// The end of the file: the last record may lack a line end; a file without a header or
    /// without rows is refused. Returns the rows appended.
    ///
    /// # Errors
    /// As [`push`](Self::push), and [`CsvProblem::Empty`], [`CsvProblem::NoRows`],
    /// [`CsvProblem::UnterminatedQuote`] for what only the end reveals.
    pub fn finish(&mut self, values: &mut Vec<f64>) -> Result<usize, CsvError> {
        let appended = self.drain(true, values)?;
        match &self.headers {
            None => Err(self.at(1, None, CsvProblem::Empty)),
            Some((_, header_line)) if self.rows == 0 => {
                Err(self.at(header_line + 1, None, CsvProblem::NoRows))
            }
            Some(_) => Ok(appended),
        }
    }

    fn at(&self, line: usize, column: Option<usize>, problem: CsvProblem) -> CsvError {
        CsvError {
            source_name: self.source_name.clone(),
            line,
            column,
            problem,
        }
    }

    /// Turn every complete record of `pending` into a header or a row.
    fn drain(&mut self, at_end: bool, values: &mut Vec<f64>) -> Result<usize, CsvError> {
        if self.at_start {
            if self.pending.len() < BYTE_ORDER_MARK.len()
                && BYTE_ORDER_MARK.starts_with(&self.pending)
                && !at_end
            {
                return Ok(0);
            }
            if self.pending.starts_with(BYTE_ORDER_MARK) {
                self.pending.drain(..BYTE_ORDER_MARK.len());
            }
            self.at_start = false;
        }
        let text = match std::str::from_utf8(&self.pending) {
            Ok(text) => text,
            // A character cut by the chunk boundary: its bytes wait for the next chunk (only
            // this prefix is validated a second time).
            Err(e) if e.error_len().is_none() && !at_end => {
                std::str::from_utf8(&self.pending[..e.valid_up_to()]).unwrap_or_default()
            }
            Err(e) => return Err(self.not_utf8(e.valid_up_to())),
        };
        let split = split_records(text, self.line, at_end)
            .map_err(|(line, column, problem)| self.at(line, column, problem))?;
        let before = self.rows;
        for record in split.records {
            let Some((headers, _)) = &self.headers else {
                let names: Vec<String> = record.cells.iter().map(|h| h.trim().to_owned()).collect();
                check_headers(&names)
                    .map_err(|(column, problem)| self.at(record.line, Some(column), problem))?;
                self.headers = Some((names, record.line));
                continue;
            };
            if record.cells.len() != headers.len() {
                return Err(self.at(
                    record.line,
                    None,
                    CsvProblem::Ragged {
                        expected: headers.len(),
                        found: record.cells.len(),
                    },
                ));
            }
            for (j, cell) in record.cells.iter().enumerate() {
                values.push(
                    parse_number(cell)
                        .map_err(|problem| self.at(record.line, Some(j + 1), problem))?,
                );
            }
            self.rows += 1;
        }
        self.pending.drain(..split.consumed);
        self.line = split.next_line;
        Ok(self.rows - before)
    }

    /// The bad byte at `offset` of `pending`: lines so far, characters since the last newline.
    fn not_utf8(&self, offset: usize) -> CsvError {
        let valid = &self.pending[..offset];
        let line = self.line + valid.iter().filter(|&&b| b == b'\n').count();
        let last_line = valid.rsplit(|&b| b == b'\n').next().unwrap_or(valid);
        let column = String::from_utf8_lossy(last_line).chars().count() + 1;
        self.at(
            line,
            Some(column),
            CsvProblem::NotUtf8(self.pending[offset]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csv::parse_table;

    /// Feed `bytes` in chunks of `size` and collect the rows (or the first error).
    fn chunked(bytes: &[u8], size: usize) -> Result<(Vec<String>, Vec<f64>, usize), CsvError> {
        let mut reader = TableReader::new("t.csv");
        let mut values = Vec::new();
        let mut largest_buffer = 0;
        for chunk in bytes.chunks(size) {
            reader.push(chunk, &mut values)?;
            largest_buffer = largest_buffer.max(reader.buffered_bytes());
        }
        reader.finish(&mut values)?;
        Ok((
            reader.headers().unwrap_or_default().to_vec(),
            values,
            largest_buffer,
        ))
    }

    /// Every way of cutting a file gives the table `parse_table` gives for it whole: quotes,
    /// doubled quotes, CRLF, a byte-order mark, multi-byte characters and a missing final line
    /// end all cross chunk boundaries here.
    #[test]
    fn any_chunking_reads_the_same_table() {
        let text = "\u{feff}\"a, \"\"é\"\"\",b\r\n1,\"2.5\"\r\n\n-3,4e2\n5,6";
        let whole = parse_table(text.as_bytes(), "t.csv").unwrap();
        for size in 1..=text.len() {
            let (headers, values, _) = chunked(text.as_bytes(), size).unwrap();
            assert_eq!(headers, whole.headers(), "chunks of {size}");
            let rows = values.len() / 2;
            let data = nalgebra::DMatrix::from_row_slice(rows, 2, &values);
            assert_eq!(&data, whole.data(), "chunks of {size}");
        }
    }

    /// Errors name the same line and column whatever the chunking.
    #[test]
    fn errors_do_not_depend_on_the_chunking() {
        let cases: [&[u8]; 7] = [
            b"a,b\n1,2\n3,NaN\n",
            b"a,b\n1,2\n3\n",
            b"a,a\n1,2\n",
            b"a,b\n1,\"2\n",
            b"a,b\n1,2\n3,\xff\n",
            b"a,b\n",
            b"\n\n",
        ];
        for bytes in cases {
            let whole = parse_table(bytes, "t.csv").unwrap_err();
            for size in 1..=bytes.len() {
                let error = chunked(bytes, size).unwrap_err();
                assert_eq!(
                    error,
                    whole,
                    "{:?} in chunks of {size}",
                    String::from_utf8_lossy(bytes)
                );
            }
        }
        assert_eq!(
            parse_table(b"a,b\n1,2\n3,NaN\n", "t.csv")
                .unwrap_err()
                .to_string(),
            "t.csv:3:2: \"NaN\" is not a finite number"
        );
    }

    /// Memory is bounded by the chunk and one record, not by the file: 10 000 rows read 4 KiB at
    /// a time never hold more than a chunk and a line.
    #[test]
    fn only_an_unfinished_record_is_held_between_chunks() {
        let mut text = String::from("x,y,z\n");
        for i in 0..10_000 {
            text.push_str(&format!("{i},{},{}\n", i * 2, i % 7));
        }
        let (_, values, largest) = chunked(text.as_bytes(), 4096).unwrap();
        assert_eq!(values.len(), 30_000);
        assert!(largest < 4096 + 32, "held {largest} bytes");
    }

    /// Rows arrive as soon as their line ends, so a caller can stop after a cohort's worth.
    #[test]
    fn rows_arrive_as_their_lines_end() {
        let mut reader = TableReader::new("t.csv");
        let mut values = Vec::new();
        assert_eq!(reader.push(b"a,b\n1,2\n3,", &mut values).unwrap(), 1);
        assert_eq!(reader.headers().unwrap(), ["a", "b"]);
        assert_eq!(values, [1.0, 2.0]);
        assert_eq!(reader.push(b"4\n", &mut values).unwrap(), 1);
        assert_eq!(reader.finish(&mut values).unwrap(), 0);
        assert_eq!((values, reader.rows_read()), (vec![1.0, 2.0, 3.0, 4.0], 2));
    }
}
