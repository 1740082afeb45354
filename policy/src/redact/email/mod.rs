//! Email addresses: a local part, `@`, and a domain whose top-level label is in IANA's root zone.
//!
//! The scan starts at each `@` and grows the address both ways, so it costs nothing on text
//! without one. It refuses what only looks like an address:
//! - a top-level domain that does not exist (`logo@2x.png`, `user@localhost`, `v1.2@beta`);
//! - the user part of a URL (`https://ci-bot@host/`, `ftp://user:pw@host`): a user name is not an
//!   address, and a password there belongs to the credentials recognizer;
//! - an scp-style remote (`git@github.com:org/repo.git`) or `user@host:port`.
//!
//! `mailto:` links are addresses. Besides IANA's top-level domains, the names reserved for
//! private and documentation use that companies run internal mail on are accepted too
//! (`.internal`, `.corp`, `.local`, `.lan`, `.home`, `.intranet`, `.private`, `.example`,
//! `.test`): an address at `jane@hr.corp` is as personal as one at `jane@example.com`.
//!
//! Addresses spelled out to dodge harvesters (`jane [at] corp [dot] com`) are read by `spelled`.

mod spelled;

pub(crate) use spelled::find as find_spelled;

use super::boundary::char_boundary;
use super::finding::Finding;
use super::kind::RedactionKind;
use super::tld::is_tld;

/// Longest local part (RFC 5321).
const MAX_LOCAL: usize = 64;
/// Longest domain.
const MAX_DOMAIN: usize = 253;

/// Reports every address in `text`.
pub(crate) fn find(text: &str, out: &mut Vec<Finding>) {
    let mut searched = 0;
    while let Some(relative) = text[searched..].find('@') {
        let at = searched + relative;
        searched = at + 1;
        if let Some((start, end)) = address_at(text, at) {
            out.push(Finding::valid(start, end, RedactionKind::Email));
            searched = end;
        }
    }
}

/// The address around the `@` at byte `at`, if it is one.
fn address_at(text: &str, at: usize) -> Option<(usize, usize)> {
    let before = &text[..at];
    let mut start = at;
    for (index, c) in before.char_indices().rev() {
        if !is_local_char(c) || at - index > MAX_LOCAL {
            break;
        }
        start = index;
    }
    // A local part does not start with a dot (sentence punctuation before it), nor with an
    // apostrophe: one inside a name is the name's (`o'brien@`), one before it opens a quotation
    // (`'jane@corp.com'`), and taking it would eat a quote that is not the address's.
    while text[start..at].starts_with(['.', '-', '+', '\'']) {
        start += 1;
    }
    let local = &text[start..at];
    if local.is_empty() || local.ends_with('.') || local.contains("..") {
        return None;
    }
    if in_url_authority(text, start) {
        return None;
    }
    let domain_end = domain_end(text, at + 1)?;
    let after = &text[domain_end..];
    if after.starts_with(':') && after[1..].starts_with(|c: char| c.is_alphanumeric() || "/~_.".contains(c)) {
        return None;
    }
    Some((start, domain_end))
}

/// The end of the longest domain starting at `from` whose labels are well formed and whose last
/// label is a top-level domain (`a@b.com.Next` ends after `com`).
fn domain_end(text: &str, from: usize) -> Option<usize> {
    let rest = &text[from..];
    let mut end = rest.find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '.')).unwrap_or(rest.len());
    end = end.min(MAX_DOMAIN);
    while !rest.is_char_boundary(end) {
        end -= 1;
    }
    let labels: Vec<&str> = rest[..end].split('.').collect();
    domain_labels(&labels).map(|count| {
        let length: usize = labels[..count].iter().map(|label| label.len()).sum::<usize>() + count - 1;
        from + length
    })
}

/// How many of `labels` make the longest domain: two or more well-formed labels, the last a
/// top-level domain.
fn domain_labels(labels: &[&str]) -> Option<usize> {
    let well_formed = labels.iter().take_while(|label| valid_label(label)).count();
    (2..=well_formed).rev().find(|&count| is_mail_tld(labels[count - 1]))
}

/// Top-level names outside IANA's root zone that internal mail uses (RFC 2606, RFC 6762, ICANN's
/// `.internal`, and the common private ones).
const PRIVATE_TLDS: [&str; 9] =
    ["internal", "corp", "local", "lan", "home", "intranet", "private", "example", "test"];

fn is_mail_tld(label: &str) -> bool {
    is_tld(label) || PRIVATE_TLDS.iter().any(|private| private.eq_ignore_ascii_case(label))
}

fn valid_label(label: &str) -> bool {
    !label.is_empty() && label.len() <= 63 && !label.starts_with('-') && !label.ends_with('-')
}

fn is_local_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-' | '\'')
}

/// Whether the local part starting at `start` is inside the authority of a URL (its user or
/// password): its token (back to whitespace or a quote) has `://` before it with no `/`, `?` or
/// `#` in between, and is not a `mailto:` link. An address in a URL's path or query
/// (`https://x/?to=a@b.com`) is an address.
fn in_url_authority(text: &str, start: usize) -> bool {
    // A scheme and userinfo are shorter than this; looking further back on a page-long token
    // would cost the page's length at every `@`.
    const MAX_URL: usize = 256;
    let floor = char_boundary(text, start.saturating_sub(MAX_URL));
    let token_start = text[floor..start]
        .rfind(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '(' | '[' | '`'))
        .map_or(floor, |index| floor + index + 1);
    let token = &text[token_start..start];
    if token.to_ascii_lowercase().starts_with("mailto:") {
        return false;
    }
    token.rfind("://").is_some_and(|scheme_end| !token[scheme_end + 3..].contains(['/', '?', '#']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emails(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        find(text, &mut out);
        out.iter().map(|finding| &text[finding.start..finding.end]).collect()
    }

    #[test]
    fn addresses() {
        assert_eq!(emails("write to jane.doe+hr@corp.example.com."), ["jane.doe+hr@corp.example.com"]);
        assert_eq!(emails("<a href=\"mailto:x_y@mail.example.org\">"), ["x_y@mail.example.org"]);
        assert_eq!(
            emails("jürgen@example.de, o'brien@example.co.uk"),
            ["jürgen@example.de", "o'brien@example.co.uk"]
        );
        assert_eq!(emails("a@b.com.2nd try"), ["a@b.com"]);
        assert_eq!(emails("Reach me at ann@example.com: thanks"), ["ann@example.com"]);
        assert_eq!(emails("https://x.example/?to=ann@example.com"), ["ann@example.com"]);
    }

    #[test]
    fn quotes_around_an_address_are_not_part_of_it() {
        assert_eq!(emails("contact 'jane@corp.com' now"), ["jane@corp.com"]);
        assert_eq!(emails("to='jane@corp.com'"), ["jane@corp.com"]);
        assert_eq!(emails("'o'brien@example.co.uk'"), ["o'brien@example.co.uk"]);
        assert_eq!(emails("\"jane@corp.com\""), ["jane@corp.com"]);
    }

    #[test]
    fn look_alikes() {
        for text in [
            "logo@2x.png",
            "user@localhost",
            "version 1.2.3@beta",
            "git@github.com:org/repo.git",
            "https://ci-bot@git.example.com/org/repo",
            "ftp://user:pw@files.example.com/x",
            "https://deploy:pa=ss@git.example.com/x",
            "ssh deploy@db.example.com:2222",
            "@handle and a@ b.com",
        ] {
            assert_eq!(emails(text), Vec::<&str>::new(), "{text}");
        }
    }
}
