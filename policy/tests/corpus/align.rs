//! The canonical form of text, and the alignment of a redactor's output with its input.
//!
//! Canonical: HTML character references decoded, Unicode spaces and dashes folded to ASCII,
//! fullwidth forms to ASCII, soft hyphens and zero-width characters dropped: what a reader sees.
//! The redactor only replaces spans with `[label n]` placeholders, so the canonical output is the
//! canonical input with some spans replaced. The output is split into literal runs and
//! placeholders ([`tokenize`]) and the runs are matched back onto the input in order ([`align`]):
//! the first at the start, the last at the end, each middle run at its leftmost position that
//! leaves at least one character per pending placeholder. Adjacent placeholders share their span,
//! split along planted-value boundaries when there are enough of them.

use policy::RedactionKind;

use super::Piece;

/// The canonical characters of `text`.
pub fn canon(text: &str) -> Vec<char> {
    decode_entities(text).chars().filter_map(fold).collect()
}

/// The canonical characters of `pieces`, each with the planted value it belongs to.
pub fn canon_pieces(pieces: &[Piece]) -> (Vec<char>, Vec<Option<usize>>) {
    let mut chars = Vec::new();
    let mut owners = Vec::new();
    for piece in pieces {
        let folded = canon(&piece.text);
        owners.extend(std::iter::repeat_n(piece.value, folded.len()));
        chars.extend(folded);
    }
    (chars, owners)
}

/// One character as a reader sees it (`None`: invisible).
pub fn fold(c: char) -> Option<char> {
    match c {
        '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => Some(' '),
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => Some('-'),
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(u32::from(c) - 0xFEE0),
        // Arabic-Indic, Persian and Devanagari digits (the native-digits channel).
        '\u{0660}'..='\u{0669}' => char::from_u32(u32::from(c) - 0x0660 + 0x30),
        '\u{06F0}'..='\u{06F9}' => char::from_u32(u32::from(c) - 0x06F0 + 0x30),
        '\u{0966}'..='\u{096F}' => char::from_u32(u32::from(c) - 0x0966 + 0x30),
        '\u{00AD}' | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => None,
        _ => Some(c),
    }
}

const NAMED: &[(&str, char)] = &[
    ("nbsp", '\u{00A0}'),
    ("commat", '@'),
    ("period", '.'),
    ("plus", '+'),
    ("colon", ':'),
    ("sol", '/'),
    ("lpar", '('),
    ("rpar", ')'),
    ("hyphen", '\u{2010}'),
    ("dash", '\u{2010}'),
    ("equals", '='),
    ("lowbar", '_'),
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("shy", '\u{00AD}'),
    ("minus", '\u{2212}'),
    ("ndash", '\u{2013}'),
];

/// Decodes numeric references (with or without `;`) and the named ones above.
pub fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let (decoded, used) = reference(rest).unwrap_or(('&', 1));
        out.push(decoded);
        rest = &rest[used..];
    }
    out.push_str(rest);
    out
}

fn reference(text: &str) -> Option<(char, usize)> {
    if let Some(numeric) = text.strip_prefix("&#") {
        let (radix, digits) = match numeric.strip_prefix(['x', 'X']) {
            Some(hex) => (16, hex),
            None => (10, numeric),
        };
        let len = digits.chars().take_while(|c| c.is_digit(radix)).count();
        if len == 0 || len > 8 {
            return None;
        }
        let value = u32::from_str_radix(&digits[..len], radix).ok()?;
        let used = text.len() - digits.len() + len + usize::from(digits[len..].starts_with(';'));
        return Some((char::from_u32(value).filter(|_| value != 0).unwrap_or('\u{FFFD}'), used));
    }
    NAMED
        .iter()
        .find(|(name, _)| text[1..].starts_with(name) && text[1 + name.len()..].starts_with(';'))
        .map(|(name, c)| (*c, name.len() + 2))
}

/// A literal run or a placeholder of the canonical output (with its output position).
pub enum Tok {
    /// Text the redactor kept (canonical), and where it starts in the output.
    Lit(Vec<char>, usize),
    /// A placeholder of a kind, and where it starts in the output.
    Ph(RedactionKind, usize),
}

/// The kind of the placeholder label (`credential` for credentials).
pub fn kind_of_label(label: &str) -> Option<RedactionKind> {
    match label {
        "credential" | "credentials" => Some(RedactionKind::Credentials),
        other => RedactionKind::builtin(other),
    }
}

/// The placeholder starting at `out[at]`: its kind and length.
fn placeholder_at(out: &[char], at: usize) -> Option<(RedactionKind, usize)> {
    if out[at] != '[' {
        return None;
    }
    let close = out[at..].iter().take(40).position(|c| *c == ']')?;
    let inner: String = out[at + 1..at + close].iter().collect();
    let (label, number) = inner.split_once(' ').unwrap_or((&inner, "0"));
    let numbered = !number.is_empty() && number.chars().all(|c| c.is_ascii_digit());
    kind_of_label(label).filter(|_| numbered).map(|kind| (kind, close + 1))
}

/// The canonical output as literal runs and placeholders.
pub fn tokenize(out: &[char]) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut lit_start = 0;
    let mut i = 0;
    while i < out.len() {
        match placeholder_at(out, i) {
            Some((kind, len)) => {
                if lit_start < i {
                    toks.push(Tok::Lit(out[lit_start..i].to_vec(), lit_start));
                }
                toks.push(Tok::Ph(kind, i));
                i += len;
                lit_start = i;
            }
            None => i += 1,
        }
    }
    if lit_start < out.len() {
        toks.push(Tok::Lit(out[lit_start..].to_vec(), lit_start));
    }
    toks
}

/// For each input character its output position when kept; the placeholders' input spans.
pub struct Alignment {
    /// Per input character: its output position when kept.
    pub kept: Vec<Option<usize>>,
    /// Per placeholder: kind, replaced input span, output position.
    pub spans: Vec<(RedactionKind, usize, usize, usize)>,
}

fn find(haystack: &[char], needle: &[char], from: usize) -> Option<usize> {
    (from..=haystack.len().checked_sub(needle.len())?).find(|&at| haystack[at..at + needle.len()] == *needle)
}

/// Matches the literal runs of `toks` onto `input` (see the module docs); `None` when the output
/// changed outside its placeholders.
pub fn align(input: &[char], owners: &[Option<usize>], toks: &[Tok]) -> Option<Alignment> {
    let mut kept = vec![None; input.len()];
    let mut spans = Vec::new();
    let mut pending: Vec<(RedactionKind, usize)> = Vec::new();
    let mut pos = 0;
    for (i, tok) in toks.iter().enumerate() {
        let (run, out_at) = match tok {
            Tok::Ph(kind, out_at) => {
                pending.push((kind.clone(), *out_at));
                continue;
            }
            Tok::Lit(run, out_at) => (run, *out_at),
        };
        let last = i + 1 == toks.len();
        let at = if last {
            let at = input.len().checked_sub(run.len())?;
            (at >= pos + pending.len() && input[at..] == run[..]).then_some(at)?
        } else if pending.is_empty() {
            (input[pos..].starts_with(run)).then_some(pos)?
        } else {
            find(input, run, pos + pending.len())?
        };
        if !pending.is_empty() {
            assign(&mut spans, std::mem::take(&mut pending), owners, pos, at);
        } else if at != pos {
            return None;
        }
        for j in 0..run.len() {
            kept[at + j] = Some(out_at + j);
        }
        pos = at + run.len();
    }
    if !pending.is_empty() {
        if pos + pending.len() > input.len() {
            return None;
        }
        assign(&mut spans, pending, owners, pos, input.len());
    } else if pos != input.len() {
        return None;
    }
    Some(Alignment { kept, spans })
}

/// Splits `start..end` among adjacent placeholders along value boundaries when it can.
fn assign(
    spans: &mut Vec<(RedactionKind, usize, usize, usize)>,
    pending: Vec<(RedactionKind, usize)>,
    owners: &[Option<usize>],
    start: usize,
    end: usize,
) {
    let mut segments = Vec::new();
    let mut at = start;
    while at < end {
        let mut next = at + 1;
        while next < end && owners[next] == owners[at] {
            next += 1;
        }
        if owners[at].is_some() {
            segments.push((at, next));
        }
        at = next;
    }
    let count = pending.len();
    for (n, (kind, out_at)) in pending.into_iter().enumerate() {
        let (a, b) = if count == 1 || segments.len() < count {
            (start, end)
        } else if n + 1 == count {
            (segments[n].0, end)
        } else {
            (if n == 0 { start } else { segments[n].0 }, segments[n + 1].0)
        };
        spans.push((kind, a, b, out_at));
    }
}
