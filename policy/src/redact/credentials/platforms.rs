//! Tokens of more web platforms, by their published prefix and shape (the whole token is
//! reported; a filler body is a look-alike, see `vendors::report`):
//!
//! - hosting: Netlify personal access tokens `nfp_` + ≥ 32 letters and digits, Render API keys
//!   `rnd_` + ≥ 28;
//! - content and data: Contentful personal access tokens `CFPAT-` + ≥ 43 of base64url, Airtable
//!   personal access tokens `pat` + 14 letters and digits + `.` + 64 hex;
//! - storage and secrets: Dropbox's short-lived access tokens `sl.` + ≥ 100 of base64url (and
//!   `.`), 1Password service account tokens `ops_eyJ` + ≥ 100 of base64url (a JSON document);
//! - e-mail marketing: Mailchimp API keys, 32 hex + `-us` + the data centre's number (1 or 2
//!   digits), found from their `-us`;
//! - payments: Braintree access tokens `access_token$production$` (or `$sandbox$`) + 16 lower-case
//!   letters and digits + `$` + 32 hex; Square access tokens `EAAA` + 60 of base64url (read with
//!   Meta's `EAA…` in `messaging`);
//! - the access key ids of Alibaba Cloud (`LTAI` + 12 to 20 letters and digits) and Tencent Cloud
//!   (`AKID` + 32), reported as AWS's `AKIA…` are: an id that is not written next to its secret
//!   still says whose it is, and the secret usually follows.

use super::vendors::{self, at_least};
use super::{Finding, is_base64url, run, starts_word};

/// The triggers, a set of their own (in the token set they made its prefilter six times
/// slower): each prefix, or Mailchimp's `-us` and its first digit.
pub(super) const TRIGGERS: &str =
    r"CFPAT-|nfp_|rnd_|ops_eyJ|sl\.|LTAI|AKID|access_token\$(?:production|sandbox)\$|-us[0-9]";

/// Airtable's whole shape: `pat` alone starts `path` and `pattern` everywhere, and a regex that
/// reads the rest turns those down inside its own scan.
pub(super) const AIRTABLE_TRIGGER: &str = r"pat[0-9A-Za-z]{14}\.[0-9a-f]{64}";

/// Handles a match of [`TRIGGERS`] or [`AIRTABLE_TRIGGER`] at `start..end`; returns where
/// scanning resumes.
pub(super) fn at_prefix(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    let trigger = &text[start..end];
    if trigger.starts_with("-us") {
        return mailchimp(text, start, out);
    }
    if trigger.starts_with("pat") {
        return airtable(text, start, out);
    }
    if !starts_word(bytes, start) {
        return start + 1;
    }
    let alphanumeric = |b: u8| b.is_ascii_alphanumeric();
    let body_end = match &text[start..end] {
        "CFPAT-" => at_least(bytes, end, 43, is_base64url),
        "nfp_" => at_least(bytes, end, 32, alphanumeric),
        "rnd_" => at_least(bytes, end, 28, alphanumeric),
        "ops_eyJ" => at_least(bytes, end, 100, |b| is_base64url(b) || b == b'='),
        "sl." => at_least(bytes, end, 100, |b| is_base64url(b) || b == b'.'),
        "LTAI" => Some(run(bytes, end, 21, alphanumeric)).filter(|&body| (12..=20).contains(&(body - end))),
        "AKID" => Some(run(bytes, end, 33, alphanumeric)).filter(|&body| body - end == 32),
        _ => braintree(bytes, end),
    };
    let Some(body_end) = body_end.filter(|&body_end| !bytes.get(body_end).is_some_and(|&b| alphanumeric(b)))
    else {
        return start + 1;
    };
    vendors::report(text, start, end, body_end, out);
    body_end
}

/// A Braintree token's body after `access_token$<environment>$`: 16 + `$` + 32 hex.
fn braintree(bytes: &[u8], from: usize) -> Option<usize> {
    let id_end = run(bytes, from, 17, |b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let key_end = run(bytes, id_end + 1, 33, |b| b.is_ascii_hexdigit());
    (id_end - from == 16 && bytes.get(id_end) == Some(&b'$') && key_end - id_end - 1 == 32).then_some(key_end)
}

/// A Mailchimp key ending in the `-us` at `dash`: 32 hex before it, 1 or 2 digits after.
fn mailchimp(text: &str, dash: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    let digits = dash + "-us".len();
    let end = run(bytes, digits, 3, |b| b.is_ascii_digit());
    let start = super::run_back(bytes, dash, 33, |b| b.is_ascii_hexdigit());
    let whole = (1..=2).contains(&(end - digits))
        && dash - start == 32
        && starts_word(bytes, start)
        && !bytes.get(end).is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_');
    if !whole {
        return dash + 1;
    }
    vendors::report(text, start, start, end, out);
    end
}

/// An Airtable token matched whole at `start` (see [`AIRTABLE_TRIGGER`]); returns where scanning
/// resumes.
fn airtable(text: &str, start: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    let end = start + AIRTABLE_LENGTH;
    if !starts_word(bytes, start) || bytes.get(end).is_some_and(|&b| b.is_ascii_alphanumeric()) {
        return start + 1;
    }
    vendors::report(text, start, start + "pat".len(), end, out);
    end
}

/// `pat`, 14, `.`, 64.
const AIRTABLE_LENGTH: usize = 3 + 14 + 1 + 64;

/// A Square access token at `start` (`EAAA` + exactly 60 of base64url): its end.
pub(super) fn square(bytes: &[u8], start: usize) -> Option<usize> {
    let body = start + "EAAA".len();
    let end = run(bytes, body, 61, is_base64url);
    (bytes[start..].starts_with(b"EAAA") && end - body == 60).then_some(end)
}
