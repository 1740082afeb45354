//! Shared state behind one trait: sessions, pending logins and one-time handoff tickets,
//! the tool inventory, the audit log, approvals, policy versions, agent turn limits, parked tool
//! results and gated form actions. The embedded sled store serves one replica; PostgreSQL
//! (`postgres/`) serves several, through the async [`StoreHandle`] or, on threads that may
//! block, the same trait ([`PgBlocking`]).
//!
//! Records are opaque bytes to the store; their owners (`session.rs`, `login.rs`) serialize
//! them. Every record that expires carries its own expiry and is checked on read.
//!
//! Layer 0 of the gateway (ARCHITECTURE.md, "Code map"): imports nothing from the crate.

pub mod backup;
mod handle;
pub mod postgres;
mod sled_store;

pub use handle::StoreHandle;
pub(crate) use handle::blocking;
pub use postgres::{AuditQuery, PgBlocking, PgSettings, PgStore};
pub use sled_store::SledStore;

/// A group of records with one owner and one key space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// Signed-in sessions, by session id.
    Sessions,
    /// Logins in progress (state → PKCE verifier, nonce, return URL), single use.
    PendingLogins,
    /// One-time tickets that carry a fresh session to a site host, single use.
    Handoffs,
    /// The audit log: records by sequence number (big-endian, so key order is log order).
    Audit,
    /// Captured texts of audit records (sites with content capture), kept outside the chain so
    /// they can expire without breaking it.
    AuditContent,
    /// Tools and contexts pages reported, per site (`inventory.rs`).
    Inventory,
    /// Approval records by approval id (`approvals/`).
    Approvals,
    /// Dashboard-managed policy versions by version number (big-endian), the last in force
    /// (`policy_store/versions.rs`).
    PolicyVersions,
    /// Small named values the gateway keeps for itself (the audit checkpoint, generated keys).
    Meta,
    /// Each user's agent turns in progress (with leases) and tokens this hour, by user id
    /// (`state/turns.rs`): the limits hold across replicas.
    AgentTurns,
    /// Tool results posted to a replica other than the one running their turn, until that one
    /// takes them (`state/turns.rs`).
    ToolResults,
    /// Approval-gated form actions, by site and path (`approvals/gated_forms.rs`).
    GatedForms,
    /// What sites answered agents' form submissions, for a turn on another replica
    /// (`outcomes/shared.rs`).
    Outcomes,
}

impl Table {
    /// The table's name in the store.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sessions => "sessions",
            Self::PendingLogins => "pending_logins",
            Self::Handoffs => "handoffs",
            Self::Audit => "audit",
            Self::AuditContent => "audit_content",
            Self::Inventory => "inventory",
            Self::Approvals => "approvals",
            Self::PolicyVersions => "policy_versions",
            Self::Meta => "meta",
            Self::AgentTurns => "agent_turns",
            Self::ToolResults => "tool_results",
            Self::GatedForms => "gated_forms",
            Self::Outcomes => "outcomes",
        }
    }

    /// Every table, in the order a backup walks them: `Meta` first, then `Audit` (see
    /// `backup.rs` for why). A new table goes here too; a test in `backup.rs` fails otherwise.
    pub const ALL: [Table; 13] = [
        Self::Meta,
        Self::Audit,
        Self::AuditContent,
        Self::Sessions,
        Self::PendingLogins,
        Self::Handoffs,
        Self::Inventory,
        Self::Approvals,
        Self::PolicyVersions,
        Self::AgentTurns,
        Self::ToolResults,
        Self::GatedForms,
        Self::Outcomes,
    ];

    /// The table called `name` in the store.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|table| table.name() == name)
    }
}

/// A key and its value.
pub type Entry = (Vec<u8>, Vec<u8>);

/// Why the store failed. Callers refuse the action (503), never pretend it succeeded.
#[derive(Debug, thiserror::Error)]
#[error("store failure: {0}")]
pub struct StoreError(pub String);

/// Durable key-value tables.
pub trait Store: Send + Sync + 'static {
    /// Writes (or replaces) a record.
    fn put(&self, table: Table, key: &[u8], value: &[u8]) -> Result<(), StoreError>;
    /// Reads a record.
    fn get(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// Removes a record and returns it, atomically: two concurrent takes never both get it.
    fn take(&self, table: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    /// Removes a record.
    fn delete(&self, table: Table, key: &[u8]) -> Result<(), StoreError>;
    /// Removes every record for which `expired` says so; returns how many.
    fn sweep(&self, table: Table, expired: &dyn Fn(&[u8]) -> bool) -> Result<usize, StoreError>;
    /// Replaces `key`'s value with `new` (or removes it, `None`) only if it is still `old`
    /// (`None`: absent); returns whether it did. Atomic.
    fn compare_and_swap(
        &self,
        table: Table,
        key: &[u8],
        old: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> Result<bool, StoreError>;
    /// Writes several records atomically (all or none).
    fn put_batch(&self, table: Table, records: &[Entry]) -> Result<(), StoreError>;
    /// Makes every write so far durable (fsync); returns once it is.
    fn flush(&self) -> Result<(), StoreError>;
    /// Up to `limit` records with keys `>= from`, in key order.
    fn range(&self, table: Table, from: &[u8], limit: usize) -> Result<Vec<Entry>, StoreError>;
    /// The record with the greatest key.
    fn last(&self, table: Table) -> Result<Option<Entry>, StoreError>;
    /// Removes every record with a key `< below`; returns how many.
    fn delete_below(&self, table: Table, below: &[u8]) -> Result<usize, StoreError>;
    /// Up to `limit` audit records after sequence number `after` that match `query`, oldest
    /// first, found through the store's own index of the log's columns; `None` for a store
    /// without one (the caller reads the log in order).
    fn find_audit(
        &self,
        query: &AuditQuery,
        after: u64,
        limit: usize,
    ) -> Option<Result<Vec<Vec<u8>>, StoreError>> {
        let _ = (query, after, limit);
        None
    }
}
