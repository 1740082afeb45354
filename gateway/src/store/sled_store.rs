//! The embedded store: one sled database in `store.path`, one sled tree per table.

use super::{Entry, Store, StoreError, Table};
use std::path::Path;

/// A sled database.
pub struct SledStore {
    database: sled::Db,
}

impl SledStore {
    /// Opens (or creates) the database in `directory`.
    pub fn open(directory: &Path) -> Result<Self, StoreError> {
        let database =
            sled::Config::new().path(directory).mode(sled::Mode::HighThroughput).open().map_err(|error| {
                StoreError(format!("cannot open the store in {}: {error}", directory.display()))
            })?;
        Ok(Self { database })
    }

    /// Creates a database in `directory`, which must not hold one yet (backups, restores).
    pub fn create_new(directory: &Path) -> Result<Self, StoreError> {
        let database = sled::Config::new().path(directory).create_new(true).open().map_err(|error| {
            StoreError(format!("cannot create a store in {}: {error}", directory.display()))
        })?;
        Ok(Self { database })
    }

    /// A throwaway database that lives in memory (tests and the demo).
    pub fn temporary() -> Result<Self, StoreError> {
        let database =
            sled::Config::new().temporary(true).open().map_err(|error| StoreError(error.to_string()))?;
        Ok(Self { database })
    }

    fn tree(&self, table: Table) -> Result<sled::Tree, StoreError> {
        self.database.open_tree(table.name()).map_err(failure)
    }
}

impl Store for SledStore {
    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.tree(table)?.insert(key, value).map(drop).map_err(failure)
    }

    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.tree(table)?.get(key).map_err(failure)?.map(|value| value.to_vec()))
    }

    fn take(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        // sled's remove is atomic: of two concurrent removes, one sees the value.
        Ok(self.tree(table)?.remove(key).map_err(failure)?.map(|value| value.to_vec()))
    }

    fn delete(&self, table: Table, key: &[u8]) -> Result<(), StoreError> {
        self.tree(table)?.remove(key).map(drop).map_err(failure)
    }

    fn sweep(&self, table: Table, expired: &dyn Fn(&[u8]) -> bool) -> Result<usize, StoreError> {
        let tree = self.tree(table)?;
        let mut removed = 0;
        for entry in tree.iter() {
            let (key, value) = entry.map_err(failure)?;
            if expired(&value) {
                // Only remove the version that was judged expired, not a fresh write since.
                if tree.compare_and_swap(&key, Some(&value), None as Option<&[u8]>).map_err(failure)?.is_ok()
                {
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    fn compare_and_swap(
        &self,
        table: Table,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, StoreError> {
        Ok(self.tree(table)?.compare_and_swap(key, old, new).map_err(failure)?.is_ok())
    }

    fn put_batch(&self, table: Table, records: &[Entry]) -> Result<(), StoreError> {
        let mut batch = sled::Batch::default();
        for (key, value) in records {
            batch.insert(key.as_slice(), value.as_slice());
        }
        self.tree(table)?.apply_batch(batch).map_err(failure)
    }

    fn flush(&self) -> Result<(), StoreError> {
        self.database.flush().map(drop).map_err(failure)
    }

    fn range(&self, table: Table, from: &[u8], limit: usize) -> Result<Vec<Entry>, StoreError> {
        self.tree(table)?
            .range(from..)
            .take(limit)
            .map(|entry| entry.map(|(key, value)| (key.to_vec(), value.to_vec())).map_err(failure))
            .collect()
    }

    fn last(&self, table: Table) -> Result<Option<Entry>, StoreError> {
        Ok(self.tree(table)?.last().map_err(failure)?.map(|(key, value)| (key.to_vec(), value.to_vec())))
    }

    fn delete_below(&self, table: Table, below: &[u8]) -> Result<usize, StoreError> {
        let tree = self.tree(table)?;
        let mut batch = sled::Batch::default();
        let mut removed = 0;
        for entry in tree.range(..below) {
            let (key, _) = entry.map_err(failure)?;
            batch.remove(key);
            removed += 1;
        }
        tree.apply_batch(batch).map_err(failure)?;
        Ok(removed)
    }
}

fn failure(error: sled::Error) -> StoreError {
    StoreError(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_take_is_single_use() {
        let store = SledStore::temporary().expect("store");
        store.put(Table::Handoffs, b"ticket", b"value").expect("put");
        assert_eq!(store.get(Table::Handoffs, b"ticket").expect("get").as_deref(), Some(&b"value"[..]));
        assert_eq!(store.get(Table::Sessions, b"ticket").expect("get"), None, "tables are separate");
        assert_eq!(store.take(Table::Handoffs, b"ticket").expect("take").as_deref(), Some(&b"value"[..]));
        assert_eq!(store.take(Table::Handoffs, b"ticket").expect("take"), None);
    }

    #[test]
    fn sweep_removes_only_expired_records() {
        let store = SledStore::temporary().expect("store");
        store.put(Table::Sessions, b"old", b"expired").expect("put");
        store.put(Table::Sessions, b"new", b"fresh").expect("put");
        let removed = store.sweep(Table::Sessions, &|value| value == b"expired").expect("sweep");
        assert_eq!(removed, 1);
        assert!(store.get(Table::Sessions, b"new").expect("get").is_some());
    }

    #[test]
    fn data_survives_reopening() {
        let directory = tempfile::tempdir().expect("dir");
        {
            let store = SledStore::open(directory.path()).expect("open");
            store.put(Table::Sessions, b"k", b"v").expect("put");
            store.database.flush().expect("flush");
        }
        // sled's background flusher lets go of the directory's lock a moment after the drop.
        let store = (0..100)
            .find_map(|_| {
                SledStore::open(directory.path())
                    .inspect_err(|_| std::thread::sleep(std::time::Duration::from_millis(20)))
                    .ok()
            })
            .expect("reopen");
        assert_eq!(store.get(Table::Sessions, b"k").expect("get").as_deref(), Some(&b"v"[..]));
    }
}
