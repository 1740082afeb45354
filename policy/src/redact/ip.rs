//! IP addresses: IPv4 dotted quads and IPv6 addresses in every textual form.
//!
//! **IPv4**: four decimal octets 0–255 joined by dots, each without a leading zero (`010` could
//! be octal). The quad must be the whole
//! dotted number: `1.3.6.1.4.1` (an OID) and `1.2.3.4.5` match nothing. Version numbers and
//! section numbers are not addresses: a quad glued to a letter (`v1.2.3.4`), followed by a
//! pre-release or build suffix (`1.2.3.4-beta`, `1.2.3.4+build`), or right after one of the words
//! in [`NOT_AN_ADDRESS_AFTER`] (`version 1.2.3.4`, `Section 4.2.1.6`) is skipped. A CIDR prefix or
//! a port is not part of the finding: `10.0.0.0/8` becomes `[ipv4]/8`, which still tells the model
//! the network size and says nothing about anyone. A quad of 1–3 digit groups with an octet over
//! 255 (`999.1.1.1`) is a look-alike. A zero-padded quad (`192.168.001.010`) is neither: it is
//! left to the other recognizers, because national phone numbers are written the same way
//! (`044.123.45.67` in Switzerland, `02.123.45.67` in Belgium) and a look-alike would shield them.
//!
//! **IPv6**: a run of hex digits, colons and dots with at least two colons, accepted only when
//! `std::net::Ipv6Addr` parses it (full, `::`-compressed, embedded IPv4). Times (`12:30:45`) and
//! MAC addresses (`00:1A:2B:3C:4D:5E`) do not parse; eight two-digit groups
//! (`00:1a:2b:3c:4d:5e:6f:70`, an EUI-64) parse but are a hardware id, and are skipped. Code is
//! not an address: a path glued to a word (`std::vector`, `u32::MAX`), an all-letter
//! `dead::beef` or `a::b` (a real address has a decimal digit somewhere), and a Python slice such
//! as `1::2` or `::2` (at most two groups of decimal digits around `::`; `::1`, the loopback,
//! is kept). A zone (`%eth0`), a prefix length or the brackets of `[2001:db8::1]:443` are not
//! part of the finding. IPv6 has no look-alikes: what fails to parse is not claimed.

use std::net::Ipv6Addr;

use super::RedactionKind;
use super::digits::{Group, joined_from, next_matching};
use super::finding::Finding;
use super::national::{word_after, word_before};

/// Words after which a dotted quad is a version, section or object identifier, not an address
/// (compared ignoring case).
const NOT_AN_ADDRESS_AFTER: &str = "version ver v release rel build revision rev section sec chapter clause \
     paragraph para appendix annex figure fig article oid";

/// Pushes every IPv4 address in `text` (its digit `groups` listed), and the look-alike quads.
pub(crate) fn find_ipv4(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut first = 0;
    while first < groups.len() {
        // The whole dotted number: digit groups joined by single dots.
        let last = joined_from(bytes, groups, first, b".");
        let quad = &groups[first..=last];
        first = last + 1;
        let (start, end) = (quad[0].start, quad[quad.len() - 1].end);
        if quad.len() != 4 || quad.iter().any(|part| part.len() > 3) || !quad_context(text, start, end) {
            continue;
        }
        let parts = quad.iter().map(|part| (part.start, part.end));
        let padded = |(from, to): (usize, usize)| to - from > 1 && bytes[from] == b'0';
        if parts.clone().any(padded) {
            // `044.123.45.67` is a Swiss phone number as often as a padded address.
            continue;
        }
        let in_range = |(from, to): (usize, usize)| text[from..to].parse::<u8>().is_ok();
        out.push(if parts.clone().all(in_range) {
            Finding::valid(start, end, RedactionKind::Ipv4)
        } else {
            Finding::look_alike(start, end, RedactionKind::Ipv4)
        });
    }
}

/// Whether the quad at `start..end` stands where an address can: not glued to a word or a dotted
/// word, not a version with a suffix, not after a version or section word.
fn quad_context(text: &str, start: usize, end: usize) -> bool {
    let bytes = text.as_bytes();
    let byte = |index: Option<usize>| index.and_then(|i| bytes.get(i)).copied();
    let alphanumeric = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric());
    if word_before(text, start) || word_after(text, end) {
        return false;
    }
    // `x.1.2.3.4`, `1.2.3.4-beta`, `1.2.3.4+build.5`
    if byte(start.checked_sub(1)) == Some(b'.') && alphanumeric(byte(start.checked_sub(2))) {
        return false;
    }
    let after = byte(Some(end));
    let after2 = byte(Some(end + 1));
    if (after == Some(b'-') && after2.is_some_and(|b| b.is_ascii_alphabetic()))
        || (after == Some(b'+') && alphanumeric(after2))
    {
        return false;
    }
    !after_word_that_excludes(&text[..start])
}

/// Whether `head` ends with a word of [`NOT_AN_ADDRESS_AFTER`] or `§`, then maybe `.`, `:` or
/// `#`, then spaces.
fn after_word_that_excludes(head: &str) -> bool {
    let head = head.trim_end();
    let head = head.strip_suffix(['.', ':', '#']).unwrap_or(head).trim_end();
    if head.ends_with('§') {
        return true;
    }
    let word_start = head
        .char_indices()
        .rev()
        .find(|&(_, c)| !c.is_ascii_alphabetic())
        .map_or(0, |(index, c)| index + c.len_utf8());
    let word = &head[word_start..];
    !word.is_empty() && NOT_AN_ADDRESS_AFTER.split_ascii_whitespace().any(|w| w.eq_ignore_ascii_case(word))
}

/// Pushes every IPv6 address in `text`.
pub(crate) fn find_ipv6(text: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let in_run = |b: u8| b.is_ascii_hexdigit() || b == b':' || b == b'.';
    let mut at = 0;
    // Anchored on colons: expand each to the run of hex digits, colons and dots around it.
    while let Some(colon) = next_matching(bytes, at, |&b| b == b':') {
        let mut start = colon;
        while start > 0 && in_run(bytes[start - 1]) {
            start -= 1;
        }
        let end = colon + bytes[colon..].iter().take_while(|&&b| in_run(b)).count();
        at = end;
        if bytes[start..end].iter().filter(|&&b| b == b':').count() < 2 {
            continue;
        }
        if let Some((start, end)) = address_in(text, start, end) {
            out.push(Finding::valid(start, end, RedactionKind::Ipv6));
        }
    }
}

/// The address in the run `start..end` of hex digits, colons and dots, if there is one.
fn address_in(text: &str, mut start: usize, mut end: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    // Trailing dots end a sentence; one trailing colon introduces what follows (`::` is kept).
    while end > start && bytes[end - 1] == b'.' {
        end -= 1;
    }
    if end - start >= 2 && bytes[end - 1] == b':' && bytes[end - 2] != b':' {
        end -= 1;
    }
    if word_before(text, start) {
        // Glued to a word: `IPv6:2001:db8::1` still holds an address after its first colon, while
        // `std::vector` leaves only `:`.
        start += text[start..end].find(':')? + 1;
        if start >= end || bytes[start] == b':' {
            return None;
        }
    }
    let candidate = &text[start..end];
    if word_after(text, end)
        || candidate.bytes().filter(|&b| b == b':').count() < 2
        || !candidate.bytes().any(|b| b.is_ascii_digit())
        || candidate.parse::<Ipv6Addr>().is_err()
    {
        return None;
    }
    let groups: Vec<&str> = candidate.split(':').filter(|group| !group.is_empty()).collect();
    let compressed = candidate.contains("::");
    let eui64 = !compressed && groups.len() == 8 && groups.iter().all(|group| group.len() == 2);
    let slice = compressed
        && candidate != "::1"
        && groups.len() <= 2
        && groups.iter().all(|group| group.bytes().all(|b| b.is_ascii_digit()));
    (!eui64 && !slice).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4_in(text: &str, out: &mut Vec<Finding>) {
        find_ipv4(text, &crate::redact::digits::groups(text), out);
    }

    fn found(find: fn(&str, &mut Vec<Finding>), text: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        find(text, &mut out);
        out.iter().map(|f| (text[f.start..f.end].to_owned(), f.valid)).collect()
    }

    fn valid(s: &str) -> Vec<(String, bool)> {
        vec![(s.to_owned(), true)]
    }

    fn look_alike(s: &str) -> Vec<(String, bool)> {
        vec![(s.to_owned(), false)]
    }

    #[test]
    fn ipv4() {
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("192.168.1.10", valid("192.168.1.10")),
            ("0.0.0.0", valid("0.0.0.0")),
            ("255.255.255.255", valid("255.255.255.255")),
            ("server at 10.0.0.1.", valid("10.0.0.1")),
            ("(8.8.8.8)", valid("8.8.8.8")),
            ("ip=172.16.254.3,port", valid("172.16.254.3")),
            ("10.0.0.1:8080", valid("10.0.0.1")),
            ("10.0.0.0/8", valid("10.0.0.0")),
            ("http://203.0.113.7/path", valid("203.0.113.7")),
            ("range 10.0.0.1-10.0.0.9", vec![("10.0.0.1".to_owned(), true), ("10.0.0.9".to_owned(), true)]),
            ("host 1.2.3.4.nip.io", valid("1.2.3.4")),
            ("Versions differ, 10.0.0.1 answers", valid("10.0.0.1")),
            // Out of range: look-alikes; zero-padded: nothing (phone numbers look the same).
            ("256.1.1.1", look_alike("256.1.1.1")),
            ("999.999.999.999", look_alike("999.999.999.999")),
            ("192.168.001.010", vec![]),
            ("044.123.45.67", vec![]),
            ("10.0.0.01", vec![]),
            // Longer dotted numbers, versions, sections, OIDs.
            ("1.3.6.1.4.1", vec![]),
            ("1.2.3.4.5", vec![]),
            ("1.2.3", vec![]),
            ("v1.2.3.4", vec![]),
            ("version 1.2.3.4", vec![]),
            ("Version: 1.2.3.4", vec![]),
            ("ver. 1.2.3.4", vec![]),
            ("1.2.3.4-beta", vec![]),
            ("1.2.3.4+build", vec![]),
            ("see Section 4.2.1.6 of RFC 5280", vec![]),
            ("§ 1.2.3.4", vec![]),
            ("Grüße, ver 1.2.3.4", vec![]),
            ("Straße 10.0.0.1", valid("10.0.0.1")),
            ("über 10.0.0.1", valid("10.0.0.1")),
            ("OID 2.5.4.3", vec![]),
            ("a.1.2.3.4", vec![]),
            ("1.2.3.4a", vec![]),
            ("x1.2.3.4", vec![]),
            ("1234.1.1.1", vec![]),
            ("12.10.2023", vec![]),
            ("3.14", vec![]),
            ("no numbers", vec![]),
        ];
        for (text, expected) in cases {
            assert_eq!(found(ipv4_in, text), expected, "{text:?}");
        }
    }

    #[test]
    fn ipv6() {
        let cases: Vec<(&str, Vec<(String, bool)>)> = vec![
            ("2001:0db8:85a3:0000:0000:8a2e:0370:7334", valid("2001:0db8:85a3:0000:0000:8a2e:0370:7334")),
            ("2001:db8::1", valid("2001:db8::1")),
            ("addr fe80::1%eth0 up", valid("fe80::1")),
            ("::1", valid("::1")),
            ("[2001:db8::8a2e:370:7334]:443", valid("2001:db8::8a2e:370:7334")),
            ("http://[::1]:8080/", valid("::1")),
            ("::ffff:192.0.2.128", valid("::ffff:192.0.2.128")),
            ("net 2001:db8::/32", valid("2001:db8::")),
            ("It is 2001:db8::1.", valid("2001:db8::1")),
            ("at 2001:db8::1: it failed", valid("2001:db8::1")),
            ("IPv6:2001:db8::1", valid("2001:db8::1")),
            (
                "src:2001:db8::1 dst:2001:db8::2",
                vec![("2001:db8::1".to_owned(), true), ("2001:db8::2".to_owned(), true)],
            ),
            ("FE80::ABCD:1", valid("FE80::ABCD:1")),
            ("1:2:3:4:5:6:7:8", valid("1:2:3:4:5:6:7:8")),
            // Times, MAC addresses, code.
            ("at 12:30:45", vec![]),
            ("12:30", vec![]),
            ("00:1A:2B:3C:4D:5E", vec![]),
            ("00-1A-2B-3C-4D-5E", vec![]),
            ("00:1a:2b:3c:4d:5e:6f:70", vec![]),
            ("std::vector<int>", vec![]),
            ("a::b", vec![]),
            ("dead::beef", vec![]),
            ("u32::MAX", vec![]),
            ("f64::EPSILON", vec![]),
            ("Foo::Bar2", vec![]),
            ("a[1::2]", vec![]),
            ("x[::2]", vec![]),
            ("::", vec![]),
            ("2001:db8::1::2", vec![]),
            ("2001:db8::12345", vec![]),
            ("2001:db8::1x", vec![]),
            ("Note: see below", vec![]),
            ("no colons", vec![]),
        ];
        for (text, expected) in cases {
            assert_eq!(found(find_ipv6, text), expected, "{text:?}");
        }
    }

    #[test]
    fn mixed_text() {
        let text = "From 10.1.2.3 via 2001:db8::7 at 12:30:45, v1.2.3.4.";
        assert_eq!(found(ipv4_in, text), valid("10.1.2.3"));
        assert_eq!(found(find_ipv6, text), valid("2001:db8::7"));
    }
}
