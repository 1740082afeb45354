//! HTML attribute-value text: escaping what we write, decoding what we must read.
//!
//! lol_html hands attribute values over raw (character references intact) and, when setting one,
//! escapes only `"`. Our script tag's values are escaped in full here, and a `<meta>` CSP is
//! decoded just enough to read it as the browser does (templating engines write `'` as `&#x27;`).

use std::borrow::Cow;

/// Escapes text for a double- or single-quoted attribute value. This is not the dashboard's
/// escaper on purpose: the injector may depend on no UI crate, runs per page on the rewriter's hot
/// path, and borrows the value when nothing needs escaping.
pub(super) fn escape(value: &str) -> Cow<'_, str> {
    if !value.contains(['&', '<', '>', '"', '\'']) {
        return Cow::Borrowed(value);
    }
    let mut escaped = String::with_capacity(value.len() + 16);
    for character in value.chars() {
        match markup_reference(character) {
            Some(reference) => escaped.push_str(reference),
            None => escaped.push(character),
        }
    }
    Cow::Owned(escaped)
}

/// The character reference for a character that means something in markup.
fn markup_reference(character: char) -> Option<&'static str> {
    match character {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&#39;"),
        _ => None,
    }
}

/// Escapes text for a generated attribute value, as pure ASCII.
///
/// Besides the markup characters, every non-ASCII character becomes a numeric reference and
/// control characters become spaces, so the bytes are the same in every ASCII-compatible
/// encoding (a `<meta charset>` may switch the page's encoding under our feet).
pub(super) fn escape_to_ascii(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len() + 16);
    for character in value.chars() {
        if let Some(reference) = markup_reference(character) {
            escaped.push_str(reference);
            continue;
        }
        match character {
            control if control.is_control() => escaped.push(' '),
            ascii if ascii.is_ascii() => escaped.push(ascii),
            other => escaped.push_str(&format!("&#x{:X};", u32::from(other))),
        }
    }
    escaped
}

/// Escapes `&` only, for values handed to lol_html's `set_attribute` (which escapes `"` itself).
pub(super) fn escape_ampersands(value: &str) -> Cow<'_, str> {
    if value.contains('&') { Cow::Owned(value.replace('&', "&amp;")) } else { Cow::Borrowed(value) }
}

/// Decodes numeric character references and the five XML named ones.
///
/// CSP text is ASCII keywords, hosts and base64, so these are the only references that occur in
/// practice; anything else (other named references, malformed or out-of-range numbers) is kept
/// literally, which at worst makes a source unrecognized and costs an extra nonce.
pub(super) fn decode_character_references(value: &str) -> Cow<'_, str> {
    if !value.contains('&') {
        return Cow::Borrowed(value);
    }
    let mut decoded = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(ampersand) = rest.find('&') {
        decoded.push_str(&rest[..ampersand]);
        let candidate = &rest[ampersand..];
        match decode_one(candidate) {
            Some((character, consumed)) => {
                decoded.push(character);
                rest = &candidate[consumed..];
            }
            None => {
                decoded.push('&');
                rest = &candidate[1..];
            }
        }
    }
    decoded.push_str(rest);
    Cow::Owned(decoded)
}

/// Decodes one `&…;` reference at the start of `text`: the character and the bytes consumed.
fn decode_one(text: &str) -> Option<(char, usize)> {
    // The longest reference we accept is `&#x10FFFF;` (10 bytes); look no further for the `;`.
    let semicolon = text.get(..12).unwrap_or(text).find(';')?;
    let body = &text[1..semicolon];
    let character = match body {
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        "lt" => '<',
        "gt" => '>',
        _ => {
            let number = body.strip_prefix('#')?;
            let code_point = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            // NUL and surrogates are not characters a browser would produce here either.
            char::from_u32(code_point).filter(|character| *character != '\0')?
        }
    };
    Some((character, semicolon + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_characters() {
        assert_eq!(escape("plain/path.js"), "plain/path.js");
        assert_eq!(escape(r#"a"b'c<d>e&f"#), "a&quot;b&#39;c&lt;d&gt;e&amp;f");
    }

    #[test]
    fn escapes_generated_values_to_inert_ascii() {
        assert_eq!(escape_to_ascii("Süß\"><script>"), "S&#xFC;&#xDF;&quot;&gt;&lt;script&gt;");
        assert_eq!(escape_to_ascii("a\u{0}b\nc'&"), "a b c&#39;&amp;");
    }

    #[test]
    fn escapes_ampersands_only() {
        assert_eq!(escape_ampersands(r#"a&b"c"#), r#"a&amp;b"c"#);
    }

    #[test]
    fn decodes_common_references() {
        assert_eq!(
            decode_character_references("script-src &#x27;self&#x27; &#39;nonce-a&#39; &apos;x&apos;"),
            "script-src 'self' 'nonce-a' 'x'"
        );
        assert_eq!(decode_character_references("a &amp; b &quot;&lt;&gt;"), "a & b \"<>");
        assert_eq!(decode_character_references("&#X41;&#65;"), "AA");
    }

    #[test]
    fn keeps_what_it_does_not_know() {
        assert_eq!(
            decode_character_references("&nbsp; & &amp &#0; &#xD800; &#;"),
            "&nbsp; & &amp &#0; &#xD800; &#;"
        );
        assert_eq!(decode_character_references("&#1234567890123;"), "&#1234567890123;");
        assert_eq!(decode_character_references("trailing &"), "trailing &");
    }

    #[test]
    fn decoding_then_escaping_round_trips_ampersands() {
        let decoded = decode_character_references("a &amp;&amp; b");
        assert_eq!(escape_ampersands(&decoded), "a &amp;&amp; b");
    }
}
