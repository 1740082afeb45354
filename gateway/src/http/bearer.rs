//! `Authorization: Bearer <token>` (RFC 6750 §2.1): the one reader of bearer tokens.
//!
//! The scheme is compared case-insensitively, as RFC 9110 §11.1 says of every auth-scheme
//! (`Bearer`, `bearer`, `BEARER`), and may be followed by more than one space; the token is
//! trimmed and must not be empty. Any other scheme, or a header that is not visible ASCII, is no
//! bearer token.

use http::{HeaderMap, header};

/// The bearer token in `headers`' `Authorization`, if it has one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim_start().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn token(value: &str) -> Option<String> {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).expect("header value"));
        bearer_token(&headers).map(str::to_owned)
    }

    #[test]
    fn the_scheme_is_case_insensitive() {
        for value in ["Bearer abc.def", "bearer abc.def", "BEARER abc.def", "BeArEr   abc.def  "] {
            assert_eq!(token(value).as_deref(), Some("abc.def"), "{value}");
        }
    }

    #[test]
    fn other_schemes_and_empty_tokens_are_none() {
        for value in ["Basic dXNlcjpwYXNz", "Bearer", "Bearer    ", "Bearerabc", "Token abc", ""] {
            assert_eq!(token(value), None, "{value:?}");
        }
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }
}
