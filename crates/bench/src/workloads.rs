//! The benchmark's workloads, their shared inputs, and the Rust side of each.
//!
//! Inputs are written once by the parent process to a data directory as raw little-endian `f64`
//! (row-major, a `rows cols` text header file beside each), and read by both the Rust child and
//! the numpy child, so the two sides mask literally the same numbers.

use crate::alloc;
use anyhow::{Context, Result, bail};
use nalgebra::DMatrix;
use orthomask_core::key::{Key, MaskRng, StreamId};
use orthomask_core::protocol::simulation::{PartyKeys, Safety, run_tm2_streaming};
use orthomask_core::protocol::tm2::{Participant, Tm2Design, right_mask_from_device_key};
use orthomask_core::protocol::{QaReport, Strictness};
use orthomask_core::random::UnitUniform;
use orthomask_survey::plan::{CohortBounds, Plan, PlanRequest};
use orthomask_survey::policy::{APPENDIX_C_DELTA, DEFAULT_QA_CONSTANT};
use std::path::{Path, PathBuf};

/// One thing to measure.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// A participant's device masks one record: build `B` from the device key, pad, multiply.
    Record {
        /// Columns of the right mask `p = p₁ + p₂`.
        p: usize,
        /// Answer columns (`p₁ = answers + 1` with the QA column).
        answers: usize,
    },
    /// The whole modified TM²: devices, provider, collector, release.
    Pipeline {
        /// Participants.
        n: usize,
        /// Answer columns (`p₁ = answers + 1`).
        answers: usize,
        /// Noise columns.
        p2: usize,
        /// Participants per cohort (`None`: one cohort, the papers' protocol).
        cohort: Option<usize>,
        /// Noise standard deviation.
        sigma: f64,
        /// Run an unsafe design with warnings (the monolithic `p₂ = n` case).
        teaching: bool,
    },
    /// `orthomask pipeline` as a user runs it: the whole process on a CSV file
    /// ([`crate::cli_pipeline`]), with one cohort or cohorts of a given size.
    Cli {
        /// Participants.
        n: usize,
        /// Answer columns.
        answers: usize,
        /// `--cohort-size` (`None`: `--cohort-size all`, one cohort).
        cohort: Option<usize>,
    },
    /// `orthomask pipeline` with its default flags — the plan chooses the cohort size and the
    /// command streams the CSV cohort by cohort — as a whole process, against the numpy peer's
    /// streaming cohort pipeline with the design it chose ([`crate::stream_pipeline`]).
    Stream {
        /// Participants.
        n: usize,
        /// Answer columns.
        answers: usize,
    },
}

impl Workload {
    /// File stem of the input this workload reads.
    pub fn input_name(&self) -> String {
        match self {
            Self::Record { answers, .. } => format!("record-{answers}"),
            Self::Pipeline { n, answers, .. } | Self::Cli { n, answers, .. } => {
                format!("survey-{n}x{answers}")
            }
            // Written row by row ([`SurveyRows`]): other numbers than `survey`'s.
            Self::Stream { n, answers } => format!("stream-{n}x{answers}"),
        }
    }

    /// Input shape `(rows, cols)`.
    pub fn input_shape(&self) -> (usize, usize) {
        match self {
            Self::Record { answers, .. } => (1, *answers),
            Self::Pipeline { n, answers, .. }
            | Self::Cli { n, answers, .. }
            | Self::Stream { n, answers } => (*n, *answers),
        }
    }

    /// Command-line arguments that describe the workload to a child process (Rust or Python).
    pub fn to_args(&self) -> Vec<String> {
        match self {
            Self::Record { p, answers } => vec![
                "record".into(),
                format!("--p={p}"),
                format!("--answers={answers}"),
            ],
            Self::Pipeline {
                n,
                answers,
                p2,
                cohort,
                sigma,
                teaching,
            } => {
                let mut args = vec![
                    "pipeline".into(),
                    format!("--n={n}"),
                    format!("--answers={answers}"),
                    format!("--p2={p2}"),
                    format!("--sigma={sigma:e}"),
                ];
                if let Some(m) = cohort {
                    args.push(format!("--cohort={m}"));
                }
                if *teaching {
                    args.push("--teaching".into());
                }
                args
            }
            Self::Cli { n, answers, cohort } => {
                let mut args = vec![
                    "cli".into(),
                    format!("--n={n}"),
                    format!("--answers={answers}"),
                ];
                if let Some(m) = cohort {
                    args.push(format!("--cohort={m}"));
                }
                args
            }
            Self::Stream { n, answers } => vec![
                "stream".into(),
                format!("--n={n}"),
                format!("--answers={answers}"),
            ],
        }
    }

    /// Parse what [`to_args`](Self::to_args) wrote.
    ///
    /// # Errors
    /// Unknown kinds, missing or malformed options.
    pub fn from_args(args: &[String]) -> Result<Self> {
        let (kind, options) = args.split_first().context("missing workload kind")?;
        let get = |name: &str| -> Option<&str> {
            options
                .iter()
                .find_map(|a| a.strip_prefix(&format!("--{name}=")))
        };
        let number = |name: &str| -> Result<usize> {
            get(name)
                .with_context(|| format!("missing --{name}"))?
                .parse()
                .with_context(|| format!("--{name} must be a whole number"))
        };
        match kind.as_str() {
            "record" => Ok(Self::Record {
                p: number("p")?,
                answers: number("answers")?,
            }),
            "pipeline" => Ok(Self::Pipeline {
                n: number("n")?,
                answers: number("answers")?,
                p2: number("p2")?,
                cohort: get("cohort").map(str::parse).transpose()?,
                sigma: get("sigma").context("missing --sigma")?.parse()?,
                teaching: options.iter().any(|a| a == "--teaching"),
            }),
            "cli" => Ok(Self::Cli {
                n: number("n")?,
                answers: number("answers")?,
                cohort: get("cohort").map(str::parse).transpose()?,
            }),
            "stream" => Ok(Self::Stream {
                n: number("n")?,
                answers: number("answers")?,
            }),
            other => bail!("unknown workload {other:?}"),
        }
    }
}

/// Survey-like answers: column `j` holds whole numbers in `[0, 5(j + 1)]` (Likert scales, counts,
/// ages…), drawn from a fixed teaching key so every run uses the same data.
pub fn survey(rows: usize, cols: usize) -> DMatrix<f64> {
    let mut rng = Key::teaching(2026).stream(StreamId::Scratch(0)).rng();
    DMatrix::from_fn(rows, cols, |_, j| {
        (rng.next_unit() * (5 * (j + 1) + 1) as f64).floor()
    })
}

/// Survey-like answers with the law of [`survey`]'s, drawn one row at a time (row-major, from a
/// stream of their own, so other numbers than `survey`'s): inputs of 10⁶ rows are written
/// without ever being held.
pub struct SurveyRows {
    rng: MaskRng,
    cols: usize,
}

impl SurveyRows {
    /// Rows of `cols` answers, the same rows on every run.
    pub fn new(cols: usize) -> Self {
        Self {
            rng: Key::teaching(2026).stream(StreamId::Scratch(1)).rng(),
            cols,
        }
    }

    /// The next row, written into `row` (resized to `cols`).
    pub fn next_into(&mut self, row: &mut Vec<f64>) {
        row.clear();
        row.extend(
            (0..self.cols).map(|j| (self.rng.next_unit() * (5 * (j + 1) + 1) as f64).floor()),
        );
    }
}

/// Largest absolute answer of a survey with `cols` columns, QA constant included.
pub fn x_max(cols: usize) -> f64 {
    (5.0 * cols as f64).max(DEFAULT_QA_CONSTANT)
}

/// The plan of a pipeline row: what the application layer's plan (`orthomask_survey::plan`, the
/// one `orthomask pipeline` and the services call) gives cohorts of at most `m` records of
/// `answers` answers in their own units (bounded by [`x_max`]) with the QA column, with the noise
/// columns and σ the row fixes, if it fixes them. Rows take their `p₂`, σ and design from here,
/// never from a formula of their own.
///
/// # Errors
/// When the plan refuses the parameters.
pub fn plan_for(
    m: usize,
    answers: usize,
    noise_columns: Option<usize>,
    sigma: Option<f64>,
) -> Result<Plan> {
    Ok(Plan::new(&PlanRequest {
        noise_columns,
        sigma,
        ..PlanRequest::new(
            answers,
            Some(DEFAULT_QA_CONSTANT),
            CohortBounds {
                smallest: m,
                largest: m,
            },
            x_max(answers),
        )
    })?)
}

/// The binary file of input `name`.
pub fn data_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.f64"))
}

/// The shape file of input `name`.
pub fn shape_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.shape"))
}

/// The `rows cols` of input `name`.
///
/// # Errors
/// A missing or malformed shape file.
pub fn read_shape(dir: &Path, name: &str) -> Result<(usize, usize)> {
    let shape = std::fs::read_to_string(shape_path(dir, name))
        .with_context(|| format!("reading the shape of {name}"))?;
    let dims: Vec<usize> = shape
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .with_context(|| format!("{name}.shape must hold two whole numbers"))?;
    let [rows, cols] = dims[..] else {
        bail!("{name}.shape must hold two numbers");
    };
    Ok((rows, cols))
}

/// Write `m` row-major as little-endian `f64`, with `name.shape` holding `rows cols`.
///
/// # Errors
/// File-system errors.
pub fn write_matrix(dir: &Path, name: &str, m: &DMatrix<f64>) -> Result<()> {
    let mut bytes = Vec::with_capacity(m.len() * 8);
    for i in 0..m.nrows() {
        for v in m.row(i).iter() {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(data_path(dir, name), bytes)
        .with_context(|| format!("writing {}", data_path(dir, name).display()))?;
    std::fs::write(
        shape_path(dir, name),
        format!("{} {}\n", m.nrows(), m.ncols()),
    )?;
    Ok(())
}

/// Read what [`write_matrix`] wrote.
///
/// # Errors
/// Missing or malformed files.
pub fn read_matrix(dir: &Path, name: &str) -> Result<DMatrix<f64>> {
    let (rows, cols) = read_shape(dir, name)?;
    let bytes = std::fs::read(data_path(dir, name))?;
    if bytes.len() != rows * cols * 8 {
        bail!(
            "{name}: expected {} bytes, found {}",
            rows * cols * 8,
            bytes.len()
        );
    }
    let values: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    Ok(DMatrix::from_row_slice(rows, cols, &values))
}

/// What one side measured for one workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Median wall time over the repetitions, seconds.
    pub seconds: f64,
    /// Most heap held at once beyond the input (counting allocator / tracemalloc), bytes.
    pub heap_bytes: f64,
    /// Peak resident set of the child process, bytes.
    pub rss_bytes: f64,
    /// Correctness check: relative error of `‖xB‖` (record) or of `XᵀX` (pipeline).
    pub check: f64,
}

impl Measurement {
    /// The better of two rounds: the faster time, the larger memory figures and check (memory
    /// does not suffer from other processes, so the larger figure is the conservative one).
    pub fn best_of(&self, other: &Self) -> Self {
        Self {
            seconds: self.seconds.min(other.seconds),
            heap_bytes: self.heap_bytes.max(other.heap_bytes),
            rss_bytes: self.rss_bytes.max(other.rss_bytes),
            check: self.check.max(other.check),
        }
    }

    /// The one line a child prints.
    pub fn to_line(&self) -> String {
        format!(
            "RESULT seconds={:e} heap_bytes={:e} rss_bytes={:e} check={:e}",
            self.seconds, self.heap_bytes, self.rss_bytes, self.check
        )
    }

    /// Parse the `RESULT` line of a child's output.
    ///
    /// # Errors
    /// When no well-formed `RESULT` line is present.
    pub fn from_output(output: &str) -> Result<Self> {
        let line = output
            .lines()
            .rev()
            .find(|l| l.starts_with("RESULT "))
            .context("the child printed no RESULT line")?;
        let field = |name: &str| -> Result<f64> {
            line.split_whitespace()
                .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
                .with_context(|| format!("RESULT line lacks {name}"))?
                .parse()
                .with_context(|| format!("RESULT {name} is not a number"))
        };
        Ok(Self {
            seconds: field("seconds")?,
            heap_bytes: field("heap_bytes")?,
            rss_bytes: field("rss_bytes")?,
            check: field("check")?,
        })
    }
}

/// Peak resident set of this process (`VmHWM` of `/proc/self/status`), bytes; 0 where unknown.
pub fn peak_rss_bytes() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb * 1024.0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Fixed, non-teaching keys for the parties (the benchmark must not look like a classroom run).
fn party_keys() -> PartyKeys {
    PartyKeys {
        collector: Key::from_bytes([0x11; 32]),
        provider: Key::from_bytes([0x22; 32]),
        participants: Key::from_bytes([0x33; 32]),
    }
}

/// Run `workload` `reps` times on the input in `dir` (the Rust child).
///
/// # Errors
/// Input, design or protocol errors.
pub fn run_rust(workload: &Workload, dir: &Path, reps: usize) -> Result<Measurement> {
    let input = read_matrix(dir, &workload.input_name())?;
    let mut times = Vec::new();
    let mut heap = 0usize;
    let mut check = 0.0f64;
    for rep in 0..reps.max(1) {
        let (seconds, bytes, error) = match workload {
            Workload::Record { p, answers } => {
                record_once(*p, *answers, input.row(0).iter().copied().collect(), rep)?
            }
            Workload::Pipeline {
                n,
                answers,
                p2,
                cohort,
                sigma,
                teaching,
            } => {
                let design =
                    plan_for(cohort.unwrap_or(*n), *answers, Some(*p2), Some(*sigma))?.design()?;
                let safety = Safety {
                    x_max: x_max(*answers),
                    delta: APPENDIX_C_DELTA,
                    strictness: if *teaching {
                        Strictness::WarnOnly
                    } else {
                        Strictness::Refuse
                    },
                };
                let keys = party_keys();
                let mut seen = 0usize;
                let (summary, elapsed, bytes) = alloc::measure(|| {
                    run_tm2_streaming(&input, &design, &keys, *cohort, safety, false, &mut |e| {
                        seen += e.uploads.nrows();
                    })
                });
                let summary = summary?;
                if seen != *n || !summary.release.qa.iter().all(QaReport::passed) {
                    bail!("the pipeline did not process every participant or failed QA");
                }
                let raw = input.clone().insert_column(*answers, DEFAULT_QA_CONSTANT);
                let gram = raw.tr_mul(&raw);
                let released = &summary.release.data;
                let error = (released.tr_mul(released) - &gram).amax() / gram.amax();
                (elapsed.as_secs_f64(), bytes, error)
            }
            Workload::Cli { .. } | Workload::Stream { .. } => {
                bail!("the command-line pipeline is timed as a whole process by the parent")
            }
        };
        times.push(seconds);
        heap = heap.max(bytes);
        check = check.max(error);
    }
    Ok(Measurement {
        seconds: median(times),
        heap_bytes: heap as f64,
        rss_bytes: peak_rss_bytes(),
        check,
    })
}

/// One record on a device: derive `B` from the device key, pad with noise, mask.
fn record_once(p: usize, answers: usize, x: Vec<f64>, rep: usize) -> Result<(f64, usize, f64)> {
    let p2 = p
        .checked_sub(answers + 1)
        .context("p must exceed the answers")?;
    let design = Tm2Design::modified(answers, p2, 100.0 * x_max(answers))?;
    let device_key = Key::from_bytes([0x44; 32]);
    let noise = Key::from_bytes([0x55; 32])
        .stream(StreamId::ParticipantNoise {
            participant: rep as u64,
        })
        .rng();
    // The padded record's norm, for the check (computed outside the timed region).
    let b_for_check = right_mask_from_device_key(&design, &device_key, 0)?;
    let padded = Participant::new(&design, &b_for_check)?.pad(&x, &mut noise.clone())?;
    let norm = padded.iter().map(|v| v * v).sum::<f64>().sqrt();
    drop(b_for_check);
    let (masked, elapsed, bytes) = alloc::measure(|| -> Result<Vec<f64>> {
        let b = right_mask_from_device_key(&design, &device_key, 0)?;
        let device = Participant::new(&design, &b)?;
        Ok(device.mask_record(&x, &mut noise.clone())?)
    });
    let masked = masked?;
    let masked_norm = masked.iter().map(|v| v * v).sum::<f64>().sqrt();
    Ok((
        elapsed.as_secs_f64(),
        bytes,
        (masked_norm / norm - 1.0).abs(),
    ))
}
