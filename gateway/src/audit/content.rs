//! Captured texts for sites where the operator enabled content capture
//! (`sites.<id>.capture_content = "30d"`): kept beside the chain, keyed by record sequence
//! number and name, with an expiry. The chained record holds only the keyed digest, so removing
//! expired content never breaks verification, and the digest proves what the text was.

use crate::store::{Store, StoreError, StoreHandle, Table};
use crate::support::clock::unix_now as now;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// One captured text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Captured {
    text: String,
    expires_at: u64,
}

/// Keeps the texts of record `seq` for `retention`.
pub async fn keep(
    store: &StoreHandle,
    seq: u64,
    texts: &[(&str, &str)],
    retention: Duration,
) -> Result<(), StoreError> {
    let expires_at = now() + retention.as_secs();
    let entries: Result<Vec<_>, StoreError> = texts
        .iter()
        .map(|(name, text)| {
            let value = serde_json::to_vec(&Captured { text: (*text).to_owned(), expires_at })
                .map_err(|error| StoreError(error.to_string()))?;
            Ok((key(seq, name), value))
        })
        .collect();
    store.put_batch(Table::AuditContent, entries?).await?;
    store.flush().await
}

/// The captured texts of record `seq` that have not expired, by name.
pub fn of(store: &dyn Store, seq: u64) -> Result<BTreeMap<String, String>, StoreError> {
    let prefix = seq.to_be_bytes();
    let now = now();
    Ok(store
        .range(Table::AuditContent, &prefix, 64)?
        .into_iter()
        .take_while(|(key, _)| key.starts_with(&prefix))
        .filter_map(|(key, value)| {
            let captured: Captured = serde_json::from_slice(&value).ok()?;
            let name = String::from_utf8(key[prefix.len()..].to_vec()).ok()?;
            (captured.expires_at > now).then_some((name, captured.text))
        })
        .collect())
}

/// Removes expired texts; returns how many.
pub fn sweep(store: &dyn Store) -> Result<usize, StoreError> {
    let now = now();
    store.sweep(Table::AuditContent, &|bytes| {
        serde_json::from_slice::<Captured>(bytes).map_or(true, |captured| captured.expires_at <= now)
    })
}

fn key(seq: u64, name: &str) -> Vec<u8> {
    let mut key = seq.to_be_bytes().to_vec();
    key.extend_from_slice(name.as_bytes());
    key
}
