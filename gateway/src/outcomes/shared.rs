//! Outcomes across replicas: the page's form submission may reach the site through another
//! replica than the one running its turn. The replica that watches the submission writes each
//! step (arrived, redirected, answered) to the store (`Table::Outcomes`, keyed by owner and
//! call) and announces it; a waiter on any replica reads the step there when its own registry
//! has none, and is woken by the announcement. Writes keep their order (one writer task per
//! process) and happen off the proxy's path, sealed with the session keys (a site's answer holds
//! page text); entries expire with the registry's own.
//!
//! A redirect's landing request adds its page title only on the replica that saw the redirect;
//! elsewhere the redirect alone answers after the landing grace.

use super::SiteAnswer;
use crate::store::{StoreError, StoreHandle, Table};
use crate::support::sealing::{Sealer, open_json, seal_json};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// One call's step as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Stored {
    pub(super) stage: StoredStage,
    /// The submission replaced the page that sent it.
    pub(super) navigates: bool,
    /// When it stops counting (UNIX seconds).
    pub(super) expires_at: u64,
}

/// The registry's stages, with wall-clock times.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) enum StoredStage {
    Begun,
    /// The redirect's answer, and when it came (UNIX milliseconds).
    Redirected {
        answer: SiteAnswer,
        at_ms: u64,
    },
    Final(SiteAnswer),
}

/// The store, and the task that writes to it in order.
pub(super) struct Shared {
    store: StoreHandle,
    writes: mpsc::Sender<(Vec<u8>, Vec<u8>)>,
    /// Seal each step: a site's answer (page text) at rest in the shared store is encrypted.
    keys: Arc<dyn Sealer>,
}

/// Steps waiting for the store at most; past it (the database is away) new ones are dropped,
/// and a waiter elsewhere reports the outcome as unknown.
const QUEUE: usize = 1024;

/// The sealing purpose of a stored step.
const SEALED_AS: &str = "toolgate form outcome";

impl Shared {
    /// Shares through `store`, sealed with `keys` (the session keys every replica shares);
    /// starts the writer task (inside the runtime).
    pub(super) fn new(store: StoreHandle, keys: Arc<dyn Sealer>) -> Self {
        let (writes, mut queue) = mpsc::channel::<(Vec<u8>, Vec<u8>)>(QUEUE);
        let writer = store.clone();
        tokio::spawn(async move {
            while let Some((key, value)) = queue.recv().await {
                let written = match writer.put(Table::Outcomes, &key, &value).await {
                    Ok(()) => writer.announce("outcome", "").await,
                    Err(error) => Err(error),
                };
                if let Err(error) = written {
                    tracing::warn!(error = %error, "a form outcome could not be shared with the other replicas");
                }
            }
        });
        Self { store, writes, keys }
    }

    /// Queues the step of `owner`'s `call_id` for the store.
    pub(super) fn publish(
        &self,
        owner: &str,
        call_id: &str,
        stage: StoredStage,
        navigates: bool,
        keep: Duration,
    ) {
        let stored =
            Stored { stage, navigates, expires_at: crate::support::clock::unix_now() + keep.as_secs() };
        if let Some(sealed) = seal_json(self.keys.as_ref(), SEALED_AS, &stored)
            && self.writes.try_send((key(owner, call_id), sealed)).is_err()
        {
            tracing::warn!("form outcomes are not reaching the store; this one stays with this replica");
        }
    }

    /// The step another replica stored for `owner`'s `call_id`, if it has not expired.
    pub(super) async fn read(&self, owner: &str, call_id: &str) -> Option<Stored> {
        let sealed = self.store.get(Table::Outcomes, &key(owner, call_id)).await.ok().flatten()?;
        let stored = open_json::<Stored>(self.keys.as_ref(), SEALED_AS, &sealed)?;
        (stored.expires_at > crate::support::clock::unix_now()).then_some(stored)
    }

    /// Removes expired steps; returns how many.
    pub(super) async fn sweep(&self) -> Result<usize, StoreError> {
        let (now, keys) = (crate::support::clock::unix_now(), Arc::clone(&self.keys));
        self.store
            .sweep(Table::Outcomes, move |sealed| {
                open_json::<Stored>(keys.as_ref(), SEALED_AS, sealed)
                    .is_none_or(|stored| stored.expires_at <= now)
            })
            .await
    }
}

fn key(owner: &str, call_id: &str) -> Vec<u8> {
    format!("{owner}\0{call_id}").into_bytes()
}
