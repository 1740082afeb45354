//! [`Sealer`]: authenticated encryption of records at rest, for the layers that keep page data
//! in a shared store without knowing whose keys seal it (the session key ring implements it,
//! `sso/keys.rs`).

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Seals and opens records; `purpose` is bound in, so a record sealed for one never opens as
/// another.
pub trait Sealer: Send + Sync {
    /// Encrypts and authenticates `plaintext`.
    fn seal_record(&self, purpose: &str, plaintext: &[u8]) -> String;
    /// Opens a sealed record; `None` for anything tampered, foreign or for another purpose.
    fn open_record(&self, purpose: &str, sealed: &str) -> Option<Vec<u8>>;
}

/// `record` as JSON, sealed for `purpose`; `None` if it does not serialize.
pub fn seal_json(keys: &dyn Sealer, purpose: &str, record: &impl Serialize) -> Option<Vec<u8>> {
    let plaintext = serde_json::to_vec(record).ok()?;
    Some(keys.seal_record(purpose, &plaintext).into_bytes())
}

/// A record [`seal_json`] stored, opened; `None` for one that does not open (sealed with a key
/// no longer configured, for another purpose, or damaged).
pub fn open_json<T: DeserializeOwned>(keys: &dyn Sealer, purpose: &str, sealed: &[u8]) -> Option<T> {
    serde_json::from_slice(&keys.open_record(purpose, std::str::from_utf8(sealed).ok()?)?).ok()
}
