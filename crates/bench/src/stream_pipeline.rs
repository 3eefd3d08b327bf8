//! `orthomask pipeline` with its default flags at scale (issue 23 §4, the rows "6."): 10⁴, 10⁵
//! and 10⁶ records × 20 answers, the plan choosing the cohort size and the command streaming the
//! CSV cohort by cohort. Each side is one whole process timed from spawn to exit, with its exact
//! peak resident set ([`crate::measure`]).
//!
//! Orthomask runs as a user runs it: `orthomask pipeline --input X.csv --out-dir DIR`, nothing
//! else. The design it chose — `p₁`, `p₂`, σ and the cohort sizes — is read back from
//! `DIR/manifest.json`, and the peer (`peer.py stream`) runs the same cohort pipeline with that
//! design, streaming too: it reads its input cohort by cohort from the binary file of the same
//! numbers, masks each cohort densely, keeps the `n × p₁` unmasked rows and draws `A₁M` by orbit
//! sampling as orthomask's collector does. The release is checked by streaming its `XᵀX` against
//! the input's ([`crate::cli_pipeline::gram_error`]), so the benchmark itself never holds the data.

use crate::cli_pipeline::{self, csv_path, orthomask_binary};
use crate::measure;
use crate::workloads::{self, Measurement, SurveyRows, Workload};
use anyhow::{Context, Result, bail};
use orthomask_core::protocol::simulation::cohort_sizes;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `orthomask pipeline` writes for this workload (kept after the run: the peer reads the
/// manifest).
pub fn out_dir(data: &Path, workload: &Workload) -> PathBuf {
    data.join(format!("stream-out-{}", workload.input_name()))
}

/// Whether input `name` of `rows × cols` is complete in `data`: the shape file (written last)
/// says so, the binary file has every byte and the CSV file is there.
fn input_present(data: &Path, name: &str, csv: &Path, rows: usize, cols: usize) -> bool {
    let binary = std::fs::metadata(workloads::data_path(data, name)).map(|m| m.len());
    let text = std::fs::metadata(csv).map(|m| m.len());
    workloads::read_shape(data, name).ok() == Some((rows, cols))
        && binary.ok() == Some((rows * cols * 8) as u64)
        && text.is_ok_and(|len| len > 0)
}

/// Write the workload's input — the binary file the peer reads and the CSV file orthomask reads,
/// the same numbers ([`SurveyRows`]) — row by row, unless a complete copy is already there.
/// Both files are written under temporary names and renamed, and the shape file comes last, so a
/// run cut short is never taken for a complete input.
///
/// # Errors
/// File errors.
pub fn ensure_input(data: &Path, workload: &Workload) -> Result<()> {
    let (rows, cols) = workload.input_shape();
    let name = workload.input_name();
    let csv = csv_path(data, workload);
    if input_present(data, &name, &csv, rows, cols) {
        eprintln!("reusing {} ({rows} × {cols})", csv.display());
        return Ok(());
    }
    eprintln!("writing {} ({rows} × {cols})", csv.display());
    std::fs::create_dir_all(data).with_context(|| format!("creating {}", data.display()))?;
    let shape = workloads::shape_path(data, &name);
    let _ = std::fs::remove_file(&shape);
    let binary = workloads::data_path(data, &name);
    let temporary = |path: &Path| {
        let mut name = path.as_os_str().to_owned();
        name.push(".partial");
        PathBuf::from(name)
    };
    let create = |path: &Path| {
        std::fs::File::create(path)
            .map(|f| std::io::BufWriter::with_capacity(1 << 20, f))
            .with_context(|| format!("creating {}", path.display()))
    };
    let (binary_tmp, csv_tmp) = (temporary(&binary), temporary(&csv));
    let mut binary_out = create(&binary_tmp)?;
    let mut csv_out = create(&csv_tmp)?;
    let header: Vec<String> = (0..cols).map(|j| format!("x{j}")).collect();
    writeln!(csv_out, "{}", header.join(","))?;
    let mut generator = SurveyRows::new(cols);
    let mut row = Vec::with_capacity(cols);
    let mut line = String::new();
    for _ in 0..rows {
        generator.next_into(&mut row);
        line.clear();
        for (j, v) in row.iter().enumerate() {
            binary_out.write_all(&v.to_le_bytes())?;
            if j > 0 {
                line.push(',');
            }
            // Whole numbers, as `cli_pipeline::write_csv` prints them.
            let _ = write!(line, "{v}");
        }
        line.push('\n');
        csv_out.write_all(line.as_bytes())?;
    }
    binary_out.flush()?;
    csv_out.flush()?;
    drop((binary_out, csv_out));
    std::fs::rename(&binary_tmp, &binary)?;
    std::fs::rename(&csv_tmp, &csv)?;
    std::fs::write(&shape, format!("{rows} {cols}\n"))?;
    Ok(())
}

/// The design `orthomask pipeline` chose, as its manifest records it.
#[derive(Clone, Debug, PartialEq)]
pub struct Design {
    /// Data columns including the QA column.
    pub p1: usize,
    /// Noise columns.
    pub p2: usize,
    /// Noise standard deviation.
    pub sigma: f64,
    /// The cohort size the manifest names (`null` there: one cohort).
    pub cohort_size: Option<usize>,
    /// The cohorts' sizes, in order.
    pub sizes: Vec<usize>,
    /// Whether the devices scale each answer to `[−1, 1]` by its range before padding (σ is on
    /// that scale): `unmasking_error.scaled_by_declared_ranges`, false when absent.
    pub scaled: bool,
}

impl Design {
    /// Read the design from a manifest's text (fields `p1`, `p2`, `sigma`,
    /// `cohorts: {size, sizes}` and `unmasking_error.scaled_by_declared_ranges`), checked against
    /// the workload's `n` and answers.
    ///
    /// # Errors
    /// Malformed JSON, missing fields, or a design for other data.
    pub fn from_manifest(text: &str, n: usize, answers: usize) -> Result<Self> {
        let manifest: serde_json::Value =
            serde_json::from_str(text).context("the manifest is not JSON")?;
        let whole = |value: &serde_json::Value, what: &str| -> Result<usize> {
            value
                .as_u64()
                .and_then(|v| usize::try_from(v).ok())
                .with_context(|| format!("the manifest's {what} is not a whole number"))
        };
        let cohorts = &manifest["cohorts"];
        let design = Self {
            p1: whole(&manifest["p1"], "p1")?,
            p2: whole(&manifest["p2"], "p2")?,
            sigma: manifest["sigma"]
                .as_f64()
                .context("the manifest's sigma is not a number")?,
            cohort_size: match &cohorts["size"] {
                serde_json::Value::Null => None,
                size => Some(whole(size, "cohorts.size")?),
            },
            sizes: cohorts["sizes"]
                .as_array()
                .context("the manifest has no cohorts.sizes")?
                .iter()
                .map(|v| whole(v, "cohorts.sizes"))
                .collect::<Result<_>>()?,
            scaled: match &manifest["unmasking_error"]["scaled_by_declared_ranges"] {
                serde_json::Value::Null => false,
                flag => flag
                    .as_bool()
                    .context("the manifest's scaled_by_declared_ranges is not true or false")?,
            },
        };
        if design.p1 != answers + 1 {
            bail!(
                "the manifest's p1 = {} is not {answers} answers + the QA column",
                design.p1
            );
        }
        if design.sizes.contains(&0) || design.sizes.iter().sum::<usize>() != n {
            bail!(
                "the manifest's cohorts {:?} do not split n = {n}",
                design.sizes
            );
        }
        if !(design.sigma.is_finite() && design.sigma > 0.0) || design.p2 == 0 {
            bail!(
                "the manifest's design p2 = {}, sigma = {} is not a padded one",
                design.p2,
                design.sigma
            );
        }
        Ok(design)
    }

    /// Participants.
    pub fn n(&self) -> usize {
        self.sizes.iter().sum()
    }

    /// The largest cohort.
    pub fn largest(&self) -> usize {
        self.sizes.iter().copied().max().unwrap_or(0)
    }

    /// The peer's cohort option: `--cohort=m` when the sizes are orthomask's even split of `n`
    /// into cohorts of at most `m` (the peer recomputes it the same way), else the sizes listed.
    pub fn split_arg(&self) -> String {
        let m = self.largest();
        if cohort_sizes(self.n(), m).ok().as_ref() == Some(&self.sizes) {
            format!("--cohort={m}")
        } else {
            let sizes: Vec<String> = self.sizes.iter().map(usize::to_string).collect();
            format!("--cohorts={}", sizes.join(","))
        }
    }

    /// `cohorts of m = 500 (2 000 cohorts), p₂ = 1 234, σ = 5.6e3`.
    pub fn describe(&self) -> String {
        let cohorts = match self.sizes.len() {
            1 => "one cohort".to_string(),
            count => format!(
                "cohorts of m = {} ({} cohorts)",
                crate::grouped(self.largest()),
                crate::grouped(count)
            ),
        };
        format!(
            "{cohorts}, p₂ = {}, σ = {:.3e}{}",
            crate::grouped(self.p2),
            self.sigma,
            if self.scaled {
                " on answers scaled to [−1, 1]"
            } else {
                ""
            }
        )
    }
}

/// The design of the last `orthomask pipeline` run of this workload.
///
/// # Errors
/// When it has not run or its manifest does not fit the workload.
pub fn read_design(data: &Path, workload: &Workload) -> Result<Design> {
    let Workload::Stream { n, answers } = workload else {
        bail!("not a streaming workload");
    };
    let path = out_dir(data, workload).join("manifest.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    Design::from_manifest(&text, *n, *answers).with_context(|| format!("in {}", path.display()))
}

/// Run `orthomask pipeline --input X.csv --out-dir DIR` (default flags) once, as a whole
/// process, and check its release.
///
/// # Errors
/// When the command fails, its manifest does not fit, or its release does not preserve `XᵀX`.
pub fn run_ours(workload: &Workload, data: &Path) -> Result<Measurement> {
    let out = out_dir(data, workload);
    let _ = std::fs::remove_dir_all(&out);
    let mut command = Command::new(orthomask_binary()?);
    command
        .arg("pipeline")
        .arg("--input")
        .arg(csv_path(data, workload))
        .arg("--out-dir")
        .arg(&out);
    let exited = measure::run(&command, true)?;
    if !exited.success() {
        bail!(
            "orthomask pipeline failed (exit {}): {}",
            exited.code,
            exited.stderr.trim()
        );
    }
    let design = read_design(data, workload)?;
    eprintln!("  orthomask chose {}", design.describe());
    let check = cli_pipeline::gram_error(data, &workload.input_name(), &out.join("release.csv"))?;
    Ok(Measurement {
        seconds: exited.seconds,
        heap_bytes: f64::NAN,
        rss_bytes: exited.rss_bytes,
        check,
    })
}

/// The peer's arguments: `peer.py stream` with the design orthomask chose in its last run.
///
/// # Errors
/// When orthomask has not run this workload.
pub fn peer_args(workload: &Workload, data: &Path) -> Result<Vec<String>> {
    let Workload::Stream { n, answers } = workload else {
        bail!("not a streaming workload");
    };
    let design = read_design(data, workload)?;
    let mut args = vec![
        "stream".into(),
        format!("--n={n}"),
        format!("--answers={answers}"),
        format!("--p2={}", design.p2),
        format!("--sigma={:e}", design.sigma),
        design.split_arg(),
        "--no-trace".into(),
    ];
    if design.scaled {
        args.push("--scaled".into());
    }
    Ok(args)
}

/// Run the peer (`command`: python, the script and its arguments) as a whole process: its wall
/// time and peak RSS measured from outside, its check from its `RESULT` line.
///
/// # Errors
/// When it fails or prints no `RESULT` line.
pub fn run_peer(command: &Command) -> Result<Measurement> {
    let exited = measure::run(command, false)?;
    if !exited.success() {
        bail!(
            "the numpy child failed (exit {}): {}{}",
            exited.code,
            exited.stdout.trim(),
            exited.stderr.trim()
        );
    }
    let reported = Measurement::from_output(&exited.stdout).context("reading the numpy child")?;
    Ok(Measurement {
        seconds: exited.seconds,
        heap_bytes: f64::NAN,
        rss_bytes: exited.rss_bytes,
        check: reported.check,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(size: &str, sizes: &str) -> String {
        format!(
            r#"{{"orthomask_version": "0.1.0", "n": 10, "p1": 3, "p2": 40, "sigma": 1234.5,
                "columns": ["x0", "x1", "qa"], "cohorts": {{"size": {size}, "sizes": [{sizes}]}},
                "unmasking_error": {{"scaled_by_declared_ranges": true, "record_norm": 57.6}},
                "warnings": []}}"#
        )
    }

    #[test]
    fn the_design_is_read_from_the_manifest() {
        let design = Design::from_manifest(&manifest("4", "4,3,3"), 10, 2).unwrap();
        assert_eq!(
            design,
            Design {
                p1: 3,
                p2: 40,
                sigma: 1234.5,
                cohort_size: Some(4),
                sizes: vec![4, 3, 3],
                scaled: true,
            }
        );
        assert_eq!(design.split_arg(), "--cohort=4");
        assert_eq!(
            design.describe(),
            "cohorts of m = 4 (3 cohorts), p₂ = 40, σ = 1.234e3 on answers scaled to [−1, 1]"
        );
        // Older manifests without the field: unscaled.
        let old = manifest("4", "4,3,3").replace("\"unmasking_error\"", "\"other\"");
        assert!(!Design::from_manifest(&old, 10, 2).unwrap().scaled);
        let one = Design::from_manifest(&manifest("null", "10"), 10, 2).unwrap();
        assert_eq!(
            (one.cohort_size, one.split_arg()),
            (None, "--cohort=10".into())
        );
        assert!(one.describe().starts_with("one cohort, p₂ = 40"));
        // Sizes that are not the even split are passed as they are.
        let uneven = Design::from_manifest(&manifest("5", "5,2,3"), 10, 2).unwrap();
        assert_eq!(uneven.split_arg(), "--cohorts=5,2,3");
    }

    #[test]
    fn a_manifest_for_other_data_is_refused() {
        for (text, n, answers) in [
            (manifest("4", "4,3,3"), 11, 2),     // sizes do not add up to n
            (manifest("4", "4,3,3"), 10, 3),     // p1 is not answers + 1
            (manifest("4", "4,0,6"), 10, 2),     // an empty cohort
            (manifest("4", "4,3,\"3\""), 10, 2), // not a number
            (manifest("4", "4,3,3").replace("1234.5", "0"), 10, 2), // no noise
            (manifest("4", "4,3,3").replace("\"p2\"", "\"p_2\""), 10, 2),
            (manifest("4", "4,3,3").replace("true", "1"), 10, 2),
            ("not json".into(), 10, 2),
        ] {
            assert!(Design::from_manifest(&text, n, answers).is_err(), "{text}");
        }
    }

    /// The inputs are written once, row by row, the same numbers in both files, and reused.
    #[test]
    fn inputs_are_written_once_and_agree() {
        let dir =
            std::env::temp_dir().join(format!("orthomask-bench-stream-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let workload = Workload::Stream { n: 50, answers: 4 };
        ensure_input(&dir, &workload).unwrap();
        let name = workload.input_name();
        let binary = workloads::read_matrix(&dir, &name).unwrap();
        let csv = std::fs::read_to_string(csv_path(&dir, &workload)).unwrap();
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("x0,x1,x2,x3"));
        for (i, line) in lines.enumerate() {
            let values: Vec<f64> = line.split(',').map(|c| c.parse().unwrap()).collect();
            assert_eq!(values, binary.row(i).iter().copied().collect::<Vec<_>>());
            for (j, v) in values.iter().enumerate() {
                assert!(*v >= 0.0 && *v <= (5 * (j + 1)) as f64 && v.fract() == 0.0);
            }
        }
        assert_eq!(binary.nrows(), 50);
        // A complete input is reused (its time stamp does not change); a truncated one is not.
        let modified = || {
            std::fs::metadata(csv_path(&dir, &workload))
                .unwrap()
                .modified()
                .unwrap()
        };
        let before = modified();
        ensure_input(&dir, &workload).unwrap();
        assert_eq!(modified(), before);
        let path = workloads::data_path(&dir, &name);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 8]).unwrap();
        ensure_input(&dir, &workload).unwrap();
        assert_eq!(workloads::read_matrix(&dir, &name).unwrap(), binary);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
