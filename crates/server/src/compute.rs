//! Core work (masking, unmasking, releases) off the async runtime, one thread per task.
//!
//! The services run many such tasks at once — one per cohort handed over, per share uploaded, per
//! release — on tokio's blocking pool. Left alone, the core would spread each task over every
//! core (`orthomask_core::runtime`), so `k` concurrent tasks would start `k × cores` threads on a
//! machine with `cores` of them. Each task is therefore capped at [`THREADS_PER_TASK`]: the
//! parallelism of the services comes from running tasks side by side, and a task's result is the
//! same bits whatever its cap.

use std::num::NonZeroUsize;

use orthomask_core::runtime::with_max_threads;
use tokio::task::JoinHandle;

/// Threads the core may use inside one blocking task (the task's own thread included).
pub const THREADS_PER_TASK: NonZeroUsize = NonZeroUsize::MIN;

/// `tokio::task::spawn_blocking(f)`, with the core capped at [`THREADS_PER_TASK`] inside `f`.
pub fn core_task<T, F>(f: F) -> JoinHandle<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    tokio::task::spawn_blocking(move || with_max_threads(THREADS_PER_TASK, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_core_task_runs_on_one_thread() {
        let inside = core_task(orthomask_core::runtime::workers).await.ok();
        assert_eq!(inside, Some(1));
    }
}
