//! Long computations in a Web Worker (`www/worker.js` loads this same module, which then serves
//! [`crate::model::jobs::run_job`]); progress comes back as messages. Where no worker can be
//! started (a `file:` page, a test harness), jobs run inline after yielding to the event loop.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use yew::Callback;

use super::clock::{now_ms, sleep};
use crate::model::jobs::{Job, Output, Reply, Request, decode, encode, run_job};

/// Progress of a running job.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Fraction done, 0 to 1.
    pub fraction: f64,
    /// What it is doing.
    pub stage: String,
}

struct Handlers {
    progress: Callback<Progress>,
    done: Callback<Result<Output, String>>,
}

#[derive(Default)]
struct Inner {
    worker: Option<web_sys::Worker>,
    ready: bool,
    queue: Vec<String>,
    pending: HashMap<u64, Handlers>,
    next_id: u64,
    failure: Option<String>,
    _on_message: Option<Closure<dyn FnMut(web_sys::MessageEvent)>>,
    _on_error: Option<Closure<dyn FnMut(web_sys::ErrorEvent)>>,
}

/// Runs [`Job`]s off the main thread. Cheap to clone; equal when it is the same runner.
#[derive(Clone, Default)]
pub struct JobRunner {
    inner: Rc<RefCell<Inner>>,
}

impl PartialEq for JobRunner {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner)
    }
}

/// Where the worker script lives, next to `index.html`.
pub const WORKER_SCRIPT: &str = "./worker.js";

impl JobRunner {
    /// A runner backed by a module worker, or running inline when none can be started.
    pub fn start() -> Self {
        let runner = Self::default();
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        if let Ok(worker) = web_sys::Worker::new_with_options(WORKER_SCRIPT, &options) {
            let weak = Rc::downgrade(&runner.inner);
            let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                move |event: web_sys::MessageEvent| {
                    if let (Some(inner), Some(text)) = (weak.upgrade(), event.data().as_string()) {
                        handle_reply(&inner, &text);
                    }
                },
            );
            let weak = Rc::downgrade(&runner.inner);
            let on_error = Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(
                move |event: web_sys::ErrorEvent| {
                    if let Some(inner) = weak.upgrade() {
                        fail_all(
                            &inner,
                            format!("the background worker stopped: {}", event.message()),
                        );
                    }
                },
            );
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            let mut inner = runner.inner.borrow_mut();
            inner.worker = Some(worker);
            inner._on_message = Some(on_message);
            inner._on_error = Some(on_error);
        }
        runner
    }

    /// A runner that always computes inline (for tests).
    pub fn inline() -> Self {
        Self::default()
    }

    /// Whether a worker is in use.
    pub fn has_worker(&self) -> bool {
        self.inner.borrow().worker.is_some()
    }

    /// Submit `job`; returns its id. `done` is called exactly once.
    pub fn submit(
        &self,
        job: Job,
        progress: Callback<Progress>,
        done: Callback<Result<Output, String>>,
    ) -> u64 {
        let mut inner = self.inner.borrow_mut();
        inner.next_id += 1;
        let id = inner.next_id;
        if let Some(failure) = inner.failure.clone() {
            drop(inner);
            done.emit(Err(failure));
            return id;
        }
        if inner.worker.is_none() {
            drop(inner);
            wasm_bindgen_futures::spawn_local(async move {
                // Let the page paint the progress bar before computing.
                sleep(0).await;
                let output = run_job(
                    &job,
                    &mut |fraction, stage| {
                        progress.emit(Progress {
                            fraction,
                            stage: stage.to_owned(),
                        })
                    },
                    &now_ms,
                );
                done.emit(output);
            });
            return id;
        }
        inner.pending.insert(id, Handlers { progress, done });
        drop(inner);
        let shared = self.inner.clone();
        wasm_bindgen_futures::spawn_local(async move {
            // Encoding a request that carries a multi-megabyte CSV takes tens of milliseconds:
            // in a task of its own it never adds to the frame that read the file or started the
            // job. Tasks run in order, so requests still reach the worker in submission order.
            sleep(0).await;
            let message = encode(&Request { id, job });
            let mut inner = shared.borrow_mut();
            if inner.ready {
                if let Some(worker) = &inner.worker {
                    let _ = worker.post_message(&message.into());
                }
            } else {
                inner.queue.push(message);
            }
        });
        id
    }
}

fn handle_reply(inner: &Rc<RefCell<Inner>>, text: &str) {
    let reply: Reply = match decode(text) {
        Ok(r) => r,
        Err(e) => return fail_all(inner, e),
    };
    match reply {
        Reply::Ready => {
            let mut state = inner.borrow_mut();
            state.ready = true;
            let queue = std::mem::take(&mut state.queue);
            if let Some(worker) = &state.worker {
                for message in queue {
                    let _ = worker.post_message(&message.into());
                }
            }
        }
        Reply::Broken { message } => fail_all(inner, message),
        Reply::Progress {
            id,
            fraction,
            stage,
        } => {
            let callback = inner.borrow().pending.get(&id).map(|h| h.progress.clone());
            if let Some(cb) = callback {
                cb.emit(Progress { fraction, stage });
            }
        }
        Reply::Done { id, output } => {
            let handlers = inner.borrow_mut().pending.remove(&id);
            if let Some(h) = handlers {
                h.done.emit(output);
            }
        }
    }
}

fn fail_all(inner: &Rc<RefCell<Inner>>, message: String) {
    let pending: Vec<Handlers> = {
        let mut state = inner.borrow_mut();
        state.failure = Some(message.clone());
        state.pending.drain().map(|(_, h)| h).collect()
    };
    for h in pending {
        h.done.emit(Err(message.clone()));
    }
}
