//! The session key ring: seals cookies (AES-256-GCM, key id in clear so older keys still open
//! cookies during a rotation) and derives CSRF tokens (HMAC-SHA256). The first key seals; every
//! key opens. Keys are 32 random bytes, base64, read from secret references.

use crate::config::secrets::SecretRef;
use crate::support::random::random_bytes;
use aws_lc_rs::{aead, hmac};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

/// Length of the key id prefix on sealed values.
const KEY_ID_LENGTH: usize = 4;
const NONCE_LENGTH: usize = aead::NONCE_LEN;

/// Why the key ring could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A secret could not be read.
    #[error("sso.session_keys: {0}")]
    Secret(#[from] crate::config::secrets::SecretError),
    /// A key is not 32 bytes of base64.
    #[error("sso.session_keys: {0} is not 32 bytes of base64 (make one with `openssl rand -base64 32`)")]
    Malformed(String),
}

struct Key {
    id: [u8; KEY_ID_LENGTH],
    sealing: aead::LessSafeKey,
    signing: hmac::Key,
}

/// The keys, current first.
pub struct KeyRing {
    keys: Vec<Key>,
}

impl KeyRing {
    /// Reads the keys; with none configured, one random key for this process.
    pub fn from_secrets(references: &[SecretRef]) -> Result<Self, KeyError> {
        let mut keys = Vec::new();
        for reference in references {
            let text = reference.read()?;
            let bytes = STANDARD
                .decode(text.trim())
                .or_else(|_| URL_SAFE_NO_PAD.decode(text.trim()))
                .map_err(|_| KeyError::Malformed(reference.to_string()))?;
            let bytes: [u8; 32] = bytes.try_into().map_err(|_| KeyError::Malformed(reference.to_string()))?;
            keys.push(Key::new(&bytes));
        }
        if keys.is_empty() {
            keys.push(Key::new(&random_bytes::<32>()));
        }
        Ok(Self { keys })
    }

    /// A 32-byte key for another purpose, derived from the current key and `label`.
    pub fn derived_key(&self, label: &[u8]) -> [u8; 32] {
        let mut derived = [0u8; 32];
        if let Some(key) = self.keys.first() {
            derived.copy_from_slice(&hmac::sign(&key.signing, label).as_ref()[..32]);
        }
        derived
    }

    /// One random key for this process only (signing without configured keys).
    pub fn ephemeral() -> Self {
        Self { keys: vec![Key::new(&random_bytes::<32>())] }
    }

    /// Encrypts and authenticates `plaintext`; `purpose` is bound in (a value sealed for one
    /// purpose never opens for another).
    pub fn seal(&self, purpose: &str, plaintext: &[u8]) -> String {
        let key = &self.keys[0];
        let nonce_bytes = random_bytes::<NONCE_LENGTH>();
        let mut buffer = plaintext.to_vec();
        let nonce = aead::Nonce::assume_unique_for_key(nonce_bytes);
        // Sealing only fails for inputs larger than GCM allows (64 GiB); cookies are tiny.
        if key
            .sealing
            .seal_in_place_append_tag(nonce, aead::Aad::from(purpose.as_bytes()), &mut buffer)
            .is_err()
        {
            return String::new();
        }
        let mut sealed = Vec::with_capacity(KEY_ID_LENGTH + NONCE_LENGTH + buffer.len());
        sealed.extend_from_slice(&key.id);
        sealed.extend_from_slice(&nonce_bytes);
        sealed.extend_from_slice(&buffer);
        URL_SAFE_NO_PAD.encode(sealed)
    }

    /// Opens a sealed value; `None` for anything tampered, truncated, foreign or for another
    /// purpose.
    pub fn open(&self, purpose: &str, sealed: &str) -> Option<Vec<u8>> {
        self.open_within(purpose, sealed, 16 * 1024)
    }

    fn open_within(&self, purpose: &str, sealed: &str, longest: usize) -> Option<Vec<u8>> {
        if sealed.len() > longest {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(sealed).ok()?;
        if bytes.len() < KEY_ID_LENGTH + NONCE_LENGTH + aead::AES_256_GCM.tag_len() {
            return None;
        }
        let (id, rest) = bytes.split_at(KEY_ID_LENGTH);
        let (nonce, ciphertext) = rest.split_at(NONCE_LENGTH);
        let key = self.keys.iter().find(|key| key.id == id)?;
        let nonce = aead::Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buffer = ciphertext.to_vec();
        let plaintext =
            key.sealing.open_in_place(nonce, aead::Aad::from(purpose.as_bytes()), &mut buffer).ok()?;
        Some(plaintext.to_vec())
    }

    /// A token proving a request came from a page of this session (double-submit-free: it is
    /// derived from the session, so nothing else needs storing).
    pub fn csrf_token(&self, session: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(hmac::sign(&self.keys[0].signing, &csrf_input(session)))
    }

    /// Checks a CSRF token against every key (constant time).
    pub fn verify_csrf(&self, session: &[u8], token: &str) -> bool {
        let Ok(tag) = URL_SAFE_NO_PAD.decode(token) else { return false };
        self.keys.iter().any(|key| hmac::verify(&key.signing, &csrf_input(session), &tag).is_ok())
    }
}

/// Records a replica leaves in the shared store for another (a tool result, a site's answer)
/// are sealed like cookies, and may be larger.
impl crate::support::sealing::Sealer for KeyRing {
    fn seal_record(&self, purpose: &str, plaintext: &[u8]) -> String {
        self.seal(purpose, plaintext)
    }

    fn open_record(&self, purpose: &str, sealed: &str) -> Option<Vec<u8>> {
        self.open_within(purpose, sealed, 2 * 1024 * 1024)
    }
}

impl Key {
    fn new(secret: &[u8; 32]) -> Self {
        // Separate keys for separate jobs, derived from the one configured secret.
        let derive = |label: &[u8]| hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), label);
        let sealing_key = derive(b"toolgate session cookie v1");
        let signing_key = derive(b"toolgate csrf v1");
        let id_source = derive(b"toolgate key id v1");
        let mut id = [0u8; KEY_ID_LENGTH];
        id.copy_from_slice(&id_source.as_ref()[..KEY_ID_LENGTH]);
        let sealing = match aead::UnboundKey::new(&aead::AES_256_GCM, sealing_key.as_ref()) {
            Ok(key) => aead::LessSafeKey::new(key),
            // HMAC-SHA256 output is exactly the 32 bytes AES-256 needs.
            Err(_) => unreachable!("a 32-byte key is valid for AES-256-GCM"),
        };
        Self { id, sealing, signing: hmac::Key::new(hmac::HMAC_SHA256, signing_key.as_ref()) }
    }
}

fn csrf_input(session: &[u8]) -> Vec<u8> {
    let mut input = b"csrf:".to_vec();
    input.extend_from_slice(session);
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(secrets: &[&str]) -> KeyRing {
        let references: Vec<SecretRef> =
            secrets.iter().map(|s| SecretRef::Generated((*s).to_owned())).collect();
        KeyRing::from_secrets(&references).expect("keys")
    }

    const OLD: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    const NEW: &str = "HyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4=";

    #[test]
    fn sealed_values_open_only_unchanged_and_for_their_purpose() {
        let keys = ring(&[NEW]);
        let sealed = keys.seal("session", b"session-id");
        assert_eq!(keys.open("session", &sealed).as_deref(), Some(&b"session-id"[..]));
        assert_eq!(keys.open("login", &sealed), None, "purpose is bound");
        let mut tampered = sealed.clone().into_bytes();
        let last = tampered.len() - 2;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(keys.open("session", &String::from_utf8(tampered).expect("ascii")), None);
        assert_eq!(keys.open("session", &sealed[..sealed.len() / 2]), None, "truncated");
        assert_eq!(ring(&[OLD]).open("session", &sealed), None, "foreign key");
    }

    #[test]
    fn rotation_keeps_old_cookies_valid_while_the_old_key_is_listed() {
        let sealed_by_old = ring(&[OLD]).seal("session", b"id");
        assert_eq!(ring(&[NEW, OLD]).open("session", &sealed_by_old).as_deref(), Some(&b"id"[..]));
        assert_eq!(ring(&[NEW]).open("session", &sealed_by_old), None, "retired key no longer opens");
        let token = ring(&[OLD]).csrf_token(b"id");
        assert!(ring(&[NEW, OLD]).verify_csrf(b"id", &token));
        assert!(!ring(&[NEW, OLD]).verify_csrf(b"other", &token));
    }

    #[test]
    fn malformed_keys_are_refused() {
        let error = KeyRing::from_secrets(&[SecretRef::Generated("too short".into())]);
        assert!(error.is_err());
    }
}
