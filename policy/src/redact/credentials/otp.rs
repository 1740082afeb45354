//! One-time codes and PINs: "Your verification code is 482913", "482913 is your Google
//! verification code", "OTP: 551203", "2FA code: 093 441", "PIN: 4821", "Bestätigungscode:
//! 118204", "code de vérification : 339102", "código de verificación: 771204", and the lists
//! of backup and recovery codes ("recovery codes: 8f3k-2m9x 7h4q-1z8w …"). A code in a
//! forwarded message or a log signs its holder in (or resets an account) until it expires.
//!
//! A code must be named as one: `code` after a word saying what for (`verification`, `security`,
//! `login`, `one-time`, `2FA`, `MFA`, `backup`, and the keypads' `door`, `gate`, `alarm`…; an
//! `error`, `status`, `zip`, `promo` or `building` code is none), `passcode`, `OTP`, a one-time
//! password, `PIN` (`pin` too, as a word of its own: not `spin` or `pinned`; German banks'
//! `Geheimzahl`), or a card's `CVV`/`CVC`/security code.
//! The code is 4 to 8 digits (3 or 4 for a card's; one space or dash may split it, and Google
//! writes `G-` before it) after the name and a few linking words (`is`, `:`,
//! `=`, `lautet`, `est`, `es`), or before the name ("482913 is your … code", "Use 551203 as
//! your passcode"). A run of filler (`000000`, `123456`) is a stand-in. "PIN code" followed by six
//! digits is India's postal code, and stays.

use super::vendors::is_placeholder_body;
use super::{ends_with_folded, run};

/// Triggers: the names of codes, in the cases they are written in.
pub(super) const TRIGGERS: &str = concat!(
    "code|Code|CODE|OTP|otp|PIN|[Pp]in|CVV|cvv|CVC|cvc|c\u{f3}digo|C\u{f3}digo|C\u{d3}DIGO",
    "|Geheimzahl|geheimzahl|GEHEIMZAHL",
    "|one-time password|One-time password|one time password|One time password",
);

/// Words before `code` that make it a one-time code (lower case), also as the first part of a
/// compound (`Bestätigungscode`, `passcode`).
const QUALIFIERS: [&str; 35] = [
    "verification",
    "verify",
    "security",
    "login",
    "log-in",
    "sign-in",
    "signin",
    "one-time",
    "onetime",
    "authentication",
    "auth",
    "authenticator",
    "access",
    "confirmation",
    "2fa",
    "mfa",
    "otp",
    "totp",
    "sms",
    "backup",
    "recovery",
    "pass",
    "bestätigungs",
    "sicherheits",
    "anmelde",
    "einmal",
    "zugangs",
    // The keypads of buildings and homes: a door's or an alarm's code opens it as a PIN does.
    "door",
    "gate",
    "garage",
    "alarm",
    "keypad",
    "lockbox",
    "entry",
    "tür",
];

/// Qualifiers written after the name (French and Spanish): `code de vérification`.
const AFTER: [&str; 8] = [
    "de vérification",
    "de verificación",
    "de verificacion",
    "de sécurité",
    "de seguridad",
    "d'accès",
    "de acceso",
    "de connexion",
];

/// The longest qualifier read before a name, in characters (`authentication`, `bestätigungs`);
/// a longer word is none, and is not read whole.
const MAX_WORD: usize = 16;

/// Words that may stand between a code's name and the code.
const LINKS: [&str; 11] =
    ["is", "was", "ist", "lautet", "est", "es", "sms", "code", "number", "numéro", "your"];

/// Words that may stand between a code and its name after it ("… is your Google verification").
const LINKS_BACK: [&str; 9] = ["is", "your", "as", "the", "ist", "ihr", "est", "votre", "new"];

/// Handles a trigger at `start..end`; returns where scanning resumes.
pub(super) fn at_name(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let lower = text[start..end].to_lowercase();
    // The name's word: `code` may close a compound, the others stand alone.
    let word_start = if lower == "code" {
        start
            - text[..start]
                .bytes()
                .rev()
                .take(MAX_WORD + 1)
                .take_while(|b| b.is_ascii_alphabetic() || *b >= 0x80)
                .count()
    } else {
        start
    };
    let word_start = super::char_boundary(text, word_start);
    let plural = bytes.get(end) == Some(&b's') || bytes.get(end) == Some(&b'S');
    let name_end = if plural { end + 1 } else { end };
    if word_start > 0 && bytes[word_start - 1].is_ascii_alphanumeric()
        || bytes.get(name_end).is_some_and(|b| b.is_ascii_alphanumeric())
    {
        return end;
    }
    let qualified_after =
        AFTER.iter().any(|after| starts_with_folded(&text[run_blank(bytes, name_end)..], after));
    let named = match lower.as_str() {
        "code" => qualified_after || qualified(text, word_start, start),
        "código" => qualified_after,
        _ => true,
    };
    // A card's security code has three or four digits.
    let card = matches!(lower.as_str(), "cvv" | "cvc")
        || (lower == "code" && ends_with_folded(text[..word_start].trim_end(), "security"));
    let min_digits = if card { 3 } else { 4 };
    if !named {
        return end;
    }
    let mut after = name_end;
    if lower == "code" || lower == "código" {
        // `code de vérification`: past the qualifier written after the name.
        let at = run_blank(bytes, after);
        if let Some(qualifier) = AFTER.iter().find(|after| starts_with_folded(&text[at..], after)) {
            after = at + qualifier.len();
        }
    }
    if plural {
        return code_list(text, after, out).max(end);
    }
    if let Some((code_start, code_end)) = code_after(text, after, min_digits) {
        let digits = bytes[code_start..code_end].iter().filter(|b| b.is_ascii_digit()).count();
        let postal =
            lower == "pin" && text[name_end..code_start].to_lowercase().contains("code") && digits == 6;
        if !postal {
            report(text, code_start, code_end, out);
        }
        return code_end;
    }
    if let Some((code_start, code_end)) = code_before(text, word_start, min_digits) {
        report(text, code_start, code_end, out);
    }
    end
}

/// Whether the `code` at `name` (its word starting at `word_start`) is named as a one-time code:
/// by the compound it closes (`passcode`) or by the word before it.
fn qualified(text: &str, word_start: usize, name: usize) -> bool {
    let compound = text[word_start..name].to_lowercase();
    if !compound.is_empty() {
        return QUALIFIERS.iter().any(|qualifier| compound.trim_end_matches('-') == *qualifier);
    }
    let before = text[..word_start].trim_end_matches([' ', '-']);
    let mut word_start = before.len();
    for (index, c) in before.char_indices().rev().take(MAX_WORD + 1) {
        if !(c.is_alphanumeric() || c == '-') {
            break;
        }
        word_start = index;
    }
    if before[word_start..].chars().count() > MAX_WORD {
        return false;
    }
    let word = before[word_start..].to_lowercase();
    QUALIFIERS.contains(&word.as_str())
        || (word == "time" && ends_with_folded(before[..word_start].trim_end(), "one"))
}

/// The code after a name ending at `from`: past `:`, `=`, `-`, `#` and linking words, 4 to 8
/// digits (`G-` before them, one space or dash inside), ending a word.
fn code_after(text: &str, from: usize, min_digits: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut at = from;
    for _ in 0..4 {
        at = run(bytes, at, 8, |b| matches!(b, b' ' | b'\t' | b':' | b'=' | b'#' | b'-'));
        if let Some(code) = code_at(bytes, at, min_digits) {
            return Some(code);
        }
        let word_end = run(bytes, at, 16, |b| b.is_ascii_alphabetic() || b >= 0x80);
        let word = text.get(at..word_end)?.to_lowercase();
        if !LINKS.contains(&word.as_str()) {
            return None;
        }
        at = word_end;
    }
    None
}

/// The code before the name's word at `word_start` ("482913 is your … code"; "Use 551203 as
/// your passcode"), past a few linking words and one qualifier or vendor name.
fn code_before(text: &str, word_start: usize, min_digits: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut end = word_start;
    let mut unknown = 0;
    for _ in 0..6 {
        end = text[..end].trim_end_matches([' ', '\t']).len();
        let start = text[..end].rfind([' ', '\t', '\n', '(', '"', '\'']).map_or(0, |index| index + 1);
        if let Some((code_start, code_end)) =
            code_at(bytes, start, min_digits).filter(|&(_, code_end)| code_end == end)
        {
            return Some((code_start, code_end));
        }
        let word = text[start..end].to_lowercase();
        if !LINKS_BACK.contains(&word.as_str()) && !QUALIFIERS.contains(&word.as_str()) {
            unknown += 1;
            if unknown > 1 || !word.chars().all(char::is_alphabetic) {
                return None;
            }
        }
        end = start;
    }
    None
}

/// A code of `min_digits` to 8 digits at `at` (optionally `G-` first; one space or dash inside), ending a
/// word: not followed by a letter, a digit, `-` or `/`, nor by `.`, `,` or `:` and a digit (a
/// date, a time, a decimal).
fn code_at(bytes: &[u8], at: usize, min_digits: usize) -> Option<(usize, usize)> {
    let digits_at = if bytes.get(at..).is_some_and(|rest| rest.starts_with(b"G-")) { at + 2 } else { at };
    let (end, digits) = split_group(bytes, digits_at, |b| b.is_ascii_digit())?;
    let ends_word = match bytes.get(end) {
        None => true,
        Some(&b) if b.is_ascii_alphanumeric() || b == b'-' || b == b'/' => false,
        Some(b'.' | b',' | b':') => !bytes.get(end + 1).is_some_and(u8::is_ascii_digit),
        Some(_) => true,
    };
    ((min_digits..=8).contains(&digits) && ends_word).then_some((digits_at, end))
}

/// A run of `keep` bytes at `at`, or two runs of 3 to 6 of the same length joined by one space or
/// dash (`093 441`, `8f3k-2m9x`): its end and how many `keep` bytes it holds.
fn split_group(bytes: &[u8], at: usize, keep: impl Fn(u8) -> bool + Copy) -> Option<(usize, usize)> {
    let first = run(bytes, at, 13, keep);
    if first == at {
        return None;
    }
    let length = first - at;
    if (3..=6).contains(&length) && matches!(bytes.get(first), Some(b' ' | b'-')) {
        let second = run(bytes, first + 1, length + 1, keep);
        if second - (first + 1) == length {
            return Some((second, 2 * length));
        }
    }
    Some((first, length))
}

/// The codes of a backup or recovery list after `from`: up to 16 codes of 6 to 12 letters and
/// digits holding a digit (`8f3k-2m9x`, `1234 5678`, `a1b2c3d4e5`), separated by spaces, commas
/// or line breaks; returns where the list ends.
fn code_list(text: &str, from: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let mut at = run(bytes, from, 8, |b| matches!(b, b' ' | b':' | b'\t'));
    let mut end = from;
    for _ in 0..16 {
        at = run(bytes, at, 8, |b| matches!(b, b' ' | b',' | b'\n' | b'\r' | b'\t' | b'*'));
        let Some((code_end, length)) = split_group(bytes, at, |b| b.is_ascii_alphanumeric()) else {
            break;
        };
        let ends_word = !bytes.get(code_end).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'-');
        if !(6..=12).contains(&length) || !ends_word || !bytes[at..code_end].iter().any(u8::is_ascii_digit) {
            break;
        }
        report(text, at, code_end, out);
        end = code_end;
        at = code_end;
    }
    end
}

/// Whether the key `name` names a code (its last word `pin`, `cvv`, `cvc`, `cvv2`, `otp`, `totp`,
/// `passcode`), as a JSON member does: `{"pin": "4829"}`.
pub(super) fn names_code(name: &str) -> bool {
    let last = name.rsplit(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or(name);
    let last = match last.get(..4) {
        Some(head) if head.eq_ignore_ascii_case("card") => &last[4..],
        _ => last,
    };
    ["pin", "cvv", "cvc", "cvv2", "otp", "totp", "passcode"]
        .iter()
        .any(|code| last.eq_ignore_ascii_case(code))
}

/// Whether `value` is a code: 3 to 8 digits that are no filler run.
pub(super) fn is_code(value: &str) -> bool {
    (3..=8).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit()) && !is_placeholder_body(value)
}

fn report(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) {
    let body: String = text[start..end].chars().filter(char::is_ascii_alphanumeric).collect();
    if is_placeholder_body(&body) {
        super::look_alike(out, start, end);
    } else {
        super::secret(out, start, end);
    }
}

fn run_blank(bytes: &[u8], at: usize) -> usize {
    run(bytes, at, 8, |b| b == b' ' || b == b'\t')
}

/// Whether `text` starts with `prefix` (lower case), case aside.
fn starts_with_folded(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len()).is_some_and(|head| head.to_lowercase() == prefix)
}
