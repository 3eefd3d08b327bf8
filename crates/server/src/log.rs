//! The services' log: one line per event on standard error, written by a background thread
//! (`tracing` with `tracing-appender`'s lossy non-blocking writer), so that a log that cannot be
//! written — standard error on a full disk or `/dev/full`, a pipe nobody reads or that was
//! closed — never stops, slows or kills a service (issue 30 §2). `eprintln!` panics when its
//! write fails, and a blocked pipe would block the thread that logs; here a line the queue cannot
//! take, or the writer cannot write, is dropped and counted ([`dropped`]), and every service's
//! health endpoint shows the count.
//!
//! The few lines for the person who started the services (their addresses) go to standard output
//! through [`announce`], under the same rule.
//!
//! Without [`init`] (the in-process tests) events go nowhere.

use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use tracing_appender::non_blocking::{ErrorCounter, NonBlockingBuilder, WorkerGuard};

/// Lines a write could not put anywhere (the writer's failures and [`announce`]'s).
static FAILED_WRITES: AtomicU64 = AtomicU64::new(0);

/// The queue's own count of lines it dropped when full, and the guard that keeps its thread.
static QUEUE: OnceLock<(ErrorCounter, WorkerGuard)> = OnceLock::new();

/// Lines the queue may hold before it drops new ones.
const QUEUE_LINES: usize = 16_384;

/// Standard error for the writer thread: a failed write is counted, never an error that could
/// end the thread or be printed anywhere.
struct CountingStderr;

impl Write for CountingStderr {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        if std::io::stderr().write_all(line).is_err() {
            FAILED_WRITES.fetch_add(1, Ordering::Relaxed);
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

/// Send the process's log events to standard error through the non-blocking writer. Called once
/// by `orthomask serve`; later calls change nothing.
pub fn init() {
    QUEUE.get_or_init(|| {
        let (writer, guard) = NonBlockingBuilder::default()
            .lossy(true)
            .buffered_lines_limit(QUEUE_LINES)
            .thread_name("orthomask-log")
            .finish(CountingStderr);
        let counter = writer.error_counter();
        let _ = tracing_subscriber::fmt()
            .with_writer(writer)
            .with_ansi(false)
            .with_target(false)
            .try_init();
        (counter, guard)
    });
}

/// Log lines dropped since start: the queue was full, or standard error (or standard output, for
/// [`announce`]) could not be written.
pub fn dropped() -> u64 {
    let queued = QUEUE
        .get()
        .map_or(0, |(counter, _)| counter.dropped_lines() as u64);
    queued + FAILED_WRITES.load(Ordering::Relaxed)
}

/// One line for the person who started the services, on standard output; counted in
/// [`dropped`] when it cannot be written.
pub fn announce(line: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        FAILED_WRITES.fetch_add(1, Ordering::Relaxed);
    }
}
