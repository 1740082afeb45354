//! Secrets passed in code as string literals, found by where a call or a pair puts them:
//! - an argument of a call whose parameter is a password: the first of one named for a secret
//!   (`ds.setPassword("…")`, `.with_token("…")`, MySQL's `PASSWORD('…')`), or the one at its
//!   place in a call known to take a user and a password (`smtp.login(user, "…")`,
//!   `new NetworkCredential("ada", "…")`, `req.SetBasicAuth("ada", "…")`, PHP's
//!   `new PDO($dsn, "ada", "…")`, Go's `smtp.PlainAuth("", "ada", "…", host)`);
//! - a pair of a secret's name and its value as a call's first two arguments or a tuple:
//!   WordPress's `define('DB_PASSWORD', '…')`, `os.Setenv("API_TOKEN", "…")`,
//!   `props.setProperty("mail.smtp.password", "…")`, `("password", "…")`;
//! - a user and password pair under an `auth` name: `requests.get(url, auth=("ada", "…"))`.
//!
//! Only a quoted literal is reported; a variable (`login(user, password)`) is code, not a secret.

use super::key::{self, Key};
use super::value::{self, Value};
use super::{Finding, run};

/// Triggers of calls whose name holds no key word (the others arrive through `assign`):
/// mail and FTP log-ins, JDBC, PHP's MySQL, PDO and LDAP, python-ldap's binds.
pub(super) const TRIGGERS: &str =
    r"login\(|Login\(|getConnection\(|mysqli|mysql_connect\(|PDO\(|bind_s\(|_bind\(";

/// Calls that take a user before the password: the callee's name (compared without case) and
/// the place of the password among its arguments, from 0.
const PASSWORD_AT: [(&str, usize); 24] = [
    ("login", 1),
    ("NetworkCredential", 1),
    ("UsernamePasswordCredentials", 1),
    ("UsernamePasswordCredential", 1),
    ("UsernamePasswordAuthenticationToken", 1),
    ("PasswordAuthentication", 1),
    ("PasswordCredential", 1),
    ("HTTPBasicAuth", 1),
    ("HTTPDigestAuth", 1),
    ("HttpNtlmAuth", 1),
    ("BasicAuth", 1),
    ("basic_auth", 1),
    ("SetBasicAuth", 1),
    ("auth", 1),
    ("simple_bind_s", 1),
    ("bind_s", 1),
    ("PlainAuth", 2),
    ("getConnection", 2),
    ("mysqli", 2),
    ("mysqli_connect", 2),
    ("mysql_connect", 2),
    ("PDO", 2),
    ("ldap_bind", 2),
    ("ftp_login", 2),
];

/// Longest argument skipped on the way to the password, in bytes.
const MAX_ARGUMENT: usize = 512;

/// Handles a trigger of `TRIGGERS` at `start..end` (ending at or before the call's `(`); returns
/// where scanning resumes.
pub(super) fn at_trigger(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    let name_end = run(bytes, start, 32, is_identifier);
    let name_start = super::run_back(bytes, start, 32, is_identifier);
    argument(text, name_start, name_end, out).unwrap_or(end)
}

/// A literal passed as a call's password: the call named `text[name_start..name_end]` opens
/// right after the name. Returns where scanning resumes when the name is such a call.
pub(super) fn argument(
    text: &str,
    name_start: usize,
    name_end: usize,
    out: &mut Vec<Finding>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let open = run(bytes, name_end, 2, |b| b == b' ');
    if bytes.get(open) != Some(&b'(') {
        return None;
    }
    let name = &text[name_start..name_end];
    let callee = name.rsplit(['.', ':']).next().unwrap_or(name);
    let place =
        PASSWORD_AT.iter().find(|(known, _)| callee.eq_ignore_ascii_case(known)).map(|&(_, place)| place);
    let place = match place {
        Some(place) => place,
        None if matches!(key::classify(name, false, None), Some(Key::Secret { .. })) => 0,
        None => return None,
    };
    let literal = nth_argument(text, open, place)?;
    super::password(text, literal, out);
    Some(literal.start)
}

/// A secret's name quoted as the first of a call's or tuple's items, its value the quoted second:
/// `define('DB_PASSWORD', '…')`. Returns where scanning resumes when the name is such a pair.
pub(super) fn pair(text: &str, name_start: usize, name_end: usize, out: &mut Vec<Finding>) -> Option<usize> {
    let bytes = text.as_bytes();
    let quote = *bytes.get(name_start.checked_sub(1)?)?;
    if !matches!(quote, b'"' | b'\'') || bytes.get(name_end) != Some(&quote) {
        return None;
    }
    let open = text[..name_start - 1].trim_end_matches([' ', '\t']);
    if !open.ends_with('(') {
        return None;
    }
    let comma = run(bytes, name_end + 1, 8, |b| b == b' ' || b == b'\t');
    if bytes.get(comma) != Some(&b',') {
        return None;
    }
    // Key material too: WordPress's `define('AUTH_SALT', '…')`.
    let key = key::classify(&text[name_start..name_end], false, None)?;
    let weak = match key {
        Key::Secret { weak } => weak,
        Key::Material => false,
        Key::Authorization | Key::Bearer => return None,
    };
    let literal = literal(text, skip_space(bytes, comma + 1))?;
    // A second name (`rename("password", "password_hash")`) is code, not a value.
    let names_a_key = key::classify(literal.text(text), false, None).is_some();
    if !names_a_key && value::accept(text, "password", literal, true, weak) && key.admits(literal.text(text))
    {
        super::secret(out, literal.start, literal.end);
    }
    Some(literal.start)
}

/// A user and password in brackets under an `auth` or `credentials` name:
/// `auth=("ada", "…")`, `auth: ['ada', '…']`. Returns where scanning resumes when it is one.
pub(super) fn tuple(text: &str, name_start: usize, name_end: usize, out: &mut Vec<Finding>) -> Option<usize> {
    let bytes = text.as_bytes();
    let name = text[name_start..name_end].rsplit('.').next().unwrap_or_default();
    let pair_name =
        ["auth", "basic_auth", "credentials", "creds"].iter().any(|word| name.eq_ignore_ascii_case(word));
    if !pair_name {
        return None;
    }
    let closed = run(bytes, name_end, 2, |b| b == b'"' || b == b'\'');
    let separator = run(bytes, closed, 8, |b| b == b' ' || b == b'\t');
    let after = run(bytes, separator, 2, |b| matches!(b, b'=' | b':' | b'>'));
    if after == separator {
        return None;
    }
    let open = run(bytes, after, 8, |b| b == b' ' || b == b'\t');
    if !matches!(bytes.get(open), Some(b'(' | b'[')) {
        return None;
    }
    let literal = nth_argument(text, open, 1)?;
    super::password(text, literal, out);
    Some(literal.start)
}

/// The quoted literal that is argument `place` (from 0) of the list opened by the bracket at
/// `open`; `None` when the list ends first or that argument is not a literal.
fn nth_argument(text: &str, open: usize, place: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut at = open + 1;
    for _ in 0..place {
        at = after_argument(bytes, skip_space(bytes, at))?;
    }
    literal(text, skip_space(bytes, at))
}

/// Past the argument starting at `at` and the comma after it; `None` when the list closes
/// first or the argument is longer than `MAX_ARGUMENT`. Brackets nest; quoted strings are
/// skipped whole.
fn after_argument(bytes: &[u8], at: usize) -> Option<usize> {
    let stop = bytes.len().min(at + MAX_ARGUMENT);
    let mut depth = 0usize;
    let mut index = at;
    while index < stop {
        match bytes[index] {
            b',' if depth == 0 => return Some(index + 1),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => return None,
            b')' | b']' | b'}' => depth -= 1,
            quote @ (b'"' | b'\'' | b'`') => {
                let close = run(bytes, index + 1, stop - index - 1, |b| b != quote && b != b'\n');
                if bytes.get(close) != Some(&quote) {
                    return None;
                }
                index = close;
            }
            _ => {}
        }
        index += 1;
    }
    None
}

/// The string literal at `at`: quoted, after an optional string prefix (Python's `r`, `b`, `u`,
/// C#'s `@`, C's `L`) or inside Rust's `Some(…)`.
fn literal(text: &str, at: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let at = if text[at..].starts_with("Some(") { at + 5 } else { at };
    let prefixed = matches!(bytes.get(at), Some(b'r' | b'b' | b'u' | b'@' | b'L'))
        && matches!(bytes.get(at + 1), Some(b'"' | b'\''));
    let quote = if prefixed { at + 1 } else { at };
    // In JSON text the quotes are escaped (`login(\"ada\", \"…\")`); `value::read` reads them.
    let escapes = run(bytes, quote, 8, |b| b == b'\\');
    if !matches!(bytes.get(escapes), Some(b'"' | b'\'')) {
        return None;
    }
    value::read(text, quote).filter(|literal| literal.quoted && literal.end > literal.start)
}

/// Past spaces, tabs and line breaks (at most a few lines' indentation).
fn skip_space(bytes: &[u8], at: usize) -> usize {
    run(bytes, at, 64, |b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// `[A-Za-z0-9_]`: a callee's name.
fn is_identifier(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}
