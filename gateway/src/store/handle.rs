//! The store as async callers reach it, whichever it is: [`StoreHandle`]. The embedded store's
//! calls run on the blocking pool (a sled read may wait on the disk, a flush on `fdatasync`),
//! PostgreSQL's wait on the network, each within the call limit (2 s); no call holds an async
//! worker thread. Code that already runs where it may block uses the synchronous [`Store`]
//! trait instead (`blocking_store`). The handle also announces changes to the other replicas
//! and hears theirs (PostgreSQL only), and answers readiness checks.

use super::postgres::bounded;
use super::{Entry, PgBlocking, PgStore, Store, StoreError, Table};
use std::sync::Arc;

/// The gateway's store, for async callers. Cheap to clone.
#[derive(Clone)]
pub enum StoreHandle {
    /// The embedded store, one process (sled).
    Embedded(Arc<dyn Store>),
    /// PostgreSQL, shared by several replicas.
    Postgres(PgStore),
}

/// Runs a call of the embedded store on the blocking pool (the one place that does).
pub(crate) async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(call)
        .await
        .map_err(|error| StoreError(format!("store call failed: {error}")))?
}

impl StoreHandle {
    /// The same store behind the synchronous trait, for code on a thread that may block (the
    /// blocking pool, the audit writer's thread): never call it from an async worker.
    pub fn blocking_store(&self) -> Arc<dyn Store> {
        match self {
            Self::Embedded(store) => Arc::clone(store),
            Self::Postgres(store) => {
                Arc::new(PgBlocking::new(store.clone(), tokio::runtime::Handle::current()))
            }
        }
    }

    /// Writes (or replaces) a record.
    pub async fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        match self {
            Self::Embedded(store) => {
                let (store, key, value) = (Arc::clone(store), key.to_vec(), value.to_vec());
                blocking(move || store.put(table, &key, &value)).await
            }
            Self::Postgres(store) => bounded(store.put(table, key, value)).await,
        }
    }

    /// Reads a record.
    pub async fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self {
            Self::Embedded(store) => {
                let (store, key) = (Arc::clone(store), key.to_vec());
                blocking(move || store.get(table, &key)).await
            }
            Self::Postgres(store) => bounded(store.get(table, key)).await,
        }
    }

    /// Removes a record and returns it, atomically.
    pub async fn take(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        match self {
            Self::Embedded(store) => {
                let (store, key) = (Arc::clone(store), key.to_vec());
                blocking(move || store.take(table, &key)).await
            }
            Self::Postgres(store) => bounded(store.take(table, key)).await,
        }
    }

    /// Removes a record.
    pub async fn delete(&self, table: Table, key: &[u8]) -> Result<(), StoreError> {
        match self {
            Self::Embedded(store) => {
                let (store, key) = (Arc::clone(store), key.to_vec());
                blocking(move || store.delete(table, &key)).await
            }
            Self::Postgres(store) => bounded(store.delete(table, key)).await,
        }
    }

    /// Replaces `key`'s value with `new` (or removes it) only if it is still `old`; returns
    /// whether it did. Atomic.
    pub async fn compare_and_swap(
        &self,
        table: Table,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, StoreError> {
        match self {
            Self::Embedded(store) => {
                let store = Arc::clone(store);
                let (key, old, new) = (key.to_vec(), old.map(<[u8]>::to_vec), new.map(<[u8]>::to_vec));
                blocking(move || store.compare_and_swap(table, &key, old.as_deref(), new.as_deref())).await
            }
            Self::Postgres(store) => bounded(store.compare_and_swap(table, key, old, new)).await,
        }
    }

    /// Writes several records atomically (all or none).
    pub async fn put_batch(&self, table: Table, records: Vec<Entry>) -> Result<(), StoreError> {
        match self {
            Self::Embedded(store) => {
                let store = Arc::clone(store);
                blocking(move || store.put_batch(table, &records)).await
            }
            Self::Postgres(store) => bounded(store.put_batch(table, &records)).await,
        }
    }

    /// Up to `limit` records with keys `>= from`, in key order.
    pub async fn range(&self, table: Table, from: &[u8], limit: usize) -> Result<Vec<Entry>, StoreError> {
        match self {
            Self::Embedded(store) => {
                let (store, from) = (Arc::clone(store), from.to_vec());
                blocking(move || store.range(table, &from, limit)).await
            }
            Self::Postgres(store) => bounded(store.range(table, from, limit)).await,
        }
    }

    /// The record with the greatest key.
    pub async fn last(&self, table: Table) -> Result<Option<Entry>, StoreError> {
        match self {
            Self::Embedded(store) => {
                let store = Arc::clone(store);
                blocking(move || store.last(table)).await
            }
            Self::Postgres(store) => bounded(store.last(table)).await,
        }
    }

    /// Removes every record with a key `< below`; returns how many.
    pub async fn delete_below(&self, table: Table, below: &[u8]) -> Result<usize, StoreError> {
        match self {
            Self::Embedded(store) => {
                let (store, below) = (Arc::clone(store), below.to_vec());
                blocking(move || store.delete_below(table, &below)).await
            }
            Self::Postgres(store) => bounded(store.delete_below(table, below)).await,
        }
    }

    /// Removes every record for which `expired` says so; returns how many.
    pub async fn sweep(
        &self,
        table: Table,
        expired: impl Fn(&[u8]) -> bool + Send + Sync + 'static,
    ) -> Result<usize, StoreError> {
        match self {
            Self::Embedded(store) => {
                let store = Arc::clone(store);
                blocking(move || store.sweep(table, &expired)).await
            }
            Self::Postgres(store) => bounded(store.sweep(table, &expired)).await,
        }
    }

    /// Whether other replicas share this store.
    pub fn is_shared(&self) -> bool {
        matches!(self, Self::Postgres(_))
    }

    /// Tells the other replicas that `key` of `topic` changed (see `postgres/notify.rs`). The
    /// embedded store has no other replica: nothing to tell.
    pub async fn announce(&self, topic: &str, key: &str) -> Result<(), StoreError> {
        match self {
            Self::Embedded(_) => Ok(()),
            Self::Postgres(store) => bounded(store.announce(topic, key)).await,
        }
    }

    /// The changes other replicas announce; `None` for the embedded store, which nobody else
    /// changes.
    pub fn subscribe(&self) -> Option<tokio::sync::broadcast::Receiver<super::postgres::Notice>> {
        match self {
            Self::Embedded(_) => None,
            Self::Postgres(store) => Some(store.subscribe()),
        }
    }

    /// Whether the store answers (readiness): the embedded one always does; the database must
    /// answer a query within the call limit.
    pub async fn ping(&self) -> Result<(), StoreError> {
        match self {
            Self::Embedded(_) => Ok(()),
            Self::Postgres(store) => bounded(store.ping()).await,
        }
    }

    /// Makes every write so far durable: the embedded store's `fsync`; a PostgreSQL commit
    /// already is.
    pub async fn flush(&self) -> Result<(), StoreError> {
        match self {
            Self::Embedded(store) => {
                let store = Arc::clone(store);
                blocking(move || store.flush()).await
            }
            Self::Postgres(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    /// The embedded arm keeps the store's semantics; the PostgreSQL arm is tested against a
    /// real server (`tests/it/postgres.rs`).
    #[tokio::test]
    async fn the_embedded_store_answers_async_callers_with_its_own_semantics() {
        let store = StoreHandle::Embedded(Arc::new(SledStore::temporary().expect("store")));
        let table = Table::Sessions;
        store.put(table, b"a", b"1").await.expect("put");
        store
            .put_batch(table, vec![(b"b".to_vec(), b"2".to_vec()), (b"c".to_vec(), b"3".to_vec())])
            .await
            .expect("batch");
        assert_eq!(store.get(table, b"a").await.expect("get").as_deref(), Some(&b"1"[..]));
        assert!(store.compare_and_swap(table, b"a", Some(b"1"), Some(b"one")).await.expect("cas"));
        assert!(!store.compare_and_swap(table, b"a", Some(b"1"), None).await.expect("stale cas"));
        assert_eq!(store.take(table, b"b").await.expect("take").as_deref(), Some(&b"2"[..]));
        assert_eq!(store.take(table, b"b").await.expect("taken"), None);
        assert_eq!(store.last(table).await.expect("last").map(|(key, _)| key), Some(b"c".to_vec()));
        assert_eq!(store.sweep(table, |value| value == b"3").await.expect("sweep"), 1);
        assert_eq!(store.delete_below(table, b"b").await.expect("delete below"), 1);
        assert!(store.range(table, b"", 10).await.expect("range").is_empty());
        store.flush().await.expect("flush");
    }
}
