//! HTML character-reference decoding, run before recognition.
//!
//! Pages hide addresses as `a&#64;b.com` or `4111&nbsp;1111…`; the recognizers must see the
//! characters a reader sees. Common named references and every numeric one (`&#64;`, `&#x40;`,
//! with or without the `;`) are decoded; unknown names are left as written. `&nbsp;` becomes a plain
//! space so that numbers split by it are still recognised.

use std::borrow::Cow;

/// Decodes character references; borrows when the text has no `&` (the common case).
pub fn decode(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find('&') else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        match reference(rest) {
            Some((decoded, consumed)) => {
                out.push(decoded);
                rest = &rest[consumed..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Decodes the reference at the start of `text` (which starts with `&`): the character and the
/// bytes it used.
fn reference(text: &str) -> Option<(char, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(1) == Some(&b'#') {
        let (radix, digits_start) = match bytes.get(2) {
            Some(b'x' | b'X') => (16, 3),
            _ => (10, 2),
        };
        let digits = bytes[digits_start..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit() && (radix == 16 || b.is_ascii_digit()))
            .count();
        if digits == 0 || digits > 8 {
            return None;
        }
        let end = digits_start + digits;
        let value = u32::from_str_radix(&text[digits_start..end], radix).ok()?;
        let decoded = match value {
            0 => '\u{FFFD}',
            _ => char::from_u32(value).unwrap_or('\u{FFFD}'),
        };
        let consumed = if bytes.get(end) == Some(&b';') { end + 1 } else { end };
        return Some((decoded, consumed));
    }
    let name_len = bytes[1..].iter().take(32).take_while(|b| b.is_ascii_alphanumeric()).count();
    if bytes.get(1 + name_len) != Some(&b';') {
        return None;
    }
    let decoded = named(&text[1..1 + name_len])?;
    Some((decoded, name_len + 2))
}

/// The named references of HTML's list that stand for printable ASCII and for the spaces and
/// dashes numbers are grouped with, plus a few common symbols.
fn named(name: &str) -> Option<char> {
    Some(match name {
        "amp" | "AMP" => '&',
        "lt" | "LT" => '<',
        "gt" | "GT" => '>',
        "quot" | "QUOT" => '"',
        "apos" => '\'',
        "nbsp" | "ensp" | "emsp" | "emsp13" | "emsp14" | "thinsp" | "hairsp" | "numsp" | "puncsp"
        | "MediumSpace" | "ThinSpace" | "VeryThinSpace" | "NonBreakingSpace" | "NoBreak" => ' ',
        "Tab" => '\t',
        "NewLine" => '\n',
        "excl" => '!',
        "num" => '#',
        "dollar" => '$',
        "percnt" => '%',
        "lpar" => '(',
        "rpar" => ')',
        "ast" | "midast" => '*',
        "plus" => '+',
        "comma" => ',',
        "period" => '.',
        "sol" => '/',
        "colon" => ':',
        "semi" => ';',
        "equals" => '=',
        "quest" => '?',
        "commat" => '@',
        "lsqb" | "lbrack" => '[',
        "bsol" => '\\',
        "rsqb" | "rbrack" => ']',
        "Hat" => '^',
        "lowbar" | "UnderBar" => '_',
        "grave" | "DiacriticalGrave" => '`',
        "lcub" | "lbrace" => '{',
        "verbar" | "vert" | "VerticalLine" => '|',
        "rcub" | "rbrace" => '}',
        "tilde" | "DiacriticalTilde" => '~',
        "hyphen" | "dash" => '\u{2010}',
        "minus" => '\u{2212}',
        "ndash" => '\u{2013}',
        "mdash" => '\u{2014}',
        "shy" => '\u{00AD}',
        "zwj" => '\u{200D}',
        "zwnj" => '\u{200C}',
        "ZeroWidthSpace" => '\u{200B}',
        "copy" | "COPY" => '©',
        "reg" | "REG" | "circledR" => '®',
        "euro" => '€',
        "pound" => '£',
        "yen" => '¥',
        "sect" => '§',
        "middot" | "centerdot" => '·',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_numeric_and_named_references() {
        assert_eq!(decode("a&#64;b.com"), "a@b.com");
        assert_eq!(decode("a&#x40;b.com"), "a@b.com");
        assert_eq!(decode("a&#X40;b.com &#64b"), "a@b.com @b");
        assert_eq!(decode("a&commat;b&period;com"), "a@b.com");
        assert_eq!(decode("4111&nbsp;1111"), "4111 1111");
        assert_eq!(decode("Y2k&equals;&equals; &excl;&quest;&lowbar;"), "Y2k== !?_");
        assert_eq!(decode("1&NonBreakingSpace;2&ZeroWidthSpace;3"), "1 2\u{200B}3");
        assert_eq!(decode("&lt;b&gt; &amp;amp;"), "<b> &amp;");
    }

    #[test]
    fn leaves_what_is_not_a_reference() {
        assert_eq!(decode("AT&T &unknown; & &#; &#xZZ;"), "AT&T &unknown; & &#; &#xZZ;");
        assert_eq!(decode("&#0;&#x110000;"), "\u{FFFD}\u{FFFD}");
        assert!(matches!(decode("plain"), Cow::Borrowed(_)));
    }
}
