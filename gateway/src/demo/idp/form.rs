//! OAuth request parameters, from a query string or an `application/x-www-form-urlencoded` body,
//! read by OAuth's rules (RFC 6749 §3.1): a parameter sent without a value counts as absent, and
//! one sent more than once makes the request invalid rather than silently picking a value.

use std::collections::{HashMap, HashSet};

/// The parameters of one request.
#[derive(Debug, Default)]
pub(super) struct Parameters {
    values: HashMap<String, String>,
    repeated: HashSet<String>,
}

impl Parameters {
    /// Parses urlencoded `input`; malformed escapes are kept as they are, as browsers do.
    pub(super) fn parse(input: &[u8]) -> Self {
        let mut parameters = Self::default();
        for (name, value) in form_urlencoded::parse(input) {
            if value.is_empty() {
                continue;
            }
            if parameters.values.contains_key(name.as_ref()) {
                parameters.repeated.insert(name.into_owned());
            } else {
                parameters.values.insert(name.into_owned(), value.into_owned());
            }
        }
        parameters
    }

    /// The value of `name`, or `None` when it is absent or empty.
    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Whether `name` was sent more than once.
    pub(super) fn is_repeated(&self, name: &str) -> bool {
        self.repeated.contains(name)
    }

    /// Whether any parameter was sent more than once.
    pub(super) fn has_repeated(&self) -> bool {
        !self.repeated.is_empty()
    }
}

/// Decodes one `application/x-www-form-urlencoded` component (`+` is a space, `%XX` a byte), as
/// RFC 6749 §2.3.1 requires for the user name and password of HTTP Basic client authentication.
/// Returns `None` for a malformed escape or bytes that are not UTF-8.
pub(super) fn decode_component(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        match byte {
            b'+' => decoded.push(b' '),
            b'%' => {
                let high = hex_value(*bytes.get(index + 1)?)?;
                let low = hex_value(*bytes.get(index + 2)?)?;
                decoded.push(high << 4 | low);
                index += 2;
            }
            other => decoded.push(other),
        }
        index += 1;
    }
    String::from_utf8(decoded).ok()
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}
