//! Each user's agent turns in progress and the tokens they used this hour, in one store record
//! per user (`Table::AgentTurns`), changed only by compare-and-swap, so the limits hold across
//! replicas: of two replicas starting a user's last allowed turn at once, one gets it.
//!
//! A running turn holds a lease: its replica releases it when the turn ends, however it ends;
//! a replica that dies cannot, so a lease also ends by itself after [`LEASE_SECONDS`]. A killed
//! replica therefore takes its users' turn slots with it for at most that long, and a turn that
//! runs longer stops counting against the limit after it. The lease also names the turn's
//! session and site: a tool result posted to another replica is accepted only for a turn that
//! is running for the same user, session and site.

use super::turn_owner::{Owner, Refusal};
use crate::store::{StoreError, StoreHandle, Table};
use serde::{Deserialize, Serialize};

/// How long a lease lasts unless released.
pub const LEASE_SECONDS: u64 = 15 * 60;
/// Tries of the read-change-swap cycle before giving up (others changed the record each time).
const ATTEMPTS: usize = 16;

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
}

/// Takes a lease for turn `id` of `owner`, unless the user has `max_concurrent` turns running
/// or used `hourly_tokens` this hour.
pub async fn acquire(
    store: &StoreHandle,
    id: &str,
    owner: &Owner,
    (max_concurrent, hourly_tokens): (usize, u64),
    now: u64,
) -> Result<(), Refusal> {
    update(store, &owner.user, now, |record| {
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

/// Ends turn `id`'s lease and counts the `tokens` it used against the user's hour, in one change.
pub async fn finish(store: &StoreHandle, user: &str, id: &str, tokens: u64, now: u64) -> Result<(), Refusal> {
    update(store, user, now, |record| {
        record.turns.retain(|lease| lease.id != id);
        record.tokens = record.tokens.saturating_add(tokens);
        Ok(())
    })
    .await
}

/// Whether turn `id` is running (on any replica) for exactly this owner.
pub async fn is_running(store: &StoreHandle, id: &str, owner: &Owner, now: u64) -> Result<bool, StoreError> {
    let Some(bytes) = store.get(Table::AgentTurns, owner.user.as_bytes()).await? else { return Ok(false) };
    let record: UserTurns = decode(&bytes)?;
    Ok(record.turns.iter().any(|lease| {
        lease.id == id && lease.session == owner.session && lease.site == owner.site && lease.until > now
    }))
}

/// Whether a stored record counts nothing any more (the sweep removes it).
pub fn is_idle(bytes: &[u8], now: u64) -> bool {
    decode(bytes).map_or(true, |mut record: UserTurns| {
        let hour = record.hour;
        record.tidy(now);
        record.turns.is_empty() && hour != now / 3600
    })
}

/// Read, change, compare-and-swap; retried when another replica changed the record first.
async fn update(
    store: &StoreHandle,
    user: &str,
    now: u64,
    change: impl Fn(&mut UserTurns) -> Result<(), Refusal>,
) -> Result<(), Refusal> {
    let key = user.as_bytes();
    for _ in 0..ATTEMPTS {
        let old = store.get(Table::AgentTurns, key).await.map_err(unavailable)?;
        let mut record = match &old {
            Some(bytes) => decode(bytes).map_err(unavailable)?,
            None => UserTurns::default(),
        };
        record.tidy(now);
        change(&mut record)?;
        let new = serde_json::to_vec(&record).map_err(|error| unavailable(StoreError(error.to_string())))?;
        if store
            .compare_and_swap(Table::AgentTurns, key, old.as_deref(), Some(&new))
            .await
            .map_err(unavailable)?
        {
            return Ok(());
        }
    }
    Err(Refusal::Unavailable)
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

    /// A replica killed while its turn runs never releases the lease: the slot comes back when
    /// the lease ends, so no user is locked out for good; and the lease no longer vouches for
    /// the turn (a result posted for it is refused).
    #[tokio::test]
    async fn a_dead_replicas_lease_ends_by_itself() {
        let store = StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store")));
        let now = 1_000_000;
        acquire(&store, "t1", &alice(), (1, 1000), now).await.expect("first turn");
        assert!(is_running(&store, "t1", &alice(), now + 1).await.expect("read"));
        assert_eq!(acquire(&store, "t2", &alice(), (1, 1000), now + 1).await, Err(Refusal::TooManyTurns(1)));
        let later = now + LEASE_SECONDS;
        assert!(!is_running(&store, "t1", &alice(), later).await.expect("read"), "the lease ended");
        acquire(&store, "t2", &alice(), (1, 1000), later).await.expect("the slot is free again");
    }

    #[tokio::test]
    async fn tokens_count_per_hour_and_idle_records_go() {
        let store = StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store")));
        let hour = 3600 * 500;
        acquire(&store, "t1", &alice(), (2, 100), hour).await.expect("turn");
        finish(&store, "alice", "t1", 150, hour + 10).await.expect("finished");
        assert_eq!(
            acquire(&store, "t2", &alice(), (2, 100), hour + 20).await,
            Err(Refusal::TokenBudget(100))
        );
        let bytes = store.get(Table::AgentTurns, b"alice").await.expect("read").expect("record");
        assert!(!is_idle(&bytes, hour + 30), "this hour's tokens still count");
        acquire(&store, "t3", &alice(), (2, 100), hour + 3600).await.expect("a new hour, a new budget");
        finish(&store, "alice", "t3", 0, hour + 3601).await.expect("finished");
        let bytes = store.get(Table::AgentTurns, b"alice").await.expect("read").expect("record");
        assert!(is_idle(&bytes, hour + 7200), "nothing counts an hour later");
    }
}
