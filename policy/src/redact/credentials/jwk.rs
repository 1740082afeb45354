//! JSON Web Keys (RFC 7517, RFC 7518 §6) written out as JSON text: in an object with a `kty`
//! member, the private members are reported: `d` (the private exponent of RSA, the private scalar
//! of EC and OKP keys), `p`, `q`, `dp`, `dq`, `qi` (RSA's primes and CRT values) and `k` (a
//! symmetric key's bytes). The public members (`n`, `e`, `x`, `y`, `crv`, `kid`) stay. A JWK
//! inside JSON text inside JSON (`{\"kty\": …}`) is read with its escaped quotes. Structured JSON
//! values are handled by the JSON walk, with [`is_private_member`] and [`is_key_material`].

/// The members of a JWK that hold private key material.
const PRIVATE_MEMBERS: [&str; 7] = ["d", "p", "q", "dp", "dq", "qi", "k"];

/// Furthest the object's `{` is looked for before `kty`, and its members after it, in bytes.
const MAX_BEFORE: usize = 4096;
const MAX_OBJECT: usize = 64 * 1024;

/// Whether `member` of an object with a `kty` member holds private key material.
pub(crate) fn is_private_member(member: &str) -> bool {
    PRIVATE_MEMBERS.contains(&member)
}

/// Whether `value` is key material: base64url (RFC 7515 §2), long enough to be a key, and not a
/// mask or placeholder.
pub(crate) fn is_key_material(value: &str) -> bool {
    value.len() >= 8
        && value.bytes().all(|b| super::is_base64url(b) || b == b'=')
        && !super::placeholder::is_masked(value)
        && !value.contains("EXAMPLE")
}

/// Handles `kty"` at `start` (just after the member name's opening quote); returns where
/// scanning resumes.
pub(super) fn at_kty(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    // The quote as written: `"`, or `\"` (any number of backslashes) in JSON text.
    let Some(quote_at) = start.checked_sub(1).filter(|&index| bytes[index] == b'"') else {
        return end;
    };
    let mut quote_start = quote_at;
    while quote_start > 0 && bytes[quote_start - 1] == b'\\' {
        quote_start -= 1;
    }
    let quote = &text[quote_start..=quote_at];
    let floor = start.saturating_sub(MAX_BEFORE);
    let Some(open) = bytes[floor..quote_start].iter().rposition(|&b| b == b'{').map(|index| floor + index)
    else {
        return end;
    };
    let stop = super::floor_boundary(text, open + MAX_OBJECT);
    let mut at = open + 1;
    for _ in 0..64 {
        at = super::skip_blank(bytes, at, stop);
        if bytes.get(at) == Some(&b',') {
            at = super::skip_blank(bytes, at + 1, stop);
        }
        let Some(name_start) = text[at..stop].starts_with(quote).then_some(at + quote.len()) else {
            break;
        };
        let Some(name_end) = text[name_start..stop].find(quote).map(|index| name_start + index) else {
            break;
        };
        at = super::skip_blank(bytes, name_end + quote.len(), stop);
        if bytes.get(at) != Some(&b':') {
            break;
        }
        at = super::skip_blank(bytes, at + 1, stop);
        if text[at..stop].starts_with(quote) {
            let value_start = at + quote.len();
            let Some(value_end) = text[value_start..stop].find(quote).map(|index| value_start + index) else {
                break;
            };
            let value = &text[value_start..value_end];
            if is_private_member(&text[name_start..name_end]) && is_key_material(value) {
                super::secret(out, value_start, value_end);
            }
            at = value_end + quote.len();
        } else {
            let Some(next) = skip_value(bytes, at, stop) else {
                break;
            };
            at = next;
        }
    }
    end
}

/// Past a value that is not a string: a number, `true`, or an array or object (`key_ops`), read
/// to its matching bracket within `MAX_NESTED` bytes (a JWK's are short: reading further at every
/// `kty` of a page would cost the page's length each time); `None` when it does not end there.
fn skip_value(bytes: &[u8], mut at: usize, stop: usize) -> Option<usize> {
    const MAX_NESTED: usize = 8192;
    let stop = stop.min(at + MAX_NESTED);
    let mut depth = 0usize;
    while at < stop {
        match bytes[at] {
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth == 0 => return Some(at),
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            b',' if depth == 0 => return Some(at),
            _ => {}
        }
        at += 1;
    }
    None
}
