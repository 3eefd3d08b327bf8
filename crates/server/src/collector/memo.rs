//! A bounded memo of facts the store already holds, kept in memory so that a burst of place
//! requests does not ask the store (or redo the work) for each of them (issue 24).
//!
//! Only facts that never change once true may be kept: a survey's plan and a cohort's signed
//! definition (a survey's plan, template and keys are fixed at creation, and its id is never
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
}
