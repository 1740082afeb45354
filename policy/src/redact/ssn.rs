//! US Social Security numbers: `AAA-GG-SSSS`, `AAA GG SSSS` or `AAA.GG.SSSS` (one separator
//! throughout), or nine digits in one piece right after the words "SSN" or "social security".
//! The SSA never issues area 000, 666 or 900–999, group 00 or serial 0000.
//!
//! The dotted form is read on its own, not as part of the runs cards share: dots also chain
//! version numbers and object identifiers (`1.3.6.1.4.1.311.21.7`), so a dotted SSN must be the
//! whole dotted token, never three parts of a longer chain.
//!
//! A number in the SSN's 3-2-4 shape outside those rules (`000-12-3456`, `666 12 3456`) is a
//! look-alike: left whole, and never read as a phone number instead.

use super::digits::{Group, is_word_byte};
use super::finding::Finding;
use super::kind::RedactionKind;
use super::national::named_before;

/// Reports every SSN (and SSN look-alike) in `text`.
#[cfg(test)]
pub(crate) fn find(text: &str, out: &mut Vec<Finding>) {
    use super::digits::{CARD_AND_SSN_SEPARATORS, for_each_joined, groups};
    for_each_joined(text, &groups(text), CARD_AND_SSN_SEPARATORS, |run| in_run(text, run, out));
}

/// Reports the SSNs in one run of digit groups (see `digits::for_each_joined`).
pub(crate) fn in_run(text: &str, run: &[Group], out: &mut Vec<Finding>) {
    {
        for window in run.windows(3) {
            if let [area, group, serial] = window
                && area.len() == 3
                && group.len() == 2
                && serial.len() == 4
                && text.as_bytes()[area.end] == text.as_bytes()[group.end]
            {
                out.push(finding(text, [*area, *group, *serial]));
            }
        }
        if let [single] = run
            && single.len() == 9
            && named_before(text, single.start, &["ssn", "social security"])
        {
            let parts = [
                Group { start: single.start, end: single.start + 3 },
                Group { start: single.start + 3, end: single.start + 5 },
                Group { start: single.start + 5, end: single.end },
            ];
            let found = finding(text, parts);
            if found.valid {
                out.push(found);
            }
        }
    }
}

/// Reports every `AAA.GG.SSSS` that is a whole token: no `.` and digit, letter or `_` glued to
/// either end.
pub(crate) fn find_dotted(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let dot_between = |a: &Group, b: &Group| b.start == a.end + 1 && bytes[a.end] == b'.';
    for window in groups.windows(3) {
        if let [area, group, serial] = window
            && area.len() == 3
            && group.len() == 2
            && serial.len() == 4
            && dot_between(area, group)
            && dot_between(group, serial)
            && !chained_before(bytes, area.start)
            && !chained_after(bytes, serial.end)
        {
            out.push(finding(text, [*area, *group, *serial]));
        }
    }
}

/// Whether the token goes on before `start`: a word byte, or a `.` after a word byte.
fn chained_before(bytes: &[u8], start: usize) -> bool {
    let at = |index: Option<usize>| index.and_then(|i| bytes.get(i)).copied();
    let before = at(start.checked_sub(1));
    before.is_some_and(is_word_byte)
        || (before == Some(b'.') && at(start.checked_sub(2)).is_some_and(is_word_byte))
}

/// Whether the token goes on after `end`: a word byte, or a `.` before a word byte (a full stop
/// ending a sentence is followed by a space or nothing).
fn chained_after(bytes: &[u8], end: usize) -> bool {
    let after = bytes.get(end).copied();
    after.is_some_and(is_word_byte)
        || (after == Some(b'.') && bytes.get(end + 1).copied().is_some_and(is_word_byte))
}

fn finding(text: &str, [area, group, serial]: [Group; 3]) -> Finding {
    let (start, end) = (area.start, serial.end);
    let area = &text[area.start..area.end];
    let issued = area != "000"
        && area != "666"
        && !area.starts_with('9')
        && &text[group.start..group.end] != "00"
        && &text[serial.start..serial.end] != "0000";
    if issued {
        Finding::valid(start, end, RedactionKind::Ssn)
    } else {
        Finding::look_alike(start, end, RedactionKind::Ssn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssns(text: &str) -> Vec<(&str, bool)> {
        let mut out = Vec::new();
        find(text, &mut out);
        out.iter().map(|f| (&text[f.start..f.end], f.valid)).collect()
    }

    #[test]
    fn valid_ssns() {
        assert_eq!(ssns("SSN 123-45-6789."), vec![("123-45-6789", true)]);
        assert_eq!(ssns("123 45 6789"), vec![("123 45 6789", true)]);
        assert_eq!(ssns("SSN: 123456789"), vec![("123456789", true)]);
        // The word ends a key however it was joined; inside a longer word it names nothing.
        assert_eq!(ssns("customerssn=123456789"), vec![("123456789", true)]);
        assert_eq!(ssns("{\"employeessn\": \"123456789\"}"), vec![("123456789", true)]);
        assert_eq!(ssns("classname 123456789"), vec![]);
    }

    #[test]
    fn never_issued_ranges_are_look_alikes() {
        for ssn in ["000-45-6789", "666-45-6789", "900-45-6789", "999 45 6789", "123-00-6789", "123-45-0000"]
        {
            assert_eq!(ssns(ssn), vec![(ssn, false)], "{ssn}");
        }
    }

    fn dotted(text: &str) -> Vec<(&str, bool)> {
        let mut out = Vec::new();
        find_dotted(text, &super::super::digits::groups(text), &mut out);
        out.iter().map(|f| (&text[f.start..f.end], f.valid)).collect()
    }

    #[test]
    fn dotted_ssns_are_whole_tokens() {
        assert_eq!(dotted("SSN 536.22.1234"), vec![("536.22.1234", true)]);
        assert_eq!(dotted("(536.22.1234)."), vec![("536.22.1234", true)]);
        assert_eq!(dotted("666.22.1234"), vec![("666.22.1234", false)]);
        for text in [
            "1.536.22.1234",
            "536.22.1234.5",
            "v536.22.1234",
            "536.22.1234x",
            "536.22-1234",
            "536.22.12345",
            "1.2.3.4",
            "2024.01.15",
            "12.50 and 123.45",
        ] {
            assert_eq!(dotted(text), vec![], "{text}");
        }
    }

    #[test]
    fn not_ssns() {
        assert_eq!(ssns("123-45 6789"), vec![], "mixed separators");
        assert_eq!(ssns("order 123456789"), vec![], "nine digits without SSN words");
        assert_eq!(ssns("1123-45-6789"), vec![]);
    }
}
