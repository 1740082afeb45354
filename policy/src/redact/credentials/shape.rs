//! Whether a bare word of prose *looks like* a secret, with no syntax around it to say so.
//!
//! A secret named in a sentence ("the DB password is …") has only its shape to tell it from the
//! words around it. A value looks like a secret when it is one run of at least 8 printable ASCII
//! characters, holds at least three letters (so dates, times, prices, versions and addresses are
//! out), and:
//! - is hex of 16 or more characters with letters and digits (`3bbb6c9e…`);
//! - has a part that mixes letters and digits in a secret's way: switching between them twice or
//!   more (`Cs7snim2`), or with both cases and two digits (`Sommer2024`), or 12 characters long;
//!   and then either a symbol (`Winter2024!`, `rO6eot0/eolE…` when 16 long, as `/` also joins
//!   words), or both cases and two digits in that part, or 16 characters (`XOxOyndiXk99ygDI…`);
//! - has both cases, a part with letters and digits, and a symbol other than `/` (`Welcome1!`);
//! - has upper and lower case, or digits, and after its first character a symbol words never
//!   hold (`aRm@CBgdaX%byDA?e`, `Xvqyjxwjvu%`; not `/` or `'`), or, in 10 or more characters of
//!   both cases, a `?` or `!` inside (`PQARb_GVr?ejKV`; not at the end, where sentences put them);
//! - is letters of random case, 16 or more (case switching between two in five letters or more,
//!   and upper-case pairs);
//! - is a passphrase: three or more words of three to twelve letters joined by one of `-`, `_`,
//!   `.` (`correct-horse-battery`), and not a file or host name (`app.settings.json`).
//!
//! Email addresses, URLs, code paths (`ring::signature`), colon-separated hex (IPv6, MAC addresses, fingerprints) and pairs of
//! a word and its value (`status=400`) never look like secrets: their own recognizers or none
//! read them.

/// Shortest value that can look like a secret on its own.
const MIN_LEN: usize = 8;
/// Longest bare value taken as one secret.
const MAX_LEN: usize = 512;

/// Last parts that make a dotted value a file or host name.
const NAME_ENDINGS: [&str; 24] = [
    "com", "org", "net", "io", "dev", "app", "edu", "gov", "info", "local", "internal", "cloud", "json",
    "yaml", "yml", "toml", "ini", "env", "txt", "cfg", "conf", "xml", "html", "log",
];

/// Whether `value` (a bare word, no spaces) looks like a secret.
pub(super) fn looks_secret(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < MIN_LEN
        || bytes.len() > MAX_LEN
        || !bytes.iter().all(|b| b.is_ascii_graphic())
        || value.contains("://")
        || value.contains("::")
        || is_email(value)
        || is_colon_hex(value)
        || is_pair(value)
    {
        return false;
    }
    let count = |keep: fn(&u8) -> bool| bytes.iter().filter(|b| keep(b)).count();
    let (upper, lower, digits) =
        (count(u8::is_ascii_uppercase), count(u8::is_ascii_lowercase), count(u8::is_ascii_digit));
    let symbols = bytes.len() - upper - lower - digits - count(|b| matches!(b, b'-' | b'_' | b'.' | b'\''));
    if upper + lower < 3 {
        return false;
    }
    if bytes.len() >= 16 && digits > 0 && bytes.iter().all(u8::is_ascii_hexdigit) {
        return true;
    }
    let cased = upper > 0 && lower > 0;
    let slash_only = symbols > 0 && bytes.iter().all(|b| b.is_ascii_alphanumeric() || b"-_.'/".contains(b));
    let parts = value.split(|c: char| !c.is_ascii_alphanumeric()).filter(|part| !part.is_empty());
    let (mut mixed, mut loose, mut strong) = (false, false, false);
    for part in parts {
        let p = part.as_bytes();
        let numbers = p.iter().filter(|b| b.is_ascii_digit()).count();
        let both = p.iter().any(u8::is_ascii_uppercase) && p.iter().any(u8::is_ascii_lowercase);
        let letters_and_digits = numbers > 0 && numbers < p.len();
        loose |= letters_and_digits;
        strong |= letters_and_digits && both && numbers >= 2;
        mixed |= (letters_and_digits && (switches(p) >= 2 || strong || p.len() >= 12)) || random_case(part);
    }
    if mixed && ((symbols > 0 && !slash_only) || strong || bytes.len() >= 16) {
        return true;
    }
    if cased && loose && symbols > 0 && !slash_only {
        return true;
    }
    let inner = &bytes[1..bytes.len() - 1];
    if cased && bytes.len() >= 10 && inner.iter().any(|b| b"!?".contains(b)) {
        return true;
    }
    if (cased || digits > 0) && bytes[1..].iter().any(|b| b"@#$%^&*+=~|".contains(b)) {
        return true;
    }
    if digits == 0 && symbols == 0 && bytes.len() >= 16 && random_case(value) && upper_pairs(value) >= 2 {
        return true;
    }
    is_passphrase(value)
}

/// Whether `value` could be a password a person chose, where something else says it is one (a
/// password's name before it, a `login:` pair): six or more printable characters with a letter
/// and a digit (`hunter2`, `s3cret`). Weaker than [`looks_secret`], which needs no such word.
pub(super) fn is_chosen_password(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.len() >= 6
        && bytes.iter().all(u8::is_ascii_graphic)
        && bytes.iter().any(u8::is_ascii_alphabetic)
        && bytes.iter().any(u8::is_ascii_digit)
}

/// Three or more words of letters joined by one separator (`-`, `_` or `.`).
pub(super) fn is_passphrase(value: &str) -> bool {
    let Some(separator) = value.chars().find(|c| matches!(c, '-' | '_' | '.')) else {
        return false;
    };
    let parts: Vec<&str> = value.split(separator).collect();
    let word = |part: &&str| {
        (3..=12).contains(&part.len())
            && part.bytes().all(|b| b.is_ascii_alphabetic())
            && part.bytes().skip(1).all(|b| b.is_ascii_lowercase())
    };
    let ending = parts.last().map(|last| last.to_ascii_lowercase()).unwrap_or_default();
    parts.len() >= 3
        && parts.iter().all(word)
        && !(separator == '.' && NAME_ENDINGS.contains(&ending.as_str()))
        && !parts.iter().any(|part| {
            let lower = part.to_ascii_lowercase();
            ["pass", "secret", "token", "key"].iter().any(|name| lower.contains(name))
        })
}

/// Letters whose case switches at random: four or more switches between neighbouring letters,
/// in two or more of every five pairs (`horDyAdDceBuf`; not `JavaScript`, `GetAccessToken`).
fn random_case(part: &str) -> bool {
    let letters = part.as_bytes().windows(2).filter(|pair| pair.iter().all(u8::is_ascii_alphabetic));
    let (pairs, switches) = letters.fold((0, 0), |(pairs, switches), pair| {
        (pairs + 1, switches + usize::from(pair[0].is_ascii_uppercase() != pair[1].is_ascii_uppercase()))
    });
    switches >= 4 && switches * 5 >= pairs * 2
}

/// Switches between letters and digits (`Cs7snim2`: 3).
fn switches(part: &[u8]) -> usize {
    part.windows(2).filter(|pair| pair[0].is_ascii_digit() != pair[1].is_ascii_digit()).count()
}

/// Upper-case letters following one another.
fn upper_pairs(part: &str) -> usize {
    part.as_bytes()
        .windows(2)
        .filter(|pair| pair[0].is_ascii_uppercase() && pair[1].is_ascii_uppercase())
        .count()
}

/// `status=400`, `userId:42`: a field name (lower case, or camel case) and its value, as logs
/// write them.
fn is_pair(value: &str) -> bool {
    value.find(['=', ':']).is_some_and(|index| {
        let name = &value.as_bytes()[..index];
        name.first().is_some_and(u8::is_ascii_lowercase)
            && name.iter().all(|b| b.is_ascii_alphabetic() || *b == b'_')
            && !name.windows(2).any(|pair| pair.iter().all(u8::is_ascii_uppercase))
    })
}

/// `name@host.tld`.
fn is_email(value: &str) -> bool {
    value.rsplit_once('@').is_some_and(|(local, domain)| {
        !local.is_empty()
            && domain.rsplit_once('.').is_some_and(|(host, tld)| {
                !host.is_empty() && tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic())
            })
    })
}

/// Hex groups separated by colons: IPv6 addresses, MAC addresses, key fingerprints.
fn is_colon_hex(value: &str) -> bool {
    value.matches(':').count() >= 2 && value.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_shapes() {
        for value in [
            "Winter2024!",
            "Sommer2024",
            "Ma?5gG!bt-2gBv4gvJKGdWWQZ",
            "%horDyAdDceBuf",
            "O6vnkw3b@",
            "Cs7snim2&",
            "2T9kra6hrD3dNh",
            "3bbb6c9ec8f616faf373fd4d91ffa0def40cf273",
            "rO6eot0/eolEBf45fm9I+akYk8Q6Th3jve/BzV93",
            "XOxOyndiXk99ygDIZeSqnmaQXmvo5yWwhCFYambn",
            "ckHmy@-hHtNXHqagGC",
            "maple-orange-battery",
            "staple.maple.piano.river",
            "tiger_battery_piano_horse",
            "Correct-Horse-Battery",
            "aRm@CBgdaX%byDA?e",
            "PQARb_GVr?ejKV",
            "Hg?P@b&equals;kv?yJKCuJa4ev6N62",
            "Xvqyjxwjvu%",
            "O4uujbugza&",
            "Welcome1!",
            "Keaellqra73!",
            "WouSXds=DaYMKGrkkC@s8GNd",
        ] {
            assert!(looks_secret(value), "{value}");
        }
    }

    #[test]
    fn ordinary_words_and_numbers() {
        for value in [
            "required",
            "expired",
            "12345678",
            "2024-05-01",
            "2024-05-01T10:00Z",
            "14:05:36",
            "$1,234.56",
            "v2.3.1",
            "Argon2id",
            "secp256k1",
            "base64url",
            "SHA256",
            "HTTP/1.1",
            "PKCS#12",
            "AES-256-GCM",
            "x86_64",
            "fd12:3456:e62f::fcfa",
            "jane@example.com",
            "https://example.com/a",
            "JavaScript",
            "GetAccessTokenResponse",
            "internationalization",
            "state-of-the-art",
            "read-only",
            "app.settings.json",
            "api.example.com",
            "secret_key_base",
            "ed25519",
            "OpenAI/ChatGPT",
            "JavaScript/TypeScript",
            "McDonald's",
            "Wonderful!",
            "Question?",
            "#hashtag",
            "RS256-based",
            "OAuth2/OIDC",
            "v2.3.1-beta2",
            "status=400",
            "duration_ms=2764",
            "ed25519_dalek::SigningKey",
        ] {
            assert!(!looks_secret(value), "{value}");
        }
    }
}
