//! National identification numbers, each with its own check, plus the scanning helpers they
//! share: the German tax identification number, the French NIR, the UK National Insurance
//! number, the Spanish DNI and NIE, the Italian codice fiscale, the Brazilian CPF, the Chinese
//! resident identity number, the Swedish personnummer, the Indian Aadhaar number, the Polish
//! PESEL and the Dutch BSN.
//!
//! Each recognizer is anchored on runs of ASCII digits, which ordinary prose has few of: it walks
//! the text's digit groups (`digits::groups`, listed once for every number recognizer) and reads
//! the kind's shape at each and nowhere else. A finding starts and ends at a token boundary: not next to
//! a letter, a digit or `_`, and not glued to another number by `.`, `,`, `-`, `/` or a leading
//! `+` (`+12345678903` is a phone number, `3.14159265358` a decimal). The IP recognizers (`ip`)
//! use the same scanning helpers.
//!
//! Numbers whose bare digits say too little (eleven digits are also a phone number or another
//! country's id) are read only after a word that names them ([`named_before`]): the PESEL and
//! the BSN always, the CPF, the personnummer and the Aadhaar number when written without their
//! separators.

mod br_cpf;
mod cn_resident_id;
mod date;
pub use date::is_date;
mod de_tax_id;
mod es_dni;
mod fr_nir;
mod in_aadhaar;
mod it_codice_fiscale;
mod nl_bsn;
mod pl_pesel;
mod se_personnummer;
mod uk_nino;

pub(crate) use cn_resident_id::is_valid_digits as is_cn_resident_id;

use crate::redact::digits::Group;
use crate::redact::finding::Finding;

/// A recognizer's entry point: the text, its digit groups, the findings to push to.
type Find = fn(&str, &[Group], &mut Vec<Finding>);

/// Every national recognizer's findings in `text` (its digit `groups` listed). The order settles
/// ties between valid findings of equal span, which go to the one reported first: a number that a
/// word names (`CPF 11144477735`, `PESEL …`) is that id before it is a German tax id, and every
/// national number is reported before the payment cards, so an Aadhaar number or a Chinese
/// resident id that also passes Luhn keeps its own kind.
pub(crate) fn find(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let finders: [Find; 11] = [
        br_cpf::find,
        pl_pesel::find,
        nl_bsn::find,
        in_aadhaar::find,
        cn_resident_id::find,
        se_personnummer::find,
        es_dni::find,
        it_codice_fiscale::find,
        de_tax_id::find,
        fr_nir::find,
        uk_nino::find,
    ];
    for find in finders {
        find(text, groups, out);
    }
}

/// Calls `read` with each of the digit `groups` that lies past the values found so far: `read`
/// returns the end of the value it found at a group, and the groups before that end are not
/// read again.
pub(super) fn for_each_unread(groups: &[Group], mut read: impl FnMut(Group) -> Option<usize>) {
    let mut at = 0;
    for &group in groups {
        if group.start >= at {
            at = read(group).unwrap_or(group.end);
        }
    }
}

/// How far before a number, in bytes, the words that name it are looked for.
const CONTEXT: usize = 40;

/// Whether one of `words` (lower case) stands in the [`CONTEXT`] bytes before `start` with no
/// digit between it and `start` (a word names the next number: in `PESEL 61032151579, CPF
/// 28856646064` the second number is not a PESEL), in any case, at the start of a word: after a
/// character that is not an ASCII letter, or as the capitalized part of a camel-case name
/// (`customerCpf`), so `uid` is not found in `guid`; or at the end of a key written in lower
/// case, right before its `=`, `:` or closing quote (`customerssn=`, `"employeecpf":`), where
/// the word ends the name however it was joined.
pub(crate) fn named_before(text: &str, start: usize, words: &[&str]) -> bool {
    let bytes = text.as_bytes();
    let from = start.saturating_sub(CONTEXT);
    let from = bytes[from..start].iter().rposition(u8::is_ascii_digit).map_or(from, |last| from + last + 1);
    let window = &bytes[from..start];
    words.iter().any(|word| {
        window.windows(word.len()).enumerate().any(|(offset, candidate)| {
            let at = from + offset;
            candidate.eq_ignore_ascii_case(word.as_bytes())
                && match at.checked_sub(1).map(|i| bytes[i]) {
                    Some(previous) if previous.is_ascii_lowercase() => {
                        bytes[at].is_ascii_uppercase()
                            || matches!(bytes.get(at + word.len()), Some(b'=' | b':' | b'"' | b'\''))
                    }
                    Some(previous) => !previous.is_ascii_uppercase(),
                    None => true,
                }
        })
    })
}

/// Whether the character before byte `start` is a letter, a digit or `_` (Unicode-aware).
pub(super) fn word_before(text: &str, start: usize) -> bool {
    text.get(..start)
        .and_then(|head| head.chars().next_back())
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Whether the character at byte `end` is a letter, a digit or `_` (Unicode-aware).
pub(super) fn word_after(text: &str, end: usize) -> bool {
    text.get(end..).and_then(|tail| tail.chars().next()).is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Whether `text[start..end]` stands alone as a number: not inside a longer word or number.
/// With `grouped`, a digit group one space away on either side also counts as part of a longer
/// number (`49 12 345 678 903` is not a tax id written in groups).
pub(super) fn standalone(text: &str, start: usize, end: usize, grouped: bool) -> bool {
    let bytes = text.as_bytes();
    let byte = |index: Option<usize>| index.and_then(|i| bytes.get(i)).copied();
    let before = byte(start.checked_sub(1));
    let before2 = byte(start.checked_sub(2));
    let after = byte(Some(end));
    let after2 = byte(Some(end + 1));
    let is_digit = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_digit());
    let joiner = |b: Option<u8>| matches!(b, Some(b'.' | b'-' | b'/'));
    if word_before(text, start) || word_after(text, end) || before == Some(b'+') {
        return false;
    }
    if (joiner(before) && is_digit(before2)) || (joiner(after) && is_digit(after2)) {
        return false;
    }
    // A comma joins digits as a decimal or thousands separator (`12345,6`, `1,234`): one to three
    // digits on the other side. A CSV field (`…,19412…,09/02/2021`) is not joined.
    let short_run = |digits: &mut dyn Iterator<Item = &u8>, beyond: Option<u8>| {
        let count = digits.take_while(|b| b.is_ascii_digit()).count();
        (1..=3).contains(&count) && !matches!(beyond, Some(b'/' | b'-' | b':' | b'.'))
    };
    if before == Some(b',') && start >= 2 {
        let run = bytes[..start - 1].iter().rev().take_while(|b| b.is_ascii_digit()).count();
        let beyond = (start - 1).checked_sub(run + 1).map(|i| bytes[i]);
        if short_run(&mut bytes[..start - 1].iter().rev(), beyond) && run > 0 {
            return false;
        }
    }
    if after == Some(b',') {
        let run = bytes[end + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let beyond = bytes.get(end + 1 + run).copied();
        if short_run(&mut bytes[end + 1..].iter(), beyond) {
            return false;
        }
    }
    !(grouped && ((before == Some(b' ') && is_digit(before2)) || (after == Some(b' ') && is_digit(after2))))
}

/// Reads groups of the given `lengths` from `from`, separated by `separator` (`None`: written
/// together), where `allowed(i, byte)` says whether the `i`-th character of the value may be
/// `byte`; returns the `N` characters without separators and the end of the last group.
pub(super) fn read_groups<const N: usize>(
    bytes: &[u8],
    from: usize,
    lengths: &[usize],
    separator: Option<u8>,
    allowed: impl Fn(usize, u8) -> bool,
) -> Option<([u8; N], usize)> {
    let mut digits = [0u8; N];
    let mut filled = 0;
    let mut at = from;
    for (index, &length) in lengths.iter().enumerate() {
        if index > 0
            && let Some(separator) = separator
        {
            if bytes.get(at) != Some(&separator) {
                return None;
            }
            at += 1;
        }
        let group = bytes.get(at..at + length)?;
        if !group.iter().enumerate().all(|(offset, &byte)| allowed(filled + offset, byte)) {
            return None;
        }
        digits.get_mut(filled..filled + length)?.copy_from_slice(group);
        filled += length;
        at += length;
    }
    (filled == N).then_some((digits, at))
}

#[cfg(test)]
pub(super) mod tests;
