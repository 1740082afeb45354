//! Keyed digests: HMAC-SHA256 of texts that must be provable but not stored (prompts, tool
//! arguments, page text, session ids). Equal texts give equal digests, so an investigator with
//! the text can confirm it; without the key nobody can test guesses against the log. The same
//! key signs prune checkpoints.

use crate::http::{hex, unhex};
use aws_lc_rs::hmac;

/// The audit key.
pub struct DigestKey {
    key: hmac::Key,
}

impl DigestKey {
    /// A key from secret bytes.
    pub fn new(secret: &[u8]) -> Self {
        Self { key: hmac::Key::new(hmac::HMAC_SHA256, secret) }
    }

    /// The digest of `text`, labelled with its purpose so digests of different things never
    /// collide.
    pub fn digest(&self, purpose: &str, text: &[u8]) -> String {
        let mut context = hmac::Context::with_key(&self.key);
        context.update(purpose.as_bytes());
        context.update(b"\0");
        context.update(text);
        hex(context.sign().as_ref())
    }

    /// Checks a digest made by `digest` (constant time).
    pub fn verify(&self, purpose: &str, text: &[u8], expected_hex: &str) -> bool {
        let Some(expected) = unhex(expected_hex) else { return false };
        let mut message = purpose.as_bytes().to_vec();
        message.push(0);
        message.extend_from_slice(text);
        hmac::verify(&self.key, &message, &expected).is_ok()
    }
}
