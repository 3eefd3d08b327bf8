//! `orthomask pipeline` measured as a user runs it (issue 9): the whole `orthomask` process with
//! its default flags — fresh keys from the operating system, the default `p₂` and σ, the
//! condition (3.7) margin on, `release.csv` and `manifest.json` written — on a CSV file, timed
//! from spawn to exit. The peer is the numpy monolithic pipeline, also timed as a whole
//! `python` process (interpreter and numpy import included, as for anyone who runs a script),
//! with the `p₂` and σ that `orthomask pipeline` chooses for the same `n`; it reads the same
//! numbers from a binary file (the benefit of the doubt: no CSV parsing) and skips
//! `tracemalloc`. Neither side's heap is measured here (`—` in the table).

use crate::workloads::{Measurement, Workload, x_max};
use anyhow::{Context, Result, bail};
use nalgebra::DMatrix;
use orthomask_survey::plan::{default_noise_columns, default_sigma};
use orthomask_survey::policy::DEFAULT_QA_CONSTANT;
use std::io::Write;
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

/// Run `orthomask pipeline` with its default flags `reps` times; each run a whole process.
///
/// # Errors
/// When the command fails or its release does not preserve `XᵀX`.
pub fn run_ours(
    workload: &Workload,
    input: &DMatrix<f64>,
    data: &Path,
    reps: usize,
) -> Result<Measurement> {
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
        if let Some(m) = cohort {
            command.arg("--cohort-size").arg(m.to_string());
        }
        let start = Instant::now();
        let output = command.output().context("starting orthomask pipeline")?;
        times.push(start.elapsed().as_secs_f64());
        if !output.status.success() {
            bail!(
                "orthomask pipeline failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        check = check.max(gram_error(input, &out.join("release.csv"))?);
    }
    times.sort_by(f64::total_cmp);
    Ok(Measurement {
        seconds: times[times.len() / 2],
        heap_bytes: f64::NAN,
        rss_bytes: f64::NAN,
        check,
    })
}

/// The peer's arguments: its monolithic pipeline with the `p₂` and σ `orthomask pipeline`
/// chooses for `n` records (one cohort) — whatever `--cohort-size` the row uses, since the
/// issue compares the cohorts row with the monolithic peer.
///
/// # Errors
/// When the plan has no design for `n`.
pub fn peer_args(workload: &Workload) -> Result<Vec<String>> {
    let Workload::Cli { n, answers, .. } = workload else {
        bail!("not a command-line workload");
    };
    let p2 = default_noise_columns(*n)?;
    let sigma = default_sigma(*n, answers + 1, p2, x_max(*answers))?;
    Ok(vec![
        "pipeline".into(),
        format!("--n={n}"),
        format!("--answers={answers}"),
        format!("--p2={p2}"),
        format!("--sigma={sigma:e}"),
        "--no-trace".into(),
    ])
}

/// Relative error of the release's `XᵀX` against the raw data's (QA column included).
fn gram_error(input: &DMatrix<f64>, release_csv: &Path) -> Result<f64> {
    let text = std::fs::read_to_string(release_csv)
        .with_context(|| format!("reading {}", release_csv.display()))?;
    let mut lines = text.lines();
    let columns = lines.next().context("an empty release")?.split(',').count();
    let mut values = Vec::new();
    let mut rows = 0;
    for (k, line) in lines.enumerate() {
        for cell in line.split(',') {
            values.push(
                cell.trim()
                    .parse::<f64>()
                    .with_context(|| format!("release line {}: {cell:?}", k + 2))?,
            );
        }
        rows += 1;
    }
    let released = DMatrix::from_row_slice(rows, columns, &values);
    let raw = input
        .clone()
        .insert_column(input.ncols(), DEFAULT_QA_CONSTANT);
    if released.shape() != raw.shape() {
        bail!(
            "the release is {:?}, the input {:?}",
            released.shape(),
            raw.shape()
        );
    }
    let gram = raw.tr_mul(&raw);
    Ok((released.tr_mul(&released) - &gram).amax() / gram.amax())
}
