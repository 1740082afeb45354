//! A name and a password written as a pair after the word for what they open: `login: alice /
//! Xk9mQ2vL7pz`, `Login = svc | Xk9mQ2vL7pz`, and a network's name and key after `Wi-Fi:`, `WiFi`
//! or `WLAN` (`wifi: GuestNet / Xk9mQ2vL7pz`). The word names a sign-in, not a secret, so only
//! the pair counts (`login: alice` names a user). After `login` the pair says what its second
//! word is, even with no separator after the word (`login alice / hunter2`), so a password a
//! person chose is enough (`shape::is_chosen_password`: a letter and a digit, as in `hunter2`);
//! a network's key must look like a secret
//! on its own (`shape::looks_secret`: `Wi-Fi: 2.4GHz / 5.0GHz` names bands). A navigation trail
//! (`Login: Settings / Profile`) has neither. After a separator, a user's name and the password
//! may be written together (`login: alice/hunter2`). The password alone is reported.

use super::value::Value;
use super::{Finding, run, shape};

/// The words (without case) a pair follows; the word triggers' spellings of them.
pub(super) const WORDS: [&str; 4] = ["login", "wifi", "wi-fi", "wlan"];

/// Longest user name read.
const MAX_USER: usize = 64;

/// Longest password read.
const MAX_PASSWORD: usize = 256;

/// Handles the word `login` at `start..end`; returns where scanning resumes.
pub(super) fn at_word(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    let joined = |at: Option<&u8>| at.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    if joined(start.checked_sub(1).and_then(|before| bytes.get(before))) || joined(bytes.get(end)) {
        return end;
    }
    let login = text[start..end].eq_ignore_ascii_case("login");
    let spaces = |from: usize| run(bytes, from, 8, |b| b == b' ' || b == b'\t');
    let separator = spaces(end);
    let separated = matches!(bytes.get(separator), Some(b':' | b'='));
    let user = match separated {
        true => spaces(separator + 1),
        // A login's pair needs no separator after the word: `login alice / hunter2`.
        false if login && separator > end => separator,
        false => return end,
    };
    let user_end = run(bytes, user, MAX_USER, |b| b.is_ascii_graphic() && !matches!(b, b'/' | b'|'));
    let pair = match [" / ", " | ", " : "].iter().find(|pair| text[user_end..].starts_with(**pair)) {
        Some(pair) => pair.len(),
        // `login: alice/hunter2`, written together after a separator (a command's `login
        // https://…` has none) and a user's name.
        None if separated
            && bytes.get(user_end) == Some(&b'/')
            && bytes[user..user_end].iter().all(|&b| b.is_ascii_alphanumeric() || b"._-@".contains(&b)) =>
        {
            1
        }
        None => return end,
    };
    let password = user_end + pair;
    let written_end = run(bytes, password, MAX_PASSWORD, |b| b.is_ascii_graphic());
    // Punctuation that ends the sentence is not the password's.
    let password_end = password + text[password..written_end].trim_end_matches(['.', ',', ';', ')']).len();
    let written = &text[password..password_end];
    let chosen = login && shape::is_chosen_password(written);
    if user == user_end || !(chosen || shape::looks_secret(written)) {
        return end;
    }
    super::password(text, Value { start: password, end: password_end, quoted: false }, out);
    password_end
}
