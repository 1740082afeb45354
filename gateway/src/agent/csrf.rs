//! CSRF tokens for the agent API: derived from the session and the site, so nothing is stored
//! and a token for one site's pages is useless on another. With SSO the session keys sign them
//! (they survive restarts and rotate with the sessions); without SSO a per-process key does.

use super::Caller;
use crate::config::Site;
use crate::state::Gateway;

/// The token the runtime sends back in `X-Toolgate-CSRF`.
pub const HEADER: &str = "x-toolgate-csrf";

/// The token for `caller`'s pages on `site`.
pub fn token(gateway: &Gateway, site: &Site, caller: &Caller) -> String {
    gateway.request_keys().csrf_token(&binding(site, caller))
}

/// Whether `token` is the one for `caller` on `site` (constant time).
pub fn verify(gateway: &Gateway, site: &Site, caller: &Caller, token: &str) -> bool {
    gateway.request_keys().verify_csrf(&binding(site, caller), token)
}

/// What a token is bound to: its purpose, the session (or "anonymous") and the site.
fn binding(site: &Site, caller: &Caller) -> Vec<u8> {
    let mut binding = b"agent\0".to_vec();
    match &caller.session {
        Some(session) => binding.extend_from_slice(session),
        None => binding.extend_from_slice(super::ANONYMOUS.as_bytes()),
    }
    binding.push(0);
    binding.extend_from_slice(site.id.as_str().as_bytes());
    binding
}
