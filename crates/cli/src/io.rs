//! File input and output for the commands: the only place the tool touches the file system.

use anyhow::{Context, Result};
use orthomask_formats::csv::{Precision, Table, header_line, parse_table, row_line};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Read a file's bytes.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Read and parse a CSV table; errors name the file, line and column.
pub fn read_table(path: &Path) -> Result<Table> {
    Ok(parse_table(
        &read_bytes(path)?,
        &path.display().to_string(),
    )?)
}

/// Read a text file.
pub fn read_text(path: &Path) -> Result<String> {
    String::from_utf8(read_bytes(path)?)
        .with_context(|| format!("{} is not UTF-8 text", path.display()))
}

/// Whether something exists at `path` (a file not to overwrite without asking).
pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// Write a file, creating its directory; written to a temporary name first and renamed, so a
/// reader never sees half a file.
pub fn write_file(path: &Path, contents: &str) -> Result<()> {
    let mut file = Staged::create(path)?;
    file.write(contents)?;
    file.commit()
}

/// Write bytes to a file, as [`write_file`] writes text.
pub fn write_file_bytes(path: &Path, contents: &[u8]) -> Result<()> {
    let mut file = Staged::create(path)?;
    file.out
        .write_all(contents)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.commit()
}

/// Write a numeric table as CSV.
pub fn write_csv(
    path: &Path,
    headers: &[String],
    data: &nalgebra::DMatrix<f64>,
    precision: Precision,
) -> Result<()> {
    let mut file = CsvFile::create(path, headers)?;
    file.write_rows(data, precision)?;
    file.commit()
}

/// A file written under a temporary name in its own directory and put in place by
/// [`commit`](Self::commit): a reader never sees half a file, and a file dropped without a
/// commit (an error, Ctrl-C) leaves nothing behind.
pub struct Staged {
    path: PathBuf,
    out: BufWriter<tempfile::NamedTempFile>,
}

impl Staged {
    /// Start writing `path`, creating its directory.
    ///
    /// # Errors
    /// The directory cannot be created or written.
    pub fn create(path: &Path) -> Result<Self> {
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create directory {}", dir.display()))?;
                dir
            }
            None => Path::new("."),
        };
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let temporary = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".partial")
            .tempfile_in(dir)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(Self {
            path: path.to_owned(),
            out: BufWriter::new(temporary),
        })
    }

    /// Append text.
    ///
    /// # Errors
    /// A failed write (a full disk, …).
    pub fn write(&mut self, text: &str) -> Result<()> {
        self.out
            .write_all(text.as_bytes())
            .with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// Put the file in place under its name.
    ///
    /// # Errors
    /// A failed flush or rename.
    pub fn commit(self) -> Result<()> {
        let path = self.path;
        let temporary = self
            .out
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {}", path.display()))?;
        temporary
            .persist(&path)
            .map_err(|e| e.error)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(())
    }
}

/// A CSV table written row by row (so no table need be held as text) into a [`Staged`] file.
pub struct CsvFile {
    file: Staged,
}

impl CsvFile {
    /// Start the table at `path` with its header row.
    ///
    /// # Errors
    /// As [`Staged::create`].
    pub fn create(path: &Path, headers: &[String]) -> Result<Self> {
        let mut file = Staged::create(path)?;
        file.write(&header_line(headers))?;
        Ok(Self { file })
    }

    /// Append the rows of `data`.
    ///
    /// # Errors
    /// A failed write.
    pub fn write_rows(
        &mut self,
        data: &nalgebra::DMatrix<f64>,
        precision: Precision,
    ) -> Result<()> {
        for row in data.row_iter() {
            self.file.write(&row_line(row.iter().copied(), precision))?;
        }
        Ok(())
    }

    /// Put the table in place.
    ///
    /// # Errors
    /// As [`Staged::commit`].
    pub fn commit(self) -> Result<()> {
        self.file.commit()
    }
}

/// Names `m1 … mp` for masked coordinates that are not variables any more.
pub fn masked_names(prefix: &str, count: usize) -> Vec<String> {
    (1..=count).map(|i| format!("{prefix}{i}")).collect()
}

/// Print a JSON value on standard output.
pub fn print_json(value: &serde_json::Value) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Print a warning on standard error.
pub fn warn(message: &str) {
    eprintln!("warning: {message}");
}
