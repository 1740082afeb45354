//! Turns that outlive their page: when an agent's form submission navigates the page away, the
//! turn waits for the site's answer without the page, and keeps the conversation here for the
//! page the browser lands on. That page's panel continues the turn (`POST /turn` with
//! `"continue": true`), so the model learns what the site answered and can correct a refused
//! call.
//!
//! One continuation per owner (user, session and site), taken once, kept for a few minutes. The
//! conversation is what the model already saw: redacted, with the turn's placeholders.

use crate::llm::Message;
use policy::Placeholders;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a continuation waits for the next page.
const KEEP_FOR: Duration = Duration::from_secs(300);
/// Most continuations kept at once.
const MAX_KEPT: usize = 10_000;

/// A turn's conversation, waiting for the next page.
#[derive(Clone)]
pub struct Continuation {
    /// Everything after the system prompt: the user's message, the model's answers, the tool
    /// results (the last one is the site's answer).
    pub conversation: Vec<Message>,
    /// The turn's placeholders, so the continued turn restores the same ones.
    pub scope: Placeholders,
    /// The conversation the turn belongs to (`state::conversations`).
    pub conversation_id: String,
    /// The form tool whose submission left the page.
    pub tool: String,
    /// What the site did: `accepted`, `rejected_by_site`, `refused_by_gateway`.
    pub outcome: &'static str,
}

/// The continuations waiting, per owner key.
#[derive(Default)]
pub struct Continuations {
    kept: Mutex<HashMap<String, (Instant, Continuation)>>,
    added: tokio::sync::Notify,
}

impl Continuations {
    /// Keeps `continuation` for `owner`'s next page, replacing an older one.
    pub fn keep(&self, owner: &str, continuation: Continuation) {
        let now = Instant::now();
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.retain(|_, (since, _)| now.duration_since(*since) < KEEP_FOR);
        if kept.len() >= MAX_KEPT
            && let Some(oldest) = kept.iter().min_by_key(|(_, (since, _))| *since).map(|(key, _)| key.clone())
        {
            kept.remove(&oldest);
        }
        kept.insert(owner.to_owned(), (now, continuation));
        drop(kept);
        self.added.notify_waiters();
    }

    /// What is waiting for `owner` (tool and outcome), without taking it.
    pub fn pending(&self, owner: &str) -> Option<(String, &'static str)> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.get(owner)
            .filter(|(since, _)| since.elapsed() < KEEP_FOR)
            .map(|(_, continuation)| (continuation.tool.clone(), continuation.outcome))
    }

    /// Takes `owner`'s continuation, once.
    pub fn take(&self, owner: &str) -> Option<Continuation> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.remove(owner)
            .filter(|(since, _)| since.elapsed() < KEEP_FOR)
            .map(|(_, continuation)| continuation)
    }

    /// Takes `owner`'s continuation, waiting up to `within` for its turn to leave it (the page
    /// may load before the turn has the site's answer).
    pub async fn take_within(&self, owner: &str, within: Duration) -> Option<Continuation> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let added = self.added.notified();
            tokio::pin!(added);
            added.as_mut().enable();
            if let Some(continuation) = self.take(owner) {
                return Some(continuation);
            }
            if tokio::time::timeout_at(deadline, added).await.is_err() {
                return self.take(owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continuation_is_taken_once_by_its_owner() {
        let continuations = Continuations::default();
        let continuation = Continuation {
            conversation: vec![Message::User("add Ada".into())],
            scope: Placeholders::new(),
            conversation_id: "c1".into(),
            tool: "add_employee".into(),
            outcome: "rejected_by_site",
        };
        continuations.keep("alice", continuation);
        assert_eq!(continuations.pending("alice"), Some(("add_employee".into(), "rejected_by_site")));
        assert!(continuations.take("bob").is_none());
        assert_eq!(continuations.take("alice").map(|taken| taken.conversation.len()), Some(1));
        assert!(continuations.take("alice").is_none() && continuations.pending("alice").is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_page_may_ask_before_the_turn_left_its_continuation() {
        let continuations = std::sync::Arc::new(Continuations::default());
        let waiting = {
            let continuations = continuations.clone();
            tokio::spawn(async move { continuations.take_within("alice", Duration::from_secs(10)).await })
        };
        tokio::time::sleep(Duration::from_secs(2)).await;
        let continuation = Continuation {
            conversation: Vec::new(),
            scope: Placeholders::new(),
            conversation_id: "c1".into(),
            tool: "t".into(),
            outcome: "accepted",
        };
        continuations.keep("alice", continuation);
        assert_eq!(waiting.await.expect("joined").map(|taken| taken.tool), Some("t".into()));
        assert!(continuations.take_within("alice", Duration::from_secs(1)).await.is_none());
    }
}
