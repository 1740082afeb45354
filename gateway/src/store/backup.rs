//! Backups of the store, for any `Store` implementation: a consistent walk over every table
//! (`walk`), the framed byte stream that carries it from a running gateway's admin listener to
//! `toolgate store backup` or into a file (`encode`, `Decoder`), and the import into an empty
//! store that a backup directory and a restore are made with (`Importer`).
//!
//! Consistency while the gateway writes: records are independent of each other except the audit
//! log, a hash chain whose head position lives in `Meta`. `Meta` is read first and `Audit`
//! right after, so the copied head never runs ahead of the copied records, and because records
//! are only ever appended (by one writer, in key order) the copied log is an unbroken prefix that
//! verifies. Records appended after the walk passed them are simply not in this backup.

use super::{Entry, Store, StoreError, Table};

/// The first bytes of every backup stream: a name and the format version.
pub const MAGIC: &[u8] = b"toolgate backup 1\n";

/// Records read per store call.
const PAGE: usize = 1024;
/// Longest table name, key and value a stream may carry (a damaged length fails cleanly
/// instead of asking for gigabytes).
const MAX_NAME: usize = 64;
const MAX_KEY: usize = 1 << 20;
const MAX_VALUE: usize = 64 << 20;
/// Records, and bytes, written per batch on import.
const IMPORT_BATCH: usize = 1024;
const IMPORT_BATCH_BYTES: usize = 16 << 20;

/// One step of a backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// The records that follow belong to this table.
    Table(Table),
    /// One record.
    Record(Entry),
    /// The end, with the number of records sent (a stream without it is incomplete).
    End {
        /// Records in the whole backup.
        records: u64,
    },
}

/// Why a backup or a restore failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BackupError {
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The input does not start like a backup.
    #[error("not a toolgate backup (it does not start with the backup header)")]
    NotABackup,
    /// The input is damaged.
    #[error("the backup is damaged: {0}")]
    Damaged(String),
    /// The input ended before its end marker (a cut connection, a partial file).
    #[error("the backup is incomplete: it ended after {0} records without its end marker")]
    Incomplete(u64),
    /// The input names a table this version does not know.
    #[error(
        "the backup holds table `{0}`, which this toolgate does not know (use the version that wrote it)"
    )]
    UnknownTable(String),
    /// Whoever received the walk stopped taking it (the client went away, a write failed).
    #[error("the backup was not taken: {0}")]
    Aborted(String),
}

/// Walks every table (`Table::ALL`, `Meta` then `Audit` first) and hands each step to `sink`;
/// returns how many records it handed over. Safe while the gateway writes (see the module docs).
pub fn walk(
    store: &dyn Store,
    sink: &mut dyn FnMut(Item) -> Result<(), BackupError>,
) -> Result<u64, BackupError> {
    let mut records = 0;
    for table in Table::ALL {
        sink(Item::Table(table))?;
        let mut from = Vec::new();
        loop {
            let page = store.range(table, &from, PAGE)?;
            let complete_page = page.len() == PAGE;
            let Some((last, _)) = page.last() else { break };
            // The smallest key after `last`: the next page starts right behind this one.
            from = last.clone();
            from.push(0);
            for entry in page {
                records += 1;
                sink(Item::Record(entry))?;
            }
            if !complete_page {
                break;
            }
        }
    }
    sink(Item::End { records })?;
    Ok(records)
}

/// Appends the stream form of `item` to `out` (the header is `MAGIC`, written once first).
pub fn encode(item: &Item, out: &mut Vec<u8>) {
    match item {
        Item::Table(table) => {
            let name = table.name().as_bytes();
            out.push(b'T');
            // Table names are short constants (`MAX_NAME`).
            out.extend_from_slice(&(name.len() as u16).to_be_bytes());
            out.extend_from_slice(name);
        }
        Item::Record((key, value)) => {
            out.push(b'R');
            for part in [key, value] {
                out.extend_from_slice(&u32::try_from(part.len()).unwrap_or(u32::MAX).to_be_bytes());
                out.extend_from_slice(part);
            }
        }
        Item::End { records } => {
            out.push(b'E');
            out.extend_from_slice(&records.to_be_bytes());
        }
    }
}

/// Reads a backup stream in pieces of any size and hands out its items.
#[derive(Debug, Default)]
pub struct Decoder {
    buffer: Vec<u8>,
    started: bool,
    ended: bool,
    records: u64,
}

impl Decoder {
    /// A decoder waiting for the header.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next piece of the stream; hands every complete item in it to `sink`.
    pub fn push(
        &mut self,
        bytes: &[u8],
        sink: &mut dyn FnMut(Item) -> Result<(), BackupError>,
    ) -> Result<(), BackupError> {
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.extend_from_slice(bytes);
        let mut at = 0;
        if !self.started {
            let seen = buffer.len().min(MAGIC.len());
            if buffer[..seen] != MAGIC[..seen] {
                return Err(BackupError::NotABackup);
            }
            if seen < MAGIC.len() {
                self.buffer = buffer;
                return Ok(());
            }
            self.started = true;
            at = MAGIC.len();
        }
        while let Some((item, used)) = self.next_item(&buffer[at..])? {
            at += used;
            if let Item::Record(_) = item {
                self.records += 1;
            }
            sink(item)?;
        }
        buffer.drain(..at);
        self.buffer = buffer;
        Ok(())
    }

    /// Ends the stream: it must have carried its end marker and nothing after it.
    pub fn finish(self) -> Result<(), BackupError> {
        if !self.started && self.buffer.is_empty() {
            return Err(BackupError::NotABackup);
        }
        if !self.ended {
            return Err(BackupError::Incomplete(self.records));
        }
        Ok(())
    }

    /// The item at the start of `bytes` and its length, or `None` when more bytes are needed.
    fn next_item(&mut self, bytes: &[u8]) -> Result<Option<(Item, usize)>, BackupError> {
        let Some(&tag) = bytes.first() else { return Ok(None) };
        if self.ended {
            return Err(BackupError::Damaged("data after the end marker".into()));
        }
        let rest = &bytes[1..];
        match tag {
            b'T' => {
                let Some(length) = read_length(rest, 2, MAX_NAME, "table name")? else { return Ok(None) };
                let Some(name) = rest.get(2..2 + length) else { return Ok(None) };
                let name = String::from_utf8_lossy(name);
                let table = Table::from_name(&name).ok_or_else(|| BackupError::UnknownTable(name.into()))?;
                Ok(Some((Item::Table(table), 3 + length)))
            }
            b'R' => {
                let Some(key_length) = read_length(rest, 4, MAX_KEY, "key")? else { return Ok(None) };
                let value_at = 4 + key_length;
                let Some(value_length) =
                    read_length(rest.get(value_at..).unwrap_or_default(), 4, MAX_VALUE, "value")?
                else {
                    return Ok(None);
                };
                let end = value_at + 4 + value_length;
                if rest.len() < end {
                    return Ok(None);
                }
                let key = rest[4..value_at].to_vec();
                let value = rest[value_at + 4..end].to_vec();
                Ok(Some((Item::Record((key, value)), 1 + end)))
            }
            b'E' => {
                let Some(count) = rest.get(..8) else { return Ok(None) };
                let mut number = [0; 8];
                number.copy_from_slice(count);
                let records = u64::from_be_bytes(number);
                if records != self.records {
                    return Err(BackupError::Damaged(format!(
                        "the end marker counts {records} records, the stream carried {}",
                        self.records
                    )));
                }
                self.ended = true;
                Ok(Some((Item::End { records }, 9)))
            }
            other => Err(BackupError::Damaged(format!("unknown frame type {other:#04x}"))),
        }
    }
}

/// A big-endian length of `width` bytes at the start of `bytes`, at most `limit`.
fn read_length(bytes: &[u8], width: usize, limit: usize, what: &str) -> Result<Option<usize>, BackupError> {
    let Some(field) = bytes.get(..width) else { return Ok(None) };
    let length = field.iter().fold(0usize, |length, byte| (length << 8) | usize::from(*byte));
    if length > limit {
        return Err(BackupError::Damaged(format!("a {what} of {length} bytes (at most {limit})")));
    }
    Ok(Some(length))
}

/// What a backup holds of one table: its records and a SHA-256 over them in order (each key
/// and value length-prefixed), for the manifest a restore checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableTally {
    /// The table.
    pub table: Table,
    /// Its records.
    pub records: u64,
    /// SHA-256 of its records in order.
    pub sha256: Vec<u8>,
}

/// Writes the items of a backup into a store, table by table, in batches.
pub struct Importer<'a> {
    store: &'a dyn Store,
    table: Option<Table>,
    pending: Vec<Entry>,
    pending_bytes: usize,
    counts: Vec<(Table, u64, aws_lc_rs::digest::Context)>,
    records: u64,
    ended: bool,
}

impl<'a> Importer<'a> {
    /// An importer into `store`, which should be empty (records with equal keys are replaced).
    pub fn new(store: &'a dyn Store) -> Self {
        Self {
            store,
            table: None,
            pending: Vec::new(),
            pending_bytes: 0,
            counts: Vec::new(),
            records: 0,
            ended: false,
        }
    }

    /// Takes the next item.
    pub fn accept(&mut self, item: Item) -> Result<(), BackupError> {
        if self.ended {
            return Err(BackupError::Damaged("data after the end marker".into()));
        }
        match item {
            Item::Table(table) => {
                self.write_pending()?;
                self.table = Some(table);
                self.counts.push((table, 0, aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256)));
            }
            Item::Record(entry) => {
                if self.table.is_none() {
                    return Err(BackupError::Damaged("a record before any table".into()));
                }
                self.records += 1;
                if let Some((_, count, digest)) = self.counts.last_mut() {
                    *count += 1;
                    for part in [&entry.0, &entry.1] {
                        digest.update(&(part.len() as u64).to_be_bytes());
                        digest.update(part);
                    }
                }
                self.pending_bytes += entry.0.len() + entry.1.len();
                self.pending.push(entry);
                if self.pending.len() >= IMPORT_BATCH || self.pending_bytes >= IMPORT_BATCH_BYTES {
                    self.write_pending()?;
                }
            }
            Item::End { records } => {
                self.write_pending()?;
                if records != self.records {
                    return Err(BackupError::Damaged(format!(
                        "the end marker counts {records} records, {} arrived",
                        self.records
                    )));
                }
                self.ended = true;
            }
        }
        Ok(())
    }

    /// Makes everything durable; returns each table's records and digest. Fails when the end
    /// marker never came.
    pub fn finish(mut self) -> Result<Vec<TableTally>, BackupError> {
        self.write_pending()?;
        if !self.ended {
            return Err(BackupError::Incomplete(self.records));
        }
        self.store.flush()?;
        Ok(self
            .counts
            .into_iter()
            .map(|(table, records, digest)| TableTally {
                table,
                records,
                sha256: digest.finish().as_ref().to_vec(),
            })
            .collect())
    }

    fn write_pending(&mut self) -> Result<(), BackupError> {
        if let (Some(table), false) = (self.table, self.pending.is_empty()) {
            self.store.put_batch(table, &self.pending)?;
            self.pending.clear();
            self.pending_bytes = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
