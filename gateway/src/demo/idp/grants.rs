//! Grants held in memory between requests: authorization codes (single use, short-lived) and
//! refresh tokens (rotated on every use). A store is bounded in size and lifetime, so a client
//! that never redeems cannot grow it, and it is keyed by the SHA-256 of the token so a lookup
//! never compares a secret byte by byte.

use super::users::DemoUser;
use aws_lc_rs::digest::{SHA256, digest};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What an authorization code was issued for; all of it is checked again at the token endpoint.
#[derive(Debug, Clone)]
pub(super) struct AuthorizationGrant {
    pub(super) client_id: String,
    pub(super) redirect_uri: String,
    pub(super) nonce: String,
    pub(super) code_challenge: String,
    pub(super) scope: String,
    pub(super) user: &'static DemoUser,
    /// When the person signed in, in seconds since the Unix epoch (`auth_time`).
    pub(super) auth_time: u64,
}

/// What a refresh token was issued for.
#[derive(Debug, Clone)]
pub(super) struct RefreshGrant {
    pub(super) client_id: String,
    pub(super) scope: String,
    pub(super) user: &'static DemoUser,
    pub(super) auth_time: u64,
}

/// Why a grant could not be stored.
#[derive(Debug, thiserror::Error)]
pub(super) enum StoreError {
    #[error("too many grants are outstanding; try again when some have expired")]
    Full,
    #[error("the operating system's random number generator failed")]
    Randomness(#[source] aws_lc_rs::error::Unspecified),
}

/// Outstanding grants of one kind, each redeemable once before it expires.
pub(super) struct GrantStore<T> {
    entries: Mutex<HashMap<TokenDigest, Entry<T>>>,
    lifetime: Duration,
    capacity: usize,
}

type TokenDigest = [u8; 32];

struct Entry<T> {
    grant: T,
    expires_at: Instant,
}

impl<T> GrantStore<T> {
    /// A store whose grants live for `lifetime` and which holds at most `capacity` of them.
    pub(super) fn new(lifetime: Duration, capacity: usize) -> Self {
        Self { entries: Mutex::new(HashMap::new()), lifetime, capacity }
    }

    /// Stores `grant` under a new random token and returns the token.
    pub(super) fn issue(&self, grant: T) -> Result<String, StoreError> {
        let mut secret = [0_u8; 32];
        aws_lc_rs::rand::fill(&mut secret).map_err(StoreError::Randomness)?;
        let token = URL_SAFE_NO_PAD.encode(secret);
        let now = Instant::now();
        let mut entries = self.lock();
        if entries.len() >= self.capacity {
            entries.retain(|_, entry| entry.expires_at > now);
        }
        if entries.len() >= self.capacity {
            return Err(StoreError::Full);
        }
        entries.insert(token_digest(&token), Entry { grant, expires_at: now + self.lifetime });
        Ok(token)
    }

    /// Removes and returns the grant of `token`, or `None` when it is unknown, already redeemed or
    /// expired. Either way the token can never be redeemed again.
    pub(super) fn redeem(&self, token: &str) -> Option<T> {
        let entry = self.lock().remove(&token_digest(token))?;
        (entry.expires_at > Instant::now()).then_some(entry.grant)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TokenDigest, Entry<T>>> {
        // The map is consistent after every statement that touches it, so a panic elsewhere while
        // the lock was held leaves nothing half-done: keep serving.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn token_digest(token: &str) -> TokenDigest {
    let mut output = [0_u8; 32];
    output.copy_from_slice(digest(&SHA256, token.as_bytes()).as_ref());
    output
}
