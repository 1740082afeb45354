//! One async lock per key, made on demand and dropped with its last holder.
//!
//! For work that must not run twice at once for the same thing (refreshing one session's
//! tokens) while different things never wait on each other. A fixed pool of shared locks would
//! make two sessions that hash alike queue behind one slow network call.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Locks by key.
pub struct KeyedLocks<K: Eq + Hash + Clone> {
    locks: Mutex<HashMap<K, Arc<AsyncMutex<()>>>>,
}

/// Holding the lock of one key; dropping it releases the lock and forgets an unused key.
pub struct KeyedGuard<'a, K: Eq + Hash + Clone> {
    owner: &'a KeyedLocks<K>,
    key: K,
    guard: Option<OwnedMutexGuard<()>>,
}

impl<K: Eq + Hash + Clone> Default for KeyedLocks<K> {
    fn default() -> Self {
        Self { locks: Mutex::new(HashMap::new()) }
    }
}

impl<K: Eq + Hash + Clone> KeyedLocks<K> {
    /// Waits until no one else holds `key`'s lock, then holds it.
    pub async fn lock(&self, key: K) -> KeyedGuard<'_, K> {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
            locks.entry(key.clone()).or_default().clone()
        };
        let guard = lock.lock_owned().await;
        KeyedGuard { owner: self, key, guard: Some(guard) }
    }

    /// How many keys have a lock now (held or awaited).
    pub fn len(&self) -> usize {
        self.locks.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether no key has a lock now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<K: Eq + Hash + Clone> Drop for KeyedGuard<'_, K> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut locks = self.owner.locks.lock().unwrap_or_else(PoisonError::into_inner);
        // Waiters clone the lock under this same map lock, so a count of one means nobody
        // holds or awaits it.
        if locks.get(&self.key).is_some_and(|lock| Arc::strong_count(lock) == 1) {
            locks.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn different_keys_do_not_wait_on_each_other() {
        let locks = KeyedLocks::default();
        let _first = locks.lock(1).await;
        let second = tokio::time::timeout(Duration::from_secs(5), locks.lock(2)).await;
        assert!(second.is_ok(), "a second key waited for the first");
    }

    #[tokio::test]
    async fn one_key_is_held_by_one_holder_at_a_time() {
        let locks = Arc::new(KeyedLocks::default());
        let first = locks.lock("a").await;
        let waiting = {
            let locks = locks.clone();
            tokio::spawn(async move {
                let _second = locks.lock("a").await;
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "the second holder did not wait");
        drop(first);
        waiting.await.expect("second holder");
        assert!(locks.is_empty(), "an unused key's lock was kept");
    }
}
