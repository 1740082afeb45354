//! Shared state behind one trait: sessions, pending logins and one-time handoff tickets now;
//! approvals, policy versions, inventory and audit in later issues. The embedded sled store
//! serves one replica; a shared database can implement the same trait to serve several.
//!
//! Records are opaque bytes to the store; their owners (`session.rs`, `login.rs`) serialize
//! them. Every record that expires carries its own expiry and is checked on read.

mod sled_store;

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
}

impl Table {
    /// The table's name in the store.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sessions => "sessions",
            Self::PendingLogins => "pending_logins",
            Self::Handoffs => "handoffs",
        }
    }
}

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
}
