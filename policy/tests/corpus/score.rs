//! Scoring: what became of every planted value, and where every placeholder landed.
//!
//! Method. Input and output are compared in a *canonical* form: HTML character references
//! decoded, Unicode spaces and dashes folded to ASCII, fullwidth forms to ASCII, soft hyphens and
//! zero-width characters dropped (what a reader sees). The redactor only replaces spans with
//! `[label n]` placeholders, so the canonical output is the canonical input with some spans
//! replaced. It is split into literal runs and placeholders, and the runs are matched back onto
//! the input in order (the first at the start, the last at the end, each middle run at its
//! leftmost position leaving at least one character per pending placeholder). That gives, for
//! every input character, whether it was kept, and for every placeholder the input span it
//! replaced.
//!
//! - A valid value is *caught* when none of its letters and digits were kept, *partial* when
//!   some were (a leak: `DE89 [iban] 0130 00`), *missed* when all were. As a backstop a caught
//!   value whose letters and digits (10 or more) still occur as one run anywhere in the
//!   canonical output counts as partial.
//! - A look-alike is *intact* when none of its characters were replaced.
//! - A placeholder of kind K is a true positive when its span overlaps a valid value of kind
//!   K; otherwise a false positive on a look-alike, on a valid value of another kind, or on
//!   carrier text. Adjacent placeholders share a span and are split along value boundaries.
//!   Precision is true positives over the redactor's own `counts` for K.
//! - When the runs cannot be matched (the redactor changed text outside its spans), the item is
//!   counted as unaligned and each value falls back to the backstop alone.

use std::collections::BTreeMap;

use policy::redact::Placeholders;
use policy::{RedactionKind, RedactionSet, Redactor};

use super::{Doc, Item, Piece};

pub use super::report::{Score, Status};

/// The canonical characters of `text`.
pub fn canon(text: &str) -> Vec<char> {
    decode_entities(text).chars().filter_map(fold).collect()
}

/// The canonical characters of `pieces`, each with the planted value it belongs to.
fn canon_pieces(pieces: &[Piece]) -> (Vec<char>, Vec<Option<usize>>) {
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
enum Tok {
    Lit(Vec<char>, usize),
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

fn tokenize(out: &[char]) -> Vec<Tok> {
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
struct Alignment {
    kept: Vec<Option<usize>>,
    spans: Vec<(RedactionKind, usize, usize, usize)>,
}

fn find(haystack: &[char], needle: &[char], from: usize) -> Option<usize> {
    (from..=haystack.len().checked_sub(needle.len())?).find(|&at| haystack[at..at + needle.len()] == *needle)
}

fn align(input: &[char], owners: &[Option<usize>], toks: &[Tok]) -> Option<Alignment> {
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

/// Redacts every item with all built-in kinds and scores it.
pub fn score(redactor: &Redactor, items: &[Item]) -> Score {
    let all = RedactionSet::builtin();
    let mut score = Score::default();
    for item in items {
        let mut scope = Placeholders::new();
        let (counts, outputs) = match &item.doc {
            Doc::Text(pieces) => {
                let input: String = pieces.iter().map(|p| p.text.as_str()).collect();
                let out = redactor.redact_in(&input, &all, &mut scope);
                (out.counts, vec![out.text])
            }
            Doc::Json { value, strings } => {
                let mut value = value.clone();
                let counts = redactor.redact_json(&mut value, &all, &mut scope);
                let outputs = strings
                    .iter()
                    .map(|(pointer, _)| {
                        value.pointer(pointer).and_then(|v| v.as_str()).unwrap_or("\u{FFFD}").to_owned()
                    })
                    .collect();
                (counts, outputs)
            }
        };
        score_item(&mut score, item, &counts, &outputs);
    }
    score
}

/// Scores one item from the redactor's `counts` and its output strings (one per string of the
/// document, in order: the text, or each JSON string leaf).
pub fn score_item(
    score: &mut Score,
    item: &Item,
    counts: &BTreeMap<RedactionKind, usize>,
    outputs: &[String],
) {
    score.items += 1;
    *score.items_by_channel.entry(item.channel).or_insert(0) += 1;
    for (kind, &count) in counts {
        score.bump(kind, item.channel, |t| t.placeholders += count);
    }
    let leaves: Vec<&[Piece]> = match &item.doc {
        Doc::Text(pieces) => vec![pieces.as_slice()],
        Doc::Json { strings, .. } => strings.iter().map(|(_, pieces)| pieces.as_slice()).collect(),
    };
    let mut parsed: BTreeMap<RedactionKind, usize> = BTreeMap::new();
    for (pieces, output) in leaves.into_iter().zip(outputs) {
        score_leaf(score, item, pieces, output, &mut parsed);
    }
    let reported: BTreeMap<RedactionKind, usize> =
        counts.iter().filter(|(_, n)| **n > 0).map(|(k, n)| (k.clone(), *n)).collect();
    if parsed != reported {
        score.count_mismatches += 1;
    }
}

fn score_leaf(
    score: &mut Score,
    item: &Item,
    pieces: &[Piece],
    output: &str,
    parsed: &mut BTreeMap<RedactionKind, usize>,
) {
    let (input, owners) = canon_pieces(pieces);
    let out = canon(output);
    let toks = tokenize(&out);
    for tok in &toks {
        if let Tok::Ph(kind, _) = tok {
            *parsed.entry(kind.clone()).or_insert(0) += 1;
        }
    }
    let out_alnum: String =
        out.iter().filter(|c| c.is_alphanumeric()).flat_map(|c| c.to_uppercase()).collect();
    let alignment = align(&input, &owners, &toks);
    if alignment.is_none() {
        score.unaligned += 1;
    }
    let values: Vec<usize> = pieces.iter().filter_map(|p| p.value).collect();
    for &v in &values {
        let planted = &item.planted[v];
        let positions: Vec<usize> = (0..input.len()).filter(|&i| owners[i] == Some(v)).collect();
        let key: String = positions
            .iter()
            .map(|&i| input[i])
            .filter(|c| c.is_alphanumeric())
            .flat_map(|c| c.to_uppercase())
            .collect();
        let elsewhere = key.len() >= 10 && out_alnum.contains(&key);
        let (kept, replaced) = match &alignment {
            Some(a) => {
                let kept: String =
                    positions.iter().filter(|&&i| a.kept[i].is_some()).map(|&i| input[i]).collect();
                let replaced = positions.iter().filter(|&&i| a.kept[i].is_none()).count();
                (kept, replaced)
            }
            None if out_alnum.contains(&key) => (positions.iter().map(|&i| input[i]).collect(), 0),
            None => (String::new(), positions.len()),
        };
        let kept_alnum = kept.chars().filter(|c| c.is_alphanumeric()).count();
        let status = match (planted.valid, kept_alnum, replaced) {
            (true, 0, _) if elsewhere => Status::Partial(key.clone()),
            (true, 0, _) => Status::Caught,
            (true, _, 0) => Status::Missed,
            (true, _, _) => Status::Partial(kept),
            (false, _, 0) => Status::Intact,
            (false, _, _) => Status::Hit,
        };
        let at = positions.first().copied().unwrap_or(0);
        let out_at = alignment.as_ref().and_then(|a| a.kept[at]).or_else(|| {
            alignment
                .as_ref()
                .and_then(|a| a.spans.iter().find(|s| s.1 <= at && at < s.2.max(s.1 + 1)).map(|s| s.3))
        });
        score.record(
            item,
            v,
            status,
            window(&input, at, positions.len()),
            out_at.map(|o| window(&out, o, 1)),
        );
    }
    if let Some(a) = alignment {
        for (kind, start, end, out_at) in a.spans {
            let hit: Vec<usize> = owners[start..end].iter().flatten().copied().collect();
            let verdict = if hit.iter().any(|&v| item.planted[v].valid && item.planted[v].kind == kind) {
                None
            } else if let Some(&v) = hit.iter().find(|&&v| !item.planted[v].valid) {
                Some(format!("on look-alike {} ({})", item.planted[v].kind, item.planted[v].form))
            } else if let Some(&v) = hit.first() {
                Some(format!("wrong kind: on valid {} ({})", item.planted[v].kind, item.planted[v].form))
            } else {
                Some("on carrier text".to_owned())
            };
            let replaced: String = input[start..end].iter().collect();
            score.placeholder(
                item,
                &kind,
                verdict,
                replaced,
                window(&input, start, end - start),
                window(&out, out_at, 1),
            );
        }
    }
}

/// About 60 characters either side of `at..at + len`.
fn window(chars: &[char], at: usize, len: usize) -> String {
    let from = at.saturating_sub(60);
    let to = (at + len + 60).min(chars.len());
    chars[from.min(to)..to].iter().collect()
}
