//! Which key names hold secrets: `password`, `DB_PASSWORD`, `SMTP_PASS`, `client_secret`,
//! `apiKey`, `X-API-Key`, `aws_secret_access_key`, `SecretAccessKey`, `spring.datasource.password`.
//!
//! A name is split into words at `_`, `-`, `.` and camel-case humps, and judged by its last word:
//! - ends in `password`, `passwd`, `passphrase`, `passcode`, `pwd`, `secret`, `token`, `apikey`,
//!   `credential(s)`
//!   (so `PGPASSWORD`, `GITHUB_TOKEN`, `clientSecret`), or in the words for a password of other
//!   languages (`Passwort`, `Kennwort`, `wachtwoord`, `contraseña`, `passord`, `пароль`,
//!   `パスワード`, `密码`, `비밀번호`, `hasło`, `lösenord`…), or is `pass`, `senha` or `passe` (the
//!   last word of `mot de passe`), `pw`, `psk` or `creds`: a secret; so is a `pass` glued to
//!   what it opens (`PGPASS`, `DBPASS`, `smtppass`, `storepass`), not `bypass` or `compass`;
//! - is `salt`, `pepper`, or envelope encryption's `kek` or `dek` (`APP_SALT`, `password_salt`,
//!   `MASTER_KEK`): key material, a secret when its value looks like one on its own, since the
//!   words are also the kitchen's ("salt: 1 tsp");
//! - is `key` (or ends in `key` after a qualifier, as in `APIKEY`) with a qualifier among the
//!   earlier words (`api`, `secret`, `private`, `access`, `account`, `master`, `signing`, …): a
//!   secret; a bare `key` only as a query parameter (`?key=…`) or after a qualifier word in prose
//!   (`API key: …`);
//! - is `auth`: a secret that must look like one (long enough);
//! - is `authorization`: a header value (scheme and credentials);
//! - a trailing `base`, `value`, `b64`, `hex`, … is skipped (`secret_key_base`), and so is a
//!   number (`api_key_2`; `password2`, but not `key2`);
//! - names of counters and cursors are not secrets (`max_tokens`, `page_token`, `next_token`,
//!   `token_type`, `password_min_length`: their last word decides, or their qualifier excludes).

use super::languages::{self, Naming};

/// What a key name holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key {
    /// A secret; `weak` ones must also look like a secret (length, not a word).
    Secret { weak: bool },
    /// An `Authorization`-style header: `scheme credentials`.
    Authorization,
    /// The word `Bearer` followed by a token.
    Bearer,
    /// Key material named by its part in a scheme (`APP_SALT`, `KEK`): a secret only when the
    /// value looks like one on its own (see [`Key::admits`]).
    Material,
}

impl Key {
    /// Whether `value`, accepted for its separator, may be this key's secret: any value for a
    /// secret's name, only one that looks like a secret (`shape::looks_secret`) for key material.
    pub(super) fn admits(self, value: &str) -> bool {
        self != Key::Material || super::shape::looks_secret(value)
    }
}

/// Endings of a password's name in the languages the key-word triggers cover (`DB_PASSWORD`,
/// `Kennwort`, `contraseña`): besides being a secret's name, it says that people chose the value,
/// so a weak one still counts in a sentence (`prose`).
pub(super) const PASSWORD_ENDINGS: [&str; 11] = [
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "passwort",
    "kennwort",
    "wachtwoord",
    "contraseña",
    "contrasena",
    // Catalan.
    "contrasenya",
    "passord",
];

/// Endings of the names of the other secrets.
const SECRET_ENDINGS: [&str; 6] = ["credentials", "credential", "passcode", "secret", "token", "apikey"];

/// The word for a password in languages whose names the key-word triggers leave out, in lower
/// case: Russian and Ukrainian, Japanese, Chinese (both scripts), Korean, Polish, Swedish,
/// Danish, Finnish, Turkish, Hungarian, Hebrew, Thai. A name ending in one is a secret's, and the
/// credential scan looks for them in text with a regex of their own.
pub(super) const PASSWORD_WORDS: [&str; 13] = [
    "\u{43f}\u{430}\u{440}\u{43e}\u{43b}\u{44c}",
    "\u{30d1}\u{30b9}\u{30ef}\u{30fc}\u{30c9}",
    "\u{5bc6}\u{7801}",
    "\u{5bc6}\u{78bc}",
    "\u{be44}\u{bc00}\u{bc88}\u{d638}",
    "has\u{142}o",
    "l\u{f6}senord",
    "adgangskode",
    "salasana",
    "\u{15f}ifre",
    "jelsz\u{f3}",
    "\u{5e1}\u{5d9}\u{5e1}\u{5de}\u{5d4}",
    "\u{e23}\u{e2b}\u{e31}\u{e2a}\u{e1c}\u{e48}\u{e32}\u{e19}",
];

/// Whole last words that name a password (`senha` alone: `resenha` is a review; `clave` alone,
/// Latin American Spanish's everyday word for one: `enclave` is none; `pw` alone: `DB_PW`,
/// `smtpPw`).
pub(super) const PASSWORD_SHORT_WORDS: [&str; 5] = ["pass", "senha", "clave", "passe", "pw"];

/// Whole last words that name another secret (Wi-Fi's pre-shared key `psk`, `wpa_psk`).
const OTHER_SECRET_WORDS: [&str; 2] = ["psk", "creds"];

/// Whether `word` (lower case) is a whole word that names a secret.
fn is_secret_word(word: &str) -> bool {
    PASSWORD_SHORT_WORDS.contains(&word) || OTHER_SECRET_WORDS.contains(&word)
}

/// What a `pass` glued to it opens (`PGPASS`, `DBPASS`, `mysqlpass`, `SMTPPASS`, `rootpass`,
/// keytool's `storepass` and `keypass`): a service or an account. The English words that end in
/// `pass` (`bypass`, `compass`, `surpass`, `trespass`, `overpass`) end in none of them.
const PASS_OWNERS: [&str; 18] = [
    "pg", "db", "sql", "mongo", "redis", "smtp", "imap", "mail", "ftp", "ldap", "vnc", "rpc", "admin",
    "root", "user", "store", "key", "wifi",
];

/// Whole last words that name key material: a hash's salt or pepper, envelope encryption's
/// key-encryption and data-encryption keys.
const MATERIAL_WORDS: [&str; 4] = ["salt", "pepper", "kek", "dek"];

const KEY_QUALIFIERS: [&str; 42] = [
    "api",
    "secret",
    "private",
    "access",
    "account",
    "master",
    "signing",
    "sign",
    "encryption",
    "encrypt",
    "client",
    "app",
    "application",
    "auth",
    "license",
    "subscription",
    "shared",
    "session",
    "webhook",
    "hmac",
    "jwt",
    "consumer",
    "storage",
    "admin",
    "root",
    "sas",
    // Wi-Fi's password ("the Wi-Fi key", `wlan_key`, "network key" as Windows calls it).
    "wifi",
    "fi",
    "wlan",
    "wpa",
    "network",
    // What a key encrypts, signs or unlocks: `AES_KEY`, `CIPHER_KEY`, `CRYPT_KEY`, a cookie's or a
    // one-time password's key, `PASSKEY`, `PRESHARED_KEY`, `PSK_KEY`, a deploy or service (role) key.
    "aes",
    "cipher",
    "crypt",
    "crypto",
    "cookie",
    "otp",
    "pass",
    "preshared",
    "psk",
    "deploy",
    "service",
];

/// Words that, right before the last word, make it a counter, cursor or setting.
const NOT_SECRET_QUALIFIERS: [&str; 18] = [
    "page",
    "next",
    "prev",
    "previous",
    "continuation",
    "cursor",
    "sync",
    "resume",
    "max",
    "min",
    "num",
    "count",
    "total",
    "input",
    "output",
    "completion",
    "prompt",
    "public",
];

/// Last words that say how a secret is written, not what it is (`secret_key_base`, kubeconfig's
/// `client-key-data`, a private key in base64, and `GOOGLE_APPLICATION_CREDENTIALS_JSON`).
const IGNORED_LAST: [&str; 11] =
    ["base", "value", "b64", "base64", "hex", "plain", "plaintext", "raw", "str", "data", "json"];

/// Classifies the key name `name`; `query` when it is a query parameter (`?key=`), `prose_before`
/// the word before it when separated by one space (`API` in `API key: …`).
pub(super) fn classify(name: &str, query: bool, prose_before: Option<&str>) -> Option<Key> {
    let lowered: Vec<String> =
        split(name).into_iter().map(|(start, end)| name[start..end].to_lowercase()).collect();
    let mut words: Vec<&str> = lowered.iter().map(String::as_str).collect();
    let numbered = |word: &str| word.bytes().all(|b| b.is_ascii_digit());
    while words.len() > 1 && words.last().is_some_and(|word| IGNORED_LAST.contains(word) || numbered(word)) {
        words.pop();
    }
    let (&last, earlier) = words.split_last()?;
    let stem = last.trim_end_matches(|c: char| c.is_ascii_digit());
    let names_secret = |word: &str| is_secret_word(word) || ends_in_secret(word);
    let last = if stem.len() < last.len() && names_secret(stem) { stem } else { last };
    if last == "authorization" {
        return Some(Key::Authorization);
    }
    if last == "bearer" {
        return (words.len() == 1).then_some(Key::Bearer);
    }
    if earlier.last().is_some_and(|word| NOT_SECRET_QUALIFIERS.contains(word)) {
        return None;
    }
    if let Some(naming) = languages::classify(&words) {
        return Some(Key::Secret { weak: naming == Naming::MaybePassword });
    }
    // `palabra clave` is a keyword, not a password.
    let keyword = |word: &str| word.eq_ignore_ascii_case("palabra") || word.eq_ignore_ascii_case("palabras");
    if last == "clave" && earlier.is_empty() && prose_before.is_some_and(keyword) {
        return None;
    }
    if is_secret_word(last)
        || ends_in_secret(last)
        || (last == "phrase" && earlier.last() == Some(&"pass"))
        || glued(last, "pass", &PASS_OWNERS)
    {
        return Some(Key::Secret { weak: false });
    }
    if MATERIAL_WORDS.contains(&last) {
        return Some(Key::Material);
    }
    if last == "auth" {
        return Some(Key::Secret { weak: true });
    }
    let qualified = |word: &str| KEY_QUALIFIERS.contains(&word);
    if last == "key" {
        let prose = prose_before.map(str::to_ascii_lowercase);
        let found = earlier.iter().any(|word| qualified(word))
            || (earlier.is_empty() && (query || prose.as_deref().is_some_and(qualified)));
        return found.then_some(Key::Secret { weak: false });
    }
    glued(last, "key", &KEY_QUALIFIERS).then_some(Key::Secret { weak: false })
}

/// Whether `word` is `suffix` glued to one of `owners` (`APIKEY`, `PGPASS`).
fn glued(word: &str, suffix: &str, owners: &[&str]) -> bool {
    word.strip_suffix(suffix).is_some_and(|stem| owners.iter().any(|owner| stem.ends_with(owner)))
}

/// Whether `word` (lower case) ends in a word that names a secret.
fn ends_in_secret(word: &str) -> bool {
    SECRET_ENDINGS.iter().chain(&PASSWORD_ENDINGS).chain(&PASSWORD_WORDS).any(|ending| word.ends_with(ending))
}

/// The byte ranges of the words of `name`: split at `_`, `-`, `.`, `:` and camel-case humps
/// (`SecretAccessKey` → Secret, Access, Key; `APIKey` → API, Key). Letters beyond ASCII stay
/// inside their word (`contraseña`).
fn split(name: &str) -> Vec<(usize, usize)> {
    let bytes = name.as_bytes();
    let mut words = Vec::with_capacity(4);
    let mut start = None;
    for (index, &byte) in bytes.iter().enumerate() {
        if !byte.is_ascii_alphanumeric() && byte.is_ascii() {
            if let Some(from) = start.take() {
                words.push((from, index));
            }
            continue;
        }
        let Some(from) = start else {
            start = Some(index);
            continue;
        };
        let previous = bytes[index - 1];
        let hump = byte.is_ascii_uppercase()
            && (previous.is_ascii_lowercase()
                || previous.is_ascii_digit()
                || (previous.is_ascii_uppercase()
                    && bytes.get(index + 1).is_some_and(u8::is_ascii_lowercase)));
        if hump && index > from {
            words.push((from, index));
            start = Some(index);
        }
    }
    if let Some(from) = start {
        words.push((from, bytes.len()));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_names_into_words() {
        let words =
            |name: &str| split(name).into_iter().map(|(s, e)| name[s..e].to_owned()).collect::<Vec<_>>();
        assert_eq!(words("SecretAccessKey"), ["Secret", "Access", "Key"]);
        assert_eq!(words("APIKey"), ["API", "Key"]);
        assert_eq!(words("aws_secret_access_key"), ["aws", "secret", "access", "key"]);
        assert_eq!(words("spring.datasource.password"), ["spring", "datasource", "password"]);
        assert_eq!(words("X-Api-Key"), ["X", "Api", "Key"]);
        assert_eq!(words("DB_PASSWORD"), ["DB", "PASSWORD"]);
    }

    #[test]
    fn secret_names() {
        let strong = Some(Key::Secret { weak: false });
        for name in [
            "password",
            "Password",
            "PASSWORD",
            "passwd",
            "pwd",
            "pass",
            "secret",
            "client_secret",
            "api_key",
            "apikey",
            "APIKEY",
            "api-key",
            "X-API-Key",
            "apiKey",
            "access_token",
            "auth_token",
            "token",
            "private_key",
            "DB_PASSWORD",
            "SMTP_PASS",
            "GITHUB_TOKEN",
            "PGPASSWORD",
            "aws_secret_access_key",
            "AWS_SECRET_ACCESS_KEY",
            "SecretAccessKey",
            "secret_key",
            "secret_key_base",
            "spring.datasource.password",
            "AccountKey",
            "SharedAccessKey",
            "clientSecret",
            "refresh_token",
            "MYSQL_ROOT_PASSWORD",
            "Private-Token",
            "passphrase",
            "Passwort",
            "DB-Passwort",
            "wachtwoord",
            "contraseña",
            "CONTRASEÑA",
            "senha",
            "passe",
            "aws_secret_access_key_2",
            "password2",
            "client-key-data",
            "secret_data",
            "GOOGLE_APPLICATION_CREDENTIALS_JSON",
            "AES_KEY",
            "cipherKey",
            "CRYPT_KEY",
            "COOKIE_KEY",
            "OTP_KEY",
            "PASSKEY",
            "PRESHARED_KEY",
            "PSK_KEY",
            "DEPLOY_KEY",
            "SUPABASE_SERVICE_ROLE_KEY",
            "PGPASS",
            "pgpass",
            "DBPASS",
            "MYSQLPASS",
            "smtppass",
            "storepass",
            "keypass",
        ] {
            assert_eq!(classify(name, false, None), strong, "{name}");
        }
        for name in ["KEK", "kek", "MASTER_KEK", "masterKek", "KEK_BASE64", "DEK", "APP_SALT", "SALT", "salt"]
        {
            assert_eq!(classify(name, false, None), Some(Key::Material), "{name}");
        }
        for name in ["password_salt", "passwordSalt", "AUTH_SALT", "PASSWORD_PEPPER", "pepper"] {
            assert_eq!(classify(name, false, None), Some(Key::Material), "{name}");
        }
        assert_eq!(classify("key", true, None), strong);
        assert_eq!(classify("key", false, Some("API")), strong);
        assert_eq!(classify("auth", false, None), Some(Key::Secret { weak: true }));
        assert_eq!(classify("Proxy-Authorization", false, None), Some(Key::Authorization));
        assert_eq!(classify("Bearer", false, None), Some(Key::Bearer));
    }

    #[test]
    fn other_names() {
        for name in [
            "key",
            "keys",
            "max_tokens",
            "token_type",
            "tokens",
            "page_token",
            "nextToken",
            "password_min_length",
            "passport",
            "bypass",
            "compass",
            "author",
            "authority",
            "keyboard",
            "monkey",
            "primary_key",
            "public_key",
            "aws_access_key_id",
            "private_key_id",
            "token_url",
            "secret_name",
            "passwordless",
            "sort_key",
            "input_tokens",
            "authentication",
            "resenha",
            "impasse",
            "key2",
            "SigningKey256",
            "user_data",
            "key_data",
            "certificate-authority-data",
            "hash_key",
            "routing_key",
            "sort_key",
            "BYPASS",
            "compass",
            "overpass",
            "trespass",
            "PGPASSFILE",
            "salt_rounds",
            "saltLength",
            "kekse",
            "salty",
            "basalt",
            "DEK-Info",
        ] {
            assert_eq!(classify(name, false, None), None, "{name}");
        }
        assert_eq!(classify("key", false, Some("the")), None);
    }
}
