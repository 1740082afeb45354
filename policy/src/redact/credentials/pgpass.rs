//! Lines of PostgreSQL's password file (`~/.pgpass`, `PGPASSFILE`):
//! `hostname:port:database:username:password`, where any of the first four may be `*` and `\:`
//! and `\\` escape inside a field. A line is found by its port (PostgreSQL's `5432`, the next
//! ones a second cluster on the host takes, `5433` and `5434`, PgBouncer's `6432`, the managed
//! services' `25060`, or `*`) and read whole: exactly five fields, the port digits or `*`, the
//! other names without blanks; the fifth, to the line's end, is the password.

use super::Finding;
use super::value::Value;

/// The port field between its neighbours: literals, so the source set stays a literal set (a
/// class of digits after `:` would have its prefilter stop at every `:` of a page).
pub(super) const TRIGGERS: &str = r":5432:|:5433:|:5434:|:6432:|:25060:|:\*:";

/// Longest line read, in bytes.
const MAX_LINE: usize = 512;

/// Handles a trigger at `start..end` (the `:` before the port to the one after it); returns
/// where scanning resumes.
pub(super) fn at_port(text: &str, start: usize, end: usize, out: &mut Vec<Finding>) -> usize {
    let Some(line_start) = super::line_start_within(text, start, MAX_LINE) else {
        return end;
    };
    let stop = super::floor_boundary(text, text.len().min(start + MAX_LINE));
    let line_end = text[start..stop].find(['\n', '\r']).map_or(stop, |offset| start + offset);
    let line = text[line_start..line_end].trim_end();
    let first = line_start + (line.len() - line.trim_start().len());
    let fields = fields(&text[first..line_start + line.len()]);
    let &[host, port, database, user, password] = fields.as_slice() else {
        return end;
    };
    let field = |(from, to): (usize, usize)| &text[first + from..first + to];
    let port_written = field(port);
    let port_ok = port_written == "*" || port_written.bytes().all(|b| b.is_ascii_digit());
    let names = [host, database, user]
        .into_iter()
        .all(|name| !field(name).is_empty() && !field(name).contains(char::is_whitespace));
    if first + host.1 == start && port_ok && names && password.1 > password.0 {
        super::password(
            text,
            Value { start: first + password.0, end: first + password.1, quoted: true },
            out,
        );
    }
    line_end.max(end)
}

/// The byte ranges of a line's fields, split at each `:` that no `\` escapes.
fn fields(line: &str) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut fields = Vec::new();
    let (mut start, mut at) = (0, 0);
    while at < bytes.len() && fields.len() < 5 {
        match bytes[at] {
            b'\\' => at += 2,
            b':' => {
                fields.push((start, at));
                start = at + 1;
                at += 1;
            }
            _ => at += 1,
        }
    }
    fields.push((start, bytes.len()));
    fields
}
