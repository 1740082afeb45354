//! Wallet seed phrases (BIP 39 mnemonics): 12, 15, 18, 21 or 24 words that rebuild every key of a
//! wallet. Taken after a name that says so (`mnemonic`, `seed phrase`, `recovery phrase`, `seed
//! words`, `backup phrase`; any case, `_` or `-` between words) and a separator (`:`, `=`, `is`),
//! quoted or not, when the words are lower-case letters, three to eight each (the lengths of
//! BIP 39's English list), one space apart. The same holds for a JSON string under such a key
//! ([`is_seed_phrase`] with `names_seed_phrase`).

use super::{Finding, run};

/// The triggers, read with the source set.
pub(super) const TRIGGERS: &str = "mnemonic|Mnemonic|MNEMONIC|seed phrase|Seed phrase|SEED PHRASE|recovery phrase\
    |Recovery phrase|RECOVERY PHRASE|seed words|Seed words|backup phrase|Backup phrase";

/// The word counts BIP 39 defines.
const COUNTS: [usize; 5] = [12, 15, 18, 21, 24];

/// Handles a trigger at `start..end`; returns where scanning resumes.
pub(super) fn at_name(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    if !super::starts_word(bytes, start) {
        return end;
    }
    // The rest of a name (`mnemonic_phrase`, `seed phrase words`), then the separator.
    let mut at = run(bytes, end, 32, |b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'-'));
    at = run(bytes, at, 4, |b| matches!(b, b'"' | b'\''));
    let separated = run(bytes, at, 8, |b| matches!(b, b' ' | b'\t' | b':' | b'='));
    let spaced_is = text[at..].trim_start().strip_prefix("is ").map(|rest| text.len() - rest.len());
    let value = if separated > at && text[at..separated].contains([':', '=']) {
        separated
    } else if let Some(after_is) = spaced_is {
        after_is
    } else {
        return end;
    };
    let value = run(bytes, value, 4, |b| matches!(b, b' ' | b'"' | b'\''));
    match phrase_end(bytes, value) {
        Some(phrase_end) => {
            super::secret(out, value, phrase_end);
            phrase_end
        }
        None => end,
    }
}

/// The end of a seed phrase starting at `from`: one of [`COUNTS`] words, none after.
fn phrase_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut words = 0;
    let mut at = from;
    // One word past the longest phrase is enough to say it is none: a trigger before a long run
    // of lower-case prose reads no further.
    while words <= COUNTS[COUNTS.len() - 1] {
        let word_end = run(bytes, at, 9, |b| b.is_ascii_lowercase());
        if !(3..=8).contains(&(word_end - at)) || bytes.get(word_end).is_some_and(u8::is_ascii_alphanumeric) {
            break;
        }
        words += 1;
        at = word_end;
        if bytes.get(at) == Some(&b' ') && bytes.get(at + 1).is_some_and(u8::is_ascii_lowercase) {
            at += 1;
        } else {
            break;
        }
    }
    // A phrase ends where its last word does: `at` is that end unless a space was crossed.
    let end = if bytes.get(at.wrapping_sub(1)) == Some(&b' ') { at - 1 } else { at };
    COUNTS.contains(&words).then_some(end)
}

/// Whether `value`, a whole string, is a seed phrase.
pub(super) fn is_seed_phrase(value: &str) -> bool {
    let value = value.trim();
    phrase_end(value.as_bytes(), 0) == Some(value.len())
}

/// Whether a JSON key names a seed phrase.
pub(super) fn names_seed_phrase(key: &str) -> bool {
    let lowered = key.to_ascii_lowercase().replace(['_', '-'], " ");
    ["mnemonic", "seed phrase", "recovery phrase", "seed words", "backup phrase", "seed"].iter().any(|name| {
        lowered == *name || lowered.starts_with(&format!("{name} ")) || lowered.ends_with(&format!(" {name}"))
    })
}
