//! The tamper-evident audit log: typed events (`event.rs`) chained by hash (`chain.rs`),
//! written by one group-committing thread that acknowledges only durable records
//! (`writer.rs`), verifiable end to end (`verify.rs`), exportable as JSON lines or RFC 5424
//! syslog (`export.rs`), queryable for the dashboard (`query.rs`, `api.rs`), and prunable with
//! a signed checkpoint that keeps the remainder verifiable.
//!
//! Audit is not logging: an action that must be audited is refused (503) when its record
//! cannot be stored.
//!
//! Layer 2 of the gateway (ARCHITECTURE.md, "Code map"): may import `http`, `metrics`, `store`,
//! `support`.

pub mod chain;
pub mod content;
pub mod digest;
pub mod event;
pub mod export;
pub mod query;
pub mod verify;
mod writer;

use crate::metrics::Metrics;
use crate::store::{PgBlocking, Store, StoreError, StoreHandle, Table};
use chain::Record;
use digest::DigestKey;
use event::{AuditEvent, EventKind};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{mpsc, oneshot};

/// Where the log's last written position is kept (to notice a truncated tail).
const HEAD_KEY: &[u8] = b"audit.head";
/// Where the prune checkpoint is kept.
const CHECKPOINT_KEY: &[u8] = b"audit.checkpoint";
/// Events waiting for the writer before callers wait for room.
const QUEUE: usize = 65_536;
/// Records checked at start-up, from the end backwards.
const STARTUP_CHECK: u64 = 1000;

/// Why an event was not recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The store could not write (disk full, I/O error) or the writer stopped.
    #[error("the audit log cannot be written")]
    Unavailable,
}

/// Why the log could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditStartError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The end of the chain does not verify: the store files were damaged or edited.
    #[error("the audit log is damaged ({0}); run `toolgate audit verify` for details")]
    Corrupt(verify::ChainError),
    /// The writer thread could not start.
    #[error("cannot start the audit writer: {0}")]
    Thread(std::io::Error),
}

/// The last written position.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Head {
    seq: u64,
    hash: String,
}

/// Records before `seq + 1` were pruned; `hash` is record `seq`'s hash, signed with the audit key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The last pruned sequence number.
    pub seq: u64,
    /// Its hash.
    pub hash: String,
    /// When the prune happened.
    pub time: String,
    /// HMAC (audit key) over `seq` and `hash`.
    pub signature: String,
}

impl Checkpoint {
    fn signed_text(&self) -> String {
        format!("{}:{}", self.seq, self.hash)
    }
}

/// The audit log handle shared by the gateway.
pub struct AuditLog {
    queue: mpsc::Sender<writer::Pending>,
    key: DigestKey,
    healthy: Arc<AtomicBool>,
    /// The store for blocking readers (`read`, verification, backups).
    store: Arc<dyn Store>,
    handle: StoreHandle,
}

impl AuditLog {
    /// Opens the log: checks the end of the chain, then starts the writer. It reads the store,
    /// so it runs where a thread may block (the blocking pool), inside the runtime that drives
    /// the store.
    pub fn start(store: &StoreHandle, key: DigestKey, metrics: Metrics) -> Result<Self, AuditStartError> {
        let blocking = store.blocking_store();
        check_tail(blocking.as_ref())?;
        let (queue, receiver) = mpsc::channel(QUEUE);
        let healthy = Arc::new(AtomicBool::new(true));
        let sink = match store {
            StoreHandle::Embedded(store) => writer::Sink::Embedded(store.clone()),
            StoreHandle::Postgres(store) => {
                writer::Sink::Shared(PgBlocking::new(store.clone(), tokio::runtime::Handle::current()))
            }
        };
        writer::spawn(sink, receiver, healthy.clone(), metrics).map_err(AuditStartError::Thread)?;
        Ok(Self { queue, key, healthy, store: blocking, handle: store.clone() })
    }

    /// Records an event; returns its sequence number once it is durable.
    pub async fn record(&self, event: AuditEvent) -> Result<u64, AuditError> {
        let (acknowledge, acknowledged) = oneshot::channel();
        let pending = writer::Pending { event: Some(event), acknowledge: Some(acknowledge) };
        self.queue.send(pending).await.map_err(|_| AuditError::Unavailable)?;
        acknowledged.await.map_err(|_| AuditError::Unavailable)?
    }

    /// Queues the record of something that already happened and that nothing waits on (a model's
    /// answer, after the exposure record that let the call go out was made durable): it joins
    /// the writer's next group commit, the one of the next awaited record or, on a quiet gateway,
    /// its own after 50 ms, without the caller waiting for that flush. A failure is logged and
    /// counted by the writer. Never for a record an action depends on: those go
    /// through [`AuditLog::record`], which answers only once the record is durable.
    pub fn record_unawaited(&self, event: AuditEvent) {
        match self.queue.try_send(writer::Pending { event: Some(event), acknowledge: None }) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(pending)) => {
                // A burst filled the queue: wait for room off the caller's path, in order after
                // everything already queued.
                let queue = self.queue.clone();
                tokio::spawn(async move {
                    if queue.send(pending).await.is_err() {
                        tracing::error!("audit record lost: the audit writer has stopped");
                    }
                });
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                tracing::error!("audit record lost: the audit writer has stopped");
            }
        }
    }

    /// Waits until every record queued so far is durable (shutdown waits for this, so a record
    /// queued with [`AuditLog::record_unawaited`] is not lost to a clean stop).
    pub async fn flush(&self) -> Result<(), AuditError> {
        let (acknowledge, acknowledged) = oneshot::channel();
        let barrier = writer::Pending { event: None, acknowledge: Some(acknowledge) };
        self.queue.send(barrier).await.map_err(|_| AuditError::Unavailable)?;
        acknowledged.await.map_err(|_| AuditError::Unavailable)?.map(|_| ())
    }

    /// Records an event that cannot be refused (a policy file already changed on disk): a
    /// failure is logged and counted by the writer, not returned.
    pub async fn record_or_log(&self, event: AuditEvent) {
        if let Err(error) = self.record(event).await {
            tracing::error!(error = %error, "audit record lost");
        }
    }

    /// Records an event that refers to texts (prompts, arguments, page text): the event gets a
    /// keyed digest of each; with `capture` (the site's retention), the texts are kept too,
    /// outside the chain, until the retention ends.
    pub async fn record_with_texts(
        &self,
        mut event: AuditEvent,
        texts: &[(&str, &str)],
        capture: Option<std::time::Duration>,
    ) -> Result<u64, AuditError> {
        for (name, text) in texts {
            event.digests.insert((*name).to_owned(), self.digest(name, text.as_bytes()));
        }
        let seq = self.record(event).await?;
        if let Some(retention) = capture {
            // The record is durable; its texts are evidence on top, so a failure here is logged
            // rather than undoing the action.
            if let Err(error) = content::keep(&self.handle, seq, texts, retention).await {
                tracing::error!(error = %error, seq, "captured audit content not stored");
            }
        }
        Ok(seq)
    }

    /// A keyed digest of `text` for the `purpose` field.
    pub fn digest(&self, purpose: &str, text: &[u8]) -> String {
        self.key.digest(purpose, text)
    }

    /// Whether the last write succeeded.
    pub fn is_healthy(&self) -> bool {
        self.healthy.load(Ordering::Relaxed)
    }

    /// The store the log lives in, for readers on a thread that may block (verification,
    /// backups); async callers use [`AuditLog::read`].
    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    /// The store the log lives in, for async callers.
    pub fn handle(&self) -> &StoreHandle {
        &self.handle
    }

    /// Runs `read` over the log's store on the blocking pool, so an async caller (the audit API,
    /// the dashboard) never reads the store on its worker thread.
    pub async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&dyn Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let store = Arc::clone(&self.store);
        crate::store::blocking(move || read(store.as_ref())).await
    }

    /// The audit key (verification of checkpoints).
    pub fn key(&self) -> &DigestKey {
        &self.key
    }
}

/// The prune checkpoint, if the log was ever pruned.
pub fn checkpoint(store: &dyn Store) -> Result<Option<Checkpoint>, StoreError> {
    store.get(Table::Meta, CHECKPOINT_KEY)?.map(|bytes| parse_checkpoint(&bytes)).transpose()
}

fn parse_checkpoint(bytes: &[u8]) -> Result<Checkpoint, StoreError> {
    serde_json::from_slice(bytes).map_err(|error| StoreError(format!("corrupt audit checkpoint: {error}")))
}

/// What a prune will remove: the records up to and including `last` (`count` of them).
#[derive(Debug, Clone)]
pub struct PrunePlan {
    last: Record,
    /// How many records go.
    pub count: u64,
}

/// The records written before `before`; `None` when there are none. Nothing changes yet, so the
/// prune's audit record can be made durable before anything is deleted.
pub fn prune_plan(store: &dyn Store, before: std::time::SystemTime) -> Result<Option<PrunePlan>, StoreError> {
    let mut last_pruned: Option<Record> = None;
    let mut count = 0;
    let mut from = Record::key(0).to_vec();
    'scan: loop {
        let page = store.range(Table::Audit, &from, 1024)?;
        let Some((last_key, _)) = page.last() else { break };
        from = Record::key(
            u64::from_be_bytes(last_key.as_slice().try_into().unwrap_or([0xff; 8])).saturating_add(1),
        )
        .to_vec();
        for (_, bytes) in &page {
            let record: Record = serde_json::from_slice(bytes)
                .map_err(|error| StoreError(format!("corrupt audit record: {error}")))?;
            let written =
                humantime::parse_rfc3339_weak(&record.time).unwrap_or(std::time::SystemTime::UNIX_EPOCH);
            if written >= before {
                break 'scan;
            }
            count += 1;
            last_pruned = Some(record);
        }
    }
    Ok(last_pruned.map(|last| PrunePlan { last, count }))
}

/// Removes the planned records, keeping the rest verifiable: a checkpoint signed with the audit
/// key records where the log now starts. Run with the gateway stopped, after the prune's audit
/// record is durable. Returns how many records were removed.
pub fn prune_apply(store: &dyn Store, key: &DigestKey, plan: &PrunePlan) -> Result<u64, StoreError> {
    let last = &plan.last;
    let time = humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string();
    let mut checkpoint =
        Checkpoint { seq: last.seq, hash: last.hash.clone(), time, signature: String::new() };
    checkpoint.signature = key.digest("audit checkpoint", checkpoint.signed_text().as_bytes());
    let bytes = serde_json::to_vec(&checkpoint).map_err(|error| StoreError(error.to_string()))?;
    // The checkpoint is durable before any record goes, so a crash in between leaves a log that
    // still verifies (records the checkpoint already covers are simply still there).
    store.put(Table::Meta, CHECKPOINT_KEY, &bytes)?;
    store.flush()?;
    let removed = store.delete_below(Table::Audit, &Record::key(last.seq + 1))?;
    store.flush()?;
    Ok(removed as u64)
}

/// Plans and applies a prune at once (for tests and tools that audit it themselves).
pub fn prune(store: &dyn Store, key: &DigestKey, before: std::time::SystemTime) -> Result<u64, StoreError> {
    match prune_plan(store, before)? {
        Some(plan) => prune_apply(store, key, &plan),
        None => Ok(0),
    }
}

/// The prune's record, made durable before anything is deleted: `count` records written before
/// `before` are about to go. An interrupted prune leaves this trace.
pub fn pruning_event(count: u64, before: &str) -> AuditEvent {
    let mut event = AuditEvent::new(EventKind::Checkpoint).decision("pruning", "retention");
    event.resource = Some(format!("{count} records before {before}"));
    event
}

/// The event appended after a prune.
pub fn checkpoint_event(removed: u64, before: &str) -> AuditEvent {
    let mut event = AuditEvent::new(EventKind::Checkpoint).decision("pruned", "retention");
    event.resource = Some(format!("{removed} records before {before}"));
    event
}

/// Checks the end of the chain at start-up so damaged store files are reported, not accepted.
fn check_tail(store: &dyn Store) -> Result<(), AuditStartError> {
    // The head first, then the end of the log: a writer on another replica commits its records
    // and the head together, so appends between the two reads only make the log longer than
    // the head said, never shorter; the other order would take them for a truncation.
    let head =
        store.get(Table::Meta, HEAD_KEY)?.and_then(|bytes| serde_json::from_slice::<Head>(&bytes).ok());
    let Some((key, _)) = store.last(Table::Audit)? else { return Ok(()) };
    let last_seq = u64::from_be_bytes(key.as_slice().try_into().unwrap_or([0xff; 8]));
    let start = last_seq.saturating_sub(STARTUP_CHECK).max(1);
    let page = store.range(Table::Audit, &Record::key(start), STARTUP_CHECK as usize + 1)?;
    let mut previous: Option<Record> = None;
    for (key, bytes) in &page {
        let seq = u64::from_be_bytes(key.as_slice().try_into().unwrap_or([0xff; 8]));
        let record: Record = serde_json::from_slice(bytes)
            .map_err(|_| AuditStartError::Corrupt(verify::ChainError::Unreadable(seq)))?;
        if record.seq != seq || !record.hash_is_valid() {
            return Err(AuditStartError::Corrupt(verify::ChainError::Tampered(seq)));
        }
        if let Some(previous) = &previous
            && (record.seq != previous.seq + 1 || record.prev != previous.hash)
        {
            return Err(AuditStartError::Corrupt(verify::ChainError::Broken(seq)));
        }
        previous = Some(record);
    }
    if let Some(head) = head
        && head.seq > last_seq
    {
        return Err(AuditStartError::Corrupt(verify::ChainError::Truncated(last_seq + 1)));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
