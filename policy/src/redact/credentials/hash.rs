//! Password hashes: whoever holds one can guess the password offline, at the speed of their own
//! hardware. The modular crypt formats of `/etc/shadow`, `htpasswd` and most libraries (`$1$`,
//! `$apr1$`, `$5$`, `$6$`, bcrypt's `$2a$`/`$2b$`/`$2y$`, yescrypt's `$y$`, `$gy$`), the PHC
//! strings of Argon2, scrypt and PBKDF2 (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`, `$scrypt$…`,
//! `$pbkdf2-sha256$…`), Django's (`pbkdf2_sha256$…`, `bcrypt_sha256$…`, `argon2$argon2id$…`) and
//! Werkzeug's (`pbkdf2:sha256:600000$salt$hash`, `scrypt:32768:8:1$…`). The whole string is
//! reported when its last `$`-separated field, the hash, has 16 or more characters of the
//! formats' alphabets; `$1$` in a regex or a shell line has no such field.
//!
//! Windows' NT hashes as `pwdump` and `secretsdump` list them (`user:RID:LM hash:NT hash:::`)
//! are passwords in effect: NTLM authenticates with the hash itself ("pass the hash"). Both
//! 32-hex fields are reported as one, found from the `:::` that ends the line's fields.

/// Triggers, one per family (the trigger set of vendor tokens carries them).
pub(super) const TRIGGERS: &str = concat!(
    r"\$(?:1|2[abxy]|5|6|y|gy|apr1|argon2(?:id|i|d)|scrypt|pbkdf2(?:-sha\d+)?|7)\$",
    r"|pbkdf2_sha\d+\$|bcrypt_sha256\$|argon2\$argon2|pbkdf2:sha\d+:|scrypt:\d+:",
);

/// The end of a `pwdump` line's fields (read with the platform set: in this one it made the
/// whole set's prefilter slower).
pub(super) const PWDUMP_TRIGGER: &str = ":::";

/// The hex digits of an LM or NT hash.
const NT_HEX: usize = 32;

/// The shortest hash field taken.
const MIN_HASH: usize = 16;

/// Whether the trigger `trigger` starts a password hash.
pub(super) fn is_trigger(trigger: &str) -> bool {
    trigger.starts_with('$')
        || trigger.starts_with("pbkdf2")
        || trigger.starts_with("bcrypt_")
        || trigger.starts_with("argon2$")
        || trigger.starts_with("scrypt:")
}

/// Handles a hash trigger at `start..end`; returns where scanning resumes.
pub(super) fn at_prefix(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    // Werkzeug's prefixes hold `:`; elsewhere `:` ends the hash (a shadow line's next field).
    let werkzeug = !text[start..end].starts_with('$') && text[start..end].contains(':');
    if !text[start..end].starts_with('$') && !super::starts_word(bytes, start) {
        return start + 1;
    }
    let hash_end = super::run(bytes, start, 1024, |b| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'$' | b'.' | b'/' | b'+' | b'=' | b',' | b'-' | b'_')
            || (werkzeug && b == b':')
    });
    let written = &text[start..hash_end];
    let Some(hash) = written.trim_end_matches(['.', ',', '=']).rsplit('$').next() else {
        return end;
    };
    let fields = written.matches('$').count();
    if hash.len() < MIN_HASH || fields < 2 || super::placeholder::is_masked(hash) {
        return end;
    }
    super::secret(out, start, hash_end);
    hash_end
}

/// `user:RID:LM:NT` before the `:::` at `colons`: both hashes reported as one. Returns where
/// scanning resumes.
pub(super) fn pwdump(text: &str, colons: usize, out: &mut Vec<super::Finding>) -> usize {
    let bytes = text.as_bytes();
    let hex_before = |to: usize| {
        let from = super::run_back(bytes, to, NT_HEX + 1, |b| b.is_ascii_hexdigit());
        (to - from == NT_HEX).then_some(from)
    };
    let found = hex_before(colons).filter(|&nt| bytes[..nt].ends_with(b":")).and_then(|nt| {
        let lm = hex_before(nt - 1)?;
        let rid = super::run_back(bytes, lm.checked_sub(1)?, 10, |b| b.is_ascii_digit());
        let named = lm >= 1 && bytes[lm - 1] == b':' && rid < lm - 1 && rid >= 2 && bytes[rid - 1] == b':';
        named.then_some(lm)
    });
    match found {
        Some(lm) => {
            super::secret(out, lm, colons);
            colons + 3
        }
        None => colons + 1,
    }
}
