//! AWS access key ids and the secret access keys written near them.
//!
//! A key id is one of the documented unique-id prefixes (`AKIA` long-term, `ASIA` temporary,
//! `ABIA`, `ACCA`, `AGPA`, `AIDA`, `AROA`, `AIPA`, `ANPA`, `ANVA`, `APKA`) and 16 of `[A-Z0-9]`,
//! as a whole word. Within 200 bytes after it, a secret access key is a whole word of exactly 40
//! `[A-Za-z0-9/+]` with both cases and not only hex digits (so a git SHA never is one). Secret
//! keys assigned to a key name (`aws_secret_access_key = …`) are found by the assignment
//! recognizer. Any of these holding `EXAMPLE` (AWS's documented `AKIAIOSFODNN7EXAMPLE` and
//! `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`) is a look-alike.

use super::run;

const ID_LENGTH: usize = 20;
const SECRET_LENGTH: usize = 40;
const SECRET_WINDOW: usize = 200;

/// Handles a key id prefix at `start`; returns where scanning resumes.
pub(super) fn at_key_id(text: &str, start: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let end = run(bytes, start + 4, ID_LENGTH - 3, |b| b.is_ascii_uppercase() || b.is_ascii_digit());
    if !super::starts_word(bytes, start)
        || end - start != ID_LENGTH
        || bytes.get(end).is_some_and(u8::is_ascii_alphanumeric)
    {
        return start + 4;
    }
    report(text, start, end, out);
    let window_end = super::floor_boundary(text, end + SECRET_WINDOW);
    let mut at = end;
    let is_secret_char = |b: u8| b.is_ascii_alphanumeric() || b == b'/' || b == b'+';
    while at < window_end {
        if bytes[at] == b'\\' {
            // Skip a JSON escape (`\n`) so the line after it starts a word.
            at = run(bytes, at, 8, |b| b == b'\\') + 1;
            continue;
        }
        let token_end = run(bytes, at, window_end - at + SECRET_LENGTH, is_secret_char);
        let bounded = (!is_secret_char(bytes[at - 1]) || super::after_escape(bytes, at))
            && bytes.get(token_end) != Some(&b'=');
        if bounded && token_end - at == SECRET_LENGTH && is_secret_shaped(&bytes[at..token_end]) {
            // Scanning resumes after the key id: what lies between is read as usual.
            report(text, at, token_end, out);
            break;
        }
        at = token_end.max(at + 1);
    }
    end
}

fn report(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) {
    if text[start..end].contains("EXAMPLE") {
        super::look_alike(out, start, end);
    } else {
        super::secret(out, start, end);
    }
}

fn is_secret_shaped(token: &[u8]) -> bool {
    token.iter().any(u8::is_ascii_uppercase)
        && token.iter().any(u8::is_ascii_lowercase)
        && !token.iter().all(u8::is_ascii_hexdigit)
}
