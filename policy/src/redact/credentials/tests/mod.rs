//! Tests of the credentials recognizer: fixtures, carriers and assertions shared by the suites.
//!
//! Vendor-shaped fixtures are assembled at run time from split literals, so no token-shaped
//! string sits in the source for secret scanners to flag.

mod assignments;
mod carriers;
mod code;
mod codes;
mod commands;
mod context;
mod hashes;
mod key_files;
mod keys_and_tokens;
mod languages;
mod layout;
mod negatives;
mod platforms;
mod prose;
mod sweep;
mod tables;
mod transcripts;
mod vendors;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

use super::find;
use crate::redact::finding::{Finding, settle};

/// Every finding reported for `text`.
fn findings(text: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    find(text, &crate::redact::digits::groups(text), &mut out);
    for finding in &out {
        assert!(text.is_char_boundary(finding.start) && text.is_char_boundary(finding.end), "{text}");
        assert!(finding.start < finding.end, "empty finding in {text}");
    }
    out
}

/// The spans that would be replaced (valid findings left after settling).
fn redacted(text: &str) -> Vec<&str> {
    settle(findings(text)).into_iter().map(|finding| &text[finding.start..finding.end]).collect()
}

/// The look-alike spans reported.
fn look_alikes(text: &str) -> Vec<&str> {
    findings(text).into_iter().filter(|f| !f.valid).map(|finding| &text[finding.start..finding.end]).collect()
}

/// `text` redacts exactly `secret` (once) and nothing else.
#[track_caller]
fn assert_secret(text: &str, secret: &str) {
    assert_eq!(redacted(text), [secret], "in {text:?}");
}

/// Nothing in `text` is redacted.
#[track_caller]
fn assert_clean(text: &str) {
    assert_eq!(redacted(text), Vec::<&str>::new(), "in {text:?}");
}

/// `text` redacts nothing and reports `span` as a look-alike.
#[track_caller]
fn assert_look_alike(text: &str, span: &str) {
    assert_clean(text);
    assert!(
        look_alikes(text).contains(&span),
        "{span:?} not a look-alike in {text:?}: {:?}",
        look_alikes(text)
    );
}

/// `parts` joined.
fn join(parts: &[&str]) -> String {
    parts.concat()
}

/// Deterministic pseudo-random characters from `alphabet` (a fixed LCG: fixtures never change).
fn chars(seed: u32, length: usize, alphabet: &[u8]) -> String {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(12_345);
    (0..length)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            alphabet[((state >> 16) as usize) % alphabet.len()] as char
        })
        .collect()
}

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE64URL: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";
const HEX: &[u8] = b"0123456789abcdef";
const UPPER32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// A GitHub classic token with a valid checksum.
fn github_token(prefix: &str, seed: u32) -> String {
    let random = chars(seed, 30, BASE62);
    let checksum = super::github::encode(crc32fast::hash(random.as_bytes()));
    join(&[prefix, "_", &random, std::str::from_utf8(&checksum).unwrap_or_default()])
}

/// A JWT with the given header and payload JSON.
fn jwt(header: &str, payload: &str) -> String {
    let signature = URL_SAFE_NO_PAD.encode(chars(7, 32, BASE62));
    format!("{}.{}.{signature}", URL_SAFE_NO_PAD.encode(header), URL_SAFE_NO_PAD.encode(payload))
}

/// A typical HS256 JWT.
fn sample_jwt() -> String {
    jwt(r#"{"alg":"HS256","typ":"JWT"}"#, r#"{"sub":"42","name":"Ada","iat":1700000000}"#)
}

/// A PEM block `label` with a body of decodable base64 (64-column lines joined by `newline`).
fn pem(label: &str, newline: &str) -> String {
    let der: Vec<u8> = (0..600u32).map(|i| (i.wrapping_mul(7919) >> 3) as u8).collect();
    let body = STANDARD.encode(der);
    let lines: Vec<&str> =
        body.as_bytes().chunks(64).map(|line| std::str::from_utf8(line).unwrap_or_default()).collect();
    format!("-----BEGIN {label}-----{newline}{}{newline}-----END {label}-----", lines.join(newline))
}

/// The carriers a bare token is tested in: (name, text with `{}` for the token). JSON text
/// carriers escape line breaks as `\n`, as a tool result serialized into a string would.
const TOKEN_CARRIERS: [(&str, &str); 10] = [
    ("wiki", "The deploy failed because the credential {} had expired; rotate it and retry."),
    ("log", "2024-05-01T12:00:00Z WARN gateway: rejected credential {} from 10.0.0.7 (attempt 3)"),
    ("yaml", "service:\n  name: api\n  credential: {}\n  region: eu-west-1\n"),
    ("env", "SERVICE_URL=https://api.example.com\nSERVICE_CREDENTIAL={}\nRETRIES=3\n"),
    ("ini", "[service]\nurl = https://api.example.com\ncredential = {}\n"),
    ("toml", "[service]\ncredential = \"{}\"\ntimeout = 30\n"),
    ("json", "{\"credential\": \"{}\", \"retries\": 3}"),
    ("json text", r#"{"tool":"read_file","output":"service:\n  credential: {}\n  retries: 3\n"}"#),
    ("markdown", "Send `{}` in the request, then check the logs."),
    ("parenthesized", "The old credential ({}) was revoked."),
];

/// Asserts that `token` is redacted exactly, in every carrier.
#[track_caller]
fn assert_token_everywhere(token: &str) {
    for (carrier, template) in TOKEN_CARRIERS {
        let text = template.replace("{}", token);
        assert_eq!(redacted(&text), [token], "{carrier}: {text:?}");
    }
}

/// Asserts that `token` is a look-alike (left intact) in every carrier.
#[track_caller]
fn assert_look_alike_everywhere(token: &str) {
    for (carrier, template) in TOKEN_CARRIERS {
        let text = template.replace("{}", token);
        assert_eq!(redacted(&text), Vec::<&str>::new(), "{carrier}: {text:?}");
        assert!(look_alikes(&text).contains(&token), "{carrier}: {token:?} not a look-alike in {text:?}");
    }
}
