//! Secrets in network devices' configuration lines (Cisco IOS and the many CLIs written like
//! it), where the value follows its name and an optional encryption type with no separator:
//! `enable secret 0 …`, `username ada privilege 15 password 7 …`, `snmp-server community … RO`,
//! `tacacs-server key …`, `crypto isakmp key … address 10.0.0.1`, `key-string …`,
//! `ip ospf message-digest-key 1 md5 …`, `neighbor 10.0.0.2 password …`, `wpa-psk ascii 0 …`,
//! and an indented `password 7 …` under `line vty 0 4`.
//!
//! Type 7 is a reversible encoding, not a hash, and types 5, 8 and 9 are hashes: all are
//! redacted with the plain ones. A line counts when it starts with one of the devices'
//! commands, and a line that starts with the name itself (`password 7 …`) only with its type
//! digit, so prose ("the password 12 characters long…") stays. A line quoted in other text
//! ("use tacacs-server host … key … for this") counts by a command prose never holds (or a name
//! as distinct, `wpa-psk`), and there a value of lower-case letters only is a word of the
//! sentence.

use super::Finding;
use super::run;
use super::value::{self, Value};

/// The one name the key-word triggers do not hold.
pub(super) const TRIGGERS: &str = "snmp-server community ";

/// Names a device's secret follows.
const NAMES: [&str; 9] = [
    "secret",
    "password",
    "key",
    "key-string",
    "authentication-key",
    "message-digest-key",
    "pre-shared-key",
    "community",
    "wpa-psk",
];

/// The commands whose lines carry those names.
const COMMANDS: [&str; 18] = [
    "enable",
    "username",
    "snmp-server",
    "tacacs-server",
    "radius-server",
    "key",
    "key-string",
    "crypto",
    "pre-shared-key",
    "ip",
    "ipv6",
    "neighbor",
    "wpa-psk",
    "ppp",
    "password",
    "secret",
    "server-private",
    "authentication-key",
];

/// The commands that mark a device's line when it is quoted in the middle of other text.
const QUOTED_COMMANDS: [&str; 9] = [
    "username",
    "snmp-server",
    "tacacs-server",
    "radius-server",
    "key-string",
    "pre-shared-key",
    "wpa-psk",
    "server-private",
    "authentication-key",
];

/// Longest value read, in bytes.
const MAX_VALUE: usize = 256;

/// Longest stretch from a line's start to a name on it, in bytes.
const MAX_LINE: usize = 256;

/// Words between a name and its value: the key number and algorithm of
/// `message-digest-key 1 md5`, the side of `pre-shared-key local`, the format of
/// `wpa-psk ascii`.
const QUALIFIERS: [&str; 8] = ["md5", "sha", "sha1", "local", "remote", "ascii", "hex", "level"];

/// Handles the trigger of `TRIGGERS` at `start..end`; returns where scanning resumes.
pub(super) fn at_trigger(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let name_start = start + "snmp-server ".len();
    after_name(text, name_start, end - 1, out).unwrap_or(end)
}

/// The secret after the name at `name_start..name_end` on a device's configuration line.
/// Returns where scanning resumes when the line is one.
pub(super) fn after_name(
    text: &str,
    name_start: usize,
    name_end: usize,
    out: &mut Vec<Finding>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let name = &text[name_start..name_end];
    if !NAMES.contains(&name) || bytes.get(name_end) != Some(&b' ') {
        return None;
    }
    // Device lines are short: a line start further back than `MAX_LINE` is not one's.
    let found = super::line_start_within(text, name_start, MAX_LINE);
    let line_start = found.unwrap_or_else(|| super::char_boundary(text, name_start.saturating_sub(MAX_LINE)));
    let first = run(bytes, line_start, 64, |b| b == b' ' || b == b'\t');
    let command_end = run(bytes, first, 32, |b| b.is_ascii_lowercase() || b == b'-');
    let starts_line = found.is_some()
        && COMMANDS.contains(&&text[first..command_end])
        && bytes.get(command_end) == Some(&b' ');
    // A line quoted in prose or a message ("use tacacs-server host … key … for this"): one of the
    // commands a sentence never holds, earlier on the line.
    let distinct = QUOTED_COMMANDS.contains(&name);
    let quoted = !starts_line && (distinct || quotes_command(&text[line_start..name_start]));
    let after_enable = text[..name_start].ends_with("enable ");
    let mut at = blank(bytes, name_end);
    loop {
        let word_end = run(bytes, at, 8, |b| b.is_ascii_alphanumeric());
        let word = &text[at..word_end];
        let number =
            !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()) && name == "message-digest-key";
        if !(QUALIFIERS.contains(&word) || number) || bytes.get(word_end) != Some(&b' ') {
            break;
        }
        at = blank(bytes, word_end);
    }
    let typed = bytes.get(at).is_some_and(u8::is_ascii_digit) && bytes.get(at + 1) == Some(&b' ');
    // `enable secret 0 …` reads as a device's even inside a sentence; `enable password` alone
    // could be prose.
    let quoted = quoted || (!starts_line && after_enable && typed);
    if !starts_line && !quoted {
        return None;
    }
    // A line that starts with a word as common as `password` must read like a device's: the
    // type digit before the value, nothing after it.
    let generic = first == name_start && ["password", "secret", "key"].contains(&name);
    if generic && !typed {
        return None;
    }
    if typed {
        at = blank(bytes, at + 1);
    }
    if matches!(bytes.get(at), Some(b'"' | b'\'')) {
        // Quoted, as Junos writes them (`authentication-key "$9$…"`).
        let found = value::read(text, at).filter(|found| found.quoted && found.end > found.start)?;
        super::password(text, found, out);
        return Some(found.end);
    }
    let (end, bare) = value_end(text, at);
    let ends_line =
        matches!(bytes.get(run(bytes, end, 16, |b| b == b' ' || b == b'\t')), None | Some(b'\r' | b'\n'));
    if generic && !ends_line {
        return None;
    }
    let found = Value { start: at, end, quoted: false };
    // In prose, "enable password protection" is no password; on a device's line, `cisco` is one.
    let word = text[at..end].bytes().all(|b| b.is_ascii_lowercase());
    if end > at && bare && !(quoted && word) {
        super::password(text, found, out);
    }
    Some(end.max(name_end))
}

/// The end of a bare value from `at`: whitespace, a double quote (a JSON string's end), or an
/// escape of JSON text (`\n`, `\"`), with a closing quote or an unbalanced `)` of the text
/// around it left out; and whether the value ended there rather than at the length limit.
fn value_end(text: &str, at: usize) -> (usize, bool) {
    let bytes = text.as_bytes();
    let stop = bytes.len().min(at + MAX_VALUE);
    let mut end = at;
    while end < stop && !bytes[end].is_ascii_whitespace() && bytes[end] != b'"' {
        if bytes[end] == b'\\' {
            let letter = run(bytes, end, 8, |b| b == b'\\');
            if matches!(bytes.get(letter), Some(b'n' | b'r' | b't' | b'"')) {
                break;
            }
            end = letter;
        } else {
            end += 1;
        }
    }
    let ended = end < stop || stop == bytes.len();
    let end = super::floor_boundary(text, end.min(stop));
    let written = text[at..end].trim_end_matches(['"', '\'', '`']);
    let unbalanced = written.ends_with(')') && !written.contains('(');
    (at + written.len() - usize::from(unbalanced), ended)
}

/// Whether `before`, the text of a line before a name, holds a device command as a word that
/// prose does not use (`snmp-server`, `tacacs-server`, `username`…; not `enable`, `key` or `ip`).
fn quotes_command(before: &str) -> bool {
    before
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | '"' | '\'' | ':' | ',' | '`' | '='))
        .any(|word| QUOTED_COMMANDS.contains(&word))
}

/// Past spaces from `at`.
fn blank(bytes: &[u8], at: usize) -> usize {
    run(bytes, at, 16, |b| b == b' ')
}
