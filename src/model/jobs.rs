//! The job protocol between the page and the Web Worker: requests, progress and results,
//! serialised as JSON strings (`postMessage` of a string is one copy, and JSON keeps the types
//! at the edge). [`run_job`] is the whole worker: pure, so the page can also run it inline where
//! no worker exists, and native tests exercise it directly.

use serde::{Deserialize, Serialize};

use super::analysis::{AnalysisError, AnalysisRequest, AnalysisResult, analyze};
use super::audit::{AuditError, AuditResult, NamedText, run_audit};
use super::bench::{BenchCase, BenchResult, time_case};
use super::classroom::{ClassroomError, ClassroomParams, ClassroomResult, run_classroom};
use super::dp::{DpParams, DpResult, dp_panel};
use super::shown;
use orthomask_dp::CalibrationError;

/// Why a job failed; [`Reply::Done`] carries its one line to the page.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The analyst view's release could not be read.
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    /// The audit could not run.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// The classroom could not run.
    #[error(transparent)]
    Classroom(#[from] ClassroomError),
    /// The DP panel's parameters have no calibration.
    #[error(transparent)]
    Dp(#[from] CalibrationError),
    /// A benchmark case failed (its own one line).
    #[error("{0}")]
    Bench(String),
}

/// Work for the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// The analyst view.
    Analyze(AnalysisRequest),
    /// The audit view.
    Audit {
        /// The release.
        release: NamedText,
        /// Its manifest.
        manifest: Option<NamedText>,
    },
    /// The classroom.
    Classroom(ClassroomParams),
    /// The DP panel.
    Dp(DpParams),
    /// One benchmark case.
    Bench(BenchCase),
}

/// What a job produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Output {
    /// Analysis.
    Analysis(Box<AnalysisResult>),
    /// Audit.
    Audit(Box<AuditResult>),
    /// Classroom.
    Classroom(Box<ClassroomResult>),
    /// DP panel.
    Dp(Box<DpResult>),
    /// Benchmark.
    Bench(BenchResult),
}

/// A message from the page to the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Identifies the job in replies.
    pub id: u64,
    /// The job.
    pub job: Job,
}

/// A message from the worker to the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    /// The worker is ready to receive jobs.
    Ready,
    /// The worker could not start (sent by `www/worker.js`); every job fails with this line.
    Broken {
        /// Why.
        message: String,
    },
    /// Progress of job `id`.
    Progress {
        /// Job id.
        id: u64,
        /// Fraction done.
        fraction: f64,
        /// What it is doing.
        stage: String,
    },
    /// Job `id` finished.
    Done {
        /// Job id.
        id: u64,
        /// The output, or the one-line text of its [`JobError`] (errors become text here, where
        /// they leave the worker).
        output: Result<Output, String>,
    },
}

/// Run a job. `now` is a millisecond clock (for the benchmark).
///
/// # Errors
/// The one-line text of the [`JobError`]: this is where errors leave the worker.
pub fn run_job(
    job: &Job,
    progress: &mut dyn FnMut(f64, &str),
    now: &dyn Fn() -> f64,
) -> Result<Output, String> {
    shown(run_typed(job, progress, now))
}

/// [`run_job`] with its error typed.
fn run_typed(
    job: &Job,
    progress: &mut dyn FnMut(f64, &str),
    now: &dyn Fn() -> f64,
) -> Result<Output, JobError> {
    Ok(match job {
        Job::Analyze(request) => Output::Analysis(Box::new(analyze(request, progress)?)),
        Job::Audit { release, manifest } => {
            progress(0.1, "auditing");
            Output::Audit(Box::new(run_audit(release, manifest.as_ref())?))
        }
        Job::Classroom(params) => Output::Classroom(Box::new(run_classroom(params, progress)?)),
        Job::Dp(params) => {
            progress(0.1, "calibrating");
            Output::Dp(Box::new(dp_panel(params)?))
        }
        Job::Bench(case) => {
            progress(0.1, "timing");
            Output::Bench(time_case(*case, now).map_err(JobError::Bench)?)
        }
    })
}

/// Encode a value for `postMessage`.
pub fn encode<T: Serialize>(value: &T) -> String {
    // Our types hold only strings, numbers, vectors and enums: serialisation cannot fail, but a
    // failure would still reach the page as a one-line error rather than a panic.
    serde_json::to_string(value).unwrap_or_else(|e| {
        serde_json::to_string(&Reply::Done {
            id: 0,
            output: Err(format!("internal: {e}")),
        })
        .unwrap_or_default()
    })
}

/// Decode a message.
///
/// # Errors
/// One line when the message is not what the protocol expects.
pub fn decode<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("malformed worker message: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::classroom::ClassroomMethod;

    #[test]
    fn jobs_round_trip_and_run() {
        let job = Job::Classroom(ClassroomParams {
            method: ClassroomMethod::Paper,
            ..ClassroomParams::default()
        });
        let request = Request { id: 7, job };
        let back: Request = decode(&encode(&request)).unwrap();
        assert_eq!(back, request);
        let mut stages = Vec::new();
        let out = run_job(
            &back.job,
            &mut |f, s| stages.push((f, s.to_owned())),
            &|| 0.0,
        )
        .unwrap();
        assert!(matches!(out, Output::Classroom(_)));
        assert!(stages.windows(2).all(|w| w[0].0 <= w[1].0));
        let reply = Reply::Done {
            id: 7,
            output: Ok(out),
        };
        let again: Reply = decode(&encode(&reply)).unwrap();
        // f64 values survive the JSON round trip bit for bit (serde_json float_roundtrip).
        assert_eq!(again, reply);
        assert!(decode::<Reply>("{").unwrap_err().starts_with("malformed"));
    }
}
