//! The durable store: one SQLite file per service, written by one thread with group commit.
//!
//! Every request that changes state sends a closure to the writer thread and waits for its
//! answer. The thread gathers the closures that are queued, runs each in its own savepoint inside
//! one transaction, commits, and only then answers them: an acknowledged change is on disk
//! (WAL with `synchronous = FULL`: the commit is fsynced), so it survives `kill -9` of the
//! process and a power cut alike, and a burst of uploads costs one fsync per batch rather than
//! one per upload. A closure that fails rolls back its own savepoint and nothing else. The log
//! is written back into the database by a thread of its own (`crate::checkpointer`), off the
//! path of the acknowledgements.

use crate::checkpointer::Checkpointer;
use crate::error::StoreError;
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

/// Closures queued at most per transaction.
const MAX_BATCH: usize = 256;

/// A unit of work for the writer thread.
trait Job: Send {
    /// Run inside the open transaction; `true` when the closure succeeded.
    fn run(&mut self, conn: &Connection) -> bool;
    /// Whether the write-ahead log is to be checkpointed and truncated once the transaction has
    /// committed (after erasing data: until then the erased values still sit in old WAL frames).
    fn checkpoint_after(&self) -> bool {
        false
    }
    /// Answer the caller once the transaction's fate is known.
    fn finish(self: Box<Self>, commit: Result<(), NotCommitted>);
}

struct TypedJob<T, E, F> {
    work: Option<F>,
    result: Option<Result<T, E>>,
    reply: tokio::sync::oneshot::Sender<Result<T, E>>,
    checkpoint: bool,
}

impl<T, E, F> Job for TypedJob<T, E, F>
where
    T: Send,
    E: From<StoreError> + Send,
    F: FnOnce(&Connection) -> Result<T, E> + Send,
{
    fn run(&mut self, conn: &Connection) -> bool {
        let result = match self.work.take() {
            // A panicking closure (a bug reachable from some request) must not take the writer
            // thread, and with it every later request, down: it fails alone and is rolled back.
            Some(work) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(conn)))
                .unwrap_or_else(|_| Err(E::from(StoreError::JobPanicked))),
            None => Err(E::from(StoreError::Closed)),
        };
        let ok = result.is_ok();
        self.result = Some(result);
        ok
    }

    fn checkpoint_after(&self) -> bool {
        self.checkpoint
    }

    fn finish(self: Box<Self>, commit: Result<(), NotCommitted>) {
        let answer = match (commit, self.result) {
            (Ok(()), Some(result)) => result,
            (Ok(()), None) => Err(E::from(StoreError::Closed)),
            (Err(failed), _) => Err(E::from(StoreError::NotCommitted {
                reason: failed.reason,
                disk_full: failed.disk_full,
            })),
        };
        // The caller may have gone away (client disconnected); the change is committed anyway.
        let _ = self.reply.send(answer);
    }
}

/// Handle to a service's SQLite store. Cloning shares the writer thread.
#[derive(Clone)]
pub struct Store {
    sender: mpsc::Sender<Box<dyn Job>>,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// A column a service's table gained after data directories were made with the table: `CREATE
/// TABLE IF NOT EXISTS` leaves an existing table as it was, so [`Store::open`] adds the column to
/// a file that lacks it (SQLite's `ALTER TABLE … ADD COLUMN`), with the default the schema gives
/// it, and an upgraded service keeps every directory's data.
#[derive(Clone, Copy, Debug)]
pub struct AddedColumn {
    /// The table.
    pub table: &'static str,
    /// The column's name.
    pub column: &'static str,
    /// Its type and default, as in the schema (`TEXT NOT NULL DEFAULT ''`).
    pub declaration: &'static str,
}

/// The columns of `table` in the database at `path`, in order (what the schema tests compare).
#[cfg(test)]
pub(crate) fn columns_of(path: &Path, table: &str) -> Vec<String> {
    let conn = Connection::open(path).unwrap();
    let mut statement = conn
        .prepare(&format!("PRAGMA table_info({table})"))
        .unwrap();
    statement
        .query_map([], |r| r.get(1))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// A file made with `schema` without the `added` columns, opened as an upgraded service opens
/// it, ends with the columns a fresh file has, in every table `added` names.
#[cfg(test)]
pub(crate) fn assert_upgrade_gives_fresh_columns(schema: &str, added: &[AddedColumn]) {
    let dir = tempfile::tempdir().unwrap();
    let (fresh, old) = (
        dir.path().join("fresh.sqlite3"),
        dir.path().join("old.sqlite3"),
    );
    let mut older = schema.to_owned();
    for a in added {
        let line = format!("    {} {},\n", a.column, a.declaration);
        assert!(older.contains(&line), "the schema declares no {line:?}");
        older = older.replace(&line, "");
    }
    Connection::open(&old)
        .unwrap()
        .execute_batch(&older)
        .unwrap();
    for path in [&fresh, &old] {
        let (store, closed) = Store::open(path, schema, added).unwrap();
        drop(store);
        assert!(closed.wait(std::time::Duration::from_secs(10)));
    }
    for a in added {
        assert_eq!(
            columns_of(&old, a.table),
            columns_of(&fresh, a.table),
            "{}",
            a.table
        );
    }
}

/// Add each of `added` its table lacks (tables that do not exist are left alone).
fn add_missing_columns(conn: &Connection, added: &[AddedColumn]) -> rusqlite::Result<()> {
    for a in added {
        let mut statement = conn.prepare(&format!("PRAGMA table_info({})", a.table))?;
        let columns: Vec<String> = statement
            .query_map([], |r| r.get(1))?
            .collect::<Result<_, _>>()?;
        if !columns.is_empty() && !columns.iter().any(|c| c == a.column) {
            conn.execute_batch(&format!(
                "ALTER TABLE {} ADD COLUMN {} {}",
                a.table, a.column, a.declaration
            ))?;
        }
    }
    Ok(())
}

impl Store {
    /// Open (or create) the database at `path`, apply `schema` (idempotent `CREATE … IF NOT
    /// EXISTS` statements), add the `added` columns an older file lacks, and start the writer
    /// thread.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the file cannot be opened or the schema fails.
    pub fn open(
        path: &Path,
        schema: &str,
        added: &[AddedColumn],
    ) -> Result<(Self, ClosedSignal), StoreError> {
        // Create the file owner-only first: SQLite gives its -wal and -shm files the database
        // file's permissions.
        create_private_file(path);
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // FULL: every commit is fsynced before the writer answers, so an acknowledged upload is
        // on stable storage, not just in the page cache.
        conn.pragma_update(None, "synchronous", "FULL")?;
        // After a checkpoint the write-ahead log is cut back to this size, so a burst of writes
        // does not leave a log that keeps the disk full afterwards (issue 30 §1).
        conn.pragma_update(None, "journal_size_limit", 16 * 1024 * 1024)?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // Erased values (e.g. the provider's x·B after the hand-over) are overwritten with zeros,
        // not left in free pages of the file.
        conn.pragma_update(None, "secure_delete", "ON")?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // A savepoint's journal (one per job, `run_batch`) is kept in memory, not a temporary
        // file: it holds only the pages one job changed.
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        // Room for every statement the services prepare cached (rusqlite keeps 16 by default,
        // fewer than the upload's and the batch's own statements with the outbox's).
        conn.set_prepared_statement_cache_capacity(128);
        conn.execute_batch(schema)?;
        add_missing_columns(&conn, added)?;
        let file_name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        // The log is written back by the checkpointer's thread, not inside the writer's commits
        // (`crate::checkpointer`); where that thread cannot start, SQLite's automatic checkpoint
        // stays on.
        let checkpointer = match Checkpointer::start(path, &file_name) {
            Ok(checkpointer) => {
                conn.pragma_update(None, "wal_autocheckpoint", 0)?;
                Some(checkpointer)
            }
            Err(e) => {
                tracing::warn!("{}: checkpointing stays in the writer: {e}", path.display());
                None
            }
        };
        let (sender, receiver) = mpsc::channel::<Box<dyn Job>>();
        let closed = ClosedSignal::default();
        let signal = closed.clone();
        // SQLite's name for the log: the database's path with `-wal` appended.
        let mut wal_path = path.as_os_str().to_owned();
        wal_path.push("-wal");
        let wal_path = PathBuf::from(wal_path);
        std::thread::Builder::new()
            .name(format!("store:{file_name}"))
            .spawn(move || {
                writer(&conn, &receiver, checkpointer.as_ref(), &wal_path);
                // The checkpointer's connection closes first, so the writer's is the last and
                // its close writes the log back and removes it.
                drop(checkpointer);
                drop(conn);
                signal.set();
            })
            .map_err(|e| StoreError::Corrupt(format!("cannot start the writer thread: {e}")))?;
        Ok((
            Self {
                sender,
                path: path.to_owned(),
            },
            closed,
        ))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Run `work` in the writer thread inside a transaction; the answer arrives after the commit.
    /// If `work` fails its changes are rolled back (and only its changes).
    ///
    /// # Errors
    /// `work`'s own error, or [`StoreError`] converted into `E`.
    pub async fn run<T, E, F>(&self, work: F) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&Connection) -> Result<T, E> + Send + 'static,
    {
        self.submit(work, false).await
    }

    /// Checkpoint the write-ahead log into the database and truncate it, so that values erased
    /// by earlier transactions are gone from the files (`secure_delete` zeroes them in the
    /// database pages; the WAL still holds the pages as they were until this runs).
    ///
    /// # Errors
    /// [`StoreError`] when the checkpoint cannot complete (a reader holds an old snapshot for
    /// longer than the busy timeout).
    pub async fn checkpoint(&self) -> Result<(), StoreError> {
        self.submit(|_| Ok(()), true).await
    }

    async fn submit<T, E, F>(&self, work: F, checkpoint: bool) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&Connection) -> Result<T, E> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job = TypedJob {
            work: Some(work),
            result: None,
            reply,
            checkpoint,
        };
        self.sender
            .send(Box::new(job))
            .map_err(|_| E::from(StoreError::Closed))?;
        answer.await.map_err(|_| E::from(StoreError::Closed))?
    }
}

/// Create the database file readable by its owner only (best effort; the data directory is
/// 0700 anyway).
fn create_private_file(path: &Path) {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let _ = options.open(path);
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = options.open(path);
}

/// Set when a store's writer thread has finished and closed the database (its write-ahead log
/// checkpointed). A service waits for it on shutdown.
#[derive(Clone, Debug, Default)]
pub struct ClosedSignal(std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>);

impl ClosedSignal {
    fn set(&self) {
        let (lock, condvar) = &*self.0;
        *lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        condvar.notify_all();
    }

    /// Wait up to `timeout`; `true` when the store is closed.
    pub fn wait(&self, timeout: std::time::Duration) -> bool {
        let (lock, condvar) = &*self.0;
        let guard = lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (guard, _) = condvar
            .wait_timeout_while(guard, timeout, |closed| !*closed)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *guard
    }
}

/// How long a store's connections (the writer's, the checkpointer's) wait for a lock another
/// holds before SQLite answers busy.
pub(crate) const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Size of the write-ahead log past which the writer checkpoints and starts it over itself
/// (half of the 16 MiB `journal_size_limit`, so that one more batch still fits under it).
const LOG_RESTART_BYTES: u64 = 8 << 20;

fn writer(
    conn: &Connection,
    receiver: &mpsc::Receiver<Box<dyn Job>>,
    checkpointer: Option<&Checkpointer>,
    wal_path: &Path,
) {
    while let Ok(first) = receiver.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match receiver.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let committed = run_batch(conn, &mut batch);
        // The batch's changes are committed whatever becomes of the checkpoint: only the jobs
        // that asked for it learn that it failed.
        let checkpointed = if committed.is_ok() && batch.iter().any(|job| job.checkpoint_after()) {
            checkpoint(conn)
        } else {
            if let (Ok(()), Some(checkpointer)) = (&committed, checkpointer) {
                write_back_after_commit(conn, checkpointer, wal_path);
            }
            Ok(())
        };
        for job in batch {
            let outcome = match (&committed, job.checkpoint_after()) {
                (Ok(()), true) => checkpointed.clone(),
                _ => committed.clone(),
            };
            job.finish(outcome);
        }
    }
}

/// Why a batch was not committed, told to each of its changes (rusqlite's error is not `Clone`):
/// SQLite's reason, and whether it was for want of space (a full disk answers 503, not 500).
#[derive(Clone, Debug)]
struct NotCommitted {
    reason: String,
    disk_full: bool,
}

impl From<rusqlite::Error> for NotCommitted {
    fn from(e: rusqlite::Error) -> Self {
        Self {
            disk_full: crate::error::disk_full(&e),
            reason: e.to_string(),
        }
    }
}

/// After a commit that asked for no checkpoint: wake the checkpointer — or, once the log has
/// passed [`LOG_RESTART_BYTES`], checkpoint and start the log over in the writer. The
/// checkpointer's passive checkpoints never start the log over while commits keep coming, so
/// this keeps the log bounded under an unbroken stream (issue 30), and leaves only what the
/// checkpointer has not yet copied to copy. A failure is left to the next commit: this batch is
/// committed.
fn write_back_after_commit(conn: &Connection, checkpointer: &Checkpointer, wal_path: &Path) {
    if wal_path.metadata().map_or(0, |m| m.len()) > LOG_RESTART_BYTES {
        let _ = checkpoint(conn);
    } else {
        checkpointer.committed();
    }
}

/// Longest the writer waits for a `TRUNCATE` checkpoint to complete ([`checkpoint`]): as long
/// as SQLite's busy handler waits for a lock ([`BUSY_TIMEOUT`]).
const TRUNCATE_WAIT: std::time::Duration = BUSY_TIMEOUT;

/// `PRAGMA wal_checkpoint(TRUNCATE)`, failing unless every frame was written back.
///
/// SQLite answers "busy" at once, without its busy handler, while another connection is
/// checkpointing — here the store's own checkpointer ([`crate::checkpointer`]), for at most one
/// of its passive checkpoints — so a busy answer is asked again, for up to [`TRUNCATE_WAIT`].
fn checkpoint(conn: &Connection) -> Result<(), NotCommitted> {
    let started = std::time::Instant::now();
    loop {
        let busy = match conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            r.get::<_, i64>(0)
        }) {
            Ok(busy) => busy != 0,
            Err(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::DatabaseBusy =>
            {
                true
            }
            Err(e) => return Err(e.into()),
        };
        if !busy {
            return Ok(());
        }
        if started.elapsed() >= TRUNCATE_WAIT {
            return Err(NotCommitted {
                reason: "the write-ahead log could not be checkpointed (a reader is busy)"
                    .to_owned(),
                disk_full: false,
            });
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn run_batch(conn: &Connection, batch: &mut [Box<dyn Job>]) -> Result<(), NotCommitted> {
    // Prepared once per connection, not parsed again for every job of every batch.
    let statement = |sql: &str| conn.prepare_cached(sql).and_then(|mut s| s.execute([]));
    statement("BEGIN IMMEDIATE")?;
    for job in batch.iter_mut() {
        let mut step = || -> Result<(), rusqlite::Error> {
            statement("SAVEPOINT job")?;
            if !job.run(conn) {
                statement("ROLLBACK TO job")?;
            }
            statement("RELEASE job").map(drop)
        };
        if let Err(e) = step() {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e.into());
        }
    }
    statement("COMMIT").map(drop).map_err(|e| {
        let _ = conn.execute_batch("ROLLBACK");
        e.into()
    })
}

/// Encode numbers as a BLOB of little-endian IEEE 754 doubles.
pub fn f64s_to_blob(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Encode a matrix row by row, as [`f64s_to_blob`] (what the stores read back with
/// `DMatrix::from_row_slice`).
pub fn matrix_to_blob(m: &nalgebra::DMatrix<f64>) -> Vec<u8> {
    f64s_to_blob(m.transpose().as_slice())
}

/// Decode a BLOB written by [`f64s_to_blob`].
///
/// # Errors
/// [`StoreError::Corrupt`] when the length is not a multiple of 8.
pub fn blob_to_f64s(blob: &[u8]) -> Result<Vec<f64>, StoreError> {
    if !blob.len().is_multiple_of(8) {
        return Err(StoreError::Corrupt(format!(
            "a vector blob of {} bytes is not a whole number of doubles",
            blob.len()
        )));
    }
    Ok(blob
        .chunks_exact(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            f64::from_le_bytes(b)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY, v INTEGER NOT NULL);";

    #[derive(Debug)]
    enum TestError {
        Store(StoreError),
        Refused,
    }
    impl From<StoreError> for TestError {
        fn from(e: StoreError) -> Self {
            Self::Store(e)
        }
    }
    impl From<rusqlite::Error> for TestError {
        fn from(e: rusqlite::Error) -> Self {
            Self::Store(e.into())
        }
    }

    #[tokio::test]
    async fn a_failing_job_rolls_back_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let (store, closed) = Store::open(&dir.path().join("s.sqlite3"), SCHEMA, &[]).unwrap();
        let mut handles = Vec::new();
        for i in 0..50 {
            let store = store.clone();
            handles.push(tokio::spawn(async move {
                store
                    .run(move |c| -> Result<(), TestError> {
                        c.execute("INSERT INTO t VALUES (?1, ?2)", (format!("k{i}"), i))?;
                        if i % 7 == 0 {
                            return Err(TestError::Refused);
                        }
                        Ok(())
                    })
                    .await
            }));
        }
        let mut refused = 0;
        for h in handles {
            match h.await.unwrap() {
                Ok(()) => {}
                Err(TestError::Refused) => refused += 1,
                Err(TestError::Store(e)) => panic!("{e}"),
            }
        }
        assert_eq!(refused, 8);
        let count: i64 = store
            .run(|c| -> Result<i64, TestError> {
                Ok(c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))?)
            })
            .await
            .unwrap();
        assert_eq!(count, 42);
        drop(store);
        assert!(closed.wait(std::time::Duration::from_secs(10)));
        assert!(!dir.path().join("s.sqlite3-wal").exists(), "closed cleanly");
    }

    /// A file made before a column was added gets it, with the schema's default for the rows it
    /// holds; a file that has it, and a table the file lacks, are left alone.
    #[tokio::test]
    async fn an_older_file_gains_the_added_columns_and_keeps_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite3");
        {
            let old = Connection::open(&path).unwrap();
            old.execute_batch(&format!("{SCHEMA} INSERT INTO t VALUES ('old', 1);"))
                .unwrap();
        }
        let added = [
            AddedColumn {
                table: "t",
                column: "build",
                declaration: "TEXT NOT NULL DEFAULT ''",
            },
            AddedColumn {
                table: "absent",
                column: "x",
                declaration: "TEXT",
            },
        ];
        for _ in 0..2 {
            let (store, closed) = Store::open(&path, SCHEMA, &added).unwrap();
            let rows = store
                .run(|c| -> Result<Vec<(String, String)>, TestError> {
                    c.execute(
                        "INSERT OR IGNORE INTO t (k, v, build) VALUES ('new', 2, 'ab')",
                        [],
                    )?;
                    let mut s = c.prepare("SELECT k, build FROM t ORDER BY k")?;
                    let rows = s
                        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect::<Result<_, _>>()?;
                    Ok(rows)
                })
                .await
                .unwrap();
            assert_eq!(
                rows,
                [("new".into(), "ab".into()), ("old".into(), String::new())]
            );
            drop(store);
            assert!(closed.wait(std::time::Duration::from_secs(10)));
        }
    }

    /// The write-ahead log reaches the database file while the store is open (the checkpointer's
    /// thread), not only when it closes.
    #[tokio::test]
    async fn the_log_is_written_back_while_the_store_is_open() {
        // The writer's own automatic checkpoint is off (`crate::checkpointer`): without the
        // checkpointer's thread the database file would keep its first size until the store
        // closes. 4 MiB of rows (about a thousand pages) must reach it while the store is open.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite3");
        let (store, _closed) = Store::open(&path, SCHEMA, &[]).unwrap();
        let before = std::fs::metadata(&path).unwrap().len();
        for batch in 0..16 {
            store
                .run(move |c| -> Result<(), TestError> {
                    for row in 0..64 {
                        c.execute(
                            "INSERT INTO t VALUES (?1, ?2)",
                            (format!("{batch}-{row}"), vec![7u8; 4096]),
                        )?;
                    }
                    Ok(())
                })
                .await
                .unwrap();
        }
        const FOUR_MIB: u64 = 4 << 20;
        // Polled, not timed: the bound only keeps a broken build from hanging the test run.
        let mut written_back = false;
        for _ in 0..600 {
            if std::fs::metadata(&path).unwrap().len() >= before + FOUR_MIB {
                written_back = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(
            written_back,
            "the database file stayed at {} bytes",
            std::fs::metadata(&path).unwrap().len()
        );
    }

    /// A checkpoint that cannot complete fails only the job that asked for it: a change
    /// committed in the same batch is told it was committed (it was), and once the reader that
    /// blocked the checkpoint is gone, the next checkpoint completes.
    #[tokio::test]
    async fn a_failed_checkpoint_fails_only_the_job_that_asked_for_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite3");
        let (store, _closed) = Store::open(&path, SCHEMA, &[]).unwrap();
        let insert = |k: &'static str| {
            move |c: &Connection| -> Result<(), TestError> {
                c.execute("INSERT INTO t VALUES (?1, 1)", [k])?;
                Ok(())
            }
        };
        store.run(insert("before")).await.unwrap();
        // A reader holds a snapshot: frames committed after it cannot be written back, so a
        // TRUNCATE checkpoint cannot complete while it stays open.
        let reader = Connection::open(&path).unwrap();
        reader.execute_batch("BEGIN").unwrap();
        let seen: i64 = reader
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(seen, 1);
        // The writer is held by a first job while the change and the checkpoint are queued, so
        // the two are one batch.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let mut blocker = std::pin::pin!(store.run(move |_c: &Connection| {
            held.recv().ok();
            Ok::<(), TestError>(())
        }));
        let mut change = std::pin::pin!(store.run(insert("after")));
        let mut checkpoint = std::pin::pin!(store.checkpoint());
        // Polled once each: that queues the job (the answer is still to come).
        std::future::poll_fn(|cx| {
            assert!(blocker.as_mut().poll(cx).is_pending());
            assert!(change.as_mut().poll(cx).is_pending());
            assert!(checkpoint.as_mut().poll(cx).is_pending());
            std::task::Poll::Ready(())
        })
        .await;
        release.send(()).unwrap();
        blocker.await.unwrap();
        change
            .await
            .expect("a change committed with a failed checkpoint is committed");
        assert!(
            checkpoint.await.is_err(),
            "a checkpoint completed while a reader held an older snapshot"
        );
        reader.execute_batch("COMMIT").unwrap();
        drop(reader);
        store.checkpoint().await.unwrap();
        let rows: i64 = Connection::open(&path)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2);
    }

    /// A job that panics fails alone: it is rolled back, its caller gets an error, and the
    /// writer thread goes on serving the next jobs.
    #[tokio::test]
    async fn the_writer_survives_a_panicking_job() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _closed) = Store::open(&dir.path().join("s.sqlite3"), SCHEMA, &[]).unwrap();
        let panicked = store
            .run(|c| -> Result<(), TestError> {
                c.execute("INSERT INTO t VALUES ('lost', 1)", [])?;
                panic!("a bug in a request handler");
            })
            .await;
        assert!(matches!(
            panicked,
            Err(TestError::Store(StoreError::JobPanicked))
        ));
        let count: i64 = store
            .run(|c| -> Result<i64, TestError> {
                c.execute("INSERT INTO t VALUES ('kept', 2)", [])?;
                Ok(c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))?)
            })
            .await
            .unwrap();
        assert_eq!(count, 1, "the panicking job's insert was rolled back");
    }

    /// After a checkpoint the write-ahead log is empty: an erased value is in neither file.
    #[tokio::test]
    async fn a_checkpoint_leaves_no_erased_value_in_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite3");
        let (store, _closed) = Store::open(
            &path,
            "CREATE TABLE IF NOT EXISTS b (k INTEGER PRIMARY KEY, v BLOB);",
            &[],
        )
        .unwrap();
        let secret = f64s_to_blob(&[123.456_789_012_345_6, -9.876_543_210_987_6]);
        let planted = secret.clone();
        store
            .run(move |c| -> Result<(), TestError> {
                c.execute("INSERT INTO b VALUES (1, ?1)", [planted])?;
                Ok(())
            })
            .await
            .unwrap();
        store
            .run(|c| -> Result<(), TestError> {
                c.execute("UPDATE b SET v = NULL WHERE k = 1", [])?;
                Ok(())
            })
            .await
            .unwrap();
        let contains = |file: &std::path::Path| {
            std::fs::read(file)
                .unwrap_or_default()
                .windows(secret.len())
                .any(|w| w == secret.as_slice())
        };
        let wal = dir.path().join("s.sqlite3-wal");
        assert!(
            contains(&wal),
            "control: before the checkpoint the WAL still holds it"
        );
        store.checkpoint().await.unwrap();
        assert!(!contains(&wal) && !contains(&path));
    }

    #[test]
    fn blobs_round_trip_exactly() {
        let v = [0.1, -2.5e300, f64::MIN_POSITIVE, 0.0];
        assert_eq!(blob_to_f64s(&f64s_to_blob(&v)).unwrap(), v);
        assert!(blob_to_f64s(&[0u8; 9]).is_err());
    }
}
