//! Shared state through contexts, reached by `use_xxx()` hooks that return handles with methods
//! (the RealWorld Yew app's `use_user_context` shape).
//!
//! * [`use_jobs`] — the app's [`JobRunner`] (one Web Worker for every page);
//! * [`use_job`] — a job's status for one component: run, progress, result, stale results
//!   ignored;
//! * [`use_query`] — the current hash route's query parameters;
//! * [`ShellLanguage`] — the language of the app's frame, which the participant page sets.

use std::cell::Cell;
use std::rc::Rc;

use yew::prelude::*;
use yew_router::prelude::*;

use crate::i18n::AppLanguage;
use crate::model::jobs::{Job, Output};
use crate::services::jobs::{JobRunner, Progress};
use crate::services::query;

/// The language of the app's frame (navigation, skip link, footer): English, except while the
/// participant page shows a survey in another language it has a catalogue for — that page sets
/// it, and sets it back when the participant leaves.
pub type ShellLanguage = UseStateHandle<AppLanguage>;

/// The app's job runner, provided by [`App`](crate::app::App). Outside a provider (component
/// tests) a runner that computes inline.
#[hook]
pub fn use_jobs() -> JobRunner {
    let fallback = use_memo((), |()| JobRunner::inline());
    use_context::<JobRunner>().unwrap_or_else(|| (*fallback).clone())
}

/// Where a job stands.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum JobStatus {
    /// Nothing asked yet.
    #[default]
    Idle,
    /// Running.
    Running(Progress),
    /// Finished.
    Done(Rc<Output>),
    /// Failed, with a one-line reason.
    Failed(String),
}

/// A component's job: [`run`](Self::run) it and read [`status`](Self::status).
#[derive(Clone, PartialEq)]
pub struct JobHandle {
    status: UseStateHandle<JobStatus>,
    last: UseStateHandle<Option<Rc<Output>>>,
    runner: JobRunner,
    latest: Rc<Cell<u64>>,
}

impl JobHandle {
    /// Start `job`; results of jobs started earlier by this handle are ignored.
    pub fn run(&self, job: Job) {
        let generation = self.latest.get() + 1;
        self.latest.set(generation);
        let (status, latest, last) = (
            self.status.setter(),
            self.latest.clone(),
            self.last.setter(),
        );
        status.set(JobStatus::Running(Progress {
            fraction: 0.0,
            stage: "starting".into(),
        }));
        let progress = {
            let (status, latest) = (status.clone(), latest.clone());
            Callback::from(move |p: Progress| {
                if latest.get() == generation {
                    status.set(JobStatus::Running(p));
                }
            })
        };
        let done = Callback::from(move |r: Result<Output, String>| {
            if latest.get() == generation {
                status.set(match r {
                    Ok(o) => {
                        let o = Rc::new(o);
                        last.set(Some(o.clone()));
                        JobStatus::Done(o)
                    }
                    Err(e) => JobStatus::Failed(e),
                });
            }
        });
        self.runner.submit(job, progress, done);
    }

    /// The current status.
    pub fn status(&self) -> &JobStatus {
        &self.status
    }

    /// The output of the latest job that finished (kept on screen while the next one runs).
    pub fn output(&self) -> Option<Rc<Output>> {
        (*self.last).clone()
    }
}

/// A job handle for this component.
#[hook]
pub fn use_job() -> JobHandle {
    let status = use_state(JobStatus::default);
    let last = use_state(|| None::<Rc<Output>>);
    let runner = use_jobs();
    let latest = use_memo((), |()| Cell::new(0u64));
    JobHandle {
        status,
        last,
        runner,
        latest,
    }
}

/// Query parameters of the current hash route.
#[hook]
pub fn use_query() -> Vec<(String, String)> {
    let location = use_location();
    location
        .map(|l| query::parse(l.query_str()))
        .unwrap_or_default()
}
