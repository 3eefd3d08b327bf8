//! Native-only data parallelism for the large kernels, invisible in the public API except for the
//! caller's thread cap ([`with_max_threads`], re-exported as `orthomask_core::runtime`).
//!
//! On native targets the blocked kernels split independent work (rows of a right product,
//! columns of a left product, reflectors of a panel, cohorts of a survey, row chunks of a tall QR)
//! over [`std::thread::scope`] threads, one per available core. On `wasm32` everything runs on the
//! calling thread: threads do not exist there without extra runtime support, so this module
//! compiles to the serial loop.
//!
//! # How many threads
//! [`workers`] is the smallest of: the machine's cores (read once per process — asking the OS
//! costs about 47 µs per call on the 2-core development machine, as much as starting a thread, and
//! the kernels ask several times per record), [`MAX_WORKERS`], and the cap the caller set on this
//! thread with [`with_max_threads`]. The cap is a *scoped, per-thread* setting: it holds while the
//! closure runs and is restored afterwards (also when the closure panics), so there is no global
//! mutable state and two callers on two threads never see each other's cap. A service that runs
//! core work in many blocking tasks at once caps each task (`orthomask-server` caps each at one
//! thread), so `k` concurrent tasks use `k` threads, not `k × cores`.
//!
//! Work that is already running inside a parallel region runs serially: a thread-local flag marks
//! the threads of a region (including the caller while it does its own share), so nested calls —
//! a blocked product inside a cohort processed in parallel — never oversubscribe the cores. The
//! flag is per thread and restored on exit.
//!
//! # Why threads are started per region, not pooled
//! Measured on the 2-core machine: starting and joining a scoped thread costs about 40 µs. The
//! kernels open a region only above a size threshold (the callers' `…_MIN_…` constants), where one
//! region's work is a millisecond or more, so a persistent pool would save under 4 % there — not
//! worth a process-wide pool (global state every caller would share). The thread-count question
//! that did matter was the OS query above, now answered once.
//!
//! # Same results on any number of threads
//! Parallelism never changes *what* is computed, only where: every task writes a disjoint part of
//! the output with the same arithmetic as the serial loop, and the key streams are read by
//! position (sub-streams), never shared. Work is split at boundaries fixed by the problem (rows,
//! reflectors, chunks), never by the thread count, wherever a split would change a rounding. The
//! tests below check bit-identical results with one and several threads.

use std::num::NonZeroUsize;

use nalgebra::DMatrixViewMut;

/// Upper bound on worker threads, whatever the machine reports.
#[cfg(not(target_arch = "wasm32"))]
const MAX_WORKERS: usize = 16;

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static IN_REGION: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The cap set by [`with_max_threads`] on this thread, if any.
    static CAP: std::cell::Cell<Option<NonZeroUsize>> = const { std::cell::Cell::new(None) };
}

/// The machine's cores (at most [`MAX_WORKERS`]), asked of the OS once per process: the answer
/// is a fact about the machine, not a setting, so caching it is not shared mutable state.
#[cfg(not(target_arch = "wasm32"))]
fn machine_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, NonZeroUsize::get)
            .min(MAX_WORKERS)
    })
}

/// Number of threads a parallel region started here would use: the machine's cores (at most 16)
/// and at most the cap of [`with_max_threads`]; 1 on `wasm32` and inside a region.
pub fn workers() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    {
        if IN_REGION.with(std::cell::Cell::get) {
            return 1;
        }
        #[cfg(test)]
        if let Some(forced) = FORCED.with(std::cell::Cell::get) {
            return forced;
        }
        let cores = machine_cores();
        CAP.with(std::cell::Cell::get)
            .map_or(cores, |cap| cap.get().min(cores))
    }
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
}

/// Run `f` with the core's kernels, on this thread, using at most `max` threads (this one
/// included; `1` = everything on the calling thread). Scoped: the previous cap is restored when
/// `f` returns or unwinds. Nested calls can only lower the cap: the smaller of the two holds.
/// Results are the same whatever the cap (see the module documentation); only the time changes.
///
/// Use it where the caller already runs several things at once — a service's blocking tasks, a
/// test harness — or to keep a process to fewer cores than the machine has.
pub fn with_max_threads<T>(max: NonZeroUsize, f: impl FnOnce() -> T) -> T {
    #[cfg(not(target_arch = "wasm32"))]
    {
        /// Restores the previous cap even if `f` panics.
        struct Restore(Option<NonZeroUsize>);
        impl Drop for Restore {
            fn drop(&mut self) {
                CAP.with(|cap| cap.set(self.0));
            }
        }
        let before = CAP.with(std::cell::Cell::get);
        let cap = before.map_or(max, |b| b.min(max));
        let _restore = Restore(before);
        CAP.with(|c| c.set(Some(cap)));
        f()
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = max;
        f()
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
thread_local! {
    /// Tests only: a worker count that ignores the machine, so that "one thread against several"
    /// is tested with several threads even on a one-core machine.
    static FORCED: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Tests only: run `f` as if this thread had exactly `threads` workers.
#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) fn with_forced_workers<T>(threads: usize, f: impl FnOnce() -> T) -> T {
    let before = FORCED.with(|forced| forced.replace(Some(threads.max(1))));
    let out = f();
    FORCED.with(|forced| forced.set(before));
    out
}

/// Run `f` with this thread marked as inside a parallel region.
#[cfg(not(target_arch = "wasm32"))]
fn in_region<T>(f: impl FnOnce() -> T) -> T {
    /// Restores the flag even if `f` panics (a caller that catches the panic keeps its cores).
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_REGION.with(|flag| flag.set(self.0));
        }
    }
    let _restore = Restore(IN_REGION.with(|flag| flag.replace(true)));
    f()
}

/// `f(i)` for `i = 0 … count−1`, results in index order. Indices are dealt to `workers()`
/// threads in contiguous runs; on one worker this is a plain loop.
pub fn map<T: Send>(count: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = workers().min(count);
    if threads <= 1 {
        return (0..count).map(f).collect();
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let f = &f;
        let runs = split_evenly(count, threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = runs[1..]
                .iter()
                .map(|run| {
                    let run = run.clone();
                    scope.spawn(move || in_region(|| run.map(f).collect::<Vec<T>>()))
                })
                .collect();
            let mut out: Vec<T> = in_region(|| runs[0].clone().map(f).collect());
            for handle in handles {
                match handle.join() {
                    Ok(part) => out.extend(part),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            out
        })
    }
    #[cfg(target_arch = "wasm32")]
    {
        unreachable!("one worker on wasm32")
    }
}

/// `f(block)` on `parts` disjoint row bands of `m` (as even as possible), in parallel natively.
pub fn for_row_bands(
    m: DMatrixViewMut<'_, f64>,
    parts: usize,
    f: &(dyn Fn(DMatrixViewMut<'_, f64>) + Sync),
) {
    let rows = m.nrows();
    let parts = parts.clamp(1, rows.max(1));
    if parts == 1 {
        f(m);
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut m = m;
        let first = rows / parts;
        let (head, tail) = m.rows_range_pair_mut(0..first, first..rows);
        std::thread::scope(|scope| {
            scope.spawn(move || in_region(|| f(head)));
            in_region(|| for_row_bands(tail, parts - 1, f));
        });
    }
    #[cfg(target_arch = "wasm32")]
    {
        f(m);
    }
}

/// `f(block)` on `parts` disjoint column bands of `m` (as even as possible), in parallel natively.
pub fn for_column_bands(
    m: DMatrixViewMut<'_, f64>,
    parts: usize,
    f: &(dyn Fn(DMatrixViewMut<'_, f64>) + Sync),
) {
    let cols = m.ncols();
    let parts = parts.clamp(1, cols.max(1));
    if parts == 1 {
        f(m);
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut m = m;
        let first = cols / parts;
        let (head, tail) = m.columns_range_pair_mut(0..first, first..cols);
        std::thread::scope(|scope| {
            scope.spawn(move || in_region(|| f(head)));
            in_region(|| for_column_bands(tail, parts - 1, f));
        });
    }
    #[cfg(target_arch = "wasm32")]
    {
        f(m);
    }
}

/// Produce items `0 … count−1` ahead on the other cores and consume them in order on the calling
/// thread, with at most `window` items produced but not yet consumed (so memory stays bounded by
/// `window` items). The calling thread also produces whenever the next item is not ready, so the
/// work balances itself. On one worker this is `for i in 0..count { consume(produce(i)) }`.
///
/// This is how one record is masked with a huge operator: the reflectors of a Haar mask are
/// independent (each has its own sub-stream), so they are generated in parallel, while applying
/// them to the record is inherently sequential.
pub fn pipeline<T: Send>(
    count: usize,
    window: usize,
    produce: impl Fn(usize) -> T + Sync,
    mut consume: impl FnMut(T),
) {
    pipeline_over(
        0..count,
        window,
        |i, _| produce(i),
        |item| {
            consume(item);
            true
        },
    );
}

/// [`pipeline`] over the items of `inputs`, taken in order: item `i` is `produce(i, input_i)`.
///
/// `inputs` is advanced by whichever thread claims the next item, one claim at a time, so a
/// sequential source — a file read cohort by cohort — is read in order and never more than
/// `window` items ahead of `consume`. `consume` returns whether to go on: after `false` nothing
/// more is taken from `inputs` and the items in flight are dropped. The threads used are at most
/// the upper bound of `inputs.size_hint()`: a single item runs on the calling thread, outside any
/// region, so its own kernels may spread over the cores.
pub fn pipeline_over<I: Send, T: Send>(
    inputs: impl Iterator<Item = I> + Send,
    window: usize,
    produce: impl Fn(usize, I) -> T + Sync,
    mut consume: impl FnMut(T) -> bool,
) {
    let threads = workers().min(inputs.size_hint().1.unwrap_or(usize::MAX));
    if threads <= 1 {
        for (i, input) in inputs.enumerate() {
            if !consume(produce(i, input)) {
                return;
            }
        }
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

        struct State<T, It> {
            /// What is left to produce; `None` once exhausted or stopped.
            inputs: Option<It>,
            /// Index of the next item to claim.
            next: usize,
            /// Items consumed so far.
            consumed: usize,
            /// Item `i` waits in slot `i % window`.
            slots: Vec<Option<T>>,
            /// A thread panicked; everybody stops.
            failed: bool,
        }
        struct Shared<T, It> {
            state: Mutex<State<T, It>>,
            changed: Condvar,
        }
        impl<T, It> Shared<T, It> {
            fn lock(&self) -> MutexGuard<'_, State<T, It>> {
                self.state.lock().unwrap_or_else(PoisonError::into_inner)
            }
        }
        /// Marks the pipeline failed if its thread unwinds, so no other thread waits forever.
        struct FailOnPanic<'a, T, It>(&'a Shared<T, It>);
        impl<T, It> Drop for FailOnPanic<'_, T, It> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.lock().failed = true;
                    self.0.changed.notify_all();
                }
            }
        }

        let window = window.max(1);
        let shared = Shared {
            state: Mutex::new(State {
                inputs: Some(inputs),
                next: 0,
                consumed: 0,
                slots: (0..window).map(|_| None).collect(),
                failed: false,
            }),
            changed: Condvar::new(),
        };
        /// The next item and its input, when the window allows one and inputs remain.
        fn claim<T, It: Iterator>(
            s: &mut State<T, It>,
            window: usize,
        ) -> Option<(usize, It::Item)> {
            if s.next >= s.consumed + window {
                return None;
            }
            match s.inputs.as_mut()?.next() {
                Some(input) => {
                    s.next += 1;
                    Some((s.next - 1, input))
                }
                None => {
                    s.inputs = None;
                    None
                }
            }
        }
        let store = |i: usize, item: T| {
            shared.lock().slots[i % window] = Some(item);
            shared.changed.notify_all();
        };
        let (shared, store, produce) = (&shared, &store, &produce);
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(move || {
                    in_region(|| {
                        let _guard = FailOnPanic(shared);
                        loop {
                            let (i, input) = {
                                let mut s = shared.lock();
                                loop {
                                    if s.failed {
                                        return;
                                    }
                                    if let Some(claimed) = claim(&mut s, window) {
                                        break claimed;
                                    }
                                    if s.inputs.is_none() {
                                        shared.changed.notify_all();
                                        return;
                                    }
                                    s = shared
                                        .changed
                                        .wait(s)
                                        .unwrap_or_else(PoisonError::into_inner);
                                }
                            };
                            store(i, produce(i, input));
                        }
                    });
                });
            }
            in_region(|| {
                let _guard = FailOnPanic(shared);
                let mut i = 0;
                loop {
                    let item = loop {
                        let mut s = shared.lock();
                        if let Some(item) = s.slots[i % window].take() {
                            break Some(item);
                        }
                        assert!(!s.failed, "a producer thread of the pipeline panicked");
                        if let Some((j, input)) = claim(&mut s, window) {
                            drop(s);
                            store(j, produce(j, input));
                            continue;
                        }
                        if s.inputs.is_none() && s.next == i {
                            break None;
                        }
                        drop(
                            shared
                                .changed
                                .wait(s)
                                .unwrap_or_else(PoisonError::into_inner),
                        );
                    };
                    let Some(item) = item else { break };
                    let go_on = consume(item);
                    let mut s = shared.lock();
                    s.consumed += 1;
                    if !go_on {
                        s.inputs = None;
                        drop(s);
                        shared.changed.notify_all();
                        break;
                    }
                    drop(s);
                    shared.changed.notify_all();
                    i += 1;
                }
            });
        });
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = (window, produce, consume);
        unreachable!("one worker on wasm32")
    }
}

/// `0..count` cut into `parts` contiguous runs whose lengths differ by at most one.
#[cfg(any(test, not(target_arch = "wasm32")))]
pub fn split_evenly(count: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.max(1);
    let (base, extra) = (count / parts, count % parts);
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let len = base + usize::from(i < extra);
            let run = start..start + len;
            start += len;
            run
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn map_keeps_index_order() {
        let squares = map(37, |i| i * i);
        assert_eq!(squares, (0..37).map(|i| i * i).collect::<Vec<_>>());
        assert!(map(0, |i| i).is_empty());
    }

    #[test]
    fn bands_cover_every_entry_once() {
        let mut m = DMatrix::from_element(9, 7, 1.0);
        for_row_bands(m.view_range_mut(.., ..), 4, &|mut band| {
            band.add_scalar_mut(1.0)
        });
        for_column_bands(m.view_range_mut(.., ..), 3, &|mut band| band.scale_mut(2.0));
        assert!(
            m.iter()
                .all(|&v| (v - 4.0).abs() < crate::tolerance::SAME_OPERATOR)
        );
    }

    #[test]
    fn nested_regions_run_serially() {
        let inner = map(2, |_| workers());
        assert_eq!(inner, vec![1, 1]);
    }

    #[test]
    fn pipeline_consumes_in_order_with_bounded_lookahead() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let produced = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let mut max_ahead = 0;
        pipeline(
            500,
            3,
            |i| {
                produced.fetch_add(1, Ordering::SeqCst);
                i * 2
            },
            |item| {
                let ahead = produced.load(Ordering::SeqCst) - seen.len();
                max_ahead = max_ahead.max(ahead);
                seen.push(item);
            },
        );
        assert_eq!(seen, (0..500).map(|i| i * 2).collect::<Vec<_>>());
        // Produced-but-unconsumed items never exceed the window.
        assert!(max_ahead <= 3, "{max_ahead} items ahead");
    }

    /// A sequential source is read in order, at most a window ahead of the consumer, and a
    /// consumer that stops ends the reading: what a file read cohort by cohort needs.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn pipeline_over_reads_its_source_in_order_and_stops_when_asked() {
        use std::sync::Mutex;
        for threads in [1, 3] {
            let read = Mutex::new(Vec::new());
            let source = (0..400).inspect(|&k| read.lock().unwrap().push(k));
            let mut seen = Vec::new();
            let mut max_ahead = 0;
            with_forced_workers(threads, || {
                pipeline_over(
                    source,
                    4,
                    |i, input: usize| {
                        assert_eq!(i, input);
                        input * 3
                    },
                    |item| {
                        let ahead = read.lock().unwrap().len() - seen.len();
                        max_ahead = max_ahead.max(ahead);
                        seen.push(item);
                        item < 3 * 99
                    },
                );
            });
            assert_eq!(seen, (0..100).map(|i| i * 3).collect::<Vec<_>>());
            let read = read.into_inner().unwrap();
            assert_eq!(read, (0..read.len()).collect::<Vec<_>>(), "read in order");
            assert!(
                read.len() <= 100 + 4,
                "{threads} threads read {} items",
                read.len()
            );
            assert!(max_ahead <= 4, "{max_ahead} items ahead");
        }
    }

    /// The bits of `m`'s entries, for "bit-identical" comparisons.
    #[cfg(not(target_arch = "wasm32"))]
    fn bits(m: &DMatrix<f64>) -> Vec<u64> {
        m.iter().map(|v| v.to_bits()).collect()
    }

    /// Parallelism's promise: one thread and several compute the same bits — the tall QR (chunks
    /// factored on several threads), a Haar mask's blocked products on a block of records (row
    /// bands) and on one long record (reflectors generated ahead on other threads).
    /// Native only: WebAssembly has one thread, so there is no "several" to compare against.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn one_thread_and_several_give_identical_bits() {
        use crate::key::{Key, StreamId};
        use crate::linalg::tall_qr::{chunk_rows, tall_r};
        use crate::mask::{HaarOrthogonal, Mask};

        let (n, k) = (5 * chunk_rows(9) + 3, 9);
        let m = DMatrix::from_fn(n, k, |i, j| {
            ((i * 7 + j * 13) % 29) as f64 - 14.0 + j as f64
        });
        let columns: Vec<&[f64]> = m.as_slice().chunks_exact(n).collect();
        let one = with_forced_workers(1, || tall_r(&columns));
        let several = with_forced_workers(3, || {
            assert_eq!(workers(), 3);
            tall_r(&columns)
        });
        assert_eq!(bits(&one), bits(&several), "tall QR");

        let q =
            HaarOrthogonal::keyed(300, Key::teaching(8).stream(StreamId::Scratch(300))).unwrap();
        let block = DMatrix::from_fn(150, 300, |i, j| ((i * 3 + j * 5) % 11) as f64 - 5.0);
        let masked = |threads: usize| {
            with_forced_workers(threads, || {
                let mut b = block.clone();
                q.right_mul_at(&mut b, 0, false);
                b
            })
        };
        assert_eq!(
            bits(&masked(1)),
            bits(&masked(3)),
            "blocked products over row bands"
        );

        let record: Vec<f64> = (0..300).map(|j| (j % 17) as f64 - 8.0).collect();
        let one_record = |threads: usize| {
            with_forced_workers(threads, || q.mask_row(&record).unwrap())
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            one_record(1),
            one_record(3),
            "pipelined reflector generation"
        );
    }

    /// The cap lowers the count; the forced count of the tests is not a cap.
    #[test]
    fn the_cap_lowers_the_worker_count() {
        let two = NonZeroUsize::new(2).unwrap_or(NonZeroUsize::MIN);
        assert_eq!(with_max_threads(NonZeroUsize::MIN, workers), 1);
        assert!(with_max_threads(two, workers) <= 2);
        assert_eq!(
            map(5, |i| i + 1),
            with_max_threads(NonZeroUsize::MIN, || map(5, |i| i + 1))
        );
    }

    #[test]
    fn split_evenly_by_hand() {
        assert_eq!(split_evenly(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(split_evenly(2, 4), vec![0..1, 1..2, 2..2, 2..2]);
    }
}
