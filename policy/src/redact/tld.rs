//! IANA's top-level domains, for the email recognizer: an address counts only when its last label
//! is a delegated TLD, so `logo@2x.png`, `app@main.js` or `admin@printer.local` are left alone.
//!
//! The list is `tlds.txt` beside this file, compiled in: the ICANN section of the Public Suffix
//! List (see the file's header for the source and date), internationalized TLDs in both their
//! Unicode and `xn--` forms. Refresh it from a newer `publicsuffix` package the same way.

use std::collections::HashSet;
use std::sync::LazyLock;

/// The TLDs, lower case, loaded once.
static TLDS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    include_str!("tlds.txt")
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
});

/// Whether `label` (without dots) is a top-level domain: ASCII compared case-insensitively,
/// Unicode labels lower-cased (`COM`, `Xn--P1Ai` and `РФ` are TLDs).
pub(crate) fn is_tld(label: &str) -> bool {
    if label.is_ascii() && !label.bytes().any(|b| b.is_ascii_uppercase()) {
        TLDS.contains(label)
    } else {
        TLDS.contains(label.to_lowercase().as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delegated_tlds_are_in() {
        let delegated = [
            "com",
            "de",
            "museum",
            "zip",
            "uk",
            "io",
            "app",
            "dev",
            "ck",
            "za",
            "COM",
            "De",
            "xn--p1ai",
            "рф",
            "РФ",
            "XN--P1AI",
            "xn--fiqs8s",
            "中国",
            "xn--q9jyb4c",
            "みんな",
        ];
        for label in delegated {
            assert!(is_tld(label), "{label}");
        }
    }

    #[test]
    fn file_names_and_local_names_are_out() {
        let not_delegated = [
            "png",
            "jpg",
            "js",
            "local",
            "localhost",
            "internal",
            "lan",
            "home",
            "corp",
            "test",
            "",
            "co.uk",
            ".com",
        ];
        for label in not_delegated {
            assert!(!is_tld(label), "{label}");
        }
    }

    #[test]
    fn the_list_is_whole_sorted_and_lower_case() {
        assert!(TLDS.len() > 1_000, "{} entries", TLDS.len());
        let entries: Vec<&str> = include_str!("tlds.txt")
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect();
        assert_eq!(entries.len(), TLDS.len(), "no duplicates");
        assert!(entries.windows(2).all(|pair| pair[0] < pair[1]), "sorted");
        for entry in &entries {
            assert_eq!(*entry, entry.to_lowercase(), "lower case");
            assert!(!entry.contains('.') && !entry.contains(' '), "{entry}: one label");
        }
        // Each internationalized TLD comes in both forms.
        let unicode = entries.iter().filter(|entry| !entry.is_ascii()).count();
        let punycode = entries.iter().filter(|entry| entry.starts_with("xn--")).count();
        assert_eq!(unicode, punycode);
    }
}
