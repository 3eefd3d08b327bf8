//! A bounded memo of facts the store already holds, kept in memory so that a burst of place
//! requests does not ask the store (or redo the work) for each of them (issue 24).
//!
//! Only facts that never change once true may be kept: a survey's plan and a cohort's signed
//! definition (kept in a once-cell, so that the offers that go out together when a cohort opens
//! make it once) (a survey's plan, template and keys are fixed at creation, and its id is never
//! given to another survey) and that a cohort was opened at the services (`opened` is never set
//! back). So an entry never goes stale, and a miss is only slower: the caller asks the store, as
//! it would without the memo. Cohorts move forward, so past cohorts' entries are not asked for
//! again once their offers are out: emptying the memo when it is full is enough to bound it.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// At most `kept` entries; the whole memo is emptied when one more would not fit.
pub(super) struct Memo<K, V> {
    entries: Mutex<HashMap<K, V>>,
    kept: usize,
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    pub(super) fn new(kept: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            kept: kept.max(1),
        }
    }

    /// The value remembered for `key`, if any.
    pub(super) fn get(&self, key: &K) -> Option<V> {
        self.entries().get(key).cloned()
    }

    /// Remember `value` for `key`.
    pub(super) fn insert(&self, key: K, value: V) {
        let mut entries = self.entries();
        if entries.len() >= self.kept && !entries.contains_key(&key) {
            entries.clear();
        }
        entries.insert(key, value);
    }

    /// The value remembered for `key`, or else `make()`'s, remembered from now on. With a value
    /// that is a once-cell (`Arc<tokio::sync::OnceCell<…>>`), callers that arrive together share
    /// one cell, and so one piece of work.
    pub(super) fn get_or_insert_with(&self, key: K, make: impl FnOnce() -> V) -> V {
        let mut entries = self.entries();
        if let Some(value) = entries.get(&key) {
            return value.clone();
        }
        if entries.len() >= self.kept {
            entries.clear();
        }
        let value = make();
        entries.insert(key, value.clone());
        value
    }

    fn entries(&self) -> MutexGuard<'_, HashMap<K, V>> {
        // A panic while the lock was held cannot leave a half-written entry (inserts are
        // whole), so a poisoned memo is still a good one.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_what_it_was_told_and_forgets_all_when_full() {
        let memo = Memo::new(2);
        assert_eq!(memo.get(&1), None);
        memo.insert(1, "a");
        memo.insert(2, "b");
        assert_eq!((memo.get(&1), memo.get(&2)), (Some("a"), Some("b")));
        // Telling it again what it holds does not empty it.
        memo.insert(2, "b");
        assert_eq!(memo.get(&1), Some("a"));
        // A third key does not fit: everything before it is forgotten, the new one kept.
        memo.insert(3, "c");
        assert_eq!(
            (memo.get(&1), memo.get(&2), memo.get(&3)),
            (None, None, Some("c"))
        );
    }

    #[test]
    fn a_value_is_made_only_when_none_is_remembered_and_the_memo_stays_bounded() {
        let memo = Memo::new(2);
        assert_eq!(memo.get_or_insert_with(1, || "a"), "a");
        // Remembered: the second maker is not asked.
        assert_eq!(memo.get_or_insert_with(1, || panic!("made twice")), "a");
        assert_eq!(memo.get_or_insert_with(2, || "b"), "b");
        // A third key empties the full memo, as `insert` does.
        assert_eq!(memo.get_or_insert_with(3, || "c"), "c");
        assert_eq!((memo.get(&1), memo.get(&3)), (None, Some("c")));
    }

    /// Callers that arrive together share the cell the first of them put in, so the work behind
    /// it runs once (the collector's signed definitions: a cohort's offers all go out together
    /// once it opens).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn callers_arriving_together_share_one_cell_and_one_piece_of_work() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let memo: Arc<Memo<u32, Arc<tokio::sync::OnceCell<u64>>>> = Arc::new(Memo::new(8));
        let made = Arc::new(AtomicUsize::new(0));
        // Every caller is held until all have their cell, so none finds the work already done.
        let together = Arc::new(tokio::sync::Barrier::new(16));
        let callers: Vec<_> = (0..16)
            .map(|_| {
                let (memo, made, together) = (memo.clone(), made.clone(), together.clone());
                tokio::spawn(async move {
                    let cell = memo.get_or_insert_with(7, Arc::default);
                    together.wait().await;
                    *cell
                        .get_or_init(|| async {
                            made.fetch_add(1, Ordering::SeqCst);
                            tokio::task::yield_now().await;
                            49
                        })
                        .await
                })
            })
            .collect();
        for caller in callers {
            assert_eq!(caller.await.unwrap(), 49);
        }
        assert_eq!(made.load(Ordering::SeqCst), 1);
    }
}
