//! The turns in progress: which user, session and site each belongs to, the channel its tool
//! results arrive on, and the per-user limits (concurrent turns, tokens per hour,
//! `turn_leases.rs`): in this process's memory on the embedded store, in the store on a shared
//! one so they hold across replicas.
//!
//! `/result` finds its turn here and may only answer a turn of the same user, session and site.
//! A result posted to the replica running the turn goes straight into its channel; one posted
//! to another replica is checked against the turn's lease, parked in the store
//! (`Table::ToolResults`) and announced, and the running replica takes it from there
//! ([`Turns::collect`]). A turn removes itself when it ends (its guard drops), however it ends.

use super::turn_leases::Leases;
pub use super::turn_owner::{Owner, Refusal};
use crate::store::{StoreHandle, Table};
use crate::support::clock::unix_now;
use crate::support::sealing::{Sealer, open_json, seal_json};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc;

/// How long a parked result waits for its turn's replica before the sweep removes it.
const PARKED_SECONDS: u64 = 600;
/// Most parked results one turn takes at once (a page answers one call at a time).
const MAX_PARKED: usize = 64;

/// What the page answered for one tool call.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// The call it answers.
    pub call_id: String,
    /// The result, or the page's error.
    pub result: Result<serde_json::Value, String>,
}

/// A result parked for the replica running its turn.
#[derive(Debug, Serialize, Deserialize)]
struct Parked {
    owner: Owner,
    outcome: ToolOutcome,
    expires_at: u64,
}

/// The turns this replica runs, and the way to the others'.
pub struct Turns {
    running: Mutex<HashMap<String, (Owner, mpsc::Sender<ToolOutcome>)>>,
    store: StoreHandle,
    /// The per-user limits: in memory for one process, in the store for replicas.
    leases: Leases,
    /// Seal parked results: page data at rest in the shared store is encrypted.
    keys: Arc<dyn Sealer>,
}

/// The sealing purpose of a parked result.
const PARKED: &str = "toolgate parked tool result";

/// Removes its turn from the registry, and releases its lease: at once with
/// [`TurnGuard::finish`], else in the background when dropped.
pub struct TurnGuard {
    turns: Arc<Turns>,
    id: String,
    user: String,
    finished: bool,
}

impl Turns {
    /// The registry, with parked results in `store`, sealed with `keys` (the session keys every
    /// replica shares); the limits are in `store` too when it is shared with other replicas,
    /// else in this process.
    pub fn new(store: StoreHandle, keys: Arc<dyn Sealer>) -> Self {
        let leases = if store.is_shared() { Leases::shared(store.clone()) } else { Leases::local() };
        Self::with_leases(store, keys, leases)
    }

    fn with_leases(store: StoreHandle, keys: Arc<dyn Sealer>, leases: Leases) -> Self {
        Self { running: Mutex::default(), store, leases, keys }
    }

    /// Registers a new turn for `owner`, unless a limit says no.
    pub async fn start(
        self: &Arc<Self>,
        id: String,
        owner: Owner,
        max_concurrent: usize,
        hourly_tokens: u64,
    ) -> Result<(TurnGuard, mpsc::Receiver<ToolOutcome>), Refusal> {
        self.leases.acquire(&id, &owner, (max_concurrent, hourly_tokens), unix_now()).await?;
        let (sender, receiver) = mpsc::channel(16);
        let user = owner.user.clone();
        lock(&self.running).insert(id.clone(), (owner, sender));
        Ok((TurnGuard { turns: Arc::clone(self), id, user, finished: false }, receiver))
    }

    /// Ends turn `id`'s lease and counts its `tokens`. A failure is logged where it happened;
    /// the lease then ends by itself.
    async fn release(&self, user: &str, id: &str, tokens: u64) {
        let _ = self.leases.finish(user, id, tokens, unix_now()).await;
    }

    /// Hands a page's tool result to its turn, here or (parked and announced) on the replica
    /// running it; `false` when no turn of this owner has this id anywhere.
    pub async fn deliver(&self, turn_id: &str, owner: &Owner, outcome: ToolOutcome) -> bool {
        let local = match lock(&self.running).get(turn_id) {
            Some((turn_owner, sender)) if turn_owner == owner => Some(sender.clone()),
            Some(_) => return false,
            None => None,
        };
        if let Some(sender) = local {
            return sender.try_send(outcome).is_ok();
        }
        let now = unix_now();
        match self.leases.is_running(turn_id, owner, now).await {
            Ok(true) => {}
            Ok(false) => return false,
            Err(error) => {
                tracing::error!(error = %error, "a tool result could not be checked against its turn");
                return false;
            }
        }
        let key = parked_key(turn_id, &outcome.call_id);
        let parked = Parked { owner: owner.clone(), outcome, expires_at: now + PARKED_SECONDS };
        let Some(sealed) = seal_json(self.keys.as_ref(), PARKED, &parked) else { return false };
        let stored = self.store.put(Table::ToolResults, &key, &sealed).await;
        let announced = match stored {
            Ok(()) => self.store.announce("result", turn_id).await,
            Err(error) => Err(error),
        };
        if let Err(error) = announced {
            tracing::error!(error = %error, "a tool result for another replica's turn could not be passed on");
            return false;
        }
        true
    }

    /// Takes the results parked for turn `turn_id`, if this replica runs it, into its channel.
    pub async fn collect(&self, turn_id: &str) {
        let Some((owner, sender)) = lock(&self.running).get(turn_id).cloned() else { return };
        let prefix = format!("{turn_id}\0");
        let parked = match self.store.range(Table::ToolResults, prefix.as_bytes(), MAX_PARKED).await {
            Ok(parked) => parked,
            Err(error) => {
                tracing::error!(error = %error, "parked tool results could not be read");
                return;
            }
        };
        for (key, _) in parked.into_iter().take_while(|(key, _)| key.starts_with(prefix.as_bytes())) {
            // Taken, not read: of two replicas collecting, one gets it.
            let Ok(Some(sealed)) = self.store.take(Table::ToolResults, &key).await else { continue };
            let Some(parked) = open_json::<Parked>(self.keys.as_ref(), PARKED, &sealed) else { continue };
            if parked.owner == owner {
                let _ = sender.try_send(parked.outcome);
            }
        }
    }

    /// Takes the parked results of every turn this replica runs (after missed notices).
    pub async fn collect_all(&self) {
        let running: Vec<String> = lock(&self.running).keys().cloned().collect();
        for turn_id in running {
            self.collect(&turn_id).await;
        }
    }

    /// The ids of `owner`'s turns in progress on this replica.
    pub fn running_of(&self, owner: &Owner) -> Vec<String> {
        lock(&self.running)
            .iter()
            .filter(|(_, (running, _))| running == owner)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Removes every per-user record from the store: for a store only this process uses, at
    /// start. This process keeps its records in memory; those found are of turns a previous
    /// run held (releases before 2026-11-27 kept them in the embedded store too).
    pub async fn forget_every_lease(&self) -> Result<usize, crate::store::StoreError> {
        self.store.sweep(Table::AgentTurns, |_| true).await
    }

    /// Removes parked results nobody took, and users' records that count nothing any more.
    pub async fn sweep(&self) -> Result<usize, crate::store::StoreError> {
        let now = unix_now();
        let keys = Arc::clone(&self.keys);
        let parked = self
            .store
            .sweep(Table::ToolResults, move |sealed| {
                open_json::<Parked>(keys.as_ref(), PARKED, sealed)
                    .is_none_or(|parked| parked.expires_at <= now)
            })
            .await?;
        let idle = self.leases.sweep(now).await?;
        Ok(parked + idle)
    }
}

/// A parked result's key: the turn, the call, and a random part (a page may answer twice).
fn parked_key(turn_id: &str, call_id: &str) -> Vec<u8> {
    let nonce = crate::http::hex(&crate::support::random::random_bytes::<8>());
    format!("{turn_id}\0{call_id}\0{nonce}").into_bytes()
}

impl TurnGuard {
    /// Ends the turn: its lease released and the `tokens` it used counted against the user's
    /// hour, done when this returns (so the user's next request finds the slot free).
    pub async fn finish(mut self, tokens: u64) {
        self.finished = true;
        lock(&self.turns.running).remove(&self.id);
        self.turns.release(&self.user, &self.id, tokens).await;
    }
}

impl Drop for TurnGuard {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        lock(&self.turns.running).remove(&self.id);
        // A turn that ended without `finish` (its task failed): the lease goes in the
        // background; should that fail, it ends by itself.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (turns, user, id) = (Arc::clone(&self.turns), self.user.clone(), self.id.clone());
            runtime.spawn(async move { turns.release(&user, &id, 0).await });
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The maps hold plain values; a panic while holding the lock leaves them consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    fn owner(user: &str) -> Owner {
        Owner { user: user.into(), session: "s".into(), site: "tasks".into() }
    }

    /// Two registries over one store, as two replicas on one database.
    fn replicas() -> (Arc<Turns>, Arc<Turns>) {
        let store = StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store")));
        let keys: Arc<dyn Sealer> = Arc::new(crate::sso::keys::KeyRing::ephemeral());
        let replica = || {
            let leases = Leases::shared(store.clone());
            Arc::new(Turns::with_leases(store.clone(), Arc::clone(&keys), leases))
        };
        (replica(), replica())
    }

    /// One registry of one process on the embedded store.
    fn alone() -> Arc<Turns> {
        let store = StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store")));
        Arc::new(Turns::new(store, Arc::new(crate::sso::keys::KeyRing::ephemeral())))
    }

    #[tokio::test]
    async fn concurrency_is_limited_per_user_on_every_replica_and_released_on_drop() {
        let (a, b) = replicas();
        let first = a.start("t1".into(), owner("alice"), 1, 1000).await.expect("first turn");
        assert_eq!(b.start("t2".into(), owner("alice"), 1, 1000).await.err(), Some(Refusal::TooManyTurns(1)));
        assert!(b.start("t3".into(), owner("bob"), 1, 1000).await.is_ok(), "other users are not affected");
        first.0.finish(0).await;
        let (fourth, _) =
            b.start("t4".into(), owner("alice"), 1, 1000).await.expect("the slot is free at once");
        // A guard dropped without `finish` (its task failed) releases in the background.
        drop(fourth);
        for _ in 0..100 {
            if a.start("t5".into(), owner("alice"), 1, 1000).await.is_ok() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the dropped turn's slot was never released");
    }

    /// One user's many connections start and end turns at once, in one process and on two
    /// replicas: each change of the user's record gets through (none is refused as "store
    /// unavailable"), every lease is released and every token counted.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_users_turns_started_at_once_are_all_counted() {
        const TASKS: u64 = 32;
        const TURNS: u64 = 25;
        let one = alone();
        for (first, second) in [(Arc::clone(&one), one), replicas()] {
            let single = Arc::ptr_eq(&first, &second);
            let tasks: Vec<_> = (0..TASKS)
                .map(|task| {
                    let turns = if task % 4 == 0 { Arc::clone(&second) } else { Arc::clone(&first) };
                    tokio::spawn(async move {
                        for turn in 0..TURNS {
                            let id = format!("t{task}-{turn}");
                            let (guard, _) = turns.start(id, owner("alice"), 1000, u64::MAX).await?;
                            guard.finish(1).await;
                        }
                        Ok::<(), Refusal>(())
                    })
                })
                .collect();
            for task in tasks {
                assert_eq!(task.await.expect("task"), Ok(()), "single process: {single}");
            }
            let used = TASKS * TURNS;
            assert_eq!(
                first.start("over".into(), owner("alice"), 1, used).await.err(),
                Some(Refusal::TokenBudget(used)),
                "every turn's tokens counted"
            );
            let (last, _) =
                first.start("last".into(), owner("alice"), 1, used + 1).await.expect("every lease released");
            last.finish(0).await;
        }
    }

    #[tokio::test]
    async fn results_reach_only_their_owner_and_budgets_stop_new_turns() {
        let (turns, other) = replicas();
        let (guard, mut results) = turns.start("t1".into(), owner("alice"), 2, 100).await.expect("turn");
        let outcome = ToolOutcome { call_id: "c1".into(), result: Ok(serde_json::json!(1)) };
        assert!(!turns.deliver("t1", &owner("mallory"), outcome.clone()).await, "another user cannot answer");
        assert!(!turns.deliver("nope", &owner("alice"), outcome.clone()).await);
        assert!(turns.deliver("t1", &owner("alice"), outcome).await);
        assert_eq!(results.try_recv().map(|outcome| outcome.call_id).ok().as_deref(), Some("c1"));
        guard.finish(150).await;
        assert_eq!(
            other.start("t2".into(), owner("alice"), 2, 100).await.err(),
            Some(Refusal::TokenBudget(100))
        );
    }

    /// A result posted to another replica is parked for the turn's own, which takes it once;
    /// a result for a turn that runs nowhere, or for somebody else's, is refused there too.
    #[tokio::test]
    async fn a_result_posted_to_another_replica_reaches_the_turn_once() {
        let (a, b) = replicas();
        let (_guard, mut results) = a.start("t1".into(), owner("alice"), 2, 1000).await.expect("turn");
        let outcome = ToolOutcome { call_id: "c7".into(), result: Ok(serde_json::json!({"rows": 3})) };
        assert!(!b.deliver("t1", &owner("mallory"), outcome.clone()).await, "another user's turn");
        let elsewhere = Owner { site: "hr".into(), ..owner("alice") };
        assert!(!b.deliver("t1", &elsewhere, outcome.clone()).await, "the same user on another site");
        assert!(!b.deliver("t9", &owner("alice"), outcome.clone()).await, "a turn that runs nowhere");
        assert!(b.deliver("t1", &owner("alice"), outcome).await);
        assert!(results.try_recv().is_err(), "parked until its replica collects it");
        let parked = b.store.range(Table::ToolResults, b"", 10).await.expect("read");
        assert_eq!(parked.len(), 1);
        assert!(
            !String::from_utf8_lossy(&parked[0].1).contains("rows")
                && !String::from_utf8_lossy(&parked[0].1).contains("alice"),
            "page data and owners are sealed at rest"
        );
        b.collect("t1").await;
        assert!(results.try_recv().is_err(), "only the replica running the turn collects");
        a.collect("t1").await;
        assert_eq!(results.try_recv().map(|outcome| outcome.call_id).ok().as_deref(), Some("c7"));
        a.collect_all().await;
        assert!(results.try_recv().is_err(), "taken once");
    }
}
