//! File input and output for the commands: the only place the tool touches the file system.

use anyhow::{Context, Result};
use orthomask_formats::csv::{Precision, Table, parse_table, write_table};
use std::path::Path;

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
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))?;
    }
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, contents).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Write a numeric table as CSV.
pub fn write_csv(
    path: &Path,
    headers: &[String],
    data: &nalgebra::DMatrix<f64>,
    precision: Precision,
) -> Result<()> {
    write_file(path, &write_table(headers, data, precision))
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
