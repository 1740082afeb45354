//! The audit log's own relation, `toolgate_audit`: one row per record with the columns the query
//! API filters on (time, user, site, kind, decision), each indexed, and the record's exact bytes.
//! Records reach it two ways: the writers' chain appends ([`PgStore::append_chain`]), and the
//! store's generic calls on [`Table::Audit`] (a restore, a prune, a verification), which the
//! key-value calls route here.
//!
//! Several replicas append to one chain. An append is one transaction that first locks the
//! chain's one row (`toolgate_audit_chain`, `FOR UPDATE`), so appends run one after another
//! across replicas: each reads the tip under the lock, seals its batch onto it, inserts it and
//! moves the head, and a record exists for a caller only once that transaction has committed.

use super::{PgStore, failure};
use crate::store::{Entry, StoreError, Table};
use std::time::SystemTime;

/// Where a chain append starts: the last record, or (none left, after a prune) the checkpoint.
pub struct ChainTip {
    /// The last record's bytes.
    pub last: Option<Vec<u8>>,
    /// The checkpoint's bytes (read only when there is no last record).
    pub checkpoint: Option<Vec<u8>>,
}

/// What a chain append writes: the sealed records (keyed by sequence number, big-endian) and
/// the new head, kept in the `Meta` table under the head key.
pub struct ChainAppend {
    /// The records, in order.
    pub records: Vec<Entry>,
    /// The head's bytes.
    pub head: Vec<u8>,
}

/// The query API's filters, as columns.
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    /// Written at or after.
    pub since: Option<SystemTime>,
    /// Written before.
    pub until: Option<SystemTime>,
    /// By this user id.
    pub user: Option<String>,
    /// On this site.
    pub site: Option<String>,
    /// Of this kind.
    pub kind: Option<String>,
    /// With this decision.
    pub decision: Option<String>,
}

/// A record's columns. The store reads them from the record's JSON by the names the audit
/// event serializes with (`time`, and in `event`: `user.id`, `toolgate.site`,
/// `toolgate.event.kind`, `toolgate.decision`), so a restored record gets the same columns as
/// one a writer appended; `tests/it/postgres.rs` checks the names still agree.
struct Columns {
    time: String,
    user: Option<String>,
    site: Option<String>,
    kind: Option<String>,
    decision: Option<String>,
}

fn columns(record: &[u8]) -> Result<Columns, StoreError> {
    let value: serde_json::Value = serde_json::from_slice(record)
        .map_err(|error| StoreError(format!("corrupt audit record: {error}")))?;
    let text = |pointer: &str| value.pointer(pointer).and_then(serde_json::Value::as_str).map(str::to_owned);
    Ok(Columns {
        time: text("/time").ok_or_else(|| StoreError("corrupt audit record: no time".to_owned()))?,
        user: text("/event/user.id"),
        site: text("/event/toolgate.site"),
        kind: text("/event/toolgate.event.kind"),
        decision: text("/event/toolgate.decision"),
    })
}

/// A sequence number from its key (eight bytes, big-endian).
fn seq_of(key: &[u8]) -> Result<i64, StoreError> {
    let bytes: [u8; 8] = key.try_into().map_err(|_| StoreError("an audit key is eight bytes".to_owned()))?;
    i64::try_from(u64::from_be_bytes(bytes))
        .map_err(|_| StoreError("audit sequence number out of range".to_owned()))
}

/// The first sequence number whose key is `>= from` in byte order, as the embedded store ranges:
/// keys are eight bytes, so a shorter `from` counts as padded with zeros, and a longer one (a
/// key with a byte appended, "just after") starts at the next number.
fn lower_bound(from: &[u8]) -> i64 {
    let mut padded = [0u8; 8];
    let head = from.len().min(8);
    padded[..head].copy_from_slice(&from[..head]);
    let seq = u64::from_be_bytes(padded).saturating_add(u64::from(from.len() > 8));
    i64::try_from(seq).unwrap_or(i64::MAX)
}

/// A key from its sequence number.
fn key_of(seq: i64) -> Vec<u8> {
    u64::try_from(seq).unwrap_or(0).to_be_bytes().to_vec()
}

const INSERT: &str = "INSERT INTO toolgate_audit (seq, at, user_id, site, kind, decision, record) \
     SELECT s, t::timestamptz, u, si, k, d, r \
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[]) \
       AS x(s, t, u, si, k, d, r) \
     ON CONFLICT (seq) DO UPDATE SET at = EXCLUDED.at, user_id = EXCLUDED.user_id, site = EXCLUDED.site, \
       kind = EXCLUDED.kind, decision = EXCLUDED.decision, record = EXCLUDED.record";

/// Inserts (or replaces) records in one statement.
async fn insert(client: &impl deadpool_postgres::GenericClient, records: &[Entry]) -> Result<(), StoreError> {
    let mut seqs = Vec::with_capacity(records.len());
    let (mut times, mut users, mut sites, mut kinds, mut decisions) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut bytes = Vec::with_capacity(records.len());
    for (key, record) in records {
        let columns = columns(record)?;
        seqs.push(seq_of(key)?);
        times.push(columns.time);
        users.push(columns.user);
        sites.push(columns.site);
        kinds.push(columns.kind);
        decisions.push(columns.decision);
        bytes.push(record.as_slice());
    }
    client
        .execute(INSERT, &[&seqs, &times, &users, &sites, &kinds, &decisions, &bytes])
        .await
        .map_err(failure)?;
    Ok(())
}

impl PgStore {
    /// Appends a batch to the one chain: locks it, hands `seal` the tip and writes what it
    /// returns (records and head) in the same transaction. Returns once that has committed.
    pub async fn append_chain(
        &self,
        head_key: &[u8],
        checkpoint_key: &[u8],
        seal: impl FnOnce(ChainTip) -> Result<ChainAppend, StoreError>,
    ) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(failure)?;
        transaction
            .execute("SELECT id FROM toolgate_audit_chain WHERE id = 1 FOR UPDATE", &[])
            .await
            .map_err(failure)?;
        let last = transaction
            .query_opt("SELECT record FROM toolgate_audit ORDER BY seq DESC LIMIT 1", &[])
            .await
            .map_err(failure)?
            .map(|row| row.get::<_, Vec<u8>>(0));
        let checkpoint = match last {
            Some(_) => None,
            None => transaction
                .query_opt(
                    "SELECT value FROM toolgate_kv WHERE tbl = $1 AND key = $2",
                    &[&Table::Meta.name(), &checkpoint_key],
                )
                .await
                .map_err(failure)?
                .map(|row| row.get::<_, Vec<u8>>(0)),
        };
        let append = seal(ChainTip { last, checkpoint })?;
        if !append.records.is_empty() {
            insert(&transaction, &append.records).await?;
        }
        transaction
            .execute(
                "INSERT INTO toolgate_kv (tbl, key, value) VALUES ($1, $2, $3) \
                 ON CONFLICT (tbl, key) DO UPDATE SET value = EXCLUDED.value",
                &[&Table::Meta.name(), &head_key, &append.head],
            )
            .await
            .map_err(failure)?;
        transaction.commit().await.map_err(failure)
    }

    /// Up to `limit` records after sequence number `after` that match `query`, oldest first,
    /// found through the columns' indexes.
    pub async fn find_audit(
        &self,
        query: &AuditQuery,
        after: u64,
        limit: usize,
    ) -> Result<Vec<Vec<u8>>, StoreError> {
        let client = self.client().await?;
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = client
            .query(
                "SELECT record FROM toolgate_audit WHERE seq > $1 \
                   AND ($2::timestamptz IS NULL OR at >= $2) AND ($3::timestamptz IS NULL OR at < $3) \
                   AND ($4::text IS NULL OR user_id = $4) AND ($5::text IS NULL OR site = $5) \
                   AND ($6::text IS NULL OR kind = $6) AND ($7::text IS NULL OR decision = $7) \
                 ORDER BY seq LIMIT $8",
                &[
                    &after,
                    &query.since,
                    &query.until,
                    &query.user,
                    &query.site,
                    &query.kind,
                    &query.decision,
                    &limit,
                ],
            )
            .await
            .map_err(failure)?;
        Ok(rows.into_iter().map(|row| row.get(0)).collect())
    }

    pub(super) async fn audit_put_batch(&self, records: &[Entry]) -> Result<(), StoreError> {
        let client = self.client().await?;
        insert(&client, records).await
    }

    pub(super) async fn audit_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt("SELECT record FROM toolgate_audit WHERE seq = $1", &[&seq_of(key)?])
            .await
            .map_err(failure)?;
        Ok(row.map(|row| row.get(0)))
    }

    pub(super) async fn audit_delete(&self, key: &[u8]) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute("DELETE FROM toolgate_audit WHERE seq = $1", &[&seq_of(key)?])
            .await
            .map_err(failure)?;
        Ok(())
    }

    pub(super) async fn audit_range(&self, from: &[u8], limit: usize) -> Result<Vec<Entry>, StoreError> {
        let from = lower_bound(from);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT seq, record FROM toolgate_audit WHERE seq >= $1 ORDER BY seq LIMIT $2",
                &[&from, &limit],
            )
            .await
            .map_err(failure)?;
        Ok(rows.into_iter().map(|row| (key_of(row.get(0)), row.get(1))).collect())
    }

    pub(super) async fn audit_last(&self) -> Result<Option<Entry>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt("SELECT seq, record FROM toolgate_audit ORDER BY seq DESC LIMIT 1", &[])
            .await
            .map_err(failure)?;
        Ok(row.map(|row| (key_of(row.get(0)), row.get(1))))
    }

    pub(super) async fn audit_delete_below(&self, below: &[u8]) -> Result<usize, StoreError> {
        let client = self.client().await?;
        let removed = client
            .execute("DELETE FROM toolgate_audit WHERE seq < $1", &[&seq_of(below)?])
            .await
            .map_err(failure)?;
        Ok(usize::try_from(removed).unwrap_or(usize::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges start where the embedded store's byte order would: a walk that resumes "just
    /// after" a key (the key with a zero appended) moves on instead of starting over.
    #[test]
    fn range_bounds_follow_byte_order() {
        assert_eq!(lower_bound(b""), 0);
        assert_eq!(lower_bound(&7u64.to_be_bytes()), 7);
        let mut after = 7u64.to_be_bytes().to_vec();
        after.push(0);
        assert_eq!(lower_bound(&after), 8);
        assert_eq!(lower_bound(&[0, 0, 0, 0, 0, 0, 1]), 256, "a prefix counts as padded with zeros");
        assert_eq!(lower_bound(&[0xff; 9]), i64::MAX);
    }
}
