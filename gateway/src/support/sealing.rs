//! [`Sealer`]: authenticated encryption of records at rest, for the layers that keep page data
//! in a shared store without knowing whose keys seal it (the session key ring implements it,
//! `sso/keys.rs`).

/// Seals and opens records; `purpose` is bound in, so a record sealed for one never opens as
/// another.
pub trait Sealer: Send + Sync {
    /// Encrypts and authenticates `plaintext`.
    fn seal_record(&self, purpose: &str, plaintext: &[u8]) -> String;
    /// Opens a sealed record; `None` for anything tampered, foreign or for another purpose.
    fn open_record(&self, purpose: &str, sealed: &str) -> Option<Vec<u8>>;
}
