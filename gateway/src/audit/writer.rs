//! The one writer: a dedicated thread that takes events from a queue, assigns sequence numbers,
//! chains and stores them in batches, makes each batch durable (fsync) and only then
//! acknowledges every event in it. Group commit is what makes many durable records per second
//! possible; acknowledging after the flush is what makes an acknowledged record survive a crash.

use super::chain::{GENESIS, Record};
use super::event::AuditEvent;
use super::{AuditError, CHECKPOINT_KEY, HEAD_KEY, Head};
use crate::store::postgres::{ChainAppend, ChainTip};
use crate::store::{PgBlocking, Store, StoreError, Table};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{mpsc, oneshot};

/// Most events in one batch.
const MAX_BATCH: usize = 4096;

/// An event waiting to be written (none: a barrier, acknowledged once everything queued before
/// it is durable), and who waits for it (nobody: an unawaited record, see `LINGER`).
pub struct Pending {
    pub event: Option<AuditEvent>,
    pub acknowledge: Option<oneshot::Sender<Result<u64, AuditError>>>,
}

/// How long records nobody waits for (`AuditLog::record_unawaited`) may wait for a record
/// somebody does, to share its flush: under steady traffic the next request's record carries
/// them; on a quiet gateway they are flushed alone after this. It bounds what a crash can lose
/// of such records.
const LINGER: std::time::Duration = std::time::Duration::from_millis(50);

/// Where the writer appends.
pub enum Sink {
    /// The embedded store: this writer is the chain's only one, so it keeps the tail in memory.
    Embedded(Arc<dyn Store>),
    /// PostgreSQL: other replicas append too, so every batch reads the tip under the chain lock.
    Shared(PgBlocking),
}

/// The writer's view of the log's end.
#[derive(Clone)]
struct Tail {
    seq: u64,
    hash: String,
}

/// Starts the writer thread.
pub fn spawn(
    sink: Sink,
    mut queue: mpsc::Receiver<Pending>,
    healthy: Arc<AtomicBool>,
    metrics: crate::metrics::Metrics,
) -> std::io::Result<()> {
    std::thread::Builder::new().name("audit-writer".into()).spawn(move || {
        // Only to wait for the queue with a deadline (`LINGER`) on this thread.
        let clock = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
            Ok(clock) => clock,
            Err(error) => {
                tracing::error!(error = %error, "the audit writer cannot start its clock");
                return;
            }
        };
        let mut tail: Option<Tail> = None;
        let mut held: Vec<Pending> = Vec::new();
        loop {
            let next = if held.is_empty() {
                queue.blocking_recv()
            } else {
                match clock.block_on(async { tokio::time::timeout(LINGER, queue.recv()).await }) {
                    Ok(next) => next,
                    // Nobody came to share a flush: the held records go alone.
                    Err(_elapsed) => {
                        commit(&sink, &mut tail, std::mem::take(&mut held), &healthy, &metrics);
                        continue;
                    }
                }
            };
            let Some(first) = next else {
                // Every handle is gone: what is held is written before the thread ends.
                if !held.is_empty() {
                    commit(&sink, &mut tail, held, &healthy, &metrics);
                }
                return;
            };
            let mut batch = std::mem::take(&mut held);
            batch.push(first);
            while batch.len() < MAX_BATCH {
                match queue.try_recv() {
                    Ok(pending) => batch.push(pending),
                    Err(_) => break,
                }
            }
            if batch.len() < MAX_BATCH && batch.iter().all(|pending| pending.acknowledge.is_none()) {
                held = batch;
                continue;
            }
            commit(&sink, &mut tail, batch, &healthy, &metrics);
        }
    })?;
    Ok(())
}

/// Writes one batch and tells everyone waiting how it went.
fn commit(
    sink: &Sink,
    tail: &mut Option<Tail>,
    batch: Vec<Pending>,
    healthy: &AtomicBool,
    metrics: &crate::metrics::Metrics,
) {
    let written = match sink {
        Sink::Embedded(store) => write(store.as_ref(), tail, &batch),
        Sink::Shared(store) => append(store, &batch),
    };
    match written {
        Ok(first_seq) => {
            healthy.store(true, Ordering::Relaxed);
            let mut seq = first_seq;
            for pending in batch {
                // A barrier gets the sequence number of the last record before it.
                let acknowledged = if pending.event.is_some() { seq } else { seq.saturating_sub(1) };
                seq += u64::from(pending.event.is_some());
                if let Some(acknowledge) = pending.acknowledge {
                    let _ = acknowledge.send(Ok(acknowledged));
                }
            }
            metrics.audit_records.inc_by(seq - first_seq);
        }
        Err(error) => {
            healthy.store(false, Ordering::Relaxed);
            metrics.audit_write_failures.inc();
            // The in-memory tail is re-read from the store next time: nothing of a failed batch
            // counts as written.
            *tail = None;
            tracing::error!(error = %error, records = batch.len(), "audit write failed; the actions waiting for it are refused");
            for pending in batch {
                if let Some(acknowledge) = pending.acknowledge {
                    let _ = acknowledge.send(Err(AuditError::Unavailable));
                }
            }
        }
    }
}

/// Chains, stores and flushes one batch; returns the first sequence number used.
fn write(store: &dyn Store, tail: &mut Option<Tail>, batch: &[Pending]) -> Result<u64, StoreError> {
    let mut current = match tail.take() {
        Some(tail) => tail,
        None => read_tail(store)?,
    };
    let first = current.seq + 1;
    let before = current.clone();
    let mut records = Vec::with_capacity(batch.len());
    for event in batch.iter().filter_map(|pending| pending.event.as_ref()) {
        let (record, bytes) = seal(&current, event)?;
        current = Tail { seq: record.seq, hash: record.hash };
        records.push((Record::key(current.seq).to_vec(), bytes));
    }
    if records.is_empty() {
        // Only barriers: everything before them was made durable by an earlier batch.
        *tail = Some(current);
        return Ok(first);
    }
    store.put_batch(Table::Audit, &records)?;
    let head = head_bytes(&current)?;
    let durable = store.put(Table::Meta, HEAD_KEY, &head).and_then(|()| store.flush());
    if let Err(error) = durable {
        // The callers are told the batch failed, so it must not stay in the log either (sled
        // could still flush it later and the next batch would chain onto it), and the head must
        // not go on counting it: a head past the log's end reads as a truncated chain, which
        // would keep the gateway from starting.
        for (key, _) in &records {
            let _ = store.delete(Table::Audit, key);
        }
        if let Ok(head) = head_bytes(&before) {
            let _ = store.put(Table::Meta, HEAD_KEY, &head);
        }
        return Err(error);
    }
    *tail = Some(current);
    Ok(first)
}

/// Seals one batch onto the shared chain in one transaction; returns the first sequence number
/// used. A batch of barriers only has nothing to write: what was queued before them was
/// committed by an earlier batch.
fn append(store: &PgBlocking, batch: &[Pending]) -> Result<u64, StoreError> {
    let events: Vec<&AuditEvent> = batch.iter().filter_map(|pending| pending.event.as_ref()).collect();
    if events.is_empty() {
        return Ok(1);
    }
    let mut first = 0;
    store.append_chain(HEAD_KEY, CHECKPOINT_KEY, |tip: ChainTip| {
        let ChainTip { last, checkpoint } = tip;
        let checkpoint = checkpoint.map(|bytes| super::parse_checkpoint(&bytes)).transpose()?;
        let mut current = tail_of(last.as_deref(), checkpoint)?;
        first = current.seq + 1;
        let mut records = Vec::with_capacity(events.len());
        for event in &events {
            let (record, bytes) = seal(&current, event)?;
            current = Tail { seq: record.seq, hash: record.hash };
            records.push((Record::key(current.seq).to_vec(), bytes));
        }
        Ok(ChainAppend { records, head: head_bytes(&current)? })
    })?;
    Ok(first)
}

/// The record after `tail`, and its stored bytes.
fn seal(tail: &Tail, event: &AuditEvent) -> Result<(Record, Vec<u8>), StoreError> {
    let record = Record::seal(tail.seq + 1, now(), tail.hash.clone(), event.clone());
    let bytes = serde_json::to_vec(&record).map_err(|error| StoreError(error.to_string()))?;
    Ok((record, bytes))
}

fn head_bytes(tail: &Tail) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(&Head { seq: tail.seq, hash: tail.hash.clone() })
        .map_err(|error| StoreError(error.to_string()))
}

/// The last record in the store, or the checkpoint after a prune, or the genesis.
fn read_tail(store: &dyn Store) -> Result<Tail, StoreError> {
    let last = store.last(Table::Audit)?.map(|(_, bytes)| bytes);
    tail_of(last.as_deref(), super::checkpoint(store)?)
}

/// The tail after `last` (a stored record), else after the checkpoint, else at the genesis.
fn tail_of(last: Option<&[u8]>, checkpoint: Option<super::Checkpoint>) -> Result<Tail, StoreError> {
    if let Some(bytes) = last {
        let record: Record = serde_json::from_slice(bytes)
            .map_err(|error| StoreError(format!("corrupt audit record: {error}")))?;
        return Ok(Tail { seq: record.seq, hash: record.hash });
    }
    Ok(match checkpoint {
        Some(checkpoint) => Tail { seq: checkpoint.seq, hash: checkpoint.hash },
        None => Tail { seq: 0, hash: GENESIS.to_owned() },
    })
}

fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}
