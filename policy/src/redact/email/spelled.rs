//! Addresses spelled out to keep harvesters off: `jane [at] corp [dot] com`,
//! `jane.doe(at)example(dot)org`, `jane dot doe at example dot com`, `jane@corp[.]com`,
//! `jane [@] corp [.] com`. Whoever reads them, a model included, reads the address.
//!
//! The text is looked at only around a spelled-out marker (`[at]`, `(at)`, `{at}`, `[@]`, `(@)`,
//! `[dot]`, `(dot)`, `{dot}`, `[.]`, `(.)`, ` dot `, in lower or upper case). Around one, the
//! line is read as parts (letters, digits, `_ % + -`) joined by markers: an address is a local
//! part, an `at` marker and a domain of two or more labels whose last is a top-level domain, with
//! at least one marker spelled out. A bare ` at ` counts only with a spelled-out ` dot ` in the
//! domain, and not after a pronoun or particle ("email us at example dot com" names no one).

use std::sync::LazyLock;

use regex::Regex;

use super::super::boundary::floor_boundary;
use super::super::finding::Finding;
use super::super::kind::RedactionKind;
use super::domain_labels;

/// Where spelled-out addresses may be: their markers, in the two cases they are written in.
const MARKERS: &str = concat!(
    r"\[at\]|\(at\)|\{at\}|\[@\]|\(@\)|\[dot\]|\(dot\)|\{dot\}|\[\.\]|\(\.\)| dot ",
    r"|\[AT\]|\(AT\)|\{AT\}|\[DOT\]|\(DOT\)|\{DOT\}| DOT ",
);

// A compile-time constant covered by every test.
static MARKER: LazyLock<Regex> = LazyLock::new(|| Regex::new(MARKERS).expect("address markers are valid"));

/// How far around a marker the address is looked for, in bytes.
const REACH: usize = 160;

/// Words before a bare ` at ` that are no local part.
const NOT_LOCAL: [&str; 14] =
    ["us", "me", "him", "her", "them", "you", "it", "up", "in", "out", "is", "are", "was", "be"];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Token {
    Part(usize, usize),
    /// An `at`: spelled out, and whether it is the bare word ` at `.
    At {
        spelled: bool,
        word: bool,
    },
    /// A dot: spelled out, and whether it is the bare word ` dot `.
    Dot {
        spelled: bool,
        word: bool,
    },
    Other,
}

/// Reports every spelled-out address in `text`.
pub(crate) fn find(text: &str, out: &mut Vec<Finding>) {
    let mut covered = 0;
    for marker in MARKER.find_iter(text) {
        if marker.start() < covered {
            continue;
        }
        let from = line_start(text, marker.start());
        let to = line_end(text, marker.end());
        let tokens = tokenize(text, from, to);
        for (start, end) in addresses(text, &tokens) {
            if start >= covered && start <= marker.end() + REACH {
                out.push(Finding::valid(start, end, RedactionKind::Email));
                covered = end;
            }
        }
        covered = covered.max(marker.end());
    }
}

/// The start of the line holding `at`, at most `REACH` bytes before it.
fn line_start(text: &str, at: usize) -> usize {
    let floor = floor_boundary(text, at.saturating_sub(REACH));
    text[floor..at].rfind(['\n', '\r']).map_or(floor, |index| floor + index + 1)
}

/// The end of the line holding `at`, at most `REACH` bytes after it.
fn line_end(text: &str, at: usize) -> usize {
    let ceiling = floor_boundary(text, (at + REACH).min(text.len()));
    text[at..ceiling].find(['\n', '\r']).map_or(ceiling, |index| at + index)
}

/// The text from `from` to `to` as parts, markers and other characters.
fn tokenize(text: &str, from: usize, to: usize) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut at = from;
    while at < to {
        if let Some((token, end)) = marker_at(text, at, to) {
            tokens.push(token);
            at = end;
            continue;
        }
        let part_end = text[at..to].find(|c: char| !is_part_char(c)).map_or(to, |index| at + index);
        if part_end > at {
            tokens.push(Token::Part(at, part_end));
            at = part_end;
        } else {
            tokens.push(Token::Other);
            at += text[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
    tokens
}

fn is_part_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '%' | '+' | '-')
}

/// The marker at `at`, with the spaces around a bracketed one, and its end.
fn marker_at(text: &str, at: usize, to: usize) -> Option<(Token, usize)> {
    let rest = &text[at..to];
    let spaces = |s: &str| s.len() - s.trim_start_matches(' ').len();
    let lead = spaces(rest).min(2);
    let body = &rest[lead..];
    for (written, token) in [
        ("@", Token::At { spelled: false, word: false }),
        (".", Token::Dot { spelled: false, word: false }),
        ("[at]", Token::At { spelled: true, word: false }),
        ("(at)", Token::At { spelled: true, word: false }),
        ("{at}", Token::At { spelled: true, word: false }),
        ("<at>", Token::At { spelled: true, word: false }),
        ("[@]", Token::At { spelled: true, word: false }),
        ("(@)", Token::At { spelled: true, word: false }),
        ("[dot]", Token::Dot { spelled: true, word: false }),
        ("(dot)", Token::Dot { spelled: true, word: false }),
        ("{dot}", Token::Dot { spelled: true, word: false }),
        ("<dot>", Token::Dot { spelled: true, word: false }),
        ("[.]", Token::Dot { spelled: true, word: false }),
        ("(.)", Token::Dot { spelled: true, word: false }),
    ] {
        let plain = !matches!(token, Token::At { spelled: true, .. } | Token::Dot { spelled: true, .. });
        if plain && lead > 0 {
            continue; // a plain `@` or `.` is written without spaces
        }
        if body.get(..written.len()).is_some_and(|head| head.eq_ignore_ascii_case(written)) {
            let after = &body[written.len()..];
            let trail = if plain { 0 } else { spaces(after).min(2) };
            return Some((token, at + lead + written.len() + trail));
        }
    }
    // The bare words, one space on each side.
    for (word, token) in [
        (" at ", Token::At { spelled: true, word: true }),
        (" dot ", Token::Dot { spelled: true, word: true }),
    ] {
        let spelled = rest.get(..word.len()).is_some_and(|head| head == word || head == word.to_uppercase());
        if spelled {
            return Some((token, at + word.len()));
        }
    }
    None
}

/// The addresses in `tokens`: `Part (Dot Part)* At Part (Dot Part)+`, with a spelled-out marker,
/// a top-level domain last, and a bare ` at ` only with a spelled-out dot after it.
fn addresses(text: &str, tokens: &[Token]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    for (index, token) in tokens.iter().enumerate() {
        let Token::At { spelled: at_spelled, word: at_word } = *token else { continue };
        let Some((local_start, local_spelled)) = local_part(tokens, index) else { continue };
        // The part right before a bare ` at ` (the local part is at least that one).
        let Token::Part(last_start, last_end) = tokens[index - 1] else { continue };
        if at_word && NOT_LOCAL.iter().any(|word| text[last_start..last_end].eq_ignore_ascii_case(word)) {
            continue;
        }
        let Some((end, domain_spelled, word_dot)) = domain(text, tokens, index + 1) else { continue };
        if (at_spelled || local_spelled || domain_spelled) && (!at_word || word_dot) {
            found.push((local_start, end));
        }
    }
    found
}

/// The local part before the `at` at `tokens[at]`: parts joined by dots, back from it. Its start,
/// and whether a dot in it is spelled out.
fn local_part(tokens: &[Token], at: usize) -> Option<(usize, bool)> {
    let mut first = at;
    let mut spelled = false;
    while first >= 1 && matches!(tokens[first - 1], Token::Part(..)) {
        first -= 1;
        match first.checked_sub(1).map(|before| tokens[before]) {
            Some(Token::Dot { spelled: dot_spelled, .. })
                if first >= 2 && matches!(tokens[first - 2], Token::Part(..)) =>
            {
                spelled |= dot_spelled;
                first -= 1;
            }
            _ => break,
        }
    }
    match tokens[first] {
        Token::Part(start, _) if first < at => Some((start, spelled)),
        _ => None,
    }
}

/// The domain from `tokens[from]`: parts joined by dots, the longest run of them ending in a
/// top-level domain. Its end, whether a dot in it is spelled out, and whether one is the bare word.
fn domain(text: &str, tokens: &[Token], from: usize) -> Option<(usize, bool, bool)> {
    let mut labels = Vec::new();
    let (mut spelled, mut word_dot) = (false, false);
    let mut at = from;
    while let Some(&Token::Part(start, end)) = tokens.get(at) {
        labels.push((start, end));
        match tokens.get(at + 1) {
            Some(&Token::Dot { spelled: dot_spelled, word })
                if matches!(tokens.get(at + 2), Some(Token::Part(..))) =>
            {
                spelled |= dot_spelled;
                word_dot |= word;
                at += 2;
            }
            _ => break,
        }
    }
    let written: Vec<&str> = labels.iter().map(|&(start, end)| &text[start..end]).collect();
    let count = domain_labels(&written)?;
    Some((labels[count - 1].1, spelled, word_dot))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spelled(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        find(text, &mut out);
        out.iter().map(|finding| &text[finding.start..finding.end]).collect()
    }

    #[test]
    fn addresses_spelled_out() {
        for (text, address) in [
            ("Contact jane [at] corp [dot] com for access", "jane [at] corp [dot] com"),
            ("mail jane.doe(at)example(dot)org please", "jane.doe(at)example(dot)org"),
            ("write to jane dot doe at example dot com", "jane dot doe at example dot com"),
            ("jane@corp[.]com", "jane@corp[.]com"),
            ("JANE [AT] EXAMPLE [DOT] COM", "JANE [AT] EXAMPLE [DOT] COM"),
            ("bob [@] mail [.] example [.] de", "bob [@] mail [.] example [.] de"),
            ("sales {at} acme {dot} io.", "sales {at} acme {dot} io"),
            ("hr-team(at)intranet(dot)corp", "hr-team(at)intranet(dot)corp"),
        ] {
            assert_eq!(spelled(text), [address], "{text}");
        }
    }

    #[test]
    fn markers_that_spell_no_address() {
        for text in [
            "email us at example dot com",
            "see the dot product at line 4",
            "call (at) home",
            "The array[.] operator",
            "Sign up at example.com today",
            "jane@corp.com",
            "x [at] y [dot] notatld",
        ] {
            assert_eq!(spelled(text), Vec::<&str>::new(), "{text}");
        }
    }
}
