//! The embedded store: one sled database in `store.path`, one sled tree per table.
//!
//! Durability: sled's own flush writes its log with `sync_file_range`, which neither flushes the
//! disk's write cache nor the file's metadata, so a power cut could lose what it "flushed". Here
//! a flush is followed by `fdatasync` on sled's log file and an `fsync` of every blob file sled
//! wrote since the last flush (values too large for the log), and of the blob directory: only
//! then does `flush` return, and only then are audit records acknowledged.

use super::{Entry, Store, StoreError, Table};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// sled's page cache when `store.cache_bytes` does not say (sled's own default is 1 GiB).
pub const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// A sled database.
pub struct SledStore {
    database: sled::Db,
    /// The files a flush must fsync; `None` for a temporary database.
    durable: Option<DurableFiles>,
}

/// sled's log file, and its blob directory with the newest blob already synced.
struct DurableFiles {
    log: File,
    blobs: PathBuf,
    synced_blob: Mutex<u64>,
}

impl SledStore {
    /// Opens (or creates) the database in `directory`, with a page cache of `cache_bytes`
    /// (`None`: `DEFAULT_CACHE_BYTES`).
    pub fn open(directory: &Path, cache_bytes: Option<u64>) -> Result<Self, StoreError> {
        let config = sled::Config::new()
            .path(directory)
            .mode(sled::Mode::HighThroughput)
            .cache_capacity(cache_bytes.unwrap_or(DEFAULT_CACHE_BYTES));
        Self::open_config(directory, &config, "open the store")
    }

    /// sled panics on some damaged stores (a truncated segment, say) instead of answering an
    /// error: turn that into an error naming the store and what to do.
    fn open_config(directory: &Path, config: &sled::Config, what: &str) -> Result<Self, StoreError> {
        let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| config.open()));
        let damaged = |detail: &str| {
            StoreError(format!(
                "cannot {what} in {}: the store is damaged (truncated or corrupted files; sled says: \
                 {detail}). Restore it from a backup (`toolgate store restore`)",
                directory.display()
            ))
        };
        let database = match opened {
            Ok(Ok(database)) => database,
            Ok(Err(error @ (sled::Error::Corruption { .. } | sled::Error::ReportableBug(_)))) => {
                return Err(damaged(&error.to_string()));
            }
            Ok(Err(error)) => {
                return Err(StoreError(format!("cannot {what} in {}: {error}", directory.display())));
            }
            Err(panic) => {
                let detail = panic
                    .downcast_ref::<&str>()
                    .map(|text| (*text).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "no detail".to_owned());
                return Err(damaged(&detail));
            }
        };
        let log = File::open(directory.join("db")).map_err(|error| {
            StoreError(format!("cannot open the store's log in {}: {error}", directory.display()))
        })?;
        let blobs = directory.join("blobs");
        let synced_blob = Mutex::new(newest_blob(&blobs).unwrap_or(0));
        Ok(Self { database, durable: Some(DurableFiles { log, blobs, synced_blob }) })
    }

    /// Creates a database in `directory`, which must not hold one yet (backups, restores).
    pub fn create_new(directory: &Path) -> Result<Self, StoreError> {
        let config = sled::Config::new().path(directory).create_new(true).cache_capacity(DEFAULT_CACHE_BYTES);
        Self::open_config(directory, &config, "create a store")
    }

    /// A throwaway database that lives in memory (tests and the demo).
    pub fn temporary() -> Result<Self, StoreError> {
        let database = sled::Config::new()
            .temporary(true)
            .cache_capacity(DEFAULT_CACHE_BYTES)
            .open()
            .map_err(|error| StoreError(error.to_string()))?;
        Ok(Self { database, durable: None })
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
        self.database.flush().map_err(failure)?;
        match &self.durable {
            Some(files) => {
                files.sync().map_err(|error| StoreError(format!("fsync of the store failed: {error}")))
            }
            None => Ok(()),
        }
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

impl DurableFiles {
    /// fdatasync of sled's log, then fsync of each blob written since the last call and of
    /// their directory (so the new names survive too).
    fn sync(&self) -> std::io::Result<()> {
        self.log.sync_data()?;
        let mut synced = self.synced_blob.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(blobs) = blobs(&self.blobs)? else { return Ok(()) };
        let mut newest = *synced;
        for (lsn, path) in blobs.into_iter().filter(|(lsn, _)| *lsn > *synced) {
            File::open(path)?.sync_all()?;
            newest = newest.max(lsn);
        }
        if newest > *synced {
            File::open(&self.blobs)?.sync_all()?;
            *synced = newest;
        }
        Ok(())
    }
}

/// sled's blob files (named by log sequence number) with their numbers; `None` when there is no
/// blob directory (yet).
fn blobs(directory: &Path) -> std::io::Result<Option<Vec<(u64, PathBuf)>>> {
    let Ok(entries) = std::fs::read_dir(directory) else { return Ok(None) };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry?;
        if let Some(lsn) = entry.file_name().to_str().and_then(|name| name.parse::<u64>().ok()) {
            found.push((lsn, entry.path()));
        }
    }
    Ok(Some(found))
}

/// The highest blob number in sled's blob directory.
fn newest_blob(directory: &Path) -> Option<u64> {
    blobs(directory).ok()??.into_iter().map(|(lsn, _)| lsn).max()
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
            let store = SledStore::open(directory.path(), None).expect("open");
            store.put(Table::Sessions, b"k", b"v").expect("put");
            store.database.flush().expect("flush");
        }
        // sled's background flusher lets go of the directory's lock a moment after the drop.
        let store = (0..100)
            .find_map(|_| {
                SledStore::open(directory.path(), None)
                    .inspect_err(|_| std::thread::sleep(std::time::Duration::from_millis(20)))
                    .ok()
            })
            .expect("reopen");
        assert_eq!(store.get(Table::Sessions, b"k").expect("get").as_deref(), Some(&b"v"[..]));
    }

    /// Reopens `directory` once sled's background flusher of a dropped store let go of it.
    fn reopen(directory: &Path) -> Result<SledStore, StoreError> {
        let mut last = None;
        for _ in 0..100 {
            match SledStore::open(directory, None) {
                Err(error) if error.0.contains("lock") || error.0.contains("WouldBlock") => {
                    last = Some(error);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other,
            }
        }
        Err(last.expect("tried"))
    }

    #[test]
    fn a_flush_syncs_the_blobs_sled_wrote_since_the_last_one() {
        let directory = tempfile::tempdir().expect("dir");
        let store = SledStore::open(directory.path(), None).expect("open");
        store.put(Table::AuditContent, b"big", &vec![7u8; 1 << 20]).expect("put");
        store.flush().expect("flush");
        let files = store.durable.as_ref().expect("an on-disk store has files to sync");
        let synced = *files.synced_blob.lock().expect("lock");
        assert!(synced > 0, "a value too large for sled's log went to a blob, and the flush synced it");
        assert_eq!(newest_blob(&directory.path().join("blobs")), Some(synced));
    }

    #[test]
    fn a_truncated_store_is_an_error_naming_it_not_a_panic() {
        let directory = tempfile::tempdir().expect("dir");
        {
            let store = SledStore::open(directory.path(), None).expect("open");
            for index in 0..2000u32 {
                store.put(Table::Audit, &index.to_be_bytes(), &[1u8; 300]).expect("put");
            }
            store.flush().expect("flush");
        }
        drop(reopen(directory.path()).expect("the intact store opens"));
        let log = directory.path().join("db");
        let length = std::fs::metadata(&log).expect("log").len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&log)
            .expect("log")
            .set_len(length / 3)
            .expect("truncate");
        let opened = std::panic::catch_unwind(|| reopen(directory.path()));
        let result = opened.expect("opening a damaged store must not panic");
        let error = result.err().expect("a damaged store must not open as if nothing happened");
        assert!(error.0.contains("damaged") && error.0.contains("toolgate store restore"), "{error}");
        assert!(error.0.contains(&directory.path().display().to_string()), "{error}");
    }
}
