//! Credentials: private keys, JWTs, cloud and SaaS tokens, and secrets written in context
//! (`password=…`, `Authorization: Bearer …`, `https://user:pass@host`), named in prose ("the
//! DB password is …", "Passwort …"), in the columns of a CSV table, or whole JSON strings under
//! a secret-named key ([`secret_under_key`]).
//!
//! Twelve regexes of cheap *triggers* walk the text: shapes (vendor prefixes such as
//! `ghp_` or `AKIA`, `-----BEGIN `, `eyJ`, `://`, `Cookie:`), more vendor prefixes (`sk-`,
//! `dckr_pat_`, `hvs.`…), key words (`pass`, `pw`, `secret`, `token`, `key`, `auth`, `bearer`,
//! `basic`, and the words for a password of other languages), the word for a password in the
//! languages the key words leave out (`пароль`, `パスワード`…), and in more of them with its
//! abbreviations and the words for "credentials" (`heslo`, `kata sandi`, `mật khẩu`, `pswd`,
//! `Zugangsdaten`: `languages`), command-line options (` -p`,
//! ` --password`) and the commands whose password is an argument (`net use`, `echo`), the names
//! of one-time codes, and what source code, device configurations, Wi-Fi QR codes and mail
//! session transcripts write around a secret (`login(`, `getConnection(`, `@tcp(`, `snmp-server
//! community `, `WIFI:`, `AUTH PLAIN `) with the names of seed phrases (`mnemonic`),
//! the whole shapes of tokens whose prefix is too short to say "token" alone (`messaging`), and
//! `@`, for `user:password@host` written without a scheme (`userinfo`), and the prefixes of
//! more web platforms' tokens and `pwdump`'s `:::` (`platforms`, `hash`). The numeric ports of
//! `.pgpass` lines are read from the text's digit groups instead (`pgpass`).
//! Each set is kept small: a literal set the regex prefilter scans fast costs about a
//! microsecond per 8 KB, where one set of all of them cost fourteen. Ordinary prose matches a
//! trigger only now and then, and a key word with no separator after its name is dropped after a
//! few byte reads, so text without credentials costs about one prefilter scan per set. Each
//! trigger is handed to the recognizer that owns it, which reads the exact shape by hand and
//! reports:
//! - a *valid* finding over the secret value only (the password, not `password=`), or
//! - a *look-alike* over a span that has a credential's shape but is not a live secret (a
//!   vendor's documented example key, a GitHub token whose checksum fails, a masked value, a
//!   public key or certificate), which keeps other recognizers from reading digits inside it.
//!
//! Context recognizers (assignments, headers, URLs) resume scanning at the start of the value
//! they found, so a vendor token inside a value is still checked by its own recognizer: when it
//! turns out to be a look-alike over the same span, the look-alike wins when findings are settled.

mod apart;
mod assign;
mod aws;
mod call;
mod cli;
mod cookie;
mod csv;
mod device;
mod dsn;
mod github;
mod hash;
mod header;
mod html;
mod jwk;
mod jwt;
mod key;
mod languages;
mod login;
mod messaging;
mod mnemonic;
mod otp;
mod pem;
mod pgpass;
mod placeholder;
mod platforms;
mod prose;
mod putty;
mod shape;
mod smtp;
mod table;
mod triggers;
mod url;
mod userinfo;
mod value;
mod vendors;
mod wifi;

#[cfg(test)]
mod tests;

pub(crate) use cookie::cookie_header;
pub(crate) use jwk::{is_key_material, is_private_member};

use triggers::{
    AT_SET, CODE_SET, COMMAND_SET, KEYWORD_SET, LANGUAGE_SET, MESSAGING_SET, OTHER_NAME_SET, PLATFORM_SET,
    SOURCE_SET, TOKEN_SET, WORD_SET,
};

use super::boundary::{char_boundary, floor_boundary};
use super::digits::Group;
use super::finding::Finding;
use super::kind::RedactionKind;

/// Reports every credential in `text` (the scan text: Unicode spaces/dashes already folded to
/// ASCII); `groups` are its digit groups (`digits::groups`), where `.pgpass` lines are found by
/// their port.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    pgpass::at_ports(text, groups, out);
    let triggers = triggers::sets();
    let mut next = triggers.map(|trigger| trigger.find(text));
    let mut at = 0;
    // The end of the last secret reported: the key words inside it are part of it, and reading
    // them again would cost a value's length each (`pass=pass=pass=…`).
    let mut reported = 0;
    loop {
        for (set, (found, trigger)) in next.iter_mut().zip(triggers).enumerate() {
            let from = if matches!(set, KEYWORD_SET | WORD_SET | LANGUAGE_SET | OTHER_NAME_SET) {
                at.max(reported)
            } else {
                at
            };
            if set < COMMAND_SET && found.is_some_and(|found| found.start() < from) {
                *found = trigger.find_at(text, from);
            }
        }
        // The earliest; at the same place, the first set's (a shape before a key word).
        let earliest = next.iter().enumerate().filter_map(|(set, found)| found.map(|found| (set, found)));
        let Some((set, found)) = earliest.min_by_key(|(_, found)| found.start()) else {
            break;
        };
        let (start, end) = (found.start(), found.end());
        match set {
            // Command lines, one-time codes, source code, messaging tokens, `user:pw@host` and
            // the platforms' tokens are read on their own: a recognizer of the other sets that
            // read past one of their triggers (`passcode` as a key word, a token given as a
            // password) does not hide it, and they hide nothing from the others.
            COMMAND_SET | CODE_SET | SOURCE_SET | MESSAGING_SET | AT_SET | PLATFORM_SET => {
                let resume = match set {
                    COMMAND_SET => cli::at_trigger(text, start, end, out),
                    CODE_SET => otp::at_name(text, start, end, out),
                    SOURCE_SET => at_source(text, start, end, out),
                    AT_SET => userinfo::at_sign(text, start, out),
                    PLATFORM_SET if &text[start..end] == hash::PWDUMP_TRIGGER => {
                        hash::pwdump(text, start, out)
                    }
                    PLATFORM_SET => platforms::at_prefix(text, start, end, out),
                    _ => at_messaging(text, start, end, out),
                };
                next[set] = triggers[set].find_at(text, char_boundary(text, resume.max(end)));
            }
            _ => {
                let before = out.len();
                let resume = if set == TOKEN_SET {
                    at_token(text, start, end, out)
                } else {
                    dispatch(text, start, end, out)
                };
                at = char_boundary(text, resume.max(start + 1));
                let secrets = out[before..].iter().filter(|finding| finding.valid);
                reported = reported.max(secrets.map(|finding| finding.end).max().unwrap_or(0));
            }
        }
    }
}

/// Hands a trigger of the source set (source code, device lines, DSNs, `.pgpass` lines, Wi-Fi QR
/// codes, Oracle's tools and JDBC URLs, Vault's and OpenSSL's subcommands, mail sessions' `AUTH`,
/// seed phrases) to its recognizer; returns where scanning resumes.
fn at_source(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let trigger = &text[start..end];
    if trigger == device::TRIGGERS {
        device::at_trigger(text, start, end, out)
    } else if trigger == wifi::TRIGGERS {
        wifi::at_scheme(text, start, end, out)
    } else if trigger.starts_with('@') {
        dsn::at_protocol(text, start, end, out)
    } else if trigger.starts_with("oracle:") {
        dsn::at_oracle(text, end, out)
    } else if trigger.starts_with(':') {
        pgpass::at_port(text, start, end, out)
    } else if cli::LOGON_TRIGGERS.split('|').any(|tool| tool == trigger) {
        cli::at_trigger(text, start, end, out)
    } else if smtp::TRIGGERS.split('|').any(|marker| marker == trigger) {
        smtp::at_trigger(text, start, end, out)
    } else if mnemonic::TRIGGERS.split('|').any(|name| name == trigger) {
        mnemonic::at_name(text, start, end, out)
    } else {
        call::at_trigger(text, start, end, out)
    }
}

/// Hands a match of the messaging set (a whole token's shape) to its recognizer; returns where
/// scanning resumes.
fn at_messaging(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    if text[start..end].starts_with("key-") {
        vendors::at_prefix(text, start, end, out)
    } else {
        messaging::at_shape(text, start, out)
    }
}

/// Hands a trigger of the token set to its recognizer; returns where scanning resumes.
fn at_token(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let trigger = &text[start..end];
    if trigger == pem::BASE64_BEGIN {
        pem::at_base64_begin(text, start, out)
    } else if hash::is_trigger(trigger) {
        hash::at_prefix(text, start, end, out)
    } else {
        vendors::at_prefix(text, start, end, out)
    }
}

/// Hands one trigger to its recognizer; returns where scanning resumes.
fn dispatch(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let trigger = &text[start..end];
    match trigger.as_bytes()[0] {
        b'-' => pem::at_begin(text, start, out),
        b':' => url::at_scheme_separator(text, start, out),
        b'c' | b'C' if trigger.ends_with(':') => cookie::header(text, start, end, out),
        b'e' if trigger == "eyJ" => jwt::at_header(text, start, out),
        b'k' if trigger.starts_with("kty") => jwk::at_kty(text, start, end, out),
        b'P' if trigger.starts_with("PuTTY") => putty::at_header(text, end, out),
        b'b' | b'B' if trigger.eq_ignore_ascii_case("basic") => header::basic(text, start, end, out),
        _ if login::WORDS.iter().any(|word| trigger.eq_ignore_ascii_case(word)) => {
            login::at_word(text, start, end, out)
        }
        _ if triggers::is_keyword(trigger) => assign::at_keyword(text, start, end, out),
        b'A' if trigger.len() == 4 && trigger != "AIza" => aws::at_key_id(text, start, out),
        b'g' if trigger.starts_with("gh") || trigger.starts_with("github") => {
            github::at_prefix(text, start, end, out)
        }
        _ => vendors::at_prefix(text, start, end, out),
    }
}

/// Whether `value`, the whole string under the JSON object key `key`, is a secret. Under a
/// code's name (`pin`, `cvv`, `otp`) only 3 to 8 digits are one.
///
/// The key must name a secret (see `key`); the value must not be empty, a placeholder, a mask, a
/// reference, a path or a sentence (see `placeholder`), nor hold a credential's look-alike (a
/// vendor's documented example, a token whose checksum fails). A value with spaces is taken only
/// as a passphrase of three or more words of letters, and an `Authorization` value is taken by its
/// credentials (`Basic …`, `Bearer …`, or a bare token). PEM blocks are left to their recognizer.
pub(crate) fn secret_under_key(key: &str, value: &str) -> bool {
    // The value first: it fails at its first word for almost every string, and the key's check
    // allocates.
    if mnemonic::is_seed_phrase(value) && mnemonic::names_seed_phrase(key) {
        return true;
    }
    if otp::names_code(key) {
        // `{"pin": "4829"}`, `{"cvv": 381}`, `{"otp": "482913"}`: a code is its digits.
        return otp::is_code(value);
    }
    let Some(kind) = key::classify(key, false, None) else {
        return false;
    };
    if value.trim().is_empty() || value.len() > value::MAX_VALUE || value.contains(['\n', '\r']) {
        return false;
    }
    if value.contains("-----BEGIN") || value.contains("EXAMPLE") {
        return false;
    }
    let mut found = Vec::new();
    // Only look-alikes matter here, and no number's line (`.pgpass`) makes one: no digit groups.
    find(value, &[], &mut found);
    if found.iter().any(|finding| !finding.valid) {
        return false;
    }
    match kind {
        key::Key::Authorization | key::Key::Bearer => {
            let credentials = value.split_once(' ').map_or(value, |(_, rest)| rest).trim();
            credentials.len() >= 8 && !placeholder::is_placeholder(credentials)
        }
        key::Key::Secret { weak } => {
            if value.contains(char::is_whitespace) {
                let words: Vec<&str> = value.split_whitespace().collect();
                return words.len() >= 3
                    && words.iter().all(|word| word.chars().all(char::is_alphabetic))
                    && !placeholder::is_sentence(value)
                    && !placeholder::is_placeholder(value);
            }
            value::accept_whole(key, value, weak)
        }
        key::Key::Material => {
            !value.contains(char::is_whitespace)
                && kind.admits(value)
                && value::accept_whole(key, value, false)
        }
    }
}

/// A valid finding.
fn secret(out: &mut Vec<Finding>, start: usize, end: usize) {
    out.push(Finding::valid(start, end, RedactionKind::Credentials));
}

/// A password written where syntax says one goes (a call's argument, a device's line, a DSN):
/// reported unless it is a placeholder (`"changeme"`, `"***"`, `<password>`).
fn password(text: &str, found: value::Value, out: &mut Vec<Finding>) {
    if value::accept(text, "password", found, true, false) {
        secret(out, found.start, found.end);
    }
}

/// A look-alike: a credential's shape that is not a live secret.
fn look_alike(out: &mut Vec<Finding>, start: usize, end: usize) {
    out.push(Finding::look_alike(start, end, RedactionKind::Credentials));
}

/// The end of the run of bytes matching `keep` from `from`, at most `limit` bytes long. A run cut
/// by the limit inside a multi-byte character ends before that character, so the run's end is
/// always a char boundary of the text `bytes` belong to (when `from` is one).
fn run(bytes: &[u8], from: usize, limit: usize, keep: impl Fn(u8) -> bool) -> usize {
    let stop = bytes.len().min(from.saturating_add(limit));
    let mut index = from;
    while index < stop && keep(bytes[index]) {
        index += 1;
    }
    while index > from && bytes.get(index).is_some_and(|&b| b & 0xC0 == 0x80) {
        index -= 1;
    }
    index
}

/// Whether `text` ends with `suffix` (ASCII), case aside: only the end is read, nothing is
/// allocated.
fn ends_with_folded(text: &str, suffix: &str) -> bool {
    text.len() >= suffix.len()
        && text.as_bytes()[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// The start of the run of bytes matching `keep` that ends at `to`, at most `limit` bytes long:
/// [`run`] backwards. A run cut by the limit inside a multi-byte character starts after that
/// character, so the run's start is always a char boundary of the text `bytes` belong to.
fn run_back(bytes: &[u8], to: usize, limit: usize, keep: impl Fn(u8) -> bool) -> usize {
    let stop = to.saturating_sub(limit);
    let mut index = to;
    while index > stop && keep(bytes[index - 1]) {
        index -= 1;
    }
    while index < to && bytes.get(index).is_some_and(|&b| b & 0xC0 == 0x80) {
        index += 1;
    }
    index
}

/// The start of the line holding `at`, when it is at most `limit` bytes back. A recognizer looks
/// no further: the lines it reads are short, and reading a long line back to its start for each
/// name on it would cost the line's length each time.
fn line_start_within(text: &str, at: usize, limit: usize) -> Option<usize> {
    let window = char_boundary(text, at.saturating_sub(limit));
    match text[window..at].rfind('\n') {
        Some(offset) => Some(window + offset + 1),
        None if window == 0 => Some(0),
        None => None,
    }
}

/// True when the byte before `start` does not continue a word (`[A-Za-z0-9]`): it is no letter
/// or digit, or it is the letter of a `\n`, `\r`, `\t` escape in JSON text (`"…\nAKIA…"`).
fn starts_word(bytes: &[u8], start: usize) -> bool {
    start == 0 || !bytes[start - 1].is_ascii_alphanumeric() || after_escape(bytes, start)
}

/// Whether the byte before `index` is the letter of a `\n`, `\r` or `\t` escape.
fn after_escape(bytes: &[u8], index: usize) -> bool {
    index >= 2 && bytes[index - 2] == b'\\' && matches!(bytes[index - 1], b'n' | b'r' | b't')
}

/// Past whitespace from `at` (before `stop`), also past the `\n`, `\r`, `\t` escapes of JSON
/// text (with any number of backslashes).
fn skip_blank(bytes: &[u8], mut at: usize, stop: usize) -> usize {
    while at < stop {
        match bytes[at] {
            b' ' | b'\t' | b'\r' | b'\n' => at += 1,
            b'\\' => {
                let after = run(bytes, at, stop - at, |b| b == b'\\');
                if !matches!(bytes.get(after), Some(b'n' | b'r' | b't')) {
                    break;
                }
                at = after + 1;
            }
            _ => break,
        }
    }
    at
}

/// `[A-Za-z0-9_-]`: base64url, and most vendor token bodies.
fn is_base64url(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}
