//! The PostgreSQL store, for several gateway replicas on one database. The records of every
//! [`Table`] are rows of one key-value relation, `toolgate_kv (tbl, key, value)`, ordered by
//! `key` as bytes (as sled orders them), so the semantics of the embedded store carry over: a
//! single-use `take` is one `DELETE … RETURNING`, a compare-and-swap one conditional statement,
//! a batch one transaction.
//!
//! Every call is async and waits on the network, never on a thread: the pool hands out a
//! connection within `POOL_WAIT` or fails, so a database that is gone turns into an error the
//! caller answers with 503 instead of a hung request. A committed statement is durable (with
//! PostgreSQL's default `synchronous_commit`), so there is nothing to flush.
//!
//! The schema's version lives in the database and only `migrations` moves it, under a lock, so
//! replicas that start together migrate once; a gateway refuses a schema newer than it knows.
//! The audit log has a relation of its own with real columns (`audit.rs`); calls on
//! [`Table::Audit`] go there.
//!
//! TLS is the caller's: the `rustls` configuration comes ready-made (layer 0 builds no trust).

mod audit;
mod blocking;
mod migrations;
mod notify;

use super::{Entry, StoreError, Table};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use std::sync::Arc;
use std::time::Duration;

pub use audit::{AuditQuery, ChainAppend, ChainTip};
pub use blocking::PgBlocking;
pub use migrations::SCHEMA_VERSION;
pub use notify::{Notice, RESYNC};

/// How long a call waits for a pooled connection (or a new one) before it fails.
const POOL_WAIT: Duration = Duration::from_secs(2);
/// The longest a whole call may take, waiting for a connection included: a database that stops
/// answering turns into errors (and 503s) within it, never into hung requests.
pub const CALL_LIMIT: Duration = Duration::from_secs(2);

/// `work`, or an error once it has taken [`CALL_LIMIT`].
pub async fn bounded<T>(
    work: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(CALL_LIMIT, work)
        .await
        .unwrap_or_else(|_| Err(StoreError(format!("database: no answer within {} s", CALL_LIMIT.as_secs()))))
}

/// How to reach the database.
pub struct PgSettings {
    /// `postgres://user@host:port/database`, without a password.
    pub url: String,
    /// The password, read from its `env:` or `file:` reference.
    pub password: Option<String>,
    /// TLS to the server, verifying its certificate and name (rustls always does); `None` only
    /// where the configuration allows it (loopback).
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The most connections this process opens.
    pub pool_size: usize,
}

/// The PostgreSQL store: a pool of connections to a migrated database.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool,
    listener: Arc<notify::Listener>,
}

/// A database failure with its causes (the pool's "could not create a connection" says little
/// without the server's "password authentication failed").
fn failure(error: impl std::error::Error) -> StoreError {
    let mut text = format!("database: {error}");
    let mut cause = error.source();
    while let Some(error) = cause {
        text.push_str(&format!(": {error}"));
        cause = error.source();
    }
    StoreError(text)
}

/// The audit log is appended and pruned, never taken from or swapped (its chain would break).
fn refuse_audit(table: Table, call: &str) -> Result<(), StoreError> {
    match table {
        Table::Audit => Err(StoreError(format!("{call} is not an audit log operation"))),
        _ => Ok(()),
    }
}

impl PgStore {
    /// Connects, migrates the schema to [`SCHEMA_VERSION`] (once, whichever replica comes first)
    /// and returns the store; fails when the database is unreachable or its schema is newer.
    pub async fn connect(settings: &PgSettings) -> Result<Self, StoreError> {
        let mut config: tokio_postgres::Config =
            settings.url.parse().map_err(|error| StoreError(format!("store.url: {error}")))?;
        if config.get_password().is_some() {
            return Err(StoreError("store.url must not carry a password: use store.password".to_owned()));
        }
        if let Some(password) = &settings.password {
            config.password(password);
        }
        // With TLS it is required (a server without it is refused, not spoken to in plain text);
        // without, it is never attempted.
        config.ssl_mode(match settings.tls {
            Some(_) => tokio_postgres::config::SslMode::Require,
            None => tokio_postgres::config::SslMode::Disable,
        });
        config.connect_timeout(POOL_WAIT);
        config.keepalives_idle(Duration::from_secs(10));
        config.application_name("toolgate");
        let listener = Arc::new(notify::Listener::new(config.clone(), settings.tls.clone()));
        let recycling = ManagerConfig { recycling_method: RecyclingMethod::Fast };
        let manager = match &settings.tls {
            Some(tls) => Manager::from_config(
                config,
                tokio_postgres_rustls::MakeRustlsConnect::new(tls.as_ref().clone()),
                recycling,
            ),
            None => Manager::from_config(config, tokio_postgres::NoTls, recycling),
        };
        let pool = Pool::builder(manager)
            .max_size(settings.pool_size.max(1))
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(POOL_WAIT))
            .recycle_timeout(Some(POOL_WAIT))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|error| StoreError(format!("database pool: {error}")))?;
        let store = Self { pool, listener };
        let mut client = store.client().await?;
        migrations::run(&mut client).await?;
        Ok(store)
    }

    /// Answers when the database does.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.client().await?.simple_query("SELECT 1").await.map_err(failure)?;
        Ok(())
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(failure)
    }

    /// Writes (or replaces) a record.
    pub async fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        if table == Table::Audit {
            return self.audit_put_batch(&[(key.to_vec(), value.to_vec())]).await;
        }
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO toolgate_kv (tbl, key, value) VALUES ($1, $2, $3) \
                 ON CONFLICT (tbl, key) DO UPDATE SET value = EXCLUDED.value",
                &[&table.name(), &key, &value],
            )
            .await
            .map_err(failure)?;
        Ok(())
    }

    /// Reads a record.
    pub async fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if table == Table::Audit {
            return self.audit_get(key).await;
        }
        let client = self.client().await?;
        let row = client
            .query_opt("SELECT value FROM toolgate_kv WHERE tbl = $1 AND key = $2", &[&table.name(), &key])
            .await
            .map_err(failure)?;
        Ok(row.map(|row| row.get(0)))
    }

    /// Removes a record and returns it, atomically: of two replicas taking it, one gets it.
    pub async fn take(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        refuse_audit(table, "take")?;
        let client = self.client().await?;
        let row = client
            .query_opt(
                "DELETE FROM toolgate_kv WHERE tbl = $1 AND key = $2 RETURNING value",
                &[&table.name(), &key],
            )
            .await
            .map_err(failure)?;
        Ok(row.map(|row| row.get(0)))
    }

    /// Removes a record.
    pub async fn delete(&self, table: Table, key: &[u8]) -> Result<(), StoreError> {
        if table == Table::Audit {
            return self.audit_delete(key).await;
        }
        let client = self.client().await?;
        client
            .execute("DELETE FROM toolgate_kv WHERE tbl = $1 AND key = $2", &[&table.name(), &key])
            .await
            .map_err(failure)?;
        Ok(())
    }

    /// Replaces `key`'s value with `new` (or removes it, `None`) only if it is still `old`
    /// (`None`: absent); returns whether it did. One statement, so atomic across replicas.
    pub async fn compare_and_swap(
        &self,
        table: Table,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, StoreError> {
        refuse_audit(table, "compare_and_swap")?;
        let client = self.client().await?;
        let name = table.name();
        let changed = match (old, new) {
            (None, Some(new)) => client
                .execute(
                    "INSERT INTO toolgate_kv (tbl, key, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                    &[&name, &key, &new],
                )
                .await
                .map_err(failure)?,
            (Some(old), Some(new)) => client
                .execute(
                    "UPDATE toolgate_kv SET value = $4 WHERE tbl = $1 AND key = $2 AND value = $3",
                    &[&name, &key, &old, &new],
                )
                .await
                .map_err(failure)?,
            (Some(old), None) => client
                .execute(
                    "DELETE FROM toolgate_kv WHERE tbl = $1 AND key = $2 AND value = $3",
                    &[&name, &key, &old],
                )
                .await
                .map_err(failure)?,
            // "Absent stays absent": true exactly when there is nothing.
            (None, None) => {
                let found = client
                    .query_opt("SELECT 1 FROM toolgate_kv WHERE tbl = $1 AND key = $2", &[&name, &key])
                    .await
                    .map_err(failure)?;
                u64::from(found.is_none())
            }
        };
        Ok(changed == 1)
    }

    /// Writes several records atomically (all or none).
    pub async fn put_batch(&self, table: Table, records: &[Entry]) -> Result<(), StoreError> {
        if table == Table::Audit {
            return self.audit_put_batch(records).await;
        }
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(failure)?;
        let statement = transaction
            .prepare(
                "INSERT INTO toolgate_kv (tbl, key, value) VALUES ($1, $2, $3) \
                 ON CONFLICT (tbl, key) DO UPDATE SET value = EXCLUDED.value",
            )
            .await
            .map_err(failure)?;
        for (key, value) in records {
            transaction.execute(&statement, &[&table.name(), key, value]).await.map_err(failure)?;
        }
        transaction.commit().await.map_err(failure)
    }

    /// Up to `limit` records with keys `>= from`, in key order.
    pub async fn range(&self, table: Table, from: &[u8], limit: usize) -> Result<Vec<Entry>, StoreError> {
        if table == Table::Audit {
            return self.audit_range(from, limit).await;
        }
        let client = self.client().await?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = client
            .query(
                "SELECT key, value FROM toolgate_kv WHERE tbl = $1 AND key >= $2 ORDER BY key LIMIT $3",
                &[&table.name(), &from, &limit],
            )
            .await
            .map_err(failure)?;
        Ok(rows.into_iter().map(|row| (row.get(0), row.get(1))).collect())
    }

    /// The record with the greatest key.
    pub async fn last(&self, table: Table) -> Result<Option<Entry>, StoreError> {
        if table == Table::Audit {
            return self.audit_last().await;
        }
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT key, value FROM toolgate_kv WHERE tbl = $1 ORDER BY key DESC LIMIT 1",
                &[&table.name()],
            )
            .await
            .map_err(failure)?;
        Ok(row.map(|row| (row.get(0), row.get(1))))
    }

    /// Removes every record with a key `< below`; returns how many.
    pub async fn delete_below(&self, table: Table, below: &[u8]) -> Result<usize, StoreError> {
        if table == Table::Audit {
            return self.audit_delete_below(below).await;
        }
        let client = self.client().await?;
        let removed = client
            .execute("DELETE FROM toolgate_kv WHERE tbl = $1 AND key < $2", &[&table.name(), &below])
            .await
            .map_err(failure)?;
        Ok(usize::try_from(removed).unwrap_or(usize::MAX))
    }

    /// Removes every record for which `expired` says so; returns how many. A record another
    /// replica replaced since it was read is left alone (it is removed only if unchanged).
    pub async fn sweep<F: Fn(&[u8]) -> bool + ?Sized>(
        &self,
        table: Table,
        expired: &F,
    ) -> Result<usize, StoreError> {
        refuse_audit(table, "sweep")?;
        const PAGE: usize = 512;
        let mut removed = 0;
        let mut from = Vec::new();
        loop {
            let page = self.range(table, &from, PAGE).await?;
            let Some((last_key, _)) = page.last() else { break };
            from = last_key.clone();
            from.push(0);
            for (key, value) in page.iter().filter(|(_, value)| expired(value)) {
                if self.compare_and_swap(table, key, Some(value), None).await? {
                    removed += 1;
                }
            }
            if page.len() < PAGE {
                break;
            }
        }
        Ok(removed)
    }
}
