//! More names of a password: the word for one in more languages, Czech and Slovak, the languages of the former
//! Yugoslavia, Romanian, Bulgarian, Lithuanian, Estonian, Afrikaans, Icelandic,
//! Albanian, Greek, Georgian, Armenian, Swahili, Hindi and Bengali as one word; Vietnamese,
//! Indonesian, Malay, Arabic, Persian, Italian, Greek and Kazakh as phrases of two or three
//! words. `key::PASSWORD_WORDS` holds the languages found earlier, which the word set triggers.
//! Also the abbreviations people type for one (`pswd`, `psw`, `pword`, `passwrd`), a personal
//! access token's (`GH_PAT`, `Azure DevOps PAT: …`, whose tokens have no prefix), and the words
//! for "credentials" in German, Spanish, Portuguese, Italian, French, Dutch and Swedish (`Zugangsdaten:
//! bob / …`), which name a user and a password together.
//!
//! Three kinds of name:
//! - [`WORDS`] name a password and nothing else, and count as the end of a longer name too
//!   (`db_heslo`), like `password`;
//! - [`WEAK_WORDS`] also mean something else (Italian `parola` is a word, Latvian `parole` is
//!   French for speech, Greek `κωδικός` is any code): they count as a whole last word only, and
//!   the value must look like a secret on its own;
//! - [`PHRASES`] are read whole (`kata sandi`, `mật khẩu`): none of their words names a password
//!   alone. A name is compared word by word, so `kata_sandi` and `Kata Sandi` are the same
//!   name.
//!
//! Their triggers are two sets of their own ([`triggers`], [`other_triggers`]), built from these
//! lists in the cases a label is written in: lower case, a capital first letter, a capital on
//! every word, and upper case. Added to the word set, they made it too large for the regex's
//! fastest prefilter.

/// What a name says in these languages (`key` turns it into its `Key`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Naming {
    /// A password.
    Password,
    /// A password if its value looks like one on its own ([`WEAK_WORDS`]).
    MaybePassword,
}

/// Single words that name a password, lower case.
pub(super) const WORDS: [&str; 18] = [
    // Czech and Slovak.
    "heslo",
    // Croatian, Serbian and Bosnian, in both scripts; Slovenian.
    "lozinka",
    "\u{43b}\u{43e}\u{437}\u{438}\u{43d}\u{43a}\u{430}",
    "geslo",
    // Romanian, with its diacritic (without it, the word is Italian's `parola`).
    "parol\u{103}",
    // Bulgarian.
    "\u{43f}\u{430}\u{440}\u{43e}\u{43b}\u{430}",
    // Lithuanian, Estonian.
    "slapta\u{17e}odis",
    "parool",
    // Afrikaans, Icelandic, Albanian (and its definite form).
    "wagwoord",
    "lykilor\u{f0}",
    "fjal\u{eb}kalim",
    "fjal\u{eb}kalimi",
    // Greek's `συνθηματικό`.
    "\u{3c3}\u{3c5}\u{3bd}\u{3b8}\u{3b7}\u{3bc}\u{3b1}\u{3c4}\u{3b9}\u{3ba}\u{3cc}",
    // Georgian, Armenian, Swahili.
    "\u{10de}\u{10d0}\u{10e0}\u{10dd}\u{10da}\u{10d8}",
    "\u{563}\u{561}\u{572}\u{57f}\u{576}\u{561}\u{562}\u{561}\u{57c}",
    "nenosiri",
    // Hindi and Marathi, Bengali: the English word, written in their scripts.
    "\u{92a}\u{93e}\u{938}\u{935}\u{930}\u{94d}\u{921}",
    "\u{9aa}\u{9be}\u{9b8}\u{993}\u{9af}\u{9bc}\u{9be}\u{9b0}\u{9cd}\u{9a1}",
];

/// Abbreviations of `password`, whole last words, lower case.
const ABBREVIATIONS: [&str; 4] = ["pswd", "psw", "pword", "passwrd"];

/// A personal access token's abbreviation, a whole last word (`GH_PAT`, `ADO_PAT`, `PAT:`): its
/// trigger is the upper case alone, since `pat` and `Pat` start `path`, `pattern` and a name.
const PAT: &str = "pat";

/// The words for "credentials", whole last words, lower case: a user and a password together.
pub(super) const CREDENTIAL_WORDS: [&str; 8] = [
    "zugangsdaten",
    "anmeldedaten",
    "credenciales",
    "credenciais",
    "credenziali",
    "identifiants",
    "inloggegevens",
    "inloggningsuppgifter",
];

/// Whole last words that name a password and something else too, lower case: Italian and
/// Turkish `parola`, Latvian `parole`, Greek `κωδικός`.
const WEAK_WORDS: [&str; 3] = ["parola", "parole", "\u{3ba}\u{3c9}\u{3b4}\u{3b9}\u{3ba}\u{3cc}\u{3c2}"];

/// Names of two or three words, lower case, as written (a name's words are split at a space or
/// an apostrophe).
const PHRASES: [&str; 11] = [
    // Vietnamese.
    "m\u{1ead}t kh\u{1ea9}u",
    // Indonesian, Malay.
    "kata sandi",
    "kata laluan",
    // Arabic: "the word of passage" and "the secret word".
    "\u{643}\u{644}\u{645}\u{629} \u{627}\u{644}\u{645}\u{631}\u{648}\u{631}",
    "\u{643}\u{644}\u{645}\u{629} \u{627}\u{644}\u{633}\u{631}",
    // Persian.
    "\u{631}\u{645}\u{632} \u{639}\u{628}\u{648}\u{631}",
    // Italian: an access code, a watchword.
    "codice di accesso",
    "parola d'ordine",
    "parola d\u{2019}ordine",
    // Greek: "access code", the full form of `κωδικός`.
    "\u{3ba}\u{3c9}\u{3b4}\u{3b9}\u{3ba}\u{3cc}\u{3c2} \u{3c0}\u{3c1}\u{3cc}\u{3c3}\u{3b2}\u{3b1}\u{3c3}\u{3b7}\u{3c2}",
    // Kazakh.
    "\u{49b}\u{4b1}\u{43f}\u{438}\u{44f} \u{441}\u{4e9}\u{437}",
];

/// What a name whose words are `words` (lower case, in order) says, as far as these languages
/// go; `None` when they do not name a password.
pub(super) fn classify(words: &[&str]) -> Option<Naming> {
    let (&last, earlier) = words.split_last()?;
    let whole = |list: &[&str]| list.contains(&last);
    if WORDS.iter().any(|word| last.ends_with(word))
        || ends_with_phrase(words)
        || whole(&ABBREVIATIONS)
        || whole(&CREDENTIAL_WORDS)
        || last == PAT
    {
        return Some(Naming::Password);
    }
    // `parola chiave` is a keyword, `la parola` a word: only the name alone.
    (WEAK_WORDS.contains(&last) && earlier.is_empty()).then_some(Naming::MaybePassword)
}

/// Whether `words` end with the words of one of the [`PHRASES`].
fn ends_with_phrase(words: &[&str]) -> bool {
    PHRASES.iter().any(|phrase| {
        let phrase_words = phrase.split([' ', '\'']);
        let count = phrase_words.clone().count();
        words.len() >= count && words[words.len() - count..].iter().copied().eq(phrase_words)
    })
}

/// Whether `lowered`, a trigger in lower case, is one of these names.
pub(super) fn is_name(lowered: &str) -> bool {
    names().any(|name| name == lowered) || lowered == PAT
}

/// The alternation of the languages' names in the cases labels are written in, for the regex of
/// their own set (a `Kata Sandi` label capitalizes each word).
pub(super) fn triggers() -> String {
    alternation(PHRASES.iter().chain(&WORDS).chain(&WEAK_WORDS))
}

/// The same for the abbreviations and the words for "credentials", a set of their own: in the
/// languages' set, any one more name made its prefilter fourteen times slower.
pub(super) fn other_triggers() -> String {
    format!("{}|PAT", alternation(ABBREVIATIONS.iter().chain(&CREDENTIAL_WORDS)))
}

/// `names` in lower case, with a capital first letter, a capital on every word and in upper
/// case, longest first, as one regex alternation.
fn alternation<'a>(names: impl Iterator<Item = &'a &'static str>) -> String {
    let mut literals: Vec<String> = Vec::new();
    for name in names {
        let title: String = name.split(' ').map(capitalized).collect::<Vec<_>>().join(" ");
        for variant in [name.to_string(), capitalized(name), title, name.to_uppercase()] {
            if !literals.contains(&variant) {
                literals.push(variant);
            }
        }
    }
    // Longest first: at the same place the regex prefers the earlier alternative, and
    // `parola d'ordine` must not be read as `parola`, nor `fjalëkalimi` as `fjalëkalim`.
    literals.sort_by_key(|literal| std::cmp::Reverse(literal.len()));
    literals.iter().map(|literal| regex::escape(literal)).collect::<Vec<_>>().join("|")
}

/// Every name, in lower case.
fn names() -> impl Iterator<Item = &'static str> {
    PHRASES.iter().chain(&WORDS).chain(&WEAK_WORDS).chain(&ABBREVIATIONS).chain(&CREDENTIAL_WORDS).copied()
}

/// `word` with its first letter in upper case.
fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classified(name: &str) -> Option<Naming> {
        let lowered = name.to_lowercase();
        let words: Vec<&str> = lowered
            .split(|c: char| c.is_ascii() && !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        classify(&words)
    }

    #[test]
    fn words_phrases_and_weak_words() {
        let strong = Some(Naming::Password);
        for name in [
            "heslo",
            "DB_HESLO",
            "Lozinka",
            "parol\u{103}",
            "kata sandi",
            "Kata_Sandi",
            "M\u{1eac}T KH\u{1ea8}U",
        ] {
            assert_eq!(classified(name), strong, "{name}");
        }
        assert_eq!(classified("parola"), Some(Naming::MaybePassword));
        for name in ["sandi", "kata", "parola chiave", "la parola", "codice", "accesso", "hesla_count"] {
            assert_eq!(classified(name), None, "{name}");
        }
    }

    #[test]
    fn every_name_is_a_trigger_in_each_case() {
        let triggers = regex::Regex::new(&format!("{}|{}", triggers(), other_triggers())).expect("valid");
        for name in names() {
            for variant in [name.to_string(), capitalized(name), name.to_uppercase()] {
                let found = triggers.find(&variant).map(|found| found.as_str());
                assert_eq!(found, Some(variant.as_str()));
                assert!(is_name(&variant.to_lowercase()), "{variant}");
            }
        }
    }
}
