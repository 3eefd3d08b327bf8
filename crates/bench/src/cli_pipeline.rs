//! `orthomask pipeline` measured as a user runs it (issue 9): the whole `orthomask` process —
//! fresh keys from the operating system, the default `p₂` and σ, the condition (3.7) margin on,
//! `release.csv` and `manifest.json` written — on a CSV file, timed from spawn to exit. The rows
//! of issue 9 run it with one cohort (`--cohort-size all`, the monolithic protocol) and with
//! `--cohort-size 250`. The peer is the numpy monolithic pipeline, also timed as a whole
//! `python` process (interpreter and numpy import included, as for anyone who runs a script),
//! with the `p₂` and σ that `orthomask pipeline` chooses for one cohort of the same `n`; it reads
//! the same numbers from a binary file (the benefit of the doubt: no CSV parsing) and skips
//! `tracemalloc`. Neither side's heap is measured here (`—` in the table).
//!
//! The release is checked by streaming: `XᵀX` of the input and of `release.csv` are accumulated
//! row by row ([`Gram`]), so the check holds a `p₁ × p₁` matrix, never the data.

use crate::workloads::{self, Measurement, Workload, x_max};
use anyhow::{Context, Result, bail};
use nalgebra::DMatrix;
use orthomask_survey::plan::{CohortBounds, DeclaredRange, Plan, PlanRequest};
use orthomask_survey::policy::DEFAULT_QA_CONSTANT;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The CSV file `orthomask pipeline` reads for `input` (named after the binary input).
pub fn csv_path(data: &Path, workload: &Workload) -> PathBuf {
    data.join(format!("{}.csv", workload.input_name()))
}

/// Write `input` as the CSV a survey export would be: a header `x0,…`, whole numbers.
///
/// # Errors
/// File errors.
pub fn write_csv(path: &Path, input: &DMatrix<f64>) -> Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let header: Vec<String> = (0..input.ncols()).map(|j| format!("x{j}")).collect();
    writeln!(out, "{}", header.join(","))?;
    for i in 0..input.nrows() {
        let row: Vec<String> = input.row(i).iter().map(|v| format!("{v}")).collect();
        writeln!(out, "{}", row.join(","))?;
    }
    out.flush()?;
    Ok(())
}

/// The `orthomask` binary beside this benchmark (`cargo build --release --bin orthomask`).
///
/// # Errors
/// When it has not been built.
pub fn orthomask_binary() -> Result<PathBuf> {
    let path = std::env::current_exe()?.with_file_name("orthomask");
    if !path.exists() {
        bail!(
            "{} is missing: cargo build --release --locked --bin orthomask (scripts/bench.sh does)",
            path.display()
        );
    }
    Ok(path)
}

/// Run `orthomask pipeline` `reps` times (`--cohort-size all` or the row's size); each run a
/// whole process.
///
/// # Errors
/// When the command fails or its release does not preserve `XᵀX`.
pub fn run_ours(workload: &Workload, data: &Path, reps: usize) -> Result<Measurement> {
    let Workload::Cli { cohort, .. } = workload else {
        bail!("not a command-line workload");
    };
    let binary = orthomask_binary()?;
    let out = data.join(format!("cli-out-{}", workload.to_args().join("_")));
    let mut times = Vec::new();
    let mut check = 0.0f64;
    for _ in 0..reps.max(1) {
        let _ = std::fs::remove_dir_all(&out);
        let mut command = Command::new(&binary);
        command
            .arg("pipeline")
            .arg("--input")
            .arg(csv_path(data, workload))
            .arg("--out-dir")
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
            .arg("--cohort-size")
            .arg(cohort.map_or_else(|| "all".to_string(), |m| m.to_string()));
        let start = Instant::now();
        let output = command.output().context("starting orthomask pipeline")?;
        times.push(start.elapsed().as_secs_f64());
        if !output.status.success() {
            bail!(
                "orthomask pipeline failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        check = check.max(gram_error(
            data,
            &workload.input_name(),
            &out.join("release.csv"),
        )?);
    }
    times.sort_by(f64::total_cmp);
    Ok(Measurement {
        seconds: times[times.len() / 2],
        heap_bytes: f64::NAN,
        rss_bytes: f64::NAN,
        check,
    })
}

/// The peer's arguments: its monolithic pipeline with the `p₂` and σ `orthomask pipeline
/// --cohort-size all` plans for `n` records (one cohort) — whatever `--cohort-size` the row uses,
/// since the issue compares the cohorts row with the monolithic peer. The plan is the
/// command's own request: every answer scaled by its observed range (the command does so when no
/// range is declared) and the QA column; the peer masks the unscaled answers with that `p₂` and
/// σ (scaling costs `O(n·p₁)`, nothing next to the masking, and σ's value does not change the
/// work).
///
/// # Errors
/// When the plan has no design for `n`.
pub fn peer_args(workload: &Workload) -> Result<Vec<String>> {
    let Workload::Cli { n, answers, .. } = workload else {
        bail!("not a command-line workload");
    };
    let input = workloads::survey(*n, *answers);
    let ranges = input
        .column_iter()
        .enumerate()
        .map(|(j, c)| DeclaredRange::observed(&format!("x{j}"), c.min(), c.max()))
        .collect();
    let plan = Plan::new(&PlanRequest {
        ranges: Some(ranges),
        ..PlanRequest::new(
            *answers,
            Some(DEFAULT_QA_CONSTANT),
            CohortBounds {
                smallest: *n,
                largest: *n,
            },
            x_max(*answers),
        )
    })?;
    Ok(vec![
        "pipeline".into(),
        format!("--n={n}"),
        format!("--answers={answers}"),
        format!("--p2={}", plan.p2),
        format!("--sigma={:e}", plan.sigma),
        "--no-trace".into(),
    ])
}

/// Rows summed into one block before the block joins the total: the rounding error of `XᵀX`
/// then grows with the block size plus the number of blocks instead of with `n`.
const GRAM_BLOCK: usize = 1024;

/// `XᵀX` accumulated one row at a time, in blocks of [`GRAM_BLOCK`] rows.
#[derive(Clone, Debug)]
pub struct Gram {
    dim: usize,
    rows: usize,
    block: Vec<f64>,
    total: Vec<f64>,
}

impl Gram {
    /// An empty sum for rows of `dim` values.
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            rows: 0,
            block: vec![0.0; dim * dim],
            total: vec![0.0; dim * dim],
        }
    }

    /// Add `row`'s outer product (its upper triangle).
    ///
    /// # Panics
    /// When `row` does not have `dim` values (callers check).
    pub fn add(&mut self, row: &[f64]) {
        assert_eq!(row.len(), self.dim, "a row of the wrong length");
        for (a, &xa) in row.iter().enumerate() {
            let line = &mut self.block[a * self.dim + a..(a + 1) * self.dim];
            for (g, &xb) in line.iter_mut().zip(&row[a..]) {
                *g += xa * xb;
            }
        }
        self.rows += 1;
        if self.rows.is_multiple_of(GRAM_BLOCK) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        for (t, b) in self.total.iter_mut().zip(self.block.iter_mut()) {
            *t += *b;
            *b = 0.0;
        }
    }

    /// Rows added.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The symmetric `dim × dim` sum.
    pub fn finish(mut self) -> DMatrix<f64> {
        self.flush();
        DMatrix::from_fn(self.dim, self.dim, |a, b| {
            self.total[a.min(b) * self.dim + a.max(b)]
        })
    }
}

/// `XᵀX` of input `name` in `dir` (the binary file [`workloads::write_matrix`] writes) with the
/// QA column appended, read row by row, and its row count.
///
/// # Errors
/// Missing, short or malformed files.
pub fn input_gram(dir: &Path, name: &str) -> Result<(usize, DMatrix<f64>)> {
    let (rows, cols) = workloads::read_shape(dir, name)?;
    let path = workloads::data_path(dir, name);
    let file = std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let length = file.metadata()?.len();
    if length != (rows * cols * 8) as u64 {
        bail!(
            "{}: expected {} bytes, found {length}",
            path.display(),
            rows * cols * 8
        );
    }
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut bytes = vec![0u8; cols * 8];
    let mut row = vec![0.0; cols + 1];
    row[cols] = DEFAULT_QA_CONSTANT;
    let mut gram = Gram::new(cols + 1);
    for _ in 0..rows {
        reader.read_exact(&mut bytes)?;
        for (v, b) in row.iter_mut().zip(bytes.chunks_exact(8)) {
            *v = f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        }
        gram.add(&row);
    }
    Ok((rows, gram.finish()))
}

/// `XᵀX` of a CSV file with a header line (a release), read line by line, and its row count.
///
/// # Errors
/// A missing or empty file, a row of the wrong width, a cell that is not a number.
pub fn csv_gram(path: &Path) -> Result<(usize, DMatrix<f64>)> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut lines = std::io::BufReader::with_capacity(1 << 20, file).lines();
    let header = lines.next().context("an empty release")??;
    let columns = header.split(',').count();
    let mut gram = Gram::new(columns);
    let mut row = Vec::with_capacity(columns);
    for (k, line) in lines.enumerate() {
        let line = line?;
        row.clear();
        for cell in line.split(',') {
            row.push(
                cell.trim()
                    .parse::<f64>()
                    .with_context(|| format!("release line {}: {cell:?}", k + 2))?,
            );
        }
        if row.len() != columns {
            bail!(
                "release line {} has {} cells, the header {columns}",
                k + 2,
                row.len()
            );
        }
        gram.add(&row);
    }
    Ok((gram.rows(), gram.finish()))
}

/// Relative error of the release's `XᵀX` against the raw data's (QA column included):
/// `max |ΔXᵀX| / max |XᵀX|`, both accumulated by streaming.
///
/// # Errors
/// Unreadable files, or a release of another shape than the input.
pub fn gram_error(dir: &Path, input_name: &str, release_csv: &Path) -> Result<f64> {
    let (rows, raw) = input_gram(dir, input_name)?;
    let (released_rows, released) = csv_gram(release_csv)?;
    if (released_rows, released.ncols()) != (rows, raw.ncols()) {
        bail!(
            "the release is {released_rows} × {}, the input with its QA column {rows} × {}",
            released.ncols(),
            raw.ncols()
        );
    }
    Ok((released - &raw).amax() / raw.amax())
}

#[cfg(test)]
mod tests {
    use super::*;
    use orthomask_core::tolerance::{GRAM_CHANGED, ROTATED_GRAM};

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "orthomask-bench-test-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn gram_by_hand_and_across_blocks() {
        let mut gram = Gram::new(2);
        gram.add(&[1.0, 2.0]);
        gram.add(&[3.0, -1.0]);
        assert_eq!(gram.rows(), 2);
        assert_eq!(
            gram.finish(),
            DMatrix::from_row_slice(2, 2, &[10.0, -1.0, -1.0, 5.0])
        );
        // More rows than a block: the same sum as nalgebra's.
        let x = DMatrix::from_fn(3 * GRAM_BLOCK + 7, 3, |i, j| {
            ((i * 7 + j * 3) % 11) as f64 - 5.0
        });
        let mut gram = Gram::new(3);
        for i in 0..x.nrows() {
            gram.add(&x.row(i).iter().copied().collect::<Vec<_>>());
        }
        assert_eq!(gram.finish(), x.tr_mul(&x));
    }

    /// The streaming check on a tiny input and release written here: a release that is the
    /// input with its QA column, rotated by an orthogonal matrix on the left, passes; one that
    /// changes a value, has a row too few or a bad cell does not.
    #[test]
    fn gram_error_streams_input_and_release() {
        let dir = scratch("gram");
        let input = DMatrix::from_row_slice(3, 2, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        workloads::write_matrix(&dir, "tiny", &input).unwrap();
        let raw = input.clone().insert_column(2, DEFAULT_QA_CONSTANT);
        // A rotation of the rows (orthogonal on the left keeps XᵀX).
        let (c, s) = (0.6, 0.8);
        let rotation = DMatrix::from_row_slice(3, 3, &[c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0]);
        let write = |name: &str, m: &DMatrix<f64>| {
            let path = dir.join(name);
            write_csv(&path, m).unwrap();
            path
        };
        let released = write("release.csv", &(&rotation * &raw));
        assert!(gram_error(&dir, "tiny", &released).unwrap() < ROTATED_GRAM);
        let mut changed = raw.clone();
        changed[(1, 0)] += 1.0;
        let changed = write("changed.csv", &changed);
        // Δ(XᵀX)[0][0] = 2·3 + 1 against max XᵀX = 3·888²: about 3e-6, far above rounding.
        assert!(gram_error(&dir, "tiny", &changed).unwrap() > GRAM_CHANGED);
        let short = write("short.csv", &raw.rows(0, 2).into_owned());
        assert!(gram_error(&dir, "tiny", &short).is_err());
        std::fs::write(dir.join("bad.csv"), "a,b,c\n1,2,x\n").unwrap();
        assert!(gram_error(&dir, "tiny", &dir.join("bad.csv")).is_err());
        std::fs::write(dir.join("ragged.csv"), "a,b,c\n1,2\n").unwrap();
        assert!(csv_gram(&dir.join("ragged.csv")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
