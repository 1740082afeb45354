//! The positional arguments that are a password, for the commands whose table entry names one
//! ([`Positional`]): `htpasswd -b file user pass`, `net use \\host\share pass`, `wpa_passphrase
//! ssid pass`, `echo pass | sudo -S`, `ConvertTo-SecureString 'pass' -AsPlainText`, Oracle's
//! `user/pass@db`, `rabbitmqctl add_user name pass`, Redis' `AUTH [user] pass` (also typed
//! at `redis-cli`'s prompt), `vault login <token>` and `openssl passwd … <password>`.

use super::super::Finding;
use super::commands::{Holds, Positional, STDIN_OPTIONS};
use super::{Word, command_words, report, unquote};

/// Longest `redis-cli` prompt before `> `, in bytes (`redis.internal.example.com:6379`).
const MAX_PROMPT: usize = 64;

/// Reports the password `positional` says a command line's `words` hold.
pub(super) fn read(
    text: &str,
    positional: Positional,
    words: &[Word],
    line_end: usize,
    out: &mut Vec<Finding>,
) {
    match positional {
        Positional::None => {}
        Positional::Htpasswd => htpasswd(text, words, out),
        Positional::Net => net(text, words, out),
        Positional::Second => {
            if let Some(&word) = positionals(text, words).get(1) {
                report(text, word, Holds::Password, out);
            }
        }
        Positional::Echo => echo(text, words, line_end, out),
        Positional::PlainText => plain_text(text, words, out),
        Positional::Logon => logon(text, words, out),
        Positional::AfterVerb(verbs) => {
            let positionals = positionals(text, words);
            let verb = positionals.iter().position(|word| verbs.contains(&&text[word.start..word.end]));
            if let Some(&word) = verb.and_then(|verb| positionals.get(verb + 2)) {
                report(text, word, Holds::Password, out);
            }
        }
        Positional::Token(verbs) => {
            let after = after_verb(text, words, verbs);
            let token = after.into_iter().find(|word| !is_pair(&text[word.start..word.end]));
            if let Some(word) = token {
                report(text, word, Holds::Password, out);
            }
        }
        Positional::LastAfterVerb(verbs) => {
            if let Some(&word) = after_verb(text, words, verbs).last() {
                report(text, word, Holds::Password, out);
            }
        }
        Positional::RedisAuth => {
            let start = words.iter().position(|word| text[word.start..word.end].eq_ignore_ascii_case("auth"));
            if let Some(start) = start {
                redis_auth(text, &words[start + 1..], out);
            }
        }
    }
}

/// Redis' `AUTH password` or `AUTH user password` typed at `redis-cli`'s prompt
/// (`127.0.0.1:6379> AUTH …`, `redis> AUTH …`): the key word `AUTH` at `name_start..name_end`.
/// Returns where scanning resumes when the line is one.
pub(in super::super) fn at_prompt(
    text: &str,
    name_start: usize,
    name_end: usize,
    out: &mut Vec<Finding>,
) -> Option<usize> {
    if !text[name_start..name_end].eq_ignore_ascii_case("auth") || !text[name_end..].starts_with(' ') {
        return None;
    }
    let line_start = super::super::line_start_within(text, name_start, MAX_PROMPT + 2)?;
    let prompt = text[line_start..name_start].strip_suffix("> ")?;
    let port = prompt.rsplit_once(':').map(|(_, port)| port);
    let is_prompt = prompt.ends_with("redis")
        || port.is_some_and(|port| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()));
    if !is_prompt {
        return None;
    }
    let (words, line_end) = command_words(text, name_end);
    redis_auth(text, &words, out);
    Some(line_end)
}

/// The arguments of Redis' `AUTH`: the password, after a user's name when there are two.
fn redis_auth(text: &str, arguments: &[Word], out: &mut Vec<Finding>) {
    let password = match arguments {
        [password] | [_, password] => password,
        _ => return,
    };
    report(text, *password, Holds::Password, out);
}

/// Oracle's logon in any word, `user/password[@connect]` (also quoted with ` as sysdba`, or the
/// value of `userid=`): the password. `/ as sysdba` (the system's own account) and `/nolog` carry
/// none, and neither does a `key=dir/file` path.
fn logon(text: &str, words: &[Word], out: &mut Vec<Finding>) {
    for word in words {
        let (inner, _) = unquote(text, *word);
        let written = &text[inner.start..inner.end];
        let prefix =
            if written.get(..7).is_some_and(|key| key.eq_ignore_ascii_case("userid=")) { 7 } else { 0 };
        let Some(slash) = written[prefix..].find('/') else { continue };
        let user = &written[prefix..prefix + slash];
        let is_user = user.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'#'));
        if user.is_empty() || !is_user {
            continue;
        }
        let start = inner.start + prefix + slash + 1;
        let length = text[start..inner.end].find(['@', ' ']).unwrap_or(inner.end - start);
        if length > 0 {
            report(text, Word { start, end: start + length }, Holds::Password, out);
        }
    }
}

/// `ConvertTo-SecureString 'password' -AsPlainText -Force`: the first positional argument (or the
/// one after `-String`), when `-AsPlainText` says it is the password itself.
fn plain_text(text: &str, words: &[Word], out: &mut Vec<Finding>) {
    let written = |word: &Word| &text[word.start..word.end];
    if !words.iter().any(|word| written(word).eq_ignore_ascii_case("-asplaintext")) {
        return;
    }
    let after_string = words.iter().position(|word| written(word).eq_ignore_ascii_case("-string"));
    let value = match after_string {
        Some(index) => words.get(index + 1).copied(),
        None => positionals(text, words).first().copied(),
    };
    if let Some(value) = value {
        report(text, value, Holds::Password, out);
    }
}

/// The words that are neither options nor an option's value.
/// The positional arguments after the first of `verbs` among them.
fn after_verb(text: &str, words: &[Word], verbs: &[&str]) -> Vec<Word> {
    let positionals = positionals(text, words);
    let verb = positionals.iter().position(|word| verbs.contains(&&text[word.start..word.end]));
    verb.map(|verb| positionals[verb + 1..].to_vec()).unwrap_or_default()
}

/// Whether a word is a `name=value` pair (a name of letters, digits, `_` and `-` first).
fn is_pair(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

fn positionals(text: &str, words: &[Word]) -> Vec<Word> {
    words.iter().copied().filter(|word| !text[word.start..word.end].starts_with(['-', '/'])).collect()
}

/// `htpasswd -b[…] file user password` or `-nb user password`: batch mode takes the password
/// from the command line.
fn htpasswd(text: &str, words: &[Word], out: &mut Vec<Finding>) {
    let cluster = words.iter().map(|word| &text[word.start..word.end]).find(|word| {
        word.len() > 1 && word.starts_with('-') && !word.starts_with("--") && word.contains('b')
    });
    let Some(cluster) = cluster else { return };
    let index = if cluster.contains('n') { 1 } else { 2 };
    let mut positionals = Vec::new();
    let mut skip = false;
    for word in words {
        let written = &text[word.start..word.end];
        if skip {
            skip = false;
        } else if matches!(written, "-C" | "-r") {
            skip = true; // bcrypt cost or SHA rounds
        } else if !written.starts_with('-') {
            positionals.push(*word);
        }
    }
    if let Some(&word) = positionals.get(index) {
        report(text, word, Holds::Password, out);
    }
}

/// `net use [X: | *] \\host\share password …` and `net user name password …`; `*` prompts.
fn net(text: &str, words: &[Word], out: &mut Vec<Finding>) {
    let positionals = positionals(text, words);
    let written = |word: &Word| &text[word.start..word.end];
    let password = match positionals.first().map(written) {
        Some("use") => {
            let share = positionals.iter().position(|word| written(word).starts_with("\\\\"));
            share.and_then(|share| positionals.get(share + 1))
        }
        Some("user") => positionals.get(2),
        _ => None,
    };
    if let Some(&word) = password.filter(|word| written(word) != "*") {
        report(text, word, Holds::Password, out);
    }
}

/// `echo password | sudo -S …`: the echoed word, when the command it is piped into reads a
/// password on standard input (`sudo -S`, `--password-stdin`, `passwd --stdin`, `chpasswd`
/// with `user:password`, `kinit`, OpenSSL's `-passin stdin`).
fn echo(text: &str, words: &[Word], line_end: usize, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    if bytes.get(line_end) != Some(&b'|') || bytes.get(line_end + 1) == Some(&b'|') {
        return;
    }
    let echoed: Vec<Word> = words
        .iter()
        .copied()
        .filter(|word| !matches!(&text[word.start..word.end], "-n" | "-e" | "-ne" | "-en"))
        .collect();
    let [value] = echoed.as_slice() else { return };
    if text[..value.start].trim_end().ends_with("printf") && text[value.start..value.end].contains('%') {
        return; // a format: the password is another argument
    }
    let (consumer, _) = command_words(text, line_end + 1);
    let written: Vec<&str> = consumer.iter().map(|word| &text[word.start..word.end]).collect();
    let command = written.iter().copied().find(|word| *word != "sudo" && !word.starts_with('-'));
    let holds = match command {
        _ if written.first() == Some(&"sudo") && written.iter().any(|w| matches!(*w, "-S" | "--stdin")) => {
            Holds::Password
        }
        Some("chpasswd") => Holds::UserThen(b':'),
        Some("kinit") => Holds::Password,
        _ if written.iter().any(|word| STDIN_OPTIONS.contains(word)) => Holds::Password,
        _ => return,
    };
    report(text, *value, holds, out);
}
