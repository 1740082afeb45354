//! Server-side records of sign-in state, kept in the store: sessions (so logout and revocation
//! work whatever cookies exist), pending logins (single use, ten minutes) and handoff tickets
//! (single use, one minute). Each record carries its own expiry, checked on every read.

use super::identity::Identity;
use crate::store::{StoreError, StoreHandle, Table};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// A session id: 32 random bytes.
pub type SessionId = [u8; 32];

/// A signed-in session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Who signed in.
    pub identity: Identity,
    /// When (UNIX seconds).
    pub created_at: u64,
    /// When the session ends whatever happens (UNIX seconds).
    pub expires_at: u64,
    /// The provider's refresh token when it gave one, sealed with the session keys.
    pub refresh_token: Option<String>,
    /// When to refresh the tokens (UNIX seconds); `None` without a refresh token.
    pub refresh_after: Option<u64>,
    /// The provider's `sub` for this user (a back-channel logout may name only it).
    #[serde(default)]
    pub subject: Option<String>,
    /// The provider's session id (`sid` claim), which back-channel logout tokens name.
    #[serde(default)]
    pub provider_session: Option<String>,
    /// The latest ID token, sealed with the session keys: the `id_token_hint` of a sign-out
    /// at the provider.
    #[serde(default)]
    pub id_token: Option<String>,
}

/// A login between the redirect to the provider and its callback.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingLogin {
    /// The PKCE verifier.
    pub verifier: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// Where the user was going: site origin and path.
    pub origin: String,
    /// The path on that origin.
    pub path: String,
    /// The binding value the site host's pending cookie carries.
    pub bind: String,
    /// Expiry (UNIX seconds).
    pub expires_at: u64,
}

/// A one-time ticket carrying a session from the gateway host to a site host.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Handoff {
    /// The session, hex.
    pub session: String,
    /// The site origin the ticket is for.
    pub origin: String,
    /// The path to land on.
    pub path: String,
    /// Must equal the site host's pending cookie.
    pub bind: String,
    /// Expiry (UNIX seconds).
    pub expires_at: u64,
}

/// Records that expire.
pub trait Expiring {
    /// Expiry (UNIX seconds).
    fn expires_at(&self) -> u64;
}

impl Expiring for SessionRecord {
    fn expires_at(&self) -> u64 {
        self.expires_at
    }
}

impl Expiring for PendingLogin {
    fn expires_at(&self) -> u64 {
        self.expires_at
    }
}

impl Expiring for Handoff {
    fn expires_at(&self) -> u64 {
        self.expires_at
    }
}

/// Stores a record.
pub async fn put<T: Serialize>(
    store: &StoreHandle,
    table: Table,
    key: &[u8],
    record: &T,
) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec(record).map_err(|error| StoreError(error.to_string()))?;
    store.put(table, key, &bytes).await
}

/// Reads a live record with its stored bytes (for a later compare-and-swap).
pub async fn get_with_bytes<T: DeserializeOwned + Expiring>(
    store: &StoreHandle,
    table: Table,
    key: &[u8],
    now: u64,
) -> Result<Option<(T, Vec<u8>)>, StoreError> {
    let Some(bytes) = store.get(table, key).await? else { return Ok(None) };
    Ok(live::<T>(Some(bytes.clone()), now).map(|record| (record, bytes)))
}

/// Replaces a record only if it still has the bytes read earlier; `false` when it changed or
/// went away meanwhile (a logout, another refresh).
pub async fn replace<T: Serialize>(
    store: &StoreHandle,
    table: Table,
    key: &[u8],
    old: &[u8],
    record: &T,
) -> Result<bool, StoreError> {
    let bytes = serde_json::to_vec(record).map_err(|error| StoreError(error.to_string()))?;
    store.compare_and_swap(table, key, Some(old), Some(&bytes)).await
}

/// Every live session `wanted` picks, with its id and record. A full scan, page by page: it serves only
/// rare events (a back-channel logout), never a request's hot path.
pub async fn find_sessions(
    store: &StoreHandle,
    now: u64,
    wanted: &(dyn Fn(&SessionRecord) -> bool + Sync),
) -> Result<Vec<(SessionId, SessionRecord)>, StoreError> {
    const PAGE: usize = 512;
    let mut found = Vec::new();
    let mut from = Vec::new();
    loop {
        let entries = store.range(Table::Sessions, &from, PAGE).await?;
        let full = entries.len() == PAGE;
        for (key, bytes) in &entries {
            let record = live::<SessionRecord>(Some(bytes.clone()), now);
            if let (Some(record), Ok(id)) = (record, SessionId::try_from(key.as_slice()))
                && wanted(&record)
            {
                found.push((id, record));
            }
        }
        match entries.last() {
            Some((last, _)) if full => {
                from = last.clone();
                from.push(0);
            }
            _ => return Ok(found),
        }
    }
}

/// Reads a live record (expired or unreadable ones count as absent).
pub async fn get<T: DeserializeOwned + Expiring>(
    store: &StoreHandle,
    table: Table,
    key: &[u8],
    now: u64,
) -> Result<Option<T>, StoreError> {
    Ok(live(store.get(table, key).await?, now))
}

/// Takes a live record out (single use).
pub async fn take<T: DeserializeOwned + Expiring>(
    store: &StoreHandle,
    table: Table,
    key: &[u8],
    now: u64,
) -> Result<Option<T>, StoreError> {
    Ok(live(store.take(table, key).await?, now))
}

/// Removes expired records of `table`.
pub async fn sweep<T: DeserializeOwned + Expiring + 'static>(
    store: &StoreHandle,
    table: Table,
    now: u64,
) -> Result<usize, StoreError> {
    store
        .sweep(table, move |bytes| {
            serde_json::from_slice::<T>(bytes).map_or(true, |record| record.expires_at() <= now)
        })
        .await
}

fn live<T: DeserializeOwned + Expiring>(bytes: Option<Vec<u8>>, now: u64) -> Option<T> {
    let record: T = serde_json::from_slice(&bytes?).ok()?;
    (record.expires_at() > now).then_some(record)
}

/// Hex of a session id (the handoff record's reference to it).
pub fn to_hex(id: &SessionId) -> String {
    crate::http::hex(id)
}

/// Session id from hex.
pub fn from_hex(text: &str) -> Option<SessionId> {
    crate::http::unhex(text)?.try_into().ok()
}
