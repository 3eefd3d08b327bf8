//! Writing the write-ahead log back into the database on a thread of its own (issue 24).
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses its threshold, on the
//! connection that commits — for a store that is the one writer thread every upload waits for.
//! Profiled under a burst of 10 000 uploads (p = 1 000, `scripts/load.sh`), those checkpoints
//! were 31 % of the writer thread's time: every acknowledgement waited behind copying earlier
//! commits' pages into the database file and its fsync.
//!
//! So the writer's connection turns the automatic checkpoint off and, after each commit, wakes
//! this thread, which holds a second connection to the same file and runs
//! `PRAGMA wal_checkpoint(PASSIVE)`: in WAL mode a checkpoint may run while another connection
//! writes (it copies the frames committed before it began and never blocks the writer), so the
//! copying moves off the path of the acknowledgements.
//!
//! What stays as it was:
//! * durability: a commit is acknowledged after the writer has fsynced its frames into the
//!   write-ahead log (`synchronous = FULL`), whoever later copies them; this connection is
//!   `synchronous = FULL` too, so a checkpoint fsyncs the log before it writes the database and
//!   the database before it lets the log be reused;
//! * the log's size: a checkpoint that finds every frame copied lets the writer's next
//!   transaction start the log over (cut back to `journal_size_limit`), as the automatic
//!   checkpoint did; a passive checkpoint never does while commits keep coming, so past 8 MiB
//!   the writer checkpoints and starts the log over itself (`store::write_back_after_commit`);
//! * erasure: the explicit `TRUNCATE` checkpoint after erasing values (`Store::checkpoint`) still
//!   runs on the writer, which waits out a checkpoint in progress here (busy timeout).
//!
//! Checkpoints are at least [`INTERVAL`] apart, so a stream of small commits does not turn into a
//! stream of fsyncs; a commit that wakes the thread meanwhile is taken up by the next one.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::Connection;

/// Shortest time between two checkpoints: each fsyncs the log and the database, so under a
/// burst of commits they are spaced to a handful a second, each copying what arrived since.
pub const INTERVAL: Duration = Duration::from_millis(200);

/// Why a store's checkpointer did not start (the store then checkpoints in its writer).
#[derive(Debug, thiserror::Error)]
pub enum CheckpointerError {
    /// Its connection could not be opened or set up.
    #[error("its connection: {0}")]
    Connection(#[from] rusqlite::Error),
    /// Its thread could not start.
    #[error("its thread: {0}")]
    Thread(std::io::Error),
}

/// The checkpointing thread of one store; stopped (and its connection closed) when dropped, so
/// that the writer's connection is the last to close and removes the log.
pub struct Checkpointer {
    wake: Option<mpsc::SyncSender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Open a second connection to the database at `path` (already in WAL mode) and start the
    /// thread, named after `name`.
    ///
    /// # Errors
    /// [`CheckpointerError`]: the connection cannot be opened or set up, or the thread cannot
    /// start.
    pub fn start(path: &Path, name: &str) -> Result<Self, CheckpointerError> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.busy_timeout(crate::store::BUSY_TIMEOUT)?;
        // One pending wake-up is enough: commits while a checkpoint runs fold into the next.
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name(format!("ckpt:{name}"))
            .spawn(move || checkpoint_when_woken(&conn, &woken))
            .map_err(CheckpointerError::Thread)?;
        Ok(Self {
            wake: Some(wake),
            thread: Some(thread),
        })
    }

    /// Tell the thread that a transaction has committed (never blocks).
    pub fn committed(&self) {
        if let Some(wake) = &self.wake {
            let _ = wake.try_send(());
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        // Closing the channel ends the loop once a checkpoint in progress has finished.
        self.wake.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn checkpoint_when_woken(conn: &Connection, woken: &mpsc::Receiver<()>) {
    let mut pending = woken.recv().is_ok();
    while pending {
        if let Err(e) = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(0))
        {
            // Not fatal: the frames stay in the log, where readers find them, and the next
            // checkpoint (or the writer's close) copies them.
            tracing::warn!("checkpointing the write-ahead log failed: {e}");
        }
        // Wait out the interval, remembering a commit meanwhile; a closed channel ends the loop
        // at once (the store is closing).
        let next = std::time::Instant::now() + INTERVAL;
        pending = false;
        loop {
            let left = next.saturating_duration_since(std::time::Instant::now());
            match woken.recv_timeout(left) {
                Ok(()) => pending = true,
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
        if !pending {
            pending = woken.recv().is_ok();
        }
    }
}
