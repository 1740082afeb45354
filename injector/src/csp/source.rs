//! CSP source expressions: what each token of a directive means for our script.
//!
//! Only the distinctions planning needs are made: keywords that change how a directive treats
//! scripts (`'none'`, `'self'`, `'unsafe-inline'`, `'strict-dynamic'`), nonces, hashes, and
//! location sources (`*`, `https:`, `host[:port][/path]`) matched against the runtime's URL.

use super::location::ScriptLocation;

/// One classified source token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source<'text> {
    /// `'none'`: nothing is allowed (invalid, but seen, when combined with other sources).
    None,
    /// `'self'`: the page's own origin.
    SelfOrigin,
    /// `'unsafe-inline'`: inline scripts run, unless a nonce or hash is also present.
    UnsafeInline,
    /// `'strict-dynamic'`: location sources, `'self'` and `'unsafe-inline'` are ignored.
    StrictDynamic,
    /// `'nonce-<value>'` with a syntactically valid value (invalid ones are ignored by browsers).
    Nonce(&'text str),
    /// `'sha256-…'`, `'sha384-…'` or `'sha512-…'`.
    Hash,
    /// A scheme, host or `*` source.
    Location(&'text str),
    /// Anything else (`'unsafe-eval'`, `'report-sample'`, `'wasm-unsafe-eval'`, garbage).
    Other,
}

impl<'text> Source<'text> {
    /// Classifies one token; keyword and prefix comparisons are ASCII case-insensitive.
    pub(super) fn classify(token: &'text str) -> Self {
        if let Some(keyword) = quoted(token) {
            return classify_keyword(keyword);
        }
        if token.starts_with('\'') {
            return Source::Other;
        }
        Source::Location(token)
    }

    /// Whether this location-type source admits the runtime script.
    ///
    /// `'self'` always does: the runtime is served from the page's own origin by construction.
    pub(super) fn admits_location(self, script: Option<&ScriptLocation>) -> bool {
        match self {
            Source::SelfOrigin => true,
            Source::Location(expression) => script.is_some_and(|script| script.matches(expression)),
            _ => false,
        }
    }
}

/// Whether `value` matches the CSP `base64-value` grammar; anything else never works as a nonce.
pub(super) fn is_valid_nonce(value: &str) -> bool {
    let body = value.trim_end_matches('=');
    let padding = value.len() - body.len();
    !body.is_empty()
        && padding <= 2
        && body.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'-' | b'_'))
}

fn quoted(token: &str) -> Option<&str> {
    token.strip_prefix('\'').and_then(|rest| rest.strip_suffix('\''))
}

fn classify_keyword(keyword: &str) -> Source<'_> {
    let lowered = keyword.to_ascii_lowercase();
    match lowered.as_str() {
        "none" => Source::None,
        "self" => Source::SelfOrigin,
        "unsafe-inline" => Source::UnsafeInline,
        "strict-dynamic" => Source::StrictDynamic,
        _ if lowered.starts_with("nonce-") => {
            // The prefix is ASCII, so the byte offset is the same in the original token; the
            // nonce value itself stays case-sensitive.
            let value = &keyword["nonce-".len()..];
            if is_valid_nonce(value) { Source::Nonce(value) } else { Source::Other }
        }
        _ if ["sha256-", "sha384-", "sha512-"].iter().any(|prefix| lowered.starts_with(prefix)) => {
            Source::Hash
        }
        _ => Source::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_case_insensitive() {
        assert_eq!(Source::classify("'NONE'"), Source::None);
        assert_eq!(Source::classify("'Self'"), Source::SelfOrigin);
        assert_eq!(Source::classify("'UNSAFE-INLINE'"), Source::UnsafeInline);
        assert_eq!(Source::classify("'Strict-Dynamic'"), Source::StrictDynamic);
        assert_eq!(Source::classify("'SHA256-abc='"), Source::Hash);
        assert_eq!(Source::classify("'unsafe-eval'"), Source::Other);
    }

    #[test]
    fn nonce_value_keeps_its_case_and_must_be_base64() {
        assert_eq!(Source::classify("'Nonce-AbC+/9=='"), Source::Nonce("AbC+/9=="));
        assert_eq!(Source::classify("'nonce-'"), Source::Other);
        assert_eq!(Source::classify("'nonce-a\"b'"), Source::Other);
        assert_eq!(Source::classify("'nonce-abc==='"), Source::Other);
    }

    #[test]
    fn unquoted_tokens_are_locations() {
        assert_eq!(Source::classify("https:"), Source::Location("https:"));
        assert_eq!(Source::classify("*"), Source::Location("*"));
        assert_eq!(Source::classify("'self"), Source::Other);
    }

    #[test]
    fn nonce_grammar() {
        assert!(is_valid_nonce("dG9vbGdhdGU="));
        assert!(is_valid_nonce("a-b_c"));
        assert!(!is_valid_nonce(""));
        assert!(!is_valid_nonce("=="));
        assert!(!is_valid_nonce("a b"));
        assert!(!is_valid_nonce("a;b"));
    }
}
