//! Credentials in SMTP, POP3 and IMAP session transcripts (mail server logs, `openssl s_client`
//! and `swaks` output), where the client's `AUTH` sends them in base64:
//! - `AUTH PLAIN <base64>`: the base64 of `[authzid] NUL user NUL password` (RFC 4616), reported
//!   when it decodes to exactly that;
//! - `AUTH LOGIN`: the server asks `334 VXNlcm5hbWU6` ("Username:") and `334 UGFzc3dvcmQ6`
//!   ("Password:"); the base64 word that starts the line after the second is the password,
//!   behind a transcript's marker (`C: `, `> `, `<<< `) when there is one.

use super::{Finding, floor_boundary, run};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// The triggers, read with the source set.
pub(super) const TRIGGERS: &str = "AUTH PLAIN |UGFzc3dvcmQ6";

/// Longest base64 word read.
const MAX_WORD: usize = 1024;

/// How far after the password prompt its answer's line may start (the prompt's own line end and
/// a transcript's timestamp or direction marker).
const MAX_PREFIX: usize = 48;

/// Handles a trigger at `start..end`; returns where scanning resumes.
pub(super) fn at_trigger(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    if text[start..end].starts_with("AUTH") {
        let word_end = run(bytes, end, MAX_WORD, is_base64);
        if decodes(&text[end..word_end]).is_some_and(|plain| is_plain_response(&plain)) {
            super::secret(out, end, word_end);
            return word_end;
        }
        return end;
    }
    // The prompt's line ends; the answer starts the next one, maybe after a marker.
    let window = &text[end..floor_boundary(text, (end + MAX_PREFIX).min(text.len()))];
    let Some(line) = window.find('\n').or_else(|| window.find("\\n").map(|at| at + 1)) else {
        return end;
    };
    let mut at = end + line + 1;
    at += text[at..].len() - text[at..].trim_start_matches([' ', '\t', '\r']).len();
    for marker in ["C: ", "C:", "> ", "<<< ", ">>> ", "-> "] {
        if text[at..].starts_with(marker) {
            at += marker.len();
            break;
        }
    }
    let word_end = run(bytes, at, MAX_WORD, is_base64);
    let answered = word_end > at && !bytes.get(word_end).is_some_and(|&b| b.is_ascii_graphic() && b != b'"');
    if answered && decodes(&text[at..word_end]).is_some_and(|plain| !plain.is_empty()) {
        super::secret(out, at, word_end);
        return word_end;
    }
    end
}

fn is_base64(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=')
}

/// The bytes `word` decodes to, when it is padded base64.
fn decodes(word: &str) -> Option<Vec<u8>> {
    STANDARD.decode(word).ok()
}

/// Whether `plain` is `[authzid] NUL user NUL password` with a user and a password.
fn is_plain_response(plain: &[u8]) -> bool {
    let parts: Vec<&[u8]> = plain.split(|&b| b == 0).collect();
    matches!(parts.as_slice(), [_, user, password] if !user.is_empty() && !password.is_empty())
}
