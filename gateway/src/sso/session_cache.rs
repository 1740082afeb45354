//! Session records read in the last second, so the requests of one page do not each wait for
//! the store (a read of the embedded store goes to the blocking pool, one of PostgreSQL over the
//! network).
//!
//! Every change this process makes to a session (sign-out, revocation, a refresh, a failed
//! refresh that ends it) forgets the session here, and bumps an epoch that stops a read begun
//! before the change from putting the old record back. With the embedded store every change is
//! made by this process, so a revoked session never outlives its revocation. With a shared
//! store, a session another replica revokes lives on here for at most [`KEEP`].

use super::session::{SessionId, SessionRecord};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a record read from the store answers without reading it again.
pub const KEEP: Duration = Duration::from_secs(1);

/// The most sessions kept; past it the cache starts over (an attack cannot grow it).
const MAX_KEPT: usize = 10_000;

/// Recently read session records.
#[derive(Default)]
pub struct SessionCache {
    entries: Mutex<HashMap<SessionId, (SessionRecord, Instant)>>,
    /// Bumped by every change; a read that began in an older epoch is not kept.
    epoch: AtomicU64,
}

impl SessionCache {
    /// The record of `id`, if read less than [`KEEP`] ago.
    pub fn get(&self, id: &SessionId, now: Instant) -> Option<SessionRecord> {
        let entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (record, read_at) = entries.get(id)?;
        (now.saturating_duration_since(*read_at) < KEEP).then(|| record.clone())
    }

    /// Where a read from the store starts: pass it to [`keep`](Self::keep) with what it read.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Keeps what a read that started at `epoch` found, unless a change came since.
    pub fn keep(&self, id: SessionId, record: SessionRecord, epoch: u64, read_at: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.epoch.load(Ordering::Acquire) != epoch {
            return;
        }
        if entries.len() >= MAX_KEPT {
            entries.clear();
        }
        entries.insert(id, (record, read_at));
    }

    /// Forgets `id` before and after the store changes it (see the module docs).
    pub fn forget(&self, id: &SessionId) {
        let mut entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.epoch.fetch_add(1, Ordering::AcqRel);
        entries.remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sso::identity::Identity;

    fn record(user: &str) -> SessionRecord {
        SessionRecord {
            identity: Identity { user: user.into(), email: None, groups: vec![], name: None },
            created_at: 0,
            expires_at: u64::MAX,
            refresh_after: None,
            refresh_token: None,
            subject: None,
            provider_session: None,
            id_token: None,
        }
    }

    #[test]
    fn a_record_answers_for_a_second_and_a_change_forgets_it() {
        let cache = SessionCache::default();
        let (id, start) = ([1; 32], Instant::now());
        cache.keep(id, record("alice"), cache.epoch(), start);
        assert!(cache.get(&id, start + Duration::from_millis(999)).is_some());
        assert!(cache.get(&id, start + KEEP).is_none(), "read again after a second");
        cache.keep(id, record("alice"), cache.epoch(), start);
        cache.forget(&id);
        assert!(cache.get(&id, start).is_none(), "a revocation is seen at once");
    }

    #[test]
    fn a_read_that_began_before_a_change_is_not_kept() {
        let cache = SessionCache::default();
        let (id, start) = ([2; 32], Instant::now());
        let epoch = cache.epoch();
        // The session is revoked while the read is in flight: the old record stays out.
        cache.forget(&id);
        cache.keep(id, record("alice"), epoch, start);
        assert!(cache.get(&id, start).is_none());
    }
}
