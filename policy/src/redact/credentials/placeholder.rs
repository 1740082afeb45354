//! Values that are not secrets themselves: empty or masked values (`***`, `xxxx`, `•••`),
//! template and variable references (`${DB_PASSWORD}`, `$DB_PASSWORD`, `{{ password }}`, `%s`,
//! `<password>`, `[credential 1]`), code (`config.password`, `os.getenv(`), file paths, and words
//! that name no value (`null`, `required`, `changeme`).

/// Words that stand for no value, or for a value kept elsewhere (case-insensitive, compared with
/// `_`, `-`, spaces and dots removed). `changeme`, `changeit` and `password` are publicly known
/// defaults or template text: they hide nothing, and redacting them would only hide the template.
const NOT_SECRETS: &str = concat!(
    "n/a null none nil undefined empty blank true false yes no on off na ok required optional string ",
    "str int bool boolean text hidden masked redacted removed omitted tbd todo unknown unset notset ",
    "changeme changeit password passwd secret token tokens bearer basic example sample placeholder ",
    "dummy flag option value variable header field parameter argument default expired reset changed ",
    "updated unchanged invalid incorrect wrong missing set provided valid protected encrypted ",
    "generated same new old disabled enabled sensitive configured",
);

/// Whether `value` is not a secret itself: empty, masked (`***`, `xxxx`, `•••`), a template or
/// variable reference (`${DB_PASSWORD}`, `$DB_PASSWORD`, `{{ password }}`, `%s`, `<password>`,
/// `[credential 1]`), a code reference (`config.password`, `db_password`), or a word in
/// [`NOT_SECRETS`].
pub(super) fn is_placeholder(value: &str) -> bool {
    let bytes = value.as_bytes();
    if !bytes.iter().any(u8::is_ascii_alphanumeric) || is_masked(value) {
        return true;
    }
    let first = bytes[0];
    let last = bytes[bytes.len() - 1];
    let wrapped = matches!((first, last), (b'<', b'>') | (b'[', b']') | (b'{', b'}') | (b'(', b')'));
    if wrapped
        || value.starts_with("${")
        || value.starts_with("$(")
        || value.starts_with("$_")
        || value.starts_with("{{")
        || value.starts_with("{%")
        || value.starts_with("#{")
        || value.starts_with("%(")
        || value.starts_with("$env:")
        || value.starts_with("%env(")
        || matches!(value, "%s" | "%d" | "%r" | "?")
        || (first == b'%' && last == b'%' && bytes.len() > 2)
        || is_upper_variable(value)
        || is_code_reference(value)
    {
        return true;
    }
    let folded: String =
        value.chars().filter(|c| !matches!(c, '_' | '-' | ' ' | '.')).flat_map(char::to_lowercase).collect();
    NOT_SECRETS.split(' ').any(|word| word == folded) || is_template_text(&folded)
}

/// `***`, `•••`, `…`, or every letter and digit the same (`xxxx`, `XXXXXXXX`, `0000`).
pub(super) fn is_masked(value: &str) -> bool {
    if value.contains("***") || value.contains("\u{2022}\u{2022}") || value.contains('\u{2026}') {
        return true;
    }
    let mut alphanumerics = value.bytes().filter(u8::is_ascii_alphanumeric).map(|b| b.to_ascii_lowercase());
    match alphanumerics.next() {
        Some(first) => alphanumerics.all(|b| b == first),
        None => true,
    }
}

/// `$DB_PASSWORD`: a shell or env-file variable (upper case, as such variables are written).
fn is_upper_variable(value: &str) -> bool {
    value.strip_prefix('$').is_some_and(|name| {
        !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            && name.as_bytes()[0].is_ascii_uppercase()
    })
}

/// A value that is code, not data: `settings.DB_PASSWORD`, `os.environ`, `db_password`,
/// `getpass()`.
fn is_code_reference(value: &str) -> bool {
    const OBJECTS: [&str; 16] = [
        "self",
        "this",
        "config",
        "settings",
        "cfg",
        "conf",
        "env",
        "os",
        "process",
        "args",
        "opts",
        "options",
        "params",
        "secrets",
        "credentials",
        "vars",
    ];
    let is_identifier = |part: &str| {
        !part.is_empty()
            && !part.as_bytes()[0].is_ascii_digit()
            && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    let call = value.strip_suffix("()").or_else(|| value.strip_suffix(['(', '['])).unwrap_or(value);
    let parts: Vec<&str> = call.split('.').collect();
    if !parts.iter().all(|part| is_identifier(part)) {
        return false;
    }
    if call.len() < value.len()
        || (parts.len() > 1 && OBJECTS.contains(&parts[0].to_ascii_lowercase().as_str()))
    {
        return true;
    }
    let lower = call.to_ascii_lowercase();
    lower.contains('_')
        && !lower.bytes().any(|b| b.is_ascii_digit())
        && ["password", "passwd", "token", "secret", "apikey", "api_key"]
            .iter()
            .any(|word| lower.contains(word))
}

/// A bare value that is a call or an index in code: `get_password(user)`, `tokens[i]`.
pub(super) fn is_call_or_index(value: &str) -> bool {
    value.find(['(', '[']).is_some_and(|index| {
        let head = &value[..index];
        !head.is_empty()
            && !head.as_bytes()[0].is_ascii_digit()
            && head.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    })
}

/// A quoted sentence rather than a secret: three or more words, no digits, and a function word
/// (`{"password": "This field is required."}`). Passphrases of random words have none.
pub(super) fn is_sentence(value: &str) -> bool {
    const FUNCTION_WORDS: [&str; 28] = [
        "the", "is", "be", "must", "should", "this", "that", "at", "of", "to", "not", "your", "a", "an",
        "and", "or", "for", "with", "has", "have", "are", "was", "will", "can", "cannot", "field", "too",
        "may",
    ];
    let words: Vec<&str> = value.split_whitespace().collect();
    words.len() >= 3
        && !value.bytes().any(|b| b.is_ascii_digit())
        && words.iter().any(|word| {
            let word = word.trim_matches(|c: char| !c.is_ascii_alphabetic()).to_ascii_lowercase();
            FUNCTION_WORDS.contains(&word.as_str())
        })
}

/// Template text such as `your_api_key_here`, `YOUR-TOKEN`, `<insert password>`, `replace_me`.
fn is_template_text(folded: &str) -> bool {
    if folded.contains("example") || folded.contains("placeholder") || folded.contains("replaceme") {
        return true;
    }
    if folded.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    let names_a_secret = ["pass", "pwd", "token", "key", "secret"].iter().any(|word| folded.contains(word));
    let starts = ["your", "my", "enter", "insert", "replace", "put", "add", "paste"];
    names_a_secret && (starts.iter().any(|start| folded.starts_with(start)) || folded.ends_with("here"))
}

/// True for a path such as `/run/secrets/db` or `~/.pgpass`: the value names a file holding the
/// secret, not the secret itself.
pub(super) fn is_path(value: &str) -> bool {
    let rest =
        value.strip_prefix('~').or_else(|| value.strip_prefix("..")).or_else(|| value.strip_prefix('.'));
    let rest = rest.unwrap_or(value);
    // A segment mixing upper case, lower case and digits is random text (an AWS secret key
    // may start with `/`), not a directory name.
    let random = |segment: &str| {
        segment.len() >= 8
            && segment.bytes().any(|b| b.is_ascii_uppercase())
            && segment.bytes().any(|b| b.is_ascii_lowercase())
            && segment.bytes().any(|b| b.is_ascii_digit())
    };
    rest.starts_with('/')
        && rest.matches('/').count() >= 2
        && rest.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-'))
        && !rest.split('/').any(random)
}
