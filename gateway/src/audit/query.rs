//! Finding records: filters by time, user, site, kind and decision, paginated by sequence
//! number (the cursor is the last sequence number seen), oldest first.

use super::chain::Record;
use crate::store::{Store, StoreError, Table};

/// Records read per store call while filtering.
const PAGE: usize = 1024;
/// Most records in one answer.
pub const MAX_LIMIT: usize = 1000;

/// Which records to return: written at or after `since` and before `until`, by user, on site,
/// of kind (`login`, `access_denied`…), with decision. The store's type, so a store that indexes
/// the log's columns (PostgreSQL) answers it itself.
pub use crate::store::AuditQuery as Filter;

impl Filter {
    fn matches(&self, record: &Record) -> bool {
        let written = humantime::parse_rfc3339_weak(&record.time).ok();
        let event = &record.event;
        self.since.is_none_or(|since| written.is_some_and(|time| time >= since))
            && self.until.is_none_or(|until| written.is_some_and(|time| time < until))
            && self
                .user
                .as_ref()
                .is_none_or(|user| event.actor.as_ref().is_some_and(|actor| &actor.user_id == user))
            && self.site.as_ref().is_none_or(|site| event.site.as_ref() == Some(site))
            && self.kind.as_ref().is_none_or(|kind| event.kind.is_some_and(|own| own.as_str() == kind))
            && self.decision.as_ref().is_none_or(|decision| event.decision.as_ref() == Some(decision))
    }
}

/// One page of results.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Page {
    /// The matching records.
    pub records: Vec<Record>,
    /// Pass as `after` to get the next page; `None` at the end of the log.
    pub next: Option<u64>,
}

/// Up to `limit` records after sequence number `after` that match `filter`: through the store's
/// own index where it has one, else by reading the log in order.
pub fn find(store: &dyn Store, filter: &Filter, after: u64, limit: usize) -> Result<Page, StoreError> {
    let limit = limit.clamp(1, MAX_LIMIT);
    if let Some(found) = store.find_audit(filter, after, limit) {
        let records = found?
            .iter()
            .map(|bytes| serde_json::from_slice::<Record>(bytes))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| StoreError(format!("corrupt audit record: {error}")))?;
        let next = (records.len() == limit).then(|| records.last().map(|record| record.seq)).flatten();
        return Ok(Page { records, next });
    }
    let mut records = Vec::new();
    let mut from = Record::key(after.saturating_add(1)).to_vec();
    loop {
        let page = store.range(Table::Audit, &from, PAGE)?;
        let Some((last_key, _)) = page.last() else { return Ok(Page { records, next: None }) };
        let last_seq = u64::from_be_bytes(last_key.as_slice().try_into().unwrap_or([0xff; 8]));
        from = Record::key(last_seq.saturating_add(1)).to_vec();
        for (_, bytes) in &page {
            let Ok(record) = serde_json::from_slice::<Record>(bytes) else { continue };
            if filter.matches(&record) {
                let seq = record.seq;
                records.push(record);
                if records.len() == limit {
                    return Ok(Page { records, next: Some(seq) });
                }
            }
        }
    }
}
