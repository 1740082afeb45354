//! The schema's versions, applied in order at start, in one transaction under a transaction-level
//! advisory lock: replicas starting together wait for the first one and then find nothing to do,
//! a failed migration leaves the schema as it was, and the lock is released with the transaction
//! (so it also works behind a pooler in transaction mode). A migration only adds what older
//! gateways can ignore, so an old and a new replica can share a schema during a rolling upgrade.

use super::failure;
use crate::store::StoreError;

/// The schema version this gateway knows; a database at a newer one is refused.
pub const SCHEMA_VERSION: i32 = 2;

/// The advisory lock's key (`pg_advisory_xact_lock`): "toolgate" in ASCII, as a number.
const LOCK_KEY: i64 = 0x746f_6f6c_6761_7465;

/// Each version's statements, version `index + 1`.
const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    // 1: every table of the store as rows of one relation, keys ordered as bytes.
    "CREATE TABLE toolgate_kv (
        tbl text NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        PRIMARY KEY (tbl, key)
    )",
    // 2: the audit log with a column, and an index, for each of the query API's filters, and
    // the chain's one row that every append locks.
    "CREATE TABLE toolgate_audit (
        seq bigint PRIMARY KEY CHECK (seq > 0),
        at timestamptz NOT NULL,
        user_id text,
        site text,
        kind text,
        decision text,
        record bytea NOT NULL
    );
    CREATE INDEX toolgate_audit_at ON toolgate_audit (at);
    CREATE INDEX toolgate_audit_user ON toolgate_audit (user_id, seq);
    CREATE INDEX toolgate_audit_site ON toolgate_audit (site, seq);
    CREATE INDEX toolgate_audit_kind ON toolgate_audit (kind, seq);
    CREATE INDEX toolgate_audit_decision ON toolgate_audit (decision, seq);
    CREATE TABLE toolgate_audit_chain (id int PRIMARY KEY CHECK (id = 1));
    INSERT INTO toolgate_audit_chain (id) VALUES (1)",
];

/// Brings the schema to [`SCHEMA_VERSION`], or refuses a newer one.
pub(super) async fn run(client: &mut tokio_postgres::Client) -> Result<(), StoreError> {
    let transaction = client.transaction().await.map_err(failure)?;
    transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY]).await.map_err(failure)?;
    transaction
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS toolgate_schema (
                id int PRIMARY KEY CHECK (id = 1),
                version int NOT NULL
            );
            INSERT INTO toolgate_schema (id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
        )
        .await
        .map_err(failure)?;
    let found: i32 = transaction
        .query_one("SELECT version FROM toolgate_schema WHERE id = 1", &[])
        .await
        .map_err(failure)?
        .get(0);
    if found > SCHEMA_VERSION {
        return Err(StoreError(format!(
            "the database's schema is version {found}, newer than this gateway knows ({SCHEMA_VERSION}): \
             run a gateway release that knows it"
        )));
    }
    for (index, statements) in MIGRATIONS.iter().enumerate().skip(usize::try_from(found).unwrap_or(0)) {
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        transaction.batch_execute(statements).await.map_err(failure)?;
        transaction
            .execute("UPDATE toolgate_schema SET version = $1 WHERE id = 1", &[&version])
            .await
            .map_err(failure)?;
        tracing::info!(version, "database schema migrated");
    }
    transaction.commit().await.map_err(failure)
}
