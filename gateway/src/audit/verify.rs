//! Walking the chain: every record's key is its sequence number, the numbers run without gaps
//! from the start (genesis or the signed prune checkpoint), each `prev` is the previous hash and
//! each hash matches its content; the log reaches at least the recorded head (so a truncated
//! tail is noticed). The first bad record is named.

use super::chain::{GENESIS, Record};
use super::digest::DigestKey;
use super::{Checkpoint, HEAD_KEY, Head};
use crate::store::{Store, StoreError, Table};

/// Records read per store call.
const PAGE: usize = 1024;

/// The first thing wrong with the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChainError {
    /// A record's content does not match its hash (edited, bit flip).
    #[error("record {0}: content does not match its hash")]
    Tampered(u64),
    /// A record is missing (deleted) or out of order.
    #[error("record {expected}: missing (found record {found} in its place)")]
    Gap {
        /// The sequence number that should come next.
        expected: u64,
        /// The one found.
        found: u64,
    },
    /// A record's `prev` is not the previous record's hash (reordered, inserted, replaced).
    #[error("record {0}: does not follow the previous record")]
    Broken(u64),
    /// A stored value is not a record.
    #[error("record {0}: unreadable")]
    Unreadable(u64),
    /// Records at the end are missing (truncated).
    #[error("record {0}: missing at the end of the log (the log was truncated)")]
    Truncated(u64),
    /// The prune checkpoint's signature is wrong.
    #[error("the prune checkpoint is not signed by this gateway's audit key")]
    Checkpoint,
}

/// What a verification walked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Records checked.
    pub records: u64,
    /// The first sequence number present (after the checkpoint, if any).
    pub first: u64,
    /// The last sequence number.
    pub last: u64,
}

/// Verifies the whole log.
pub fn verify(store: &dyn Store, key: &DigestKey) -> Result<Result<Verified, ChainError>, StoreError> {
    // A prune (on PostgreSQL it may run while the replicas serve) moves the checkpoint and then
    // removes the records it covers: a walk that began at the old checkpoint finds the log
    // starting later than it expects. Damage seen while the checkpoint moved is walked again
    // from the new one; real damage is found again.
    let mut checkpoint = super::checkpoint(store)?;
    for _ in 0..PRUNE_RETRIES {
        let outcome = walk(store, key, checkpoint.clone())?;
        let now = super::checkpoint(store)?;
        if outcome.is_ok() || now == checkpoint {
            return Ok(outcome);
        }
        checkpoint = now;
    }
    walk(store, key, checkpoint)
}

/// How many times a verification starts again because a prune moved the checkpoint under it.
const PRUNE_RETRIES: usize = 3;

/// Verifies the log from `checkpoint` (or from its first record) to its end.
fn walk(
    store: &dyn Store,
    key: &DigestKey,
    checkpoint: Option<Checkpoint>,
) -> Result<Result<Verified, ChainError>, StoreError> {
    let (mut expected_seq, mut expected_prev) = match checkpoint {
        Some(checkpoint) => {
            if !checkpoint_is_signed(&checkpoint, key) {
                return Ok(Err(ChainError::Checkpoint));
            }
            (checkpoint.seq + 1, checkpoint.hash)
        }
        None => (1, GENESIS.to_owned()),
    };
    // The head is read before the log: records keep coming while a serving gateway verifies,
    // and every one the head counts now is in the log before the head names it (the embedded
    // store writes them first, PostgreSQL in the same transaction). Read last, the head could
    // count a record appended after the log was read, and a sound chain would look truncated.
    let head =
        store.get(Table::Meta, HEAD_KEY)?.and_then(|bytes| serde_json::from_slice::<Head>(&bytes).ok());
    let first = expected_seq;
    let mut checked = 0;
    // Records the checkpoint covers may still be there after a prune that crashed before
    // deleting them; verification starts where the checkpoint says the log starts.
    let mut from = Record::key(first).to_vec();
    loop {
        let page = store.range(Table::Audit, &from, PAGE)?;
        let Some((last_key, _)) = page.last() else { break };
        from = next_key(last_key);
        for (key, bytes) in &page {
            let key_seq = key.as_slice().try_into().map(u64::from_be_bytes).unwrap_or(u64::MAX);
            let Ok(record) = serde_json::from_slice::<Record>(bytes) else {
                return Ok(Err(ChainError::Unreadable(key_seq)));
            };
            if record.seq != expected_seq || key_seq != expected_seq {
                return Ok(Err(ChainError::Gap { expected: expected_seq, found: record.seq.min(key_seq) }));
            }
            if !record.hash_is_valid() {
                return Ok(Err(ChainError::Tampered(record.seq)));
            }
            if record.prev != expected_prev {
                return Ok(Err(ChainError::Broken(record.seq)));
            }
            expected_prev = record.hash;
            expected_seq += 1;
            checked += 1;
        }
    }
    if let Some(head) = head
        && head.seq >= expected_seq
    {
        return Ok(Err(ChainError::Truncated(expected_seq)));
    }
    Ok(Ok(Verified { records: checked, first, last: expected_seq - 1 }))
}

/// Whether a checkpoint carries this gateway's signature.
pub fn checkpoint_is_signed(checkpoint: &Checkpoint, key: &DigestKey) -> bool {
    key.verify("audit checkpoint", checkpoint.signed_text().as_bytes(), &checkpoint.signature)
}

fn next_key(key: &[u8]) -> Vec<u8> {
    let seq = key.try_into().map(u64::from_be_bytes).unwrap_or(u64::MAX);
    Record::key(seq.saturating_add(1)).to_vec()
}
