//! Native-only data parallelism for the large kernels, invisible in the public API.
//!
//! On native targets the blocked kernels split independent work (rows of a right product,
//! columns of a left product, reflectors of a panel, cohorts of a survey) over
//! [`std::thread::scope`] threads, one per available core. On `wasm32` everything runs on the
//! calling thread: threads do not exist there without extra runtime support, so this module
//! compiles to the serial loop.
//!
//! Work that is already running inside a parallel region runs serially: a thread-local flag marks
//! the threads of a region (including the caller while it does its own share), so nested calls —
//! a blocked product inside a cohort processed in parallel — never oversubscribe the cores. The
//! flag is per thread and restored on exit; there is no global state.
//!
//! Parallelism never changes *what* is computed, only where: every task writes a disjoint part of
//! the output, and the key streams are read by position (sub-streams), never shared.

use nalgebra::DMatrixViewMut;

/// Upper bound on worker threads, whatever the machine reports.
#[cfg(not(target_arch = "wasm32"))]
const MAX_WORKERS: usize = 16;

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    static IN_REGION: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Number of threads a parallel region started here would use: the available cores natively
/// (at most 16), 1 on `wasm32` and inside a region.
pub fn workers() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    {
        if IN_REGION.with(std::cell::Cell::get) {
            return 1;
        }
        std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .min(MAX_WORKERS)
    }
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
}

/// Run `f` with this thread marked as inside a parallel region.
#[cfg(not(target_arch = "wasm32"))]
fn in_region<T>(f: impl FnOnce() -> T) -> T {
    let before = IN_REGION.with(|flag| flag.replace(true));
    let out = f();
    IN_REGION.with(|flag| flag.set(before));
    out
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
    let threads = workers().min(count);
    if threads <= 1 {
        for i in 0..count {
            consume(produce(i));
        }
        return;
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

        struct State<T> {
            /// Next item nobody has claimed yet.
            next: usize,
            /// Items consumed so far.
            consumed: usize,
            /// Item `i` waits in slot `i % window`.
            slots: Vec<Option<T>>,
            /// A thread panicked; everybody stops.
            failed: bool,
        }
        struct Shared<T> {
            state: Mutex<State<T>>,
            changed: Condvar,
        }
        impl<T> Shared<T> {
            fn lock(&self) -> MutexGuard<'_, State<T>> {
                self.state.lock().unwrap_or_else(PoisonError::into_inner)
            }
        }
        /// Marks the pipeline failed if its thread unwinds, so no other thread waits forever.
        struct FailOnPanic<'a, T>(&'a Shared<T>);
        impl<T> Drop for FailOnPanic<'_, T> {
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
                next: 0,
                consumed: 0,
                slots: (0..window).map(|_| None).collect(),
                failed: false,
            }),
            changed: Condvar::new(),
        };
        let claim = |s: &mut State<T>| {
            (s.next < count && s.next < s.consumed + window).then(|| {
                s.next += 1;
                s.next - 1
            })
        };
        let store = |i: usize, item: T| {
            shared.lock().slots[i % window] = Some(item);
            shared.changed.notify_all();
        };
        let (shared, claim, store, produce) = (&shared, &claim, &store, &produce);
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(move || {
                    in_region(|| {
                        let _guard = FailOnPanic(shared);
                        loop {
                            let i = {
                                let mut s = shared.lock();
                                loop {
                                    if s.failed || s.next >= count {
                                        return;
                                    }
                                    if let Some(i) = claim(&mut s) {
                                        break i;
                                    }
                                    s = shared
                                        .changed
                                        .wait(s)
                                        .unwrap_or_else(PoisonError::into_inner);
                                }
                            };
                            store(i, produce(i));
                        }
                    });
                });
            }
            in_region(|| {
                let _guard = FailOnPanic(shared);
                for i in 0..count {
                    let item = loop {
                        let mut s = shared.lock();
                        if let Some(item) = s.slots[i % window].take() {
                            break item;
                        }
                        assert!(!s.failed, "a producer thread of the pipeline panicked");
                        if let Some(j) = claim(&mut s) {
                            drop(s);
                            store(j, produce(j));
                            continue;
                        }
                        drop(
                            shared
                                .changed
                                .wait(s)
                                .unwrap_or_else(PoisonError::into_inner),
                        );
                    };
                    consume(item);
                    shared.lock().consumed += 1;
                    shared.changed.notify_all();
                }
            });
        });
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = window;
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

    #[test]
    fn split_evenly_by_hand() {
        assert_eq!(split_evenly(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(split_evenly(2, 4), vec![0..1, 1..2, 2..2, 2..2]);
    }
}
