//! [`PgBlocking`]: the PostgreSQL store behind the synchronous [`Store`] trait, for the code
//! that already runs where it may block (the audit writer's thread, the blocking pool, the
//! command line). Each call waits for its future on the calling thread, while the runtime the
//! store was opened on drives the connections. Called from an async worker thread it would stall
//! that worker, and tokio refuses it (a panic): async callers use `StoreHandle` instead.

use super::{AuditQuery, ChainAppend, ChainTip, PgStore};
use crate::store::{Entry, Store, StoreError, Table};
use std::future::Future;
use tokio::runtime::Handle;

/// The PostgreSQL store for threads that may block.
#[derive(Clone)]
pub struct PgBlocking {
    store: PgStore,
    runtime: Handle,
}

impl PgBlocking {
    /// `store`, driven by the `runtime` it was opened on.
    pub fn new(store: PgStore, runtime: Handle) -> Self {
        Self { store, runtime }
    }

    /// The async store underneath.
    pub fn store(&self) -> &PgStore {
        &self.store
    }

    fn wait<T>(&self, call: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
        self.runtime.block_on(super::bounded(call))
    }

    /// [`PgStore::append_chain`], waited for.
    pub fn append_chain(
        &self,
        head_key: &[u8],
        checkpoint_key: &[u8],
        seal: impl FnOnce(ChainTip) -> Result<ChainAppend, StoreError>,
    ) -> Result<(), StoreError> {
        self.wait(self.store.append_chain(head_key, checkpoint_key, seal))
    }
}

impl Store for PgBlocking {
    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.wait(self.store.put(table, key, value))
    }

    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.wait(self.store.get(table, key))
    }

    fn take(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.wait(self.store.take(table, key))
    }

    fn delete(&self, table: Table, key: &[u8]) -> Result<(), StoreError> {
        self.wait(self.store.delete(table, key))
    }

    fn sweep(&self, table: Table, expired: &dyn Fn(&[u8]) -> bool) -> Result<usize, StoreError> {
        self.wait(self.store.sweep(table, expired))
    }

    fn compare_and_swap(
        &self,
        table: Table,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, StoreError> {
        self.wait(self.store.compare_and_swap(table, key, old, new))
    }

    fn put_batch(&self, table: Table, records: &[Entry]) -> Result<(), StoreError> {
        self.wait(self.store.put_batch(table, records))
    }

    /// A committed statement is durable already.
    fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn range(&self, table: Table, from: &[u8], limit: usize) -> Result<Vec<Entry>, StoreError> {
        self.wait(self.store.range(table, from, limit))
    }

    fn last(&self, table: Table) -> Result<Option<Entry>, StoreError> {
        self.wait(self.store.last(table))
    }

    fn delete_below(&self, table: Table, below: &[u8]) -> Result<usize, StoreError> {
        self.wait(self.store.delete_below(table, below))
    }

    fn find_audit(
        &self,
        query: &AuditQuery,
        after: u64,
        limit: usize,
    ) -> Option<Result<Vec<Vec<u8>>, StoreError>> {
        Some(self.wait(self.store.find_audit(query, after, limit)))
    }
}
