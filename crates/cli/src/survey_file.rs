//! A survey's raw answers read from a CSV file in bounded memory (issue 23 §2): once to learn
//! its shape and what the plan needs to know of each column (range, whether binary, whether
//! constant), and once more cohort by cohort while the cohorts are masked. Neither pass holds
//! more than a chunk of the file and one cohort's rows; only methods without cohorts load the
//! answers whole ([`SurveyFile::load`]).

use anyhow::{Context, Result, bail};
use nalgebra::DMatrix;
use orthomask_formats::csv::TableReader;
use orthomask_survey::manifest::BinaryColumn;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bytes read from the file at a time.
const CHUNK_BYTES: usize = 1 << 20;

/// What the first pass learned of one column.
#[derive(Clone, Debug)]
pub struct ColumnSummary {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Only 0s and 1s, both present.
    pub binary: BinaryColumn,
    /// The first value and, when another follows, the first other value with its 0-based row.
    pub first: f64,
    /// The first row whose value differs from `first`, and that value.
    pub first_change: Option<(usize, f64)>,
}

impl ColumnSummary {
    fn new(first: f64) -> Self {
        Self {
            min: first,
            max: first,
            binary: BinaryColumn::default(),
            first,
            first_change: None,
        }
    }

    fn observe(&mut self, row: usize, value: f64) {
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.binary.observe(value);
        if self.first_change.is_none() && value != self.first {
            self.first_change = Some((row, value));
        }
    }

    /// The largest absolute value.
    pub fn abs_max(&self) -> f64 {
        self.min.abs().max(self.max.abs())
    }
}

/// A CSV file of raw answers after its first pass.
#[derive(Clone, Debug)]
pub struct SurveyFile {
    path: PathBuf,
    headers: Vec<String>,
    rows: usize,
    columns: Vec<ColumnSummary>,
}

impl SurveyFile {
    /// Read the file once, in chunks: its header, its row count and each column's summary.
    ///
    /// # Errors
    /// The file cannot be read, or the first malformed cell with its file, line and column.
    pub fn scan(path: &Path) -> Result<Self> {
        let mut columns: Vec<ColumnSummary> = Vec::new();
        let mut rows = 0;
        let mut source = ChunkedFile::open(path, CHUNK_BYTES)?;
        let mut values = Vec::new();
        while !source.ended() {
            source.read_more(&mut values)?;
            let width = source.reader.headers().map_or(0, <[String]>::len);
            for row in values.chunks_exact(width.max(1)) {
                if columns.is_empty() {
                    columns = row.iter().map(|&v| ColumnSummary::new(v)).collect();
                }
                for (summary, &v) in columns.iter_mut().zip(row) {
                    summary.observe(rows, v);
                }
                rows += 1;
            }
            values.clear();
        }
        let headers = source.reader.headers().unwrap_or_default().to_vec();
        Ok(Self {
            path: path.to_owned(),
            headers,
            rows,
            columns,
        })
    }

    /// The column names.
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    /// Data rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The summary of column `j`.
    pub fn column(&self, j: usize) -> &ColumnSummary {
        &self.columns[j]
    }

    /// The file, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The columns `selected` of every row, in memory (`rows × selected`).
    ///
    /// # Errors
    /// The file cannot be read again or changed since the first pass.
    pub fn load(&self, selected: &[usize]) -> Result<DMatrix<f64>> {
        let mut blocks = self.blocks(selected, vec![self.rows])?;
        blocks
            .next()
            .context("the file has no rows")?
            .with_context(|| format!("reading {}", self.path.display()))
    }

    /// The columns `selected`, `sizes[k]` rows at a time, read from the file as they are asked
    /// for (the second pass).
    ///
    /// # Errors
    /// When the sizes do not add up to the file's rows or the file cannot be opened.
    pub fn blocks(&self, selected: &[usize], sizes: Vec<usize>) -> Result<Blocks> {
        self.blocks_read_by(selected, sizes, CHUNK_BYTES)
    }

    /// [`blocks`](Self::blocks) reading `chunk` bytes at a time.
    fn blocks_read_by(
        &self,
        selected: &[usize],
        sizes: Vec<usize>,
        chunk: usize,
    ) -> Result<Blocks> {
        if sizes.iter().sum::<usize>() != self.rows {
            bail!(
                "{}: cohorts of {} rows in all, but the file has {}",
                self.path.display(),
                sizes.iter().sum::<usize>(),
                self.rows
            );
        }
        Ok(Blocks {
            source: ChunkedFile::open(&self.path, chunk)?,
            width: self.headers.len(),
            selected: selected.to_vec(),
            pending: Vec::new(),
            sizes: sizes.into_iter(),
            expected_rows: self.rows,
        })
    }
}

/// A CSV file fed to a [`TableReader`] a chunk at a time: what both passes read through.
struct ChunkedFile {
    file: std::fs::File,
    reader: TableReader,
    buffer: Vec<u8>,
    ended: bool,
}

impl ChunkedFile {
    fn open(path: &Path, chunk: usize) -> Result<Self> {
        Ok(Self {
            file: std::fs::File::open(path)
                .with_context(|| format!("cannot read {}", path.display()))?,
            reader: TableReader::new(&path.display().to_string()),
            buffer: vec![0u8; chunk],
            ended: false,
        })
    }

    /// Whether the whole file has been read.
    fn ended(&self) -> bool {
        self.ended
    }

    /// Read one more chunk, appending the rows it completes to `values` (at the end of the
    /// file, the last row and the end-of-file checks).
    fn read_more(&mut self, values: &mut Vec<f64>) -> Result<()> {
        let read = self
            .file
            .read(&mut self.buffer)
            .with_context(|| format!("cannot read {}", self.reader.source_name()))?;
        if read == 0 {
            self.reader.finish(values)?;
            self.ended = true;
        } else {
            self.reader.push(&self.buffer[..read], values)?;
        }
        Ok(())
    }
}

/// The second pass: blocks of rows, each read from the file when asked for.
pub struct Blocks {
    source: ChunkedFile,
    width: usize,
    selected: Vec<usize>,
    /// Values read but not yet handed out (whole rows).
    pending: Vec<f64>,
    sizes: std::vec::IntoIter<usize>,
    expected_rows: usize,
}

impl Blocks {
    /// Read until `rows` rows are pending (or the file ends).
    fn fill(&mut self, rows: usize) -> Result<()> {
        while self.pending.len() < rows * self.width && !self.source.ended() {
            self.source.read_more(&mut self.pending)?;
        }
        Ok(())
    }

    /// The next block of `rows` rows.
    fn block(&mut self, rows: usize) -> Result<DMatrix<f64>> {
        self.fill(rows)?;
        let have = self.pending.len() / self.width.max(1);
        if have < rows {
            bail!(
                "{}: the file changed while it was read (it had {} rows)",
                self.source.reader.source_name(),
                self.expected_rows
            );
        }
        let selected = &self.selected;
        let width = self.width;
        let block = DMatrix::from_fn(rows, selected.len(), |i, j| {
            self.pending[i * width + selected[j]]
        });
        self.pending.drain(..rows * width);
        Ok(block)
    }
}

impl Iterator for Blocks {
    type Item = Result<DMatrix<f64>>;

    fn next(&mut self) -> Option<Self::Item> {
        let rows = self.sizes.next()?;
        Some(self.block(rows))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.sizes.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text.as_bytes()).unwrap();
        f
    }

    /// By hand: three rows, a binary column, a constant column and a column that changes in row 1.
    #[test]
    fn the_first_pass_summarises_each_column() {
        let f = file("a,b,c\n0,5,2\n1,5,-3\n1,5,2\n");
        let survey = SurveyFile::scan(f.path()).unwrap();
        assert_eq!(
            (survey.headers(), survey.rows()),
            (&["a", "b", "c"].map(String::from)[..], 3)
        );
        let (a, b, c) = (survey.column(0), survey.column(1), survey.column(2));
        assert!(a.binary.is_binary() && !b.binary.is_binary());
        assert_eq!((b.first_change, c.first_change), (None, Some((1, -3.0))));
        assert_eq!((c.min, c.max, c.abs_max()), (-3.0, 2.0, 3.0));
    }

    /// The second pass hands out exactly the asked blocks of the selected columns, in order, and
    /// holds one chunk of the file and a block, not the file: 2 MB read 4 KiB at a time.
    #[test]
    fn blocks_are_the_file_cut_into_cohorts() {
        let mut text = String::from("x,QA,y\n");
        for i in 0..150_000 {
            text.push_str(&format!("{i},888,{}\n", i % 13));
        }
        let f = file(&text);
        let survey = SurveyFile::scan(f.path()).unwrap();
        let sizes = vec![1000; 150];
        let mut blocks = survey.blocks_read_by(&[0, 2], sizes, 4096).unwrap();
        assert_eq!(blocks.size_hint(), (150, Some(150)));
        for k in 0..150 {
            let block = blocks.next().unwrap().unwrap();
            assert_eq!(block.shape(), (1000, 2));
            assert_eq!(block[(0, 0)], (k * 1000) as f64);
            assert_eq!(block[(999, 1)], ((k * 1000 + 999) % 13) as f64);
            // Less than a block and a chunk's rows wait (a row is at least 8 bytes of text).
            assert!(
                blocks.pending.len() <= 3 * (1000 + 4096 / 8),
                "{}",
                blocks.pending.len()
            );
        }
        assert!(blocks.next().is_none());
        assert!(survey.blocks(&[0], vec![10]).is_err());
        assert_eq!(survey.load(&[1]).unwrap().shape(), (150_000, 1));
    }

    #[test]
    fn malformed_cells_are_named_in_either_pass() {
        let f = file("a,b\n1,2\n3,x\n");
        let error = SurveyFile::scan(f.path()).unwrap_err().to_string();
        assert!(
            error.ends_with(":3:2: expected a number, found \"x\""),
            "{error}"
        );
    }
}
