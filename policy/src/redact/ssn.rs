//! US Social Security numbers: `AAA-GG-SSSS` or `AAA GG SSSS` (one separator throughout), or nine
//! digits in one piece right after the words "SSN" or "social security". The SSA never issues
//! area 000, 666 or 900–999, group 00 or serial 0000.
//!
//! A number in the SSN's 3-2-4 shape outside those rules (`000-12-3456`, `666 12 3456`) is a
//! look-alike: left whole, and never read as a phone number instead.

use super::digits::Group;
use super::finding::Finding;
use super::kind::RedactionKind;

/// How far before a nine-digit number the words "SSN" or "social security" count.
const CONTEXT: usize = 40;

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
            && after_ssn_words(text, single.start)
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

fn after_ssn_words(text: &str, start: usize) -> bool {
    let mut from = start.saturating_sub(CONTEXT);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let before = text[from..start].to_ascii_lowercase();
    before.contains("ssn") || before.contains("social security")
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
    }

    #[test]
    fn never_issued_ranges_are_look_alikes() {
        for ssn in ["000-45-6789", "666-45-6789", "900-45-6789", "999 45 6789", "123-00-6789", "123-45-0000"]
        {
            assert_eq!(ssns(ssn), vec![(ssn, false)], "{ssn}");
        }
    }

    #[test]
    fn not_ssns() {
        assert_eq!(ssns("123-45 6789"), vec![], "mixed separators");
        assert_eq!(ssns("order 123456789"), vec![], "nine digits without SSN words");
        assert_eq!(ssns("1123-45-6789"), vec![]);
    }
}
