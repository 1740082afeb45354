//! Choosing how the page's bytes are decoded, before the rewriter sees any of them.
//!
//! lol_html needs an ASCII-compatible encoding up front. The order follows the HTML encoding
//! sniffing algorithm, minus the parts a streaming proxy cannot do: a byte order mark wins, then
//! the Content-Type charset, then (only when neither said anything) a `<meta charset>` seen by
//! lol_html while rewriting. Encodings lol_html cannot parse are passed through untouched.

use encoding_rs::Encoding;
use lol_html::AsciiCompatibleEncoding;

/// The longest byte order mark (UTF-8's) is three bytes.
pub(super) const MAX_BOM_LENGTH: usize = 3;

const UTF_8_BOM: &[u8] = b"\xEF\xBB\xBF";
const UTF_16_LE_BOM: &[u8] = b"\xFF\xFE";
const UTF_16_BE_BOM: &[u8] = b"\xFE\xFF";

/// How the page is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Decoding {
    /// Rewrite with lol_html in `encoding`.
    Rewrite {
        encoding: AsciiCompatibleEncoding,
        /// Let a `<meta charset>` switch the encoding mid-stream: only when nothing more
        /// authoritative (a BOM, the header) named one.
        follow_meta_charset: bool,
    },
    /// The encoding is not ASCII-compatible (UTF-16, ISO-2022-JP, the replacement encoding):
    /// lol_html cannot parse it, so every byte goes out untouched.
    PassThrough,
}

/// Whether `prefix` could still grow into a byte order mark, so the decision must wait for more
/// input (unless the body has ended).
pub(super) fn may_become_bom(prefix: &[u8]) -> bool {
    [UTF_8_BOM, UTF_16_LE_BOM, UTF_16_BE_BOM]
        .iter()
        .any(|bom| bom.len() > prefix.len() && bom.starts_with(prefix))
}

/// Decides the decoding from the first bytes of the body and the header's charset label.
pub(super) fn decide(prefix: &[u8], declared_charset: Option<&str>) -> Decoding {
    if prefix.starts_with(UTF_8_BOM) {
        return Decoding::Rewrite { encoding: AsciiCompatibleEncoding::utf_8(), follow_meta_charset: false };
    }
    if prefix.starts_with(UTF_16_LE_BOM) || prefix.starts_with(UTF_16_BE_BOM) {
        return Decoding::PassThrough;
    }
    from_label(declared_charset)
}

fn from_label(declared_charset: Option<&str>) -> Decoding {
    // Header parameters may arrive quoted (`charset="utf-8"`); the label itself never has quotes.
    let label = declared_charset.map(|label| label.trim().trim_matches('"'));
    match label.and_then(|label| Encoding::for_label(label.as_bytes())) {
        Some(encoding) => match AsciiCompatibleEncoding::new(encoding) {
            Some(encoding) => Decoding::Rewrite { encoding, follow_meta_charset: false },
            None => Decoding::PassThrough,
        },
        // No label, or one no browser knows: browsers ignore it, and so do we.
        None => Decoding::Rewrite { encoding: AsciiCompatibleEncoding::utf_8(), follow_meta_charset: true },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite_in(encoding: &'static Encoding, follow_meta_charset: bool) -> Decoding {
        match AsciiCompatibleEncoding::new(encoding) {
            Some(encoding) => Decoding::Rewrite { encoding, follow_meta_charset },
            None => panic!("{} is not ASCII-compatible", encoding.name()),
        }
    }

    #[test]
    fn waits_only_while_a_bom_is_possible() {
        for prefix in [&b""[..], b"\xEF", b"\xEF\xBB", b"\xFF", b"\xFE"] {
            assert!(may_become_bom(prefix), "{prefix:?}");
        }
        for prefix in [&b"<"[..], b"\xEF\xBB<", b"\xEF\xBB\xBF", b"\xFF\xFE", b"\xFE\xFF"] {
            assert!(!may_become_bom(prefix), "{prefix:?}");
        }
    }

    #[test]
    fn short_prefixes_without_a_full_bom_use_the_label() {
        assert_eq!(decide(b"", None), rewrite_in(encoding_rs::UTF_8, true));
        assert_eq!(decide(b"\xEF\xBB", None), rewrite_in(encoding_rs::UTF_8, true));
        assert_eq!(decide(b"\xFF", None), rewrite_in(encoding_rs::UTF_8, true));
    }

    #[test]
    fn bom_wins_over_the_header() {
        let utf8 = rewrite_in(encoding_rs::UTF_8, false);
        assert_eq!(decide(b"\xEF\xBB\xBF", Some("windows-1252")), utf8);
        assert_eq!(decide(b"\xFF\xFE", Some("utf-8")), Decoding::PassThrough);
        assert_eq!(decide(b"\xFE\xFF<", None), Decoding::PassThrough);
    }

    #[test]
    fn header_label_decides_and_disables_meta() {
        let latin = rewrite_in(encoding_rs::WINDOWS_1252, false);
        assert_eq!(decide(b"<p>", Some("ISO-8859-1")), latin);
        assert_eq!(decide(b"<p>", Some("\"latin1\"")), latin);
        let utf8 = rewrite_in(encoding_rs::UTF_8, false);
        assert_eq!(decide(b"<p>", Some(" UTF-8 ")), utf8);
        let shift_jis = rewrite_in(encoding_rs::SHIFT_JIS, false);
        assert_eq!(decide(b"<p>", Some("shift_jis")), shift_jis);
    }

    #[test]
    fn non_ascii_compatible_labels_pass_through() {
        for label in ["utf-16", "UTF-16BE", "iso-2022-jp", "iso-2022-kr"] {
            assert_eq!(decide(b"<p>", Some(label)), Decoding::PassThrough, "{label}");
        }
    }

    #[test]
    fn unknown_or_missing_label_follows_meta() {
        let utf8 = rewrite_in(encoding_rs::UTF_8, true);
        assert_eq!(decide(b"<p>", Some("klingon")), utf8);
        assert_eq!(decide(b"<p>", Some("")), utf8);
        assert_eq!(decide(b"<p>", None), utf8);
    }
}
