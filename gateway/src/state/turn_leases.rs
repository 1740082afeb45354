//! Each user's agent turns in progress and the tokens they used this hour ([`Leases`]), in one
//! record per user.
//!
//! With the embedded store the gateway is one process, and the records live in its memory:
//! nothing else could read them, and a lease that outlived the process would only lock its user
//! out. With a shared store (PostgreSQL) they live in the store (`Table::AgentTurns`), changed
//! only by compare-and-swap, so the limits hold across replicas: of two replicas starting a
//! user's last allowed turn at once, one gets it. A replica makes its own changes to one user's
//! record one at a time, so its turns queue instead of racing each other's swaps; a swap lost to
//! another replica is retried after a random, growing wait.
//!
//! A running turn holds a lease: its replica releases it when the turn ends, however it ends;
//! a replica that dies cannot, so a lease also ends by itself after [`LEASE_SECONDS`]. A killed
//! replica therefore takes its users' turn slots with it for at most that long, and a turn that
//! runs longer stops counting against the limit after it. The lease also names the turn's
//! session and site: a tool result posted to another replica is accepted only for a turn that
//! is running for the same user, session and site.

use super::turn_owner::{Owner, Refusal};
use crate::store::{StoreError, StoreHandle, Table};
use crate::support::keyed_lock::KeyedLocks;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// How long a lease lasts unless released.
pub const LEASE_SECONDS: u64 = 15 * 60;
/// Tries of the read-change-swap cycle before giving up (others changed the record each time).
const ATTEMPTS: u32 = 16;
/// The longest wait before trying again after another replica's change won.
const MAX_BACKOFF_MS: u64 = 32;

/// One user's record.
#[derive(Debug, Default, Serialize, Deserialize)]
struct UserTurns {
    turns: Vec<Lease>,
    /// The hour (UNIX seconds / 3600) `tokens` counts.
    hour: u64,
    tokens: u64,
}

/// A turn in progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Lease {
    id: String,
    session: String,
    site: String,
    until: u64,
}

impl UserTurns {
    /// Forgets what no longer counts: ended leases, an earlier hour's tokens.
    fn tidy(&mut self, now: u64) {
        self.turns.retain(|lease| lease.until > now);
        if self.hour != now / 3600 {
            self.hour = now / 3600;
            self.tokens = 0;
        }
    }

    /// Whether the record counts nothing any more (a sweep removes it): no lease still running,
    /// and its tokens are of an earlier hour.
    fn is_idle(&self, now: u64) -> bool {
        self.hour != now / 3600 && self.turns.iter().all(|lease| lease.until <= now)
    }

    fn is_running(&self, id: &str, owner: &Owner, now: u64) -> bool {
        self.turns.iter().any(|lease| {
            lease.id == id && lease.session == owner.session && lease.site == owner.site && lease.until > now
        })
    }
}

/// Every user's record: in this process, or in the store the replicas share.
pub struct Leases(Book);

enum Book {
    /// One process (the embedded store): the records by user.
    Local(Mutex<HashMap<String, UserTurns>>),
    /// Replicas on a shared store: the records in `Table::AgentTurns`.
    Shared {
        store: StoreHandle,
        /// This replica's changes of one user's record, one at a time.
        changes: KeyedLocks<String>,
    },
}

impl Leases {
    /// The records of one process.
    pub fn local() -> Self {
        Self(Book::Local(Mutex::default()))
    }

    /// The records every replica on `store` shares.
    pub fn shared(store: StoreHandle) -> Self {
        Self(Book::Shared { store, changes: KeyedLocks::default() })
    }

    /// Takes a lease for turn `id` of `owner`, unless the user has `max_concurrent` turns
    /// running or used `hourly_tokens` this hour.
    pub async fn acquire(
        &self,
        id: &str,
        owner: &Owner,
        (max_concurrent, hourly_tokens): (usize, u64),
        now: u64,
    ) -> Result<(), Refusal> {
        self.update(&owner.user, now, |record| {
            if record.tokens >= hourly_tokens {
                return Err(Refusal::TokenBudget(hourly_tokens));
            }
            if record.turns.len() >= max_concurrent {
                return Err(Refusal::TooManyTurns(max_concurrent));
            }
            let (session, site) = (owner.session.clone(), owner.site.clone());
            record.turns.push(Lease { id: id.to_owned(), session, site, until: now + LEASE_SECONDS });
            Ok(())
        })
        .await
    }

    /// Ends turn `id`'s lease and counts the `tokens` it used against the user's hour, in one
    /// change.
    pub async fn finish(&self, user: &str, id: &str, tokens: u64, now: u64) -> Result<(), Refusal> {
        self.update(user, now, |record| {
            record.turns.retain(|lease| lease.id != id);
            record.tokens = record.tokens.saturating_add(tokens);
            Ok(())
        })
        .await
    }

    /// Whether turn `id` is running (on any replica) for exactly this owner.
    pub async fn is_running(&self, id: &str, owner: &Owner, now: u64) -> Result<bool, StoreError> {
        match &self.0 {
            Book::Local(records) => Ok(records
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&owner.user)
                .is_some_and(|record| record.is_running(id, owner, now))),
            Book::Shared { store, .. } => {
                let Some(bytes) = store.get(Table::AgentTurns, owner.user.as_bytes()).await? else {
                    return Ok(false);
                };
                Ok(decode(&bytes)?.is_running(id, owner, now))
            }
        }
    }

    /// Removes the records that count nothing any more; returns how many.
    pub async fn sweep(&self, now: u64) -> Result<usize, StoreError> {
        match &self.0 {
            Book::Local(records) => {
                let mut records = records.lock().unwrap_or_else(PoisonError::into_inner);
                let before = records.len();
                records.retain(|_, record| !record.is_idle(now));
                Ok(before - records.len())
            }
            Book::Shared { store, .. } => {
                store
                    .sweep(Table::AgentTurns, move |bytes| {
                        decode(bytes).map_or(true, |record| record.is_idle(now))
                    })
                    .await
            }
        }
    }

    /// Read, change, write back. In the store: compare-and-swap, retried when another replica
    /// changed the record first, after a random wait that grows with each lost swap (replicas
    /// that lost together do not retry together).
    async fn update(
        &self,
        user: &str,
        now: u64,
        change: impl Fn(&mut UserTurns) -> Result<(), Refusal>,
    ) -> Result<(), Refusal> {
        let (store, changes) = match &self.0 {
            Book::Local(records) => {
                // The records are plain values: a panic while holding the lock left them whole.
                let mut records = records.lock().unwrap_or_else(PoisonError::into_inner);
                let record = records.entry(user.to_owned()).or_default();
                record.tidy(now);
                return change(record);
            }
            Book::Shared { store, changes } => (store, changes),
        };
        let _one_change = changes.lock(user.to_owned()).await;
        let key = user.as_bytes();
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                tokio::time::sleep(backoff(attempt)).await;
            }
            let old = store.get(Table::AgentTurns, key).await.map_err(unavailable)?;
            let mut record = match &old {
                Some(bytes) => decode(bytes).map_err(unavailable)?,
                None => UserTurns::default(),
            };
            record.tidy(now);
            change(&mut record)?;
            let new =
                serde_json::to_vec(&record).map_err(|error| unavailable(StoreError(error.to_string())))?;
            if store
                .compare_and_swap(Table::AgentTurns, key, old.as_deref(), Some(&new))
                .await
                .map_err(unavailable)?
            {
                return Ok(());
            }
        }
        tracing::warn!(
            attempts = ATTEMPTS,
            "agent turn limits: other replicas changed the user's record every time"
        );
        Err(Refusal::Unavailable)
    }
}

/// A random wait before try `attempt` (1, 2, …): up to 2^attempt ms, at most [`MAX_BACKOFF_MS`].
fn backoff(attempt: u32) -> Duration {
    let ceiling = (1_u64 << attempt.min(16)).min(MAX_BACKOFF_MS);
    let random = u64::from(u16::from_le_bytes(crate::support::random::random_bytes::<2>()));
    Duration::from_millis(random % (ceiling + 1))
}

fn decode(bytes: &[u8]) -> Result<UserTurns, StoreError> {
    serde_json::from_slice(bytes).map_err(|error| StoreError(format!("unreadable agent turns: {error}")))
}

fn unavailable(error: StoreError) -> Refusal {
    tracing::error!(error = %error, "agent turn limits cannot be read or written");
    Refusal::Unavailable
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;
    use std::sync::Arc;

    fn alice() -> Owner {
        Owner { user: "alice".into(), session: "s".into(), site: "tasks".into() }
    }

    /// The records of one process, and those of replicas on a store.
    fn both() -> [Leases; 2] {
        let store = StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store")));
        [Leases::local(), Leases::shared(store)]
    }

    /// A replica killed while its turn runs never releases the lease: the slot comes back when
    /// the lease ends, so no user is locked out for good; and the lease no longer vouches for
    /// the turn (a result posted for it is refused).
    #[tokio::test]
    async fn a_dead_replicas_lease_ends_by_itself() {
        for leases in both() {
            let now = 1_000_000;
            leases.acquire("t1", &alice(), (1, 1000), now).await.expect("first turn");
            assert!(leases.is_running("t1", &alice(), now + 1).await.expect("read"));
            let other_session = Owner { session: "other".into(), ..alice() };
            assert!(!leases.is_running("t1", &other_session, now + 1).await.expect("read"));
            assert_eq!(
                leases.acquire("t2", &alice(), (1, 1000), now + 1).await,
                Err(Refusal::TooManyTurns(1))
            );
            let later = now + LEASE_SECONDS;
            assert!(!leases.is_running("t1", &alice(), later).await.expect("read"), "the lease ended");
            leases.acquire("t2", &alice(), (1, 1000), later).await.expect("the slot is free again");
        }
    }

    #[tokio::test]
    async fn tokens_count_per_hour_and_idle_records_go() {
        for leases in both() {
            let hour = 3600 * 500;
            leases.acquire("t1", &alice(), (2, 100), hour).await.expect("turn");
            leases.finish("alice", "t1", 150, hour + 10).await.expect("finished");
            assert_eq!(
                leases.acquire("t2", &alice(), (2, 100), hour + 20).await,
                Err(Refusal::TokenBudget(100))
            );
            assert_eq!(leases.sweep(hour + 30).await.expect("sweep"), 0, "this hour's tokens still count");
            leases.acquire("t3", &alice(), (2, 100), hour + 3600).await.expect("a new hour, a new budget");
            leases.finish("alice", "t3", 0, hour + 3601).await.expect("finished");
            assert_eq!(leases.sweep(hour + 3602).await.expect("sweep"), 0, "this hour still counts");
            assert_eq!(leases.sweep(hour + 7200).await.expect("sweep"), 1, "nothing counts an hour later");
            assert_eq!(leases.sweep(hour + 7200).await.expect("sweep"), 0, "the record went");
        }
    }
}
