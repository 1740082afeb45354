//! Secrets named in a sentence, in any of the languages of the gateway's users: "Please use DB
//! PASSWORD Ma?5gG!…", "The JWT secret on file is …", "Bitte verwenden Sie Passwort …", "Le mot
//! de passe enregistré est …", "(apiKey) è …", "client secret — …".
//!
//! After a name that holds a secret (judged by `key`, as `DB PASSWORD` → `PASSWORD`, `aws secret
//! access key` → `key` after `access`) the value is looked for in a short window on the same line:
//! - right after the name, or after punctuation that links a name to its value (`:`, `=`, `-`,
//!   `(…)`);
//! - or after up to four short words of which the last is a linking word: a copula or a word of
//!   change in one of the gateway's languages (`is`, `is now`, `on file is`, `ist`, `lautet`,
//!   `est`, `es`, `è`, `é`, `wordt`, `set to`, `e.g.`, …). The words before it may be any (`on
//!   file`, `enregistré`), so long as they hold only letters, except right after a preposition
//!   (`for db01`, `for wifi "Office5G"`, `für Server-2`), where up to two chunks name what the
//!   secret is for: a value is never skipped otherwise.
//!
//! Prose says much after a secret's name that is no secret ("password reset", "the token
//! expired at 14:05", "the password for user admin42 is required"), so the value must also
//! *look like* a secret (see `shape`), or be one word of letters and digits quoted
//! (`"hunter22"`) or after a password's name ("the root password for db01 is hunter2", where
//! people's own choices are weak); placeholders never count. A value glued to the name (`"token"),`) is code.
//!
//! When nothing follows, a value *before* the name counts too, when a linking word stands close
//! to both on the same line ("`Xk9…Zb` is the API key for staging"). Only the value is reported.

use super::shape::{is_chosen_password, looks_secret};
use super::value::{self, Value};
use super::{placeholder, run};

/// Words that link a secret's name to its value.
const LINKS: [&str; 52] = [
    "is",
    "was",
    "are",
    "be",
    "becomes",
    "remains",
    "now",
    "to",
    "equals",
    "e.g.",
    "eg",
    "i.e.",
    "ist",
    "war",
    "lautet",
    "sei",
    "wird",
    "bleibt",
    "jetzt",
    "nun",
    "auf",
    "z.b.",
    "est",
    "était",
    "sera",
    "reste",
    "devient",
    "es",
    "era",
    "será",
    "sigue",
    "è",
    "sarà",
    "resta",
    "wordt",
    "blijft",
    "luidt",
    "nu",
    "é",
    "fica",
    "para",
    "currently",
    "still",
    "actually",
    "maintenant",
    "actuellement",
    "toujours",
    "aktuell",
    "noch",
    "immer",
    "ahora",
    "ainda",
];

/// Words that start a phrase naming what a secret is for ("the password for db01 is …"), in the
/// gateway's languages: what follows them is no value.
const PREPOSITIONS: [&str; 9] = ["for", "of", "on", "für", "von", "pour", "de", "voor", "per"];

/// Words of the window, the linking word included.
const MAX_WORDS: usize = 4;
/// Longest word skipped in the window, in characters.
const MAX_WORD: usize = 16;
/// Words and punctuation read after the name.
const MAX_CHUNKS: usize = 8;
/// Longest chunk read back over, in bytes.
const MAX_CHUNK: usize = 512;
/// Words looked back over for a value before the name.
const MAX_WORDS_BEFORE: usize = 8;

/// A cheap first look: a name in prose stands after a space, a bracket, a quote or `*`, `>`, `:`
/// (not `$SECRET_KEY`, `=API_KEY`, `config.token`), and a call, an index or a path after it is
/// code.
pub(super) fn may_follow(text: &str, name_start: usize, name_end: usize) -> bool {
    let bytes = text.as_bytes();
    let opened = name_start == 0
        || super::after_escape(bytes, name_start)
        || matches!(
            bytes[name_start - 1],
            b' ' | b'\t' | b'\n' | b'\r' | b'(' | b'[' | b'"' | b'\'' | b'`' | b'*' | b'>' | b':'
        )
        || !bytes[name_start - 1].is_ascii();
    opened && name_end - name_start <= 48 && !matches!(bytes.get(name_end), Some(b'(' | b'[' | b'/' | b'{'))
}

/// Handles a secret's name at `name_start..name_end` in prose; returns where scanning resumes.
pub(super) fn around_name(
    text: &str,
    name_start: usize,
    name_end: usize,
    out: &mut Vec<super::Finding>,
) -> usize {
    let name = &text[name_start..name_end];
    if let Some(value) = after(text, name_end) {
        if let Some(valid) = judge(text, name, value) {
            report(out, value, valid);
            return value.start;
        }
        return name_end;
    }
    if let Some(value) = before(text, name_start)
        && let Some(valid) = judge(text, name, value)
    {
        report(out, value, valid);
    }
    name_end
}

fn report(out: &mut Vec<super::Finding>, value: Value, valid: bool) {
    if valid {
        super::secret(out, value.start, value.end);
    } else {
        super::look_alike(out, value.start, value.end);
    }
}

/// The first value in the window after the name, when it is linked to the name.
fn after(text: &str, name_end: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut at = name_end;
    let mut linked = true;
    let mut words = 0;
    // Chunks that may name what the secret is for, after a preposition (`for db01`, `for wifi
    // "Office5G"`): skipped like words, never the value.
    let mut qualifiers = 0;
    for _ in 0..MAX_CHUNKS {
        at = run(bytes, at, 16, |b| b == b' ' || b == b'\t');
        let end = chunk_end(bytes, at);
        if end == at {
            return None;
        }
        let chunk = &text[at..end];
        if chunk.bytes().all(|b| b"()-:=>,|*".contains(&b)) {
            // `|` between a table's cells, `**` closing Markdown's bold (`**Password:** …`).
            if chunk.contains([':', '=', '-', '>', '|']) {
                linked = true;
            } else if chunk.contains(',') {
                linked = false;
            }
        } else if let Some((word, tail)) = as_word(chunk) {
            words += 1;
            if words > MAX_WORDS {
                return None;
            }
            let lower = word.to_lowercase();
            linked = LINKS.contains(&lower.as_str()) || tail.contains([':', '=']);
            if PREPOSITIONS.contains(&lower.as_str()) {
                // "for the Jenkins box is …": the phrase's words do not count against the window.
                qualifiers = 2;
                words = words.saturating_sub(3);
            }
            if tail.contains(['.', '!', '?', ';']) {
                return None;
            }
        } else if qualifiers > 0 && !linked {
            qualifiers -= 1;
            words += 1;
            if words > MAX_WORDS || chunk.ends_with(['.', '!', '?', ';']) {
                return None;
            }
        } else {
            // A value glued to the name (`"token"),`, `` `token`, ``) is code, not prose.
            return (linked && at > name_end).then(|| value::read(text, at)).flatten();
        }
        at = end;
    }
    None
}

/// A value before the name on the same line, linked to it: at most two words, a linking word,
/// and at most four words before the name ("`X` is the password", "`X`? It is listed as the API
/// key"). One closing `?`, `.`, `,`, `;` or `:` is the sentence's, not the value's.
fn before(text: &str, name_start: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut end = name_start;
    // Words between the last linking word and the name, and since the first one seen.
    let (mut after_link, mut since_link) = (0, 0);
    let mut linked = false;
    for _ in 0..=MAX_WORDS_BEFORE {
        while end > 0 && matches!(bytes[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        let mut start = end;
        while start > 0
            && end - start <= MAX_CHUNK
            && !matches!(bytes[start - 1], b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'\\')
        {
            start -= 1;
        }
        if start == end || end - start > MAX_CHUNK {
            return None;
        }
        let chunk = &text[start..end];
        if let Some((word, tail)) = as_word(chunk) {
            if !tail.is_empty() {
                return None;
            }
            if LINKS.contains(&word.to_lowercase().as_str()) {
                linked = true;
                since_link = 0;
            } else if linked {
                since_link += 1;
            } else {
                after_link += 1;
            }
            if after_link > 4 || since_link > 2 {
                return None;
            }
        } else {
            let mut value = value::read(text, start).filter(|value| value.end <= end)?;
            if value.end == end && value.end > value.start + 1 && b"?.,;:".contains(&bytes[value.end - 1]) {
                value.end -= 1;
            }
            return (linked && looks_secret(value.text(text))).then_some(value);
        }
        end = start;
    }
    None
}

/// Whether `value`, after or before the name `name`, is a secret (`Some(true)`), a look-alike
/// (`Some(false)`, a vendor's example), or no value at all.
fn judge(text: &str, name: &str, value: Value) -> Option<bool> {
    let written = value.text(text);
    if written.contains("EXAMPLE") && written.len() >= 16 {
        // A vendor's documented example (`wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`).
        return Some(false);
    }
    if placeholder::is_placeholder(written)
        || placeholder::is_path(written)
        || placeholder::is_sentence(written)
        || written.starts_with("-----BEGIN")
    {
        return None;
    }
    let shaped =
        looks_secret(written) || ((value.quoted || names_password(name)) && is_chosen_password(written));
    if !shaped {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    if (lower.contains("secret") || lower.contains("access"))
        && written.len() == 40
        && written.bytes().all(|b| b.is_ascii_hexdigit())
        && lower.ends_with("key")
    {
        // A git SHA, never an AWS secret access key.
        return None;
    }
    Some(true)
}

/// Whether `name` names a password (not a key or token): people choose passwords, so a short
/// one of letters and digits (`hunter22`) is still one after such a name. The name is a
/// secret's already (`key`), so an ending is enough: `pw` is `DB_PW` or a plain `pw`, never
/// part of another word.
fn names_password(name: &str) -> bool {
    let lower = name.to_lowercase();
    super::key::PASSWORD_SHORT_WORDS
        .iter()
        .chain(&super::key::PASSWORD_ENDINGS)
        .chain(&super::key::PASSWORD_WORDS)
        .any(|word| lower.ends_with(word))
}

/// The end of the whitespace-separated chunk at `at`, on this line (JSON escapes end it).
fn chunk_end(bytes: &[u8], at: usize) -> usize {
    let mut end = at;
    while end < bytes.len() && !matches!(bytes[end], b' ' | b'\t' | b'\n' | b'\r') {
        if bytes[end] == b'\\' && matches!(bytes.get(end + 1), Some(b'n' | b'r' | b't' | b'"')) {
            break;
        }
        end += 1;
    }
    end
}

/// A chunk that is a word of prose: letters of any script (with `'` inside) or a dotted
/// abbreviation among the linking words (`e.g.`), then punctuation; returns both parts.
fn as_word(chunk: &str) -> Option<(&str, &str)> {
    let abbreviation = chunk.trim_end_matches([',', ':']);
    if abbreviation.contains('.') && LINKS.contains(&abbreviation.to_lowercase().as_str()) {
        return Some((abbreviation, &chunk[abbreviation.len()..]));
    }
    let word = chunk.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '=']);
    let well_formed = word.chars().next().is_some_and(char::is_alphabetic)
        && word.chars().count() <= MAX_WORD
        && word.chars().all(|c| c.is_alphabetic() || matches!(c, '\'' | '\u{2019}'));
    well_formed.then(|| (word, &chunk[word.len()..]))
}
