//! Approval tokens: `tga1.<approval id>.<HMAC-SHA256 tag>`, the tag over every field of the
//! binding and the id, each length-prefixed so no two bindings share an input. The tag proves the
//! gateway issued the token for exactly that binding; the record's state makes it single-use.
//! Verification is constant time (aws-lc-rs `hmac::verify`).

use super::record::Binding;
use crate::http::hex;
use aws_lc_rs::hmac;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

const PREFIX: &str = "tga1";
/// Longest token accepted (the real ones are 70 characters).
pub(super) const MAX_TOKEN_LENGTH: usize = 128;
/// Approval ids are 16 random bytes, base64url: 22 characters.
pub(super) const ID_LENGTH: usize = 22;
const DOMAIN: &[u8] = b"toolgate approval token v1";

/// The keys approvals use, derived from the one configured secret.
pub(super) struct ApprovalKeys {
    token: hmac::Key,
    session: hmac::Key,
}

impl ApprovalKeys {
    pub(super) fn new(secret: &[u8; 32]) -> Self {
        // Separate keys for separate jobs, so a session digest can never pass for a token tag.
        let root = hmac::Key::new(hmac::HMAC_SHA256, secret);
        let derive = |label: &[u8]| hmac::Key::new(hmac::HMAC_SHA256, hmac::sign(&root, label).as_ref());
        Self {
            token: derive(b"toolgate approval token key v1"),
            session: derive(b"toolgate session binding v1"),
        }
    }

    /// The token for approval `id` bound to `binding`.
    pub(super) fn sign(&self, id: &str, binding: &Binding) -> String {
        let tag = hmac::sign(&self.token, &tag_input(id, binding));
        format!("{PREFIX}.{id}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
    }

    /// Whether `tag` is the tag of (`id`, `binding`), in constant time.
    pub(super) fn verify(&self, id: &str, binding: &Binding, tag: &[u8]) -> bool {
        hmac::verify(&self.token, &tag_input(id, binding), tag).is_ok()
    }

    /// A keyed digest of a raw session id (hex), safe to store and compare.
    pub(super) fn session_digest(&self, session_id: &[u8]) -> String {
        hex(hmac::sign(&self.session, session_id).as_ref())
    }
}

/// A token split into its approval id and tag, or `None` when it is not shaped like one.
pub(super) fn parse(token: &str) -> Option<(&str, Vec<u8>)> {
    if token.len() > MAX_TOKEN_LENGTH {
        return None;
    }
    let mut parts = token.split('.');
    let (prefix, id, tag, rest) = (parts.next()?, parts.next()?, parts.next()?, parts.next());
    if prefix != PREFIX || rest.is_some() || !is_id(id) {
        return None;
    }
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    (tag.len() == 32).then_some((id, tag))
}

/// Whether `id` is shaped like an approval id (so it can be a store key without surprises).
pub(super) fn is_id(id: &str) -> bool {
    id.len() == ID_LENGTH
        && id.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

fn tag_input(id: &str, binding: &Binding) -> Vec<u8> {
    let fields = [
        id,
        &binding.user,
        &binding.session,
        &binding.site,
        &binding.tool,
        &binding.args_digest,
        &binding.call_id,
    ];
    let mut input = Vec::with_capacity(DOMAIN.len() + 256);
    input.extend_from_slice(DOMAIN);
    for field in fields {
        // Field lengths are bounded far below 4 GiB by `Approvals::request`.
        input.extend_from_slice(&u32::try_from(field.len()).unwrap_or(u32::MAX).to_be_bytes());
        input.extend_from_slice(field.as_bytes());
    }
    input.extend_from_slice(&binding.expires_at.to_be_bytes());
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding() -> Binding {
        Binding {
            user: "alice".into(),
            session: "s".into(),
            site: "expenses".into(),
            tool: "submit_expense".into(),
            args_digest: "d".into(),
            call_id: "call_1".into(),
            expires_at: 100,
        }
    }

    #[test]
    fn a_token_verifies_only_for_its_own_id_binding_and_key() {
        let keys = ApprovalKeys::new(&[7; 32]);
        let id = "AAAAAAAAAAAAAAAAAAAAAA";
        let token = keys.sign(id, &binding());
        let (parsed_id, tag) = parse(&token).expect("well-formed");
        assert_eq!(parsed_id, id);
        assert!(keys.verify(id, &binding(), &tag));
        assert!(!keys.verify("BAAAAAAAAAAAAAAAAAAAAA", &binding(), &tag), "other id");
        let later = Binding { expires_at: 101, ..binding() };
        assert!(!keys.verify(id, &later, &tag), "expiry is bound");
        // Moving a byte from one field to the next must not give the same input.
        let shifted = Binding { user: "alic".into(), session: "es".into(), ..binding() };
        assert!(!keys.verify(id, &shifted, &tag), "fields are length-prefixed");
        assert!(!ApprovalKeys::new(&[8; 32]).verify(id, &binding(), &tag), "other key");
    }

    #[test]
    fn malformed_tokens_do_not_parse() {
        let keys = ApprovalKeys::new(&[7; 32]);
        let token = keys.sign("AAAAAAAAAAAAAAAAAAAAAA", &binding());
        assert!(parse(&token.replacen("tga1", "tga2", 1)).is_none());
        assert!(parse(&format!("{token}.x")).is_none());
        assert!(parse(&token[..token.len() - 4]).is_none(), "short tag");
        assert!(parse("tga1.../..%2e.AAAA").is_none());
        assert!(parse(&"a".repeat(MAX_TOKEN_LENGTH + 1)).is_none());
        assert!(parse("").is_none());
    }

    #[test]
    fn session_digests_are_keyed() {
        let one = ApprovalKeys::new(&[1; 32]);
        assert_eq!(one.session_digest(b"sid"), one.session_digest(b"sid"));
        assert_ne!(one.session_digest(b"sid"), ApprovalKeys::new(&[2; 32]).session_digest(b"sid"));
        assert_eq!(one.session_digest(b"sid").len(), 64);
    }
}
