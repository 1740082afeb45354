//! The turns in progress: which user, session and site each belongs to, the channel its tool
//! results arrive on, and the per-user limits (concurrent turns, tokens per hour).
//!
//! `/result` finds its turn here and may only answer a turn of the same user, session and site.
//! A turn removes itself when it ends (its guard drops), however it ends.

use crate::support::clock::unix_now;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc;

/// What the page answered for one tool call.
#[derive(Debug, Clone)]
pub struct ToolOutcome {
    /// The call it answers.
    pub call_id: String,
    /// The result, or the page's error.
    pub result: Result<serde_json::Value, String>,
}

/// Who a turn belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The user id.
    pub user: String,
    /// A keyed digest of the session (never the id).
    pub session: String,
    /// The site id.
    pub site: String,
}

impl Owner {
    /// One string for the three, as registries key by it.
    pub fn key(&self) -> String {
        format!("{}\n{}\n{}", self.user, self.session, self.site)
    }
}

/// Why a turn could not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The user already has the maximum number of turns running.
    TooManyTurns(usize),
    /// The user used up their tokens for this hour.
    TokenBudget(u64),
}

impl Refusal {
    /// What the user is told (the panel and API clients show it as is).
    pub fn message(&self) -> String {
        match self {
            Self::TooManyTurns(max) => {
                format!("you already have {max} agent requests running; wait for one to finish")
            }
            Self::TokenBudget(tokens) => {
                format!("you used your {tokens} model tokens for this hour; try again later")
            }
        }
    }
}

/// The registry of running turns.
#[derive(Default)]
pub struct Turns {
    running: Mutex<HashMap<String, (Owner, mpsc::Sender<ToolOutcome>)>>,
    /// user → turns running.
    per_user: Mutex<HashMap<String, usize>>,
    /// user → (hour, tokens used).
    tokens: Mutex<HashMap<String, (u64, u64)>>,
}

/// Removes its turn from the registry when dropped.
pub struct TurnGuard {
    turns: Arc<Turns>,
    id: String,
    user: String,
}

impl Turns {
    /// Registers a new turn for `owner`, unless a limit says no.
    pub fn start(
        self: &Arc<Self>,
        id: String,
        owner: Owner,
        max_concurrent: usize,
        hourly_tokens: u64,
    ) -> Result<(TurnGuard, mpsc::Receiver<ToolOutcome>), Refusal> {
        let hour = unix_now() / 3600;
        let used =
            lock(&self.tokens).get(&owner.user).filter(|(h, _)| *h == hour).map_or(0, |(_, used)| *used);
        if used >= hourly_tokens {
            return Err(Refusal::TokenBudget(hourly_tokens));
        }
        {
            let mut per_user = lock(&self.per_user);
            let running = per_user.entry(owner.user.clone()).or_insert(0);
            if *running >= max_concurrent {
                return Err(Refusal::TooManyTurns(max_concurrent));
            }
            *running += 1;
        }
        let (sender, receiver) = mpsc::channel(16);
        let user = owner.user.clone();
        lock(&self.running).insert(id.clone(), (owner, sender));
        Ok((TurnGuard { turns: Arc::clone(self), id, user }, receiver))
    }

    /// Hands a page's tool result to its turn; `false` when there is no such turn of this owner.
    pub fn deliver(&self, turn_id: &str, owner: &Owner, outcome: ToolOutcome) -> bool {
        let sender = match lock(&self.running).get(turn_id) {
            Some((turn_owner, sender)) if turn_owner == owner => sender.clone(),
            _ => return false,
        };
        sender.try_send(outcome).is_ok()
    }

    /// The ids of `owner`'s turns in progress.
    pub fn running_of(&self, owner: &Owner) -> Vec<String> {
        lock(&self.running)
            .iter()
            .filter(|(_, (running, _))| running == owner)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Counts tokens a turn used against its user's hourly budget.
    pub fn spend(&self, user: &str, tokens: u64) {
        let hour = unix_now() / 3600;
        let mut all = lock(&self.tokens);
        if all.len() > 100_000 {
            all.retain(|_, (h, _)| *h == hour);
        }
        let entry = all.entry(user.to_owned()).or_insert((hour, 0));
        if entry.0 != hour {
            *entry = (hour, 0);
        }
        entry.1 = entry.1.saturating_add(tokens);
    }
}

impl Drop for TurnGuard {
    fn drop(&mut self) {
        lock(&self.turns.running).remove(&self.id);
        let mut per_user = lock(&self.turns.per_user);
        if let Some(running) = per_user.get_mut(&self.user) {
            *running = running.saturating_sub(1);
            if *running == 0 {
                per_user.remove(&self.user);
            }
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

    fn owner(user: &str) -> Owner {
        Owner { user: user.into(), session: "s".into(), site: "tasks".into() }
    }

    #[test]
    fn concurrency_is_limited_per_user_and_released_on_drop() {
        let turns = Arc::new(Turns::default());
        let first = turns.start("t1".into(), owner("alice"), 1, 1000).expect("first turn");
        assert_eq!(turns.start("t2".into(), owner("alice"), 1, 1000).err(), Some(Refusal::TooManyTurns(1)));
        assert!(turns.start("t3".into(), owner("bob"), 1, 1000).is_ok(), "other users are not affected");
        drop(first);
        assert!(turns.start("t4".into(), owner("alice"), 1, 1000).is_ok());
    }

    #[test]
    fn results_reach_only_their_owner_and_budgets_stop_new_turns() {
        let turns = Arc::new(Turns::default());
        let (_guard, mut results) = turns.start("t1".into(), owner("alice"), 2, 100).expect("turn");
        let outcome = ToolOutcome { call_id: "c1".into(), result: Ok(serde_json::json!(1)) };
        assert!(!turns.deliver("t1", &owner("mallory"), outcome.clone()), "another user cannot answer");
        assert!(!turns.deliver("nope", &owner("alice"), outcome.clone()));
        assert!(turns.deliver("t1", &owner("alice"), outcome));
        assert_eq!(results.try_recv().map(|outcome| outcome.call_id).ok().as_deref(), Some("c1"));
        turns.spend("alice", 150);
        assert_eq!(turns.start("t2".into(), owner("alice"), 2, 100).err(), Some(Refusal::TokenBudget(100)));
    }
}
