//! Passwords handed to a command on its command line: `mysql -pS3cret`, `sshpass -p …`, `curl -u
//! user:pass`, `smbclient -U user%pass`, `openssl … -passin pass:…`, `keytool -storepass …`,
//! `docker login -p …`, `htpasswd -b file user pass`, `net use … pass`, `echo pass | sudo -S`,
//! `http -a user:pass`, `psexec … -p pass`, `rabbitmqctl add_user name pass`, `az keyvault secret
//! set … --value …`, `oc login -p …`, `gh secret set … --body …`, `vault login <token>`, `openssl
//! passwd -6 <password>`, and the cookies of `curl -b 'session=…'`.
//!
//! Each command has an entry in `commands`: the options that carry a password and how each is
//! written, and for a few the positional argument that is one. A command line is read as shell
//! words (a quoted word is one word) up to its end: a line break, `;`, `|`, `&`, `)`, a
//! redirection or a JSON `\n` escape, so an option of one command never reads a word of the next.
//! A value the command prompts for (`mysql -p` alone, `*` for `net use`), a variable (`$PASS`,
//! `"${pw}"`; in single quotes `$` is literal, so `'$ecret'` is a password) and a placeholder are
//! left alone.

mod commands;
mod positional;

pub(super) use positional::at_prompt as redis_prompt;

use commands::{Command, Flag, Holds, PASSWORD_OPTIONS, Reads, lookup, variants};

use super::{cookie, header, placeholder, run};

/// Triggers: an option (` -x`, ` --x`, FreeRDP's ` /p:`), whose command is looked for among the
/// words before it, and the commands whose password is an argument without an option.
pub(super) const TRIGGERS: &str =
    r" -[A-Za-z-]| /p:|net use|wpa_passphrase|nmcli|rabbitmqctl|echo |printf |IDENTIFIED BY |identified by ";

/// Triggers of Oracle's tools, whose logon is a positional word, and of Vault's and OpenSSL's
/// subcommands whose argument is a token or a password: read with the source-code set, a
/// literal set, where in this one (with its ` -x` class) they cost a typical page 3 %.
pub(super) const LOGON_TRIGGERS: &str =
    "sqlplus |expdp |impdp |sqlldr |rman |dgmgrl |vault login |openssl passwd ";

/// Most words read on one command line.
const MAX_WORDS: usize = 64;

/// Most words looked back from an option for its command (`mysql -h db -u app -pS3cret`, and a
/// command named in prose: "run mysql -u root -pS3cret").
const MAX_WORDS_BACK: usize = 24;

/// A shell word's byte range in the scan text.
#[derive(Clone, Copy)]
struct Word {
    start: usize,
    end: usize,
}

/// Handles a trigger at `start..end`; returns where the command line it belongs to ends, so no
/// later option of that line hands it over again (or `end` when it belongs to no known command).
pub(super) fn at_trigger(text: &str, start: usize, end: usize, out: &mut Vec<super::Finding>) -> usize {
    if text[start..end].eq_ignore_ascii_case("identified by ") {
        return identified_by(text, end, out);
    }
    let found =
        if text.as_bytes()[start] == b' ' { command_before(text, start) } else { command_at(text, start) };
    let Some((command, name_end)) = found else {
        return password_option(text, start, out).unwrap_or(end);
    };
    let (words, line_end) = command_words(text, name_end);
    for command in variants(command).filter(|command| has_verb(text, &words, command.verb)) {
        read_command(text, command, &words, line_end, out);
    }
    line_end
}

/// Whether the words of `verb` (none, or words split by spaces) follow one another in `words`,
/// starting among the first four (`az --debug keyvault secret set`).
fn has_verb(text: &str, words: &[Word], verb: Option<&str>) -> bool {
    let Some(verb) = verb else { return true };
    let wanted: Vec<&str> = verb.split(' ').collect();
    words
        .windows(wanted.len())
        .take(4)
        .any(|window| window.iter().zip(&wanted).all(|(word, wanted)| &text[word.start..word.end] == *wanted))
}

/// Reports the passwords `command` takes among the `words` of its command line.
fn read_command(
    text: &str,
    command: &Command,
    words: &[Word],
    line_end: usize,
    out: &mut Vec<super::Finding>,
) {
    for (index, word) in words.iter().enumerate() {
        for flag in command.flags {
            if let Some(value) = flag_value(text, flag, *word, words.get(index + 1).copied()) {
                let holds = match flag.holds {
                    Holds::UserOrToken(_) if asks_bearer(text, words) => Holds::Password,
                    holds => holds,
                };
                report(text, value, holds, out);
            }
        }
    }
    positional::read(text, command.positional, words, line_end, out);
}

/// Whether the command line picks bearer authentication: `-A bearer`, `-Abearer`,
/// `--auth-type bearer` or `--auth-type=bearer` (HTTPie's spellings, in any case).
fn asks_bearer(text: &str, words: &[Word]) -> bool {
    let written = |word: &Word| text[word.start..word.end].trim_matches(['\'', '"']);
    words.iter().enumerate().any(|(index, word)| {
        let word = written(word);
        let value = match word {
            "-A" | "--auth-type" => words.get(index + 1).map(written).unwrap_or_default(),
            _ => word.strip_prefix("--auth-type=").or_else(|| word.strip_prefix("-A")).unwrap_or_default(),
        };
        value.eq_ignore_ascii_case("bearer")
    })
}

/// SQL's `CREATE USER … IDENTIFIED BY 'password'` (MySQL, Oracle, Snowflake…): the word after
/// the phrase. Returns where it ends.
fn identified_by(text: &str, from: usize, out: &mut Vec<super::Finding>) -> usize {
    let (words, _) = command_words(text, from - 1);
    match words.first() {
        Some(&value) if !text[value.start..].to_ascii_lowercase().starts_with("password") => {
            report(text, trim_sql(text, value), Holds::Password, out);
            value.end
        }
        _ => from,
    }
}

/// A word without the `;` or `,` SQL ends it with (`'pw';`).
fn trim_sql(text: &str, word: Word) -> Word {
    let written = &text[word.start..word.end];
    Word { start: word.start, end: word.start + written.trim_end_matches([';', ',']).len() }
}

/// A password option of a command not in the table (`Invoke-Sqlcmd … -Password 'x'`): the option
/// at `at` (its leading space) and the word after it. Returns where the value ends.
fn password_option(text: &str, at: usize, out: &mut Vec<super::Finding>) -> Option<usize> {
    let (words, _) = command_words(text, at);
    let (option, value) = (words.first()?, words.get(1)?);
    let name = &text[option.start..option.end];
    if !PASSWORD_OPTIONS.iter().any(|wanted| name.eq_ignore_ascii_case(wanted))
        || text[value.start..].starts_with('(')
    {
        // `-Password (ConvertTo-SecureString …)`: a subexpression, read as its own command.
        return None;
    }
    report(text, *value, Holds::Password, out);
    Some(value.end)
}

/// The command named by the word at `start` (a trigger naming one), and the word's end.
fn command_at(text: &str, start: usize) -> Option<(&'static Command, usize)> {
    let bytes = text.as_bytes();
    let continues_word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-');
    let opens = start == 0 || !continues_word(bytes[start - 1]);
    let name_end = run(bytes, start, 32, |b| b.is_ascii_alphanumeric() || b == b'_');
    if !opens || !matches!(bytes.get(name_end), Some(b' ' | b'\t')) {
        return None;
    }
    lookup(&text[start..name_end]).map(|command| (command, name_end))
}

/// The nearest known command among the words before the option at `at`, on its command line
/// and in its segment (after the last `;`, `|`, `&`, `(` or backtick), and the command word's end.
fn command_before(text: &str, at: usize) -> Option<(&'static Command, usize)> {
    word_before(text, at, lookup)
}

/// Whether a command whose target may be a remote's `user:password@host` (`git`, `ssh`, `psql`,
/// `mysql`: `commands::is_remote`) stands among the words before `at`, as [`command_before`]
/// looks for one.
pub(super) fn connects_before(text: &str, at: usize) -> bool {
    word_before(text, at, |word| commands::is_remote(word).then_some(())).is_some()
}

/// The nearest of the words before `at` (on its command line and in its segment) that `pick`
/// names something for: what it names, and the word's end.
fn word_before<T>(text: &str, at: usize, pick: impl Fn(&str) -> Option<T>) -> Option<(T, usize)> {
    let bytes = text.as_bytes();
    let floor = super::char_boundary(text, at.saturating_sub(1024));
    let blank = |b: u8| b == b' ' || b == b'\t';
    let mut end = at;
    for _ in 0..MAX_WORDS_BACK {
        while end > floor && blank(bytes[end - 1]) {
            end -= 1;
        }
        let mut start = end;
        while start > floor && !blank(bytes[start - 1]) && !segment_starts(bytes, start) {
            start -= 1;
        }
        if start < end
            && let Some(named) = pick(&text[start..end])
        {
            return Some((named, end));
        }
        if start == floor || segment_starts(bytes, start) {
            return None;
        }
        end = start;
    }
    None
}

/// Whether a command's segment starts at `at`: after a line break (also a JSON `\n` escape),
/// `;`, `|`, `&`, `(` or a backtick.
fn segment_starts(bytes: &[u8], at: usize) -> bool {
    at == 0
        || matches!(bytes[at - 1], b'\n' | b'\r' | b';' | b'|' | b'&' | b'(' | b'`')
        || super::after_escape(bytes, at)
}

/// The words of the command line from `from` up to its end, and where it ends.
fn command_words(text: &str, from: usize) -> (Vec<Word>, usize) {
    let bytes = text.as_bytes();
    let stop = super::floor_boundary(text, from + 4096);
    let mut words = Vec::new();
    let mut at = from;
    while words.len() < MAX_WORDS {
        at = run(bytes, at, stop.saturating_sub(at), |b| b == b' ' || b == b'\t');
        if bytes.get(at) == Some(&b'\\') && matches!(bytes.get(at + 1), Some(b'\n' | b'\r')) {
            // A line continuation.
            at = run(bytes, at + 1, 2, |b| b == b'\n' || b == b'\r');
            continue;
        }
        if at >= stop || ends_command(bytes, at) {
            break;
        }
        let end = word_end(bytes, at, stop);
        if end == at {
            break;
        }
        words.push(Word { start: at, end });
        at = end;
    }
    (words, at)
}

/// Whether the command line ends at `at`.
fn ends_command(bytes: &[u8], at: usize) -> bool {
    match bytes[at] {
        b'\n' | b'\r' | b';' | b'|' | b'&' | b')' | b'`' | b'<' | b'>' => true,
        b'\\' => matches!(bytes.get(at + 1), Some(b'n' | b'r')),
        _ => false,
    }
}

/// The end of the shell word at `at`: unquoted whitespace or a command's end; quotes (also
/// `\"` of JSON text) keep what they hold in the word.
fn word_end(bytes: &[u8], at: usize, stop: usize) -> usize {
    let mut index = at;
    while index < stop {
        match bytes[index] {
            quote @ (b'\'' | b'"') => {
                let close = run(bytes, index + 1, stop - index - 1, |b| b != quote && b != b'\n');
                if bytes.get(close) != Some(&quote) {
                    return index;
                }
                index = close + 1;
            }
            b'\\' if bytes.get(index + 1) == Some(&b'"') => {
                let inner = index + 2;
                let close =
                    (inner..stop.saturating_sub(1)).find(|&i| bytes[i] == b'\\' && bytes[i + 1] == b'"');
                let Some(close) = close else { return index };
                index = close + 2;
            }
            b' ' | b'\t' => return index,
            _ if ends_command(bytes, index) => return index,
            _ => index += 1,
        }
    }
    index
}

/// The raw value of `flag` in `word` (glued) or in `following`, when `word` is that option.
fn flag_value(text: &str, flag: &Flag, word: Word, following: Option<Word>) -> Option<Word> {
    let written = &text[word.start..word.end];
    if written == flag.name {
        return match flag.reads {
            Reads::Glued => None,
            Reads::Next | Reads::Separate => following,
        };
    }
    let rest = written.strip_prefix(flag.name)?;
    let glued_at = match flag.reads {
        Reads::Glued if flag.name.starts_with("--") => rest.strip_prefix('=').map(|_| 1),
        Reads::Glued => Some(0),
        Reads::Next if flag.name.starts_with("--") => rest.strip_prefix('=').map(|_| 1),
        Reads::Next if flag.name.len() == 2 && flag.name.starts_with('-') => Some(0),
        Reads::Next | Reads::Separate => None,
    }?;
    let start = word.end - rest.len() + glued_at;
    (start < word.end).then_some(Word { start, end: word.end })
}

/// Reports the password `holds` says `value` (a raw word) carries.
fn report(text: &str, value: Word, holds: Holds, out: &mut Vec<super::Finding>) {
    let (inner, single_quoted) = unquote(text, value);
    let written = &text[inner.start..inner.end];
    let password = match holds {
        Holds::Password => inner,
        Holds::UserThen(separator) | Holds::UserOrToken(separator) => {
            let Some(at) = written.bytes().position(|b| b == separator) else { return };
            Word { start: inner.start + at + 1, end: inner.end }
        }
        Holds::Source => {
            let Some(rest) = written.strip_prefix("pass:") else { return };
            Word { start: inner.end - rest.len(), end: inner.end }
        }
        Holds::Cookies => {
            // Each cookie is judged as in a `Cookie:` header; a file name holds no `=`.
            cookie::pairs(text, inner.start, inner.end, false, out);
            return;
        }
    };
    let password_text = &text[password.start..password.end];
    if password.start >= password.end || (!single_quoted && is_variable(password_text)) {
        return;
    }
    if password_text.starts_with('-') && !single_quoted && inner.start == value.start {
        // The next option: this one was given no value.
        return;
    }
    if !placeholder::is_placeholder(password_text) {
        header::report(text, password.start, password.end, 1, out);
    }
}

/// The word without the quotes around it (`'…'`, `"…"`, `\"…\"`), and whether they were single.
fn unquote(text: &str, word: Word) -> (Word, bool) {
    let written = &text[word.start..word.end];
    for (quote, single) in [("\\\"", false), ("'", true), ("\"", false)] {
        if written.len() >= 2 * quote.len() && written.starts_with(quote) && written.ends_with(quote) {
            return (Word { start: word.start + quote.len(), end: word.end - quote.len() }, single);
        }
    }
    // Quoted after a glued part (`-p'S3cret'` was cut at the flag, `bob%'pw'` keeps its quote).
    (word, false)
}

/// `$name`, `${…}` or `$(…)`: the shell puts another value there.
fn is_variable(value: &str) -> bool {
    value.strip_prefix('$').is_some_and(|rest| {
        rest.starts_with(['{', '('])
            || rest.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
    })
}
