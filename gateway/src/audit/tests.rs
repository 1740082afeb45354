//! The chain against every kind of tampering, start-up checks, write failures and pruning.

use super::chain::Record;
use super::digest::DigestKey;
use super::event::{AuditEvent, EventKind};
use super::verify::{ChainError, verify};
use super::*;
use crate::store::{Entry, SledStore, Store, StoreError, Table};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

fn key() -> DigestKey {
    DigestKey::new(b"test audit key")
}

async fn log_with(count: u64) -> (Arc<SledStore>, AuditLog) {
    let store = Arc::new(SledStore::temporary().expect("store"));
    let log = AuditLog::start(&crate::store::StoreHandle::Embedded(store.clone()), key(), Metrics::new())
        .expect("log");
    for index in 0..count {
        let event = AuditEvent::new(EventKind::Login)
            .actor(&format!("user-{index}"), None, &[])
            .decision("success", "login");
        assert_eq!(log.record(event).await, Ok(index + 1), "sequence numbers run from 1 without gaps");
    }
    (store, log)
}

fn record(store: &SledStore, seq: u64) -> Vec<u8> {
    store.get(Table::Audit, &Record::key(seq)).expect("get").expect("present")
}

fn verdict(store: &SledStore) -> Result<verify::Verified, ChainError> {
    verify(store, &key()).expect("store readable")
}

#[tokio::test]
async fn an_untouched_log_verifies() {
    let (store, _log) = log_with(50).await;
    assert_eq!(verdict(&store), Ok(verify::Verified { records: 50, first: 1, last: 50 }));
}

#[tokio::test]
async fn a_flipped_byte_is_found_at_its_record() {
    let (store, _log) = log_with(20).await;
    let mut bytes = record(&store, 7);
    let position = bytes.windows(6).position(|window| window == b"user-6").expect("user id in record") + 5;
    bytes[position] = b'9';
    store.put(Table::Audit, &Record::key(7), &bytes).expect("tamper");
    assert_eq!(verdict(&store), Err(ChainError::Tampered(7)));
}

#[tokio::test]
async fn a_deleted_record_is_found() {
    let (store, _log) = log_with(20).await;
    store.delete(Table::Audit, &Record::key(12)).expect("delete");
    assert_eq!(verdict(&store), Err(ChainError::Gap { expected: 12, found: 13 }));
}

#[tokio::test]
async fn reordered_records_are_found() {
    let (store, _log) = log_with(20).await;
    let (five, six) = (record(&store, 5), record(&store, 6));
    store.put(Table::Audit, &Record::key(5), &six).expect("swap");
    store.put(Table::Audit, &Record::key(6), &five).expect("swap");
    assert_eq!(verdict(&store), Err(ChainError::Gap { expected: 5, found: 5 }));
}

#[tokio::test]
async fn an_inserted_record_is_found_even_with_a_valid_hash() {
    let (store, _log) = log_with(20).await;
    // A forger rewrites record 9 as a well-formed record of their own: its hash is valid, but it
    // does not follow record 8 … unless they also chain it, which then breaks record 10.
    let eight: Record = serde_json::from_slice(&record(&store, 8)).expect("record");
    let forged = Record::seal(9, eight.time.clone(), eight.hash.clone(), AuditEvent::new(EventKind::Logout));
    store.put(Table::Audit, &Record::key(9), &serde_json::to_vec(&forged).expect("json")).expect("insert");
    assert_eq!(verdict(&store), Err(ChainError::Broken(10)));
    let unchained =
        Record::seal(9, eight.time, super::chain::GENESIS.into(), AuditEvent::new(EventKind::Logout));
    store.put(Table::Audit, &Record::key(9), &serde_json::to_vec(&unchained).expect("json")).expect("insert");
    assert_eq!(verdict(&store), Err(ChainError::Broken(9)));
}

#[tokio::test]
async fn a_truncated_tail_is_found() {
    let (store, _log) = log_with(20).await;
    for seq in 18..=20 {
        store.delete(Table::Audit, &Record::key(seq)).expect("truncate");
    }
    assert_eq!(verdict(&store), Err(ChainError::Truncated(18)));
}

#[tokio::test]
async fn damage_is_reported_at_start_up_not_accepted() {
    let (store, log) = log_with(30).await;
    drop(log);
    let mut bytes = record(&store, 29);
    bytes.truncate(bytes.len() / 2);
    store.put(Table::Audit, &Record::key(29), &bytes).expect("truncate record");
    let error = AuditLog::start(&crate::store::StoreHandle::Embedded(store.clone()), key(), Metrics::new())
        .err()
        .expect("refused");
    assert!(error.to_string().contains("record 29"), "{error}");
}

#[tokio::test]
async fn pruning_keeps_the_rest_verifiable_and_the_checkpoint_signed() {
    let (store, log) = log_with(10).await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let cutoff = std::time::SystemTime::now();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    for _ in 0..5 {
        log.record(AuditEvent::new(EventKind::Logout)).await.expect("record");
    }
    let pruned_record = record(&store, 10);
    assert_eq!(prune(store.as_ref(), &key(), cutoff).expect("prune"), 10);
    assert_eq!(verdict(&store), Ok(verify::Verified { records: 5, first: 11, last: 15 }));
    // A prune that crashed after its checkpoint but before deleting still verifies.
    store.put(Table::Audit, &Record::key(10), &pruned_record).expect("left behind");
    assert_eq!(verdict(&store), Ok(verify::Verified { records: 5, first: 11, last: 15 }));
    store.delete(Table::Audit, &Record::key(10)).expect("clean");
    // Another key cannot vouch for the checkpoint.
    assert_eq!(
        verify(store.as_ref(), &DigestKey::new(b"other")).expect("readable"),
        Err(ChainError::Checkpoint)
    );
    // Writing goes on after the checkpoint.
    assert_eq!(log.record(AuditEvent::new(EventKind::Login)).await, Ok(16));
    assert!(verdict(&store).is_ok());
}

/// What a test does to the store at a chosen moment.
type Act = Box<dyn FnOnce(&SledStore) + Send>;

/// A disk that fails on demand: the store's writes go through a real sled store until `broken`
/// (every write fails) or `flush_broken` (only flushes fail: the writes stay in memory).
/// `before_head_read` runs once, on the store, just before the audit head is next read.
struct FailingDisk {
    inner: SledStore,
    broken: AtomicBool,
    flush_broken: AtomicBool,
    before_head_read: std::sync::Mutex<Option<Act>>,
}

impl FailingDisk {
    /// A working disk on a temporary sled store, with no hook.
    fn new() -> Self {
        Self {
            inner: SledStore::temporary().expect("store"),
            broken: AtomicBool::new(false),
            flush_broken: AtomicBool::new(false),
            before_head_read: std::sync::Mutex::new(None),
        }
    }

    fn check(&self) -> Result<(), StoreError> {
        if self.broken.load(std::sync::atomic::Ordering::Relaxed) {
            Err(StoreError("No space left on device (os error 28)".into()))
        } else {
            Ok(())
        }
    }
}

impl Store for FailingDisk {
    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.check()?;
        self.inner.put(table, key, value)
    }
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if table == Table::Meta
            && key == HEAD_KEY
            && let Some(act) = self.before_head_read.lock().expect("hook").take()
        {
            act(&self.inner);
        }
        self.inner.get(table, key)
    }
    fn take(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.take(table, key)
    }
    fn delete(&self, table: Table, key: &[u8]) -> Result<(), StoreError> {
        self.inner.delete(table, key)
    }
    fn sweep(&self, table: Table, expired: &dyn Fn(&[u8]) -> bool) -> Result<usize, StoreError> {
        self.inner.sweep(table, expired)
    }
    fn compare_and_swap(
        &self,
        table: Table,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, StoreError> {
        self.check()?;
        self.inner.compare_and_swap(table, key, old, new)
    }
    fn put_batch(&self, table: Table, records: &[Entry]) -> Result<(), StoreError> {
        self.check()?;
        self.inner.put_batch(table, records)
    }
    fn flush(&self) -> Result<(), StoreError> {
        self.check()?;
        if self.flush_broken.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(StoreError("Input/output error (os error 5)".into()));
        }
        self.inner.flush()
    }
    fn range(&self, table: Table, from: &[u8], limit: usize) -> Result<Vec<Entry>, StoreError> {
        self.inner.range(table, from, limit)
    }
    fn last(&self, table: Table) -> Result<Option<Entry>, StoreError> {
        self.inner.last(table)
    }
    fn delete_below(&self, table: Table, below: &[u8]) -> Result<usize, StoreError> {
        self.inner.delete_below(table, below)
    }
}

#[tokio::test]
async fn a_record_appended_while_the_chain_is_verified_is_not_damage() {
    // The verification runs beside a serving gateway (at every start), so records keep coming
    // while it reads. One that lands between its last read of the log and its read of the head
    // once made a sound chain look truncated, and /readyz answer 503 for good.
    let (store, log) = log_with(11).await;
    drop(log);
    let eleventh = record(&store, 11);
    let full_head = store.get(Table::Meta, HEAD_KEY).expect("get").expect("head");
    let tenth: Record = serde_json::from_slice(&record(&store, 10)).expect("record");
    let disk = FailingDisk::new();
    for seq in 1..=10 {
        disk.inner.put(Table::Audit, &Record::key(seq), &record(&store, seq)).expect("copy");
    }
    let head = serde_json::to_vec(&Head { seq: 10, hash: tenth.hash }).expect("head");
    disk.inner.put(Table::Meta, HEAD_KEY, &head).expect("head");
    assert_eq!(
        verify(&disk, &key()).expect("readable"),
        Ok(verify::Verified { records: 10, first: 1, last: 10 })
    );

    *disk.before_head_read.lock().expect("hook") = Some(Box::new(move |inner: &SledStore| {
        inner.put(Table::Audit, &Record::key(11), &eleventh).expect("append");
        inner.put(Table::Meta, HEAD_KEY, &full_head).expect("head");
    }));
    let verdict = verify(&disk, &key()).expect("readable");
    assert!(verdict.is_ok(), "an append during verification is no damage: {verdict:?}");
}

#[tokio::test]
async fn a_prune_while_the_chain_is_verified_is_not_damage() {
    let disk = Arc::new(FailingDisk::new());
    let log = AuditLog::start(&crate::store::StoreHandle::Embedded(disk.clone()), key(), Metrics::new())
        .expect("log");
    for _ in 0..10 {
        log.record(AuditEvent::new(EventKind::Login)).await.expect("record");
    }
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let cutoff = std::time::SystemTime::now();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    for _ in 0..5 {
        log.record(AuditEvent::new(EventKind::Logout)).await.expect("record");
    }
    // The prune lands after the verification read the (absent) checkpoint and before it reads
    // the log, which then starts at record 11 instead of 1.
    *disk.before_head_read.lock().expect("hook") = Some(Box::new(move |inner: &SledStore| {
        assert_eq!(prune(inner, &key(), cutoff).expect("prune"), 10);
    }));
    let verdict = verify(disk.as_ref(), &key()).expect("readable");
    assert_eq!(verdict, Ok(verify::Verified { records: 5, first: 11, last: 15 }));
    // Damage is still damage when the checkpoint stands still.
    disk.inner.delete(Table::Audit, &Record::key(12)).expect("delete");
    assert_eq!(
        verify(disk.as_ref(), &key()).expect("readable"),
        Err(ChainError::Gap { expected: 12, found: 13 })
    );
}

#[tokio::test]
async fn nothing_is_acknowledged_while_the_disk_fails_and_writing_resumes_after() {
    let disk = Arc::new(FailingDisk::new());
    let metrics = Metrics::new();
    let log = AuditLog::start(&crate::store::StoreHandle::Embedded(disk.clone()), key(), metrics.clone())
        .expect("log");
    assert_eq!(log.record(AuditEvent::new(EventKind::Login)).await, Ok(1));
    disk.broken.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(log.record(AuditEvent::new(EventKind::Login)).await, Err(AuditError::Unavailable));
    assert!(!log.is_healthy());
    assert!(metrics.render().contains("toolgate_audit_write_failures_total 1"));
    disk.broken.store(false, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(
        log.record(AuditEvent::new(EventKind::Logout)).await,
        Ok(2),
        "the failed record took no number"
    );
    assert!(log.is_healthy());
    assert_eq!(verdict(&disk.inner), Ok(verify::Verified { records: 2, first: 1, last: 2 }));
}

#[tokio::test]
async fn a_failed_flush_leaves_the_head_where_the_log_ends() {
    let disk = Arc::new(FailingDisk::new());
    let log = AuditLog::start(&crate::store::StoreHandle::Embedded(disk.clone()), key(), Metrics::new())
        .expect("log");
    assert_eq!(log.record(AuditEvent::new(EventKind::Login)).await, Ok(1));
    disk.flush_broken.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(log.record(AuditEvent::new(EventKind::Login)).await, Err(AuditError::Unavailable));
    // The refused record is gone and the head does not count it: the log is whole, and a
    // gateway starting on this store now would not take it for a truncated one.
    assert_eq!(verdict(&disk.inner), Ok(verify::Verified { records: 1, first: 1, last: 1 }));
    disk.flush_broken.store(false, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(log.record(AuditEvent::new(EventKind::Logout)).await, Ok(2));
    assert_eq!(verdict(&disk.inner), Ok(verify::Verified { records: 2, first: 1, last: 2 }));
}

#[test]
fn digests_are_keyed_and_labelled() {
    let key = key();
    let digest = key.digest("prompt", b"show me the salaries");
    assert_eq!(digest.len(), 64);
    assert!(key.verify("prompt", b"show me the salaries", &digest));
    assert!(!key.verify("arguments", b"show me the salaries", &digest), "purpose is part of the digest");
    assert_ne!(
        DigestKey::new(b"other").digest("prompt", b"show me the salaries"),
        digest,
        "no key, no guessing"
    );
}

#[tokio::test]
async fn texts_are_digested_and_captured_only_where_enabled_and_expire_without_breaking_the_chain() {
    let (store, log) = log_with(0).await;
    let texts = [("gen_ai.prompt", "what is carol's IBAN?"), ("gen_ai.tool.arguments", "{\"amount\": 1200}")];
    let plain =
        log.record_with_texts(AuditEvent::new(EventKind::LlmCall), &texts, None).await.expect("recorded");
    let captured = log
        .record_with_texts(
            AuditEvent::new(EventKind::LlmCall),
            &texts,
            Some(std::time::Duration::from_secs(3600)),
        )
        .await
        .expect("recorded");
    let expiring = log
        .record_with_texts(AuditEvent::new(EventKind::LlmCall), &texts, Some(std::time::Duration::ZERO))
        .await
        .expect("recorded");

    let stored: Record = serde_json::from_slice(&record(&store, plain)).expect("record");
    assert!(key().verify("gen_ai.prompt", texts[0].1.as_bytes(), &stored.event.digests["gen_ai.prompt"]));
    assert!(!String::from_utf8_lossy(&record(&store, plain)).contains("IBAN"), "no text in the chain");
    assert!(content::of(store.as_ref(), plain).expect("read").is_empty(), "no capture without retention");
    let kept = content::of(store.as_ref(), captured).expect("read");
    assert_eq!(kept.get("gen_ai.prompt").map(String::as_str), Some(texts[0].1));
    assert!(content::of(store.as_ref(), expiring).expect("read").is_empty(), "expired content is not served");
    assert_eq!(content::sweep(store.as_ref()).expect("sweep"), 2, "expired texts are removed");
    assert!(verdict(&store).is_ok(), "the chain does not depend on captured content");
}

/// A record queued without waiting is durable once a later flush (the shutdown's barrier) is
/// acknowledged, in order, and the barrier adds no record of its own.
#[tokio::test]
async fn unawaited_records_are_durable_after_a_flush() {
    let (store, log) = log_with(1).await;
    let first = 1;
    log.record_unawaited(AuditEvent::new(EventKind::LlmCall).decision("failure", "client_gone"));
    log.flush().await.expect("flush");
    log.flush().await.expect("a barrier alone");
    let records = store.range(Table::Audit, b"", usize::MAX).expect("records");
    assert_eq!(records.len(), 2, "two records, no barrier written");
    let last: Record = serde_json::from_slice(&records[1].1).expect("json");
    assert_eq!(last.seq, first + 1);
    assert_eq!(last.event.reason.as_deref(), Some("client_gone"));
}

/// An unawaited record on a quiet gateway does not wait for company for ever: it is written on
/// its own after the writer's linger.
#[tokio::test]
async fn an_unawaited_record_alone_is_written_after_the_linger() {
    let (store, log) = log_with(1).await;
    log.record_unawaited(AuditEvent::new(EventKind::LlmCall).decision("success", "ok"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while store.range(Table::Audit, b"", usize::MAX).expect("records").len() < 2 {
        assert!(std::time::Instant::now() < deadline, "the held record was never written");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
