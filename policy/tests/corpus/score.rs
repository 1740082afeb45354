//! Scoring: what became of every planted value, and where every placeholder landed.
//!
//! Method. Input and output are compared in a *canonical* form (what a reader sees: entities
//! decoded, Unicode spaces, dashes and fullwidth forms folded, invisible characters dropped) and
//! aligned (see `align`): the redactor only replaces spans with `[label n]` placeholders, so
//! matching its kept text back onto the input gives, for every input character, whether it was
//! kept, and for every placeholder the input span it replaced.
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

use super::align::{Tok, align, canon_pieces, tokenize};
use super::{Doc, Item, Piece};

pub use super::align::canon;
pub use super::report::{Score, Status};

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
