//! Channels: the ways the same value reaches the gateway.
//!
//! Browsers hand over `textContent`, where `&nbsp;` is U+00A0 and typographers' narrow (U+202F)
//! and thin (U+2009) spaces group digits; East Asian input gives fullwidth digits; CMSes put soft
//! hyphens and zero-width spaces into long words; Arabic, Persian and Hindi pages write numbers in
//! their own digits; pages obfuscate addresses with numeric
//! (`&#64;`) or named (`&commat;`) character references; word processors turn hyphens into
//! U+2011 or U+2212; tools return JSON, both as a value and as serialized text (Python's
//! `json.dumps` writes every character outside ASCII as a `\uXXXX` escape), and describe their
//! inputs in JSON Schema. Each channel rewrites the planted value (and for HTML escapes
//! the carrier's own `&`), never its meaning.

use policy::RedactionKind;

use super::Planted;
use super::rng::Rng;

/// How an item's document is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    /// Plain ASCII-spaced text.
    Plain,
    /// Grouping spaces are U+00A0 (`&nbsp;` as `textContent`).
    Nbsp,
    /// Grouping spaces are U+00A0 and every character outside ASCII is a `\uXXXX` escape, as
    /// Python's `json.dumps` writes text.
    JsonEscaped,
    /// Grouping spaces are U+202F (narrow no-break space).
    NarrowNbsp,
    /// Grouping spaces are U+2009 (thin space).
    ThinSpace,
    /// Digits (and often letters and symbols) in fullwidth forms U+FF01–U+FF5E.
    Fullwidth,
    /// Digits in Arabic-Indic (U+0660), Persian (U+06F0) or Devanagari (U+0966) digits.
    NativeDigits,
    /// Soft hyphens and zero-width characters inside the value.
    Invisible,
    /// HTML numeric character references (`&#52;`, `&#x34;`).
    HtmlNumeric,
    /// HTML named character references (`&nbsp;`, `&commat;`, `&period;`…).
    HtmlNamed,
    /// Hyphens as U+2011 (non-breaking hyphen) or U+2212 (minus sign).
    UnicodeDash,
    /// A JSON tool result, redacted as a `serde_json::Value`.
    JsonValue,
    /// A JSON tool result serialized to text, redacted as text.
    JsonText,
    /// A tool's JSON Schema (`description`, `title`, `enum`, `const`, `default`, `examples`).
    JsonSchema,
}

/// Every channel, in report order.
pub const ALL: [Channel; 14] = [
    Channel::Plain,
    Channel::Nbsp,
    Channel::JsonEscaped,
    Channel::NarrowNbsp,
    Channel::ThinSpace,
    Channel::Fullwidth,
    Channel::NativeDigits,
    Channel::Invisible,
    Channel::HtmlNumeric,
    Channel::HtmlNamed,
    Channel::UnicodeDash,
    Channel::JsonValue,
    Channel::JsonText,
    Channel::JsonSchema,
];

/// Kinds whose values are digit groups.
const GROUPED_KINDS: &[RedactionKind] = &[
    RedactionKind::Phone,
    RedactionKind::Iban,
    RedactionKind::Card,
    RedactionKind::Ssn,
    RedactionKind::DeTaxId,
    RedactionKind::FrNir,
    RedactionKind::UkNino,
    RedactionKind::CnResidentId,
    RedactionKind::InAadhaar,
];

impl Channel {
    /// The channel's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Plain => "plain",
            Channel::Nbsp => "nbsp U+00A0",
            Channel::JsonEscaped => "json \\u escapes",
            Channel::NarrowNbsp => "narrow nbsp U+202F",
            Channel::ThinSpace => "thin space U+2009",
            Channel::Fullwidth => "fullwidth",
            Channel::NativeDigits => "native digits",
            Channel::Invisible => "soft hyphen / zwsp",
            Channel::HtmlNumeric => "html &#NN;",
            Channel::HtmlNamed => "html &name;",
            Channel::UnicodeDash => "dash U+2011/U+2212",
            Channel::JsonValue => "json value",
            Channel::JsonText => "json text",
            Channel::JsonSchema => "json schema",
        }
    }

    /// True when values should be drawn in their grouped spelling.
    pub fn wants_grouping(self) -> bool {
        matches!(
            self,
            Channel::Nbsp
                | Channel::JsonEscaped
                | Channel::NarrowNbsp
                | Channel::ThinSpace
                | Channel::UnicodeDash
                | Channel::NativeDigits
                | Channel::HtmlNamed
        )
    }

    /// True for the HTML channels (the carrier's `&` must be escaped).
    pub fn is_html(self) -> bool {
        matches!(self, Channel::HtmlNumeric | Channel::HtmlNamed)
    }

    /// True for the channels whose carriers are JSON documents.
    pub fn is_json(self) -> bool {
        matches!(self, Channel::JsonValue | Channel::JsonText | Channel::JsonSchema)
    }

    /// The kinds whose values this channel can carry in its own way.
    pub fn kinds(self) -> Vec<RedactionKind> {
        match self {
            Channel::Nbsp | Channel::JsonEscaped | Channel::NarrowNbsp | Channel::ThinSpace => {
                GROUPED_KINDS.to_vec()
            }
            Channel::UnicodeDash => vec![
                RedactionKind::Phone,
                RedactionKind::Card,
                RedactionKind::Ssn,
                RedactionKind::EsDni,
                RedactionKind::BrCpf,
                RedactionKind::SePersonnummer,
                RedactionKind::InAadhaar,
            ],
            Channel::NativeDigits => vec![
                RedactionKind::Phone,
                RedactionKind::Card,
                RedactionKind::Ssn,
                RedactionKind::DeTaxId,
                RedactionKind::FrNir,
                RedactionKind::EsDni,
                RedactionKind::BrCpf,
                RedactionKind::CnResidentId,
                RedactionKind::SePersonnummer,
                RedactionKind::InAadhaar,
                RedactionKind::PlPesel,
                RedactionKind::NlBsn,
            ],
            // Named references stand for punctuation, which a codice fiscale or a PESEL lacks.
            Channel::HtmlNamed => RedactionKind::BUILTIN
                .into_iter()
                .filter(|k| !matches!(k, RedactionKind::ItCodiceFiscale | RedactionKind::PlPesel))
                .collect(),
            Channel::Fullwidth => RedactionKind::BUILTIN
                .into_iter()
                .filter(|k| {
                    !matches!(k, RedactionKind::Credentials | RedactionKind::Ipv4 | RedactionKind::Ipv6)
                })
                .collect(),
            _ => RedactionKind::BUILTIN.to_vec(),
        }
    }

    /// Rewrites `planted.text` (and its context) the way this channel writes it.
    pub fn encode(self, rng: &mut Rng, planted: &mut Planted) {
        let text = planted.plain.clone();
        planted.text = match self {
            Channel::Plain | Channel::JsonValue | Channel::JsonText | Channel::JsonSchema => text,
            Channel::Nbsp => text.replace(' ', "\u{00A0}"),
            Channel::JsonEscaped => escape_outside_ascii(&text.replace(' ', "\u{00A0}")),
            Channel::NarrowNbsp => text.replace(' ', "\u{202F}"),
            Channel::ThinSpace => text.replace(' ', "\u{2009}"),
            Channel::Fullwidth => fullwidth(rng, &text),
            Channel::NativeDigits => {
                let zero = *rng.pick(&[0x0660, 0x06F0, 0x0966]);
                text.chars()
                    .map(|c| match c.to_digit(10) {
                        Some(value) => char::from_u32(zero + value).unwrap_or(c),
                        None => c,
                    })
                    .collect()
            }
            Channel::Invisible => invisible(rng, &text),
            Channel::HtmlNumeric => numeric_refs(rng, &text, planted.kind == RedactionKind::Credentials),
            Channel::HtmlNamed => named_refs(&text),
            Channel::UnicodeDash => {
                let dash = if rng.chance(0.5) { "\u{2011}" } else { "\u{2212}" };
                if text.contains('-') { text.replace('-', dash) } else { text.replace(' ', dash) }
            }
        };
        if self.is_html() {
            planted.before = escape_amp(&planted.before);
            planted.after = escape_amp(&planted.after);
        }
        if matches!(self, Channel::Nbsp) && planted.before.ends_with(' ') {
            planted.before.pop();
            planted.before.push('\u{00A0}');
        }
    }
}

/// Every character outside ASCII as `\uXXXX` (a surrogate pair beyond the BMP), as JSON
/// serializers that keep their output ASCII write it.
fn escape_outside_ascii(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// `&` as `&amp;`, so HTML decoding gives the text back.
pub fn escape_amp(text: &str) -> String {
    text.replace('&', "&amp;")
}

fn fullwidth(rng: &mut Rng, text: &str) -> String {
    let all = rng.chance(0.5) || !text.chars().any(|c| c.is_ascii_digit());
    let ideographic_space = rng.chance(0.3);
    text.chars()
        .map(|c| match c {
            '0'..='9' => char::from_u32(u32::from(c) + 0xFEE0).unwrap_or(c),
            ' ' if ideographic_space => '\u{3000}',
            '!'..='~' if all => char::from_u32(u32::from(c) + 0xFEE0).unwrap_or(c),
            _ => c,
        })
        .collect()
}

fn invisible(rng: &mut Rng, text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() < 2 {
        return text.to_owned();
    }
    let count = rng.range(1, 3);
    let mut at: Vec<usize> = (0..count).map(|_| rng.range(1, chars.len() - 1)).collect();
    at.sort_unstable();
    let mut out = String::new();
    for (i, c) in chars.iter().enumerate() {
        for _ in at.iter().filter(|&&a| a == i) {
            out.push(
                *rng.pick(&[
                    '\u{00AD}', '\u{00AD}', '\u{200B}', '\u{200B}', '\u{200C}', '\u{2060}', '\u{FEFF}',
                ]),
            );
        }
        out.push(*c);
    }
    out
}

fn numeric_refs(rng: &mut Rng, text: &str, secret: bool) -> String {
    let hex = rng.chance(0.3);
    let every = !secret && rng.chance(0.7);
    let mut out = String::new();
    for c in text.chars() {
        let encode = c == '&' || every || !c.is_alphanumeric() || (!secret && rng.chance(0.5));
        match (encode, hex) {
            (false, _) => out.push(c),
            (true, true) => out.push_str(&format!("&#x{:X};", u32::from(c))),
            (true, false) => out.push_str(&format!("&#{};", u32::from(c))),
        }
    }
    out
}

fn named_refs(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            ' ' => out.push_str("&nbsp;"),
            '@' => out.push_str("&commat;"),
            '.' => out.push_str("&period;"),
            '+' => out.push_str("&plus;"),
            ':' => out.push_str("&colon;"),
            '/' => out.push_str("&sol;"),
            '(' => out.push_str("&lpar;"),
            ')' => out.push_str("&rpar;"),
            '-' => out.push_str("&hyphen;"),
            '=' => out.push_str("&equals;"),
            '_' => out.push_str("&lowbar;"),
            '&' => out.push_str("&amp;"),
            other => out.push(other),
        }
    }
    out
}
