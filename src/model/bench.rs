//! The operations the browser benchmark times, shared with the native bench
//! (`examples/bench_native.rs`) so both time exactly the same code.
//!
//! * masking one record at `p = 1 000` and `p = 10 000`: build the device's `B` from its key
//!   (`right_mask_from_device_key`) and compute `x·B` (`Participant::mask_record`), the work a
//!   participant's browser does on submit;
//! * a regression on a `100 000 × 20` release (`LinearRegression::fit`, response on 19
//!   predictors).
//!
//! Inputs are generated outside the timed section.

use nalgebra::DMatrix;
use orthomask_core::key::{Key, StreamId};
use orthomask_core::protocol::tm2::{Participant, Tm2Design, right_mask_from_device_key};
use orthomask_core::random::standard_normal;
use orthomask_stats::dataset::Dataset;
use orthomask_stats::design::Intercept;
use orthomask_stats::linear::LinearRegression;
use serde::{Deserialize, Serialize};

/// Which operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BenchCase {
    /// Mask one record with `p` right-mask columns (10 answers + QA + noise).
    MaskRecord {
        /// Columns of `B`.
        p: usize,
    },
    /// Regression on an `n × k` release.
    Regression {
        /// Rows.
        n: usize,
        /// Columns (response and `k − 1` predictors).
        k: usize,
    },
}

impl BenchCase {
    /// The three cases of the issue.
    pub const ALL: [BenchCase; 3] = [
        BenchCase::MaskRecord { p: 1_000 },
        BenchCase::MaskRecord { p: 10_000 },
        BenchCase::Regression { n: 100_000, k: 20 },
    ];

    /// Label for tables.
    pub fn label(&self) -> String {
        match self {
            Self::MaskRecord { p } => format!("mask one record, p = {p}"),
            Self::Regression { n, k } => format!("regression on a {n} × {k} release"),
        }
    }
}

/// Answers per benchmark record.
const ANSWERS: usize = 10;

/// Prepared inputs (untimed).
pub enum Prepared {
    /// A design, a device key and one record.
    Mask {
        /// The design.
        design: Tm2Design,
        /// The device key.
        key: Key,
        /// The answers.
        answers: Vec<f64>,
    },
    /// A release.
    Regression {
        /// The data.
        data: Dataset,
    },
}

/// Generate the inputs of a case.
///
/// # Errors
/// One line for invalid sizes.
pub fn prepare(case: BenchCase) -> Result<Prepared, String> {
    let key = Key::teaching(4242);
    match case {
        BenchCase::MaskRecord { p } => {
            let noise = p
                .checked_sub(ANSWERS + 1)
                .filter(|n| *n > 0)
                .ok_or("p must exceed 11")?;
            let design = Tm2Design::modified(ANSWERS, noise, 1000.0).map_err(|e| e.to_string())?;
            let answers = (0..ANSWERS).map(|j| j as f64 * 1.5).collect();
            Ok(Prepared::Mask {
                design,
                key,
                answers,
            })
        }
        BenchCase::Regression { n, k } => {
            let mut rng = key.stream(StreamId::Scratch(7)).rng();
            let mut m = DMatrix::from_fn(n, k, |_, _| standard_normal(&mut rng));
            for i in 0..n {
                let y: f64 = (1..k).map(|j| m[(i, j)] * j as f64 * 0.1).sum();
                m[(i, 0)] += y;
            }
            let names = (0..k)
                .map(|j| {
                    if j == 0 {
                        "y".to_owned()
                    } else {
                        format!("x{j}")
                    }
                })
                .collect();
            Ok(Prepared::Regression {
                data: Dataset::new(names, m).map_err(|e| e.to_string())?,
            })
        }
    }
}

/// Run the timed operation once; returns a checksum so the work cannot be optimised away.
///
/// # Errors
/// One line when the operation fails.
pub fn run(prepared: &Prepared) -> Result<f64, String> {
    match prepared {
        Prepared::Mask {
            design,
            key,
            answers,
        } => {
            let b = right_mask_from_device_key(design, key, 0).map_err(|e| e.to_string())?;
            let device = Participant::new(design, &b).map_err(|e| e.to_string())?;
            let mut noise = key
                .stream(StreamId::ParticipantNoise { participant: 0 })
                .rng();
            let masked = device
                .mask_record(answers, &mut noise)
                .map_err(|e| e.to_string())?;
            Ok(masked.iter().sum())
        }
        Prepared::Regression { data } => {
            let names: Vec<&str> = data.names()[1..].iter().map(String::as_str).collect();
            let fit = LinearRegression::fit(data, "y", &names, Intercept::Included)
                .map_err(|e| e.to_string())?;
            Ok(fit.r_squared())
        }
    }
}

/// The timing of one case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// The case.
    pub case: BenchCase,
    /// Repetitions timed.
    pub repetitions: usize,
    /// Median milliseconds.
    pub median_ms: f64,
    /// Fastest milliseconds.
    pub min_ms: f64,
    /// The checksum of the last run.
    pub checksum: f64,
}

/// Repetitions per case: enough for a stable median, few enough for the 10 000 case.
pub fn repetitions(case: BenchCase) -> usize {
    match case {
        BenchCase::MaskRecord { p } if p >= 10_000 => 3,
        BenchCase::MaskRecord { .. } => 15,
        BenchCase::Regression { .. } => 3,
    }
}

/// Time a case with `now()` in milliseconds (`performance.now()` in the browser,
/// `Instant` natively).
///
/// # Errors
/// As [`prepare`] and [`run`].
pub fn time_case(case: BenchCase, now: &dyn Fn() -> f64) -> Result<BenchResult, String> {
    let prepared = prepare(case)?;
    run(&prepared)?; // warm-up
    let reps = repetitions(case);
    let mut times = Vec::with_capacity(reps);
    let mut checksum = 0.0;
    for _ in 0..reps {
        let start = now();
        checksum = run(&prepared)?;
        times.push(now() - start);
    }
    times.sort_by(f64::total_cmp);
    Ok(BenchResult {
        case,
        repetitions: reps,
        median_ms: times[reps / 2],
        min_ms: times[0],
        checksum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_benchmarked_operations_do_real_work() {
        let p = prepare(BenchCase::MaskRecord { p: 50 }).unwrap();
        let a = run(&p).unwrap();
        assert!(a.is_finite() && a != 0.0);
        let r = prepare(BenchCase::Regression { n: 200, k: 4 }).unwrap();
        let r2 = run(&r).unwrap();
        assert!(r2 > 0.0 && r2 < 1.0);
        assert!(prepare(BenchCase::MaskRecord { p: 5 }).is_err());
    }
}
