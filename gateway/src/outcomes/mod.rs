//! Honest form outcomes: what a site answered when the agent submitted one of its forms.
//!
//! The runtime marks an agent's submission with a cookie (`mark`) naming the call, the method and
//! the path. The proxy sees that request, strips the cookie, and watches the site's answer: the
//! status, a redirect's target, and for a page what the answer probe reads (title, forms, error
//! markers). `answer` turns that into [`SiteAnswer`]: the site took it, or refused it with its
//! messages. A redirect is followed one step: the proxy marks the landing request too, so the
//! answer carries the landing page's title.
//!
//! This registry keeps each call's answer for a while, per owner (user, session and site), and
//! lets the agent's turn and the runtime wait for it. One submission per call is observed: a
//! mark seen again is ignored. Entries are bounded in number and age.
//!
//! On a shared store, each step is also written for the other replicas (`shared.rs`): a turn
//! waits for its call's answer wherever the submission went through.
//!
//! Layer 3 of the gateway (ARCHITECTURE.md, "Code map"): may import `config`, `http`, `metrics`,
//! `store`, `support`.

pub mod answer;
pub mod mark;
mod observation;
mod shared;

pub use answer::{SiteAnswer, Submitted, classify};
pub use mark::Mark;
pub use observation::{Observation, PageWatch};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Most calls remembered at once; the oldest go first.
const MAX_ENTRIES: usize = 4096;
/// How long an answer is kept.
const KEEP_FOR: Duration = Duration::from_secs(600);
/// How long a redirect's landing page may take to say its title before the redirect alone is
/// the answer.
const LANDING_GRACE: Duration = Duration::from_secs(3);

/// The least time a replica waits for a submission to show up when outcomes are shared: one
/// that reached another replica is seen here only once that replica's record is in the store,
/// which follows its answer to the browser (the store's queue), and its change notice wakes the
/// wait at once. Without it, "has arrived by now" (`arrival` of zero) could be read too early.
const SHARED_ARRIVAL: Duration = Duration::from_secs(2);

/// The answers of agents' submissions, per owner and call.
#[derive(Default)]
pub struct Outcomes {
    entries: Mutex<HashMap<(String, String), Entry>>,
    arrivals: std::sync::atomic::AtomicU64,
    changed: Notify,
    /// The other replicas' steps (a shared store only).
    shared: Option<shared::Shared>,
}

/// A call's stage as a waiter sees it, from this registry or another replica's.
enum Seen {
    Begun,
    Redirected { answer: SiteAnswer, at: Instant },
    Final(SiteAnswer),
}

struct Entry {
    since: Instant,
    /// The submission navigates its document (the page that sent it is going away).
    navigates: bool,
    /// Arrival order (instants can tie), for evicting the oldest.
    order: u64,
    stage: Stage,
}

enum Stage {
    /// The submission went to the site; no answer yet.
    Begun,
    /// The site redirected; the landing page may still add its title.
    Redirected { answer: SiteAnswer, landing: Mark, at: Instant },
    /// The answer.
    Final(SiteAnswer),
}

impl Outcomes {
    /// A registry whose steps every replica on `store` sees (the embedded store has no other
    /// replica: a plain registry). Starts its writer task, so it is built inside the runtime.
    /// Steps are sealed with `keys`, the session keys every replica shares.
    pub fn new(store: &crate::store::StoreHandle, keys: Arc<dyn crate::support::sealing::Sealer>) -> Self {
        Self {
            shared: store.is_shared().then(|| shared::Shared::new(store.clone(), keys)),
            ..Self::default()
        }
    }

    /// Another replica stored a step: waiters look again.
    pub fn changed_elsewhere(&self) {
        self.changed.notify_waiters();
    }

    /// Removes the steps shared with other replicas that expired; returns how many.
    pub async fn sweep(&self) -> Result<usize, crate::store::StoreError> {
        match &self.shared {
            Some(shared) => shared.sweep().await,
            None => Ok(0),
        }
    }

    fn publish(&self, owner: &str, call_id: &str, stage: shared::StoredStage, navigates: bool) {
        if let Some(shared) = &self.shared {
            shared.publish(owner, call_id, stage, navigates, KEEP_FOR);
        }
    }

    /// Starts watching the submission `mark` names (`navigates`: it replaces the page that sent
    /// it); `None` when this call was already observed (a replayed or stale mark), which is then
    /// not watched again.
    pub fn begin(self: &Arc<Self>, owner: &str, mark: &Mark, navigates: bool) -> Option<Observation> {
        let now = Instant::now();
        let mut entries = self.lock();
        let key = (owner.to_owned(), mark.call_id.clone());
        if entries.contains_key(&key) {
            return None;
        }
        entries.retain(|_, entry| now.duration_since(entry.since) < KEEP_FOR);
        if entries.len() >= MAX_ENTRIES
            && let Some(oldest) =
                entries.iter().min_by_key(|(_, entry)| entry.order).map(|(key, _)| key.clone())
        {
            entries.remove(&oldest);
        }
        let order = self.arrivals.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        entries.insert(key, Entry { since: now, navigates, order, stage: Stage::Begun });
        drop(entries);
        self.publish(owner, &mark.call_id, shared::StoredStage::Begun, navigates);
        self.changed.notify_waiters();
        Some(self.observation(owner, &mark.call_id, false))
    }

    /// Starts watching the landing request of a redirect this registry saw (`mark` is the one
    /// the proxy set); `None` for any other request.
    pub fn land(self: &Arc<Self>, owner: &str, mark: &Mark) -> Option<Observation> {
        let entries = self.lock();
        let key = (owner.to_owned(), mark.call_id.clone());
        match entries.get(&key).map(|entry| &entry.stage) {
            Some(Stage::Redirected { landing, .. }) if landing == mark => {
                Some(self.observation(owner, &mark.call_id, true))
            }
            _ => None,
        }
    }

    fn observation(self: &Arc<Self>, owner: &str, call_id: &str, landing: bool) -> Observation {
        Observation::new(Arc::clone(self), owner, call_id, landing)
    }

    /// Whether a submission of this call reached the site.
    pub fn observed(&self, owner: &str, call_id: &str) -> bool {
        self.lock().contains_key(&(owner.to_owned(), call_id.to_owned()))
    }

    /// Whether this call's submission navigated away from the page that sent it (on whichever
    /// replica it went through).
    pub async fn navigated(&self, owner: &str, call_id: &str) -> bool {
        let local = self.lock().get(&(owner.to_owned(), call_id.to_owned())).map(|entry| entry.navigates);
        match (local, &self.shared) {
            (Some(navigates), _) => navigates,
            (None, Some(shared)) => shared.read(owner, call_id).await.is_some_and(|stored| stored.navigates),
            (None, None) => false,
        }
    }

    /// Whether one of `owner`'s calls whose id starts with `prefix` navigated its page away
    /// within the last `within`.
    pub fn navigated_recently(&self, owner: &str, prefix: &str, within: Duration) -> bool {
        self.lock().iter().any(|((entry_owner, call_id), entry)| {
            entry_owner == owner
                && entry.navigates
                && call_id.starts_with(prefix)
                && entry.since.elapsed() < within
        })
    }

    /// Waits for the answer to `call_id`: `None` when no submission of it arrives within
    /// `arrival` (at least `SHARED_ARRIVAL` when outcomes are shared) or no answer by
    /// `deadline` (a redirect whose landing page is late counts as the answer).
    pub async fn wait(
        &self,
        owner: &str,
        call_id: &str,
        arrival: Duration,
        deadline: Instant,
    ) -> Option<SiteAnswer> {
        let key = (owner.to_owned(), call_id.to_owned());
        let arrival = if self.shared.is_some() { arrival.max(SHARED_ARRIVAL) } else { arrival };
        let arrival_by = Instant::now() + arrival;
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let seen = match self.seen_here(&key) {
                Some(seen) => Some(seen),
                None => self.seen_elsewhere(owner, call_id).await,
            };
            let now = Instant::now();
            let wake = match seen {
                Some(Seen::Final(answer)) => return Some(answer),
                Some(Seen::Redirected { answer, at }) if now >= at + LANDING_GRACE || now >= deadline => {
                    return Some(answer);
                }
                Some(Seen::Redirected { at, .. }) => (at + LANDING_GRACE).min(deadline),
                Some(Seen::Begun) if now >= deadline => return None,
                Some(Seen::Begun) => deadline,
                None if now >= arrival_by.min(deadline) => return None,
                None => arrival_by.min(deadline),
            };
            let _ = tokio::time::timeout_at(wake, notified).await;
        }
    }

    fn seen_here(&self, key: &(String, String)) -> Option<Seen> {
        self.lock().get(key).map(|entry| match &entry.stage {
            Stage::Begun => Seen::Begun,
            Stage::Redirected { answer, at, .. } => Seen::Redirected { answer: answer.clone(), at: *at },
            Stage::Final(answer) => Seen::Final(answer.clone()),
        })
    }

    async fn seen_elsewhere(&self, owner: &str, call_id: &str) -> Option<Seen> {
        let stored = self.shared.as_ref()?.read(owner, call_id).await?;
        Some(match stored.stage {
            shared::StoredStage::Begun => Seen::Begun,
            shared::StoredStage::Redirected { answer, at_ms } => {
                let ago = Duration::from_millis(crate::support::clock::unix_now_ms().saturating_sub(at_ms));
                Seen::Redirected { answer, at: Instant::now().checked_sub(ago).unwrap_or_else(Instant::now) }
            }
            shared::StoredStage::Final(answer) => Seen::Final(answer),
        })
    }

    fn settle(&self, owner: &str, call_id: &str, answer: SiteAnswer, landing: bool) {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(&(owner.to_owned(), call_id.to_owned())) else { return };
        entry.stage = match (std::mem::replace(&mut entry.stage, Stage::Begun), landing) {
            // The landing page adds its title to the redirect's answer.
            (Stage::Redirected { answer: SiteAnswer::Accepted { status, url, .. }, .. }, true) => {
                let title = match answer {
                    SiteAnswer::Accepted { title, .. } => title,
                    SiteAnswer::RejectedBySite { .. } | SiteAnswer::RefusedByGateway { .. } => None,
                };
                Stage::Final(SiteAnswer::Accepted { status, url, title })
            }
            (Stage::Begun, false) => Stage::Final(answer),
            (stage, _) => stage,
        };
        let settled = match &entry.stage {
            Stage::Final(answer) => Some((shared::StoredStage::Final(answer.clone()), entry.navigates)),
            _ => None,
        };
        drop(entries);
        if let Some((stage, navigates)) = settled {
            self.publish(owner, call_id, stage, navigates);
        }
        self.changed.notify_waiters();
    }

    fn redirect(&self, owner: &str, call_id: &str, answer: SiteAnswer, landing: Mark) {
        let mut entries = self.lock();
        let mut redirected = None;
        if let Some(entry) = entries.get_mut(&(owner.to_owned(), call_id.to_owned()))
            && matches!(entry.stage, Stage::Begun)
        {
            let stored = shared::StoredStage::Redirected {
                answer: answer.clone(),
                at_ms: crate::support::clock::unix_now_ms(),
            };
            redirected = Some((stored, entry.navigates));
            entry.stage = Stage::Redirected { answer, landing, at: Instant::now() };
        }
        drop(entries);
        if let Some((stage, navigates)) = redirected {
            self.publish(owner, call_id, stage, navigates);
        }
        self.changed.notify_waiters();
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(String, String), Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;

    fn mark(call: &str, path: &str) -> Mark {
        Mark::new(call, Method::POST, path).expect("mark")
    }

    fn accepted(status: u16, title: Option<&str>) -> SiteAnswer {
        SiteAnswer::Accepted { status, url: Some("/list/".into()), title: title.map(Into::into) }
    }

    #[tokio::test]
    async fn an_answer_is_observed_once_and_waited_for() {
        let outcomes = Arc::new(Outcomes::default());
        let deadline = Instant::now() + Duration::from_secs(5);
        let observation = outcomes.begin("alice", &mark("c1", "/add/"), true).expect("first");
        assert!(outcomes.begin("alice", &mark("c1", "/add/"), true).is_none(), "a mark is observed once");
        assert!(outcomes.observed("alice", "c1") && !outcomes.observed("bob", "c1"));
        assert!(outcomes.navigated("alice", "c1").await && !outcomes.navigated("bob", "c1").await);
        assert!(outcomes.navigated_recently("alice", "c", Duration::from_secs(60)));
        assert!(!outcomes.navigated_recently("alice", "d", Duration::from_secs(60)));
        let waiting = {
            let outcomes = Arc::clone(&outcomes);
            tokio::spawn(async move { outcomes.wait("alice", "c1", Duration::ZERO, deadline).await })
        };
        tokio::task::yield_now().await;
        let refused = SiteAnswer::RejectedBySite { status: 200, messages: vec!["taken".into()] };
        observation.finish(refused.clone());
        assert_eq!(waiting.await.expect("joined"), Some(refused));
        // Another owner never sees it.
        assert_eq!(outcomes.wait("bob", "c1", Duration::ZERO, deadline).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_redirect_waits_briefly_for_its_landing_title() {
        let outcomes = Arc::new(Outcomes::default());
        let deadline = Instant::now() + Duration::from_secs(60);
        let landing = Mark::new("c2", Method::GET, "/list/").expect("landing");
        outcomes
            .begin("alice", &mark("c2", "/add/"), false)
            .expect("begun")
            .redirected(accepted(302, None), landing.clone());
        assert!(outcomes.land("alice", &Mark::new("c2", Method::GET, "/other/").expect("m")).is_none());
        assert!(outcomes.land("bob", &landing).is_none());
        outcomes.land("alice", &landing).expect("landing").finish(accepted(200, Some("Employees")));
        assert_eq!(
            outcomes.wait("alice", "c2", Duration::ZERO, deadline).await,
            Some(accepted(302, Some("Employees")))
        );
        // Without a landing request, the redirect alone answers after the grace.
        let other = Mark::new("c3", Method::GET, "/list/").expect("landing");
        outcomes
            .begin("alice", &mark("c3", "/add/"), false)
            .expect("begun")
            .redirected(accepted(303, None), other);
        let started = Instant::now();
        assert_eq!(outcomes.wait("alice", "c3", Duration::ZERO, deadline).await, Some(accepted(303, None)));
        assert_eq!(started.elapsed(), LANDING_GRACE);
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_arriving_and_dropped_observations_are_answered() {
        let outcomes = Arc::new(Outcomes::default());
        let deadline = Instant::now() + Duration::from_secs(60);
        assert_eq!(outcomes.wait("alice", "none", Duration::from_secs(2), deadline).await, None);
        let mut observation = outcomes.begin("alice", &mark("c4", "/add/"), false).expect("begun");
        observation.set_fallback(SiteAnswer::RejectedBySite { status: 502, messages: vec![] });
        drop(observation);
        assert_eq!(
            outcomes.wait("alice", "c4", Duration::ZERO, deadline).await,
            Some(SiteAnswer::RejectedBySite { status: 502, messages: vec![] })
        );
    }

    /// Two replicas' registries on one store: the answer to a submission that went through B
    /// reaches a turn waiting on A, with whether it navigated; another owner never sees it.
    #[tokio::test]
    async fn an_answer_seen_on_another_replica_reaches_the_waiter() {
        let store = crate::store::StoreHandle::Embedded(Arc::new(
            crate::store::SledStore::temporary().expect("store"),
        ));
        let keys: Arc<dyn crate::support::sealing::Sealer> = Arc::new(crate::sso::keys::KeyRing::ephemeral());
        let shared = |store: &crate::store::StoreHandle| Outcomes {
            shared: Some(shared::Shared::new(store.clone(), keys.clone())),
            ..Outcomes::default()
        };
        let (a, b) = (Arc::new(shared(&store)), Arc::new(shared(&store)));
        let deadline = Instant::now() + Duration::from_secs(5);
        let refused =
            SiteAnswer::RejectedBySite { status: 422, messages: vec!["the amount is too high".into()] };
        b.begin("alice", &mark("c9", "/pay/"), true).expect("begun on B").finish(refused.clone());
        let mut seen = None;
        for _ in 0..100 {
            seen = a.wait("alice", "c9", Duration::ZERO, deadline).await;
            if seen.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(seen, Some(refused), "B's answer, read on A");
        assert!(a.navigated("alice", "c9").await, "the submission replaced its page");
        assert_eq!(a.wait("bob", "c9", Duration::ZERO, deadline).await, None, "another owner's call");
        assert!(
            a.begin("alice", &mark("c9", "/pay/"), true).is_some(),
            "A watches its own submissions still"
        );
    }

    #[test]
    fn the_registry_is_bounded() {
        let outcomes = Arc::new(Outcomes::default());
        for index in 0..MAX_ENTRIES + 10 {
            drop(outcomes.begin("alice", &mark(&format!("c{index}"), "/add/"), false));
        }
        assert_eq!(outcomes.lock().len(), MAX_ENTRIES);
        assert!(
            !outcomes.observed("alice", "c0") && outcomes.observed("alice", &format!("c{}", MAX_ENTRIES + 9))
        );
    }
}
