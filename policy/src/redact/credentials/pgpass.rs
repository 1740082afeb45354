//! Lines of PostgreSQL's password file (`~/.pgpass`, `PGPASSFILE`):
//! `hostname:port:database:username:password`, where any of the first four may be `*` and `\:`
//! and `\\` escape inside a field. A line is found by its port, read whole (exactly five fields,
//! the port digits or `*`, the other names without blanks, the host not digits alone) and its
//! fifth field, to the line's end, is the password.
//!
//! Any port counts (a second cluster's `5433`, Redshift's `5439`, PgBouncer's `6432`, managed
//! services' own), so a numeric port is found among the text's digit groups, which the number
//! recognizers list anyway: a group of one to five digits between two `:`, its line starting with
//! the host field. A class of digits after `:` in a trigger set would cost that set's prefilter a
//! stop at every `:` of a page (about 4 µs per 8 KB as a set of its own). A `*` port is a trigger.

use super::Finding;
use super::value::Value;
use crate::redact::digits::Group;

/// The port field `*` between its neighbours, a literal of the source set.
pub(super) const TRIGGERS: &str = r":\*:";

/// Longest line read, in bytes.
const MAX_LINE: usize = 512;

/// Longest port, in digits.
const MAX_PORT: usize = 5;

/// Reads the line of each digit group that can be a numeric port: one to five digits between two
/// `:`, after a host field that starts its line.
pub(super) fn at_ports(text: &str, groups: &[Group], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut resume = 0;
    for group in groups {
        if group.start < resume
            || group.len() > MAX_PORT
            || group.start == 0
            || bytes[group.start - 1] != b':'
            || bytes.get(group.end) != Some(&b':')
        {
            continue;
        }
        let colon = group.start - 1;
        let host = super::run_back(bytes, colon, MAX_LINE, |b| !b.is_ascii_whitespace() && b != b':');
        let indent = super::run_back(bytes, host, 16, |b| b == b' ' || b == b'\t');
        if host < colon && (indent == 0 || matches!(bytes[indent - 1], b'\n' | b'\r')) {
            resume = at_port(text, colon, group.end + 1, out);
        }
    }
}

/// Reads the line of the port at `start..end` (the `:` before the port to the one after it);
/// returns where scanning resumes.
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
    // A host is `*`, a name or an address: digits alone start a time (`12:30:45:00:…`).
    let host_ok = !field(host).bytes().all(|b| b.is_ascii_digit());
    if first + host.1 == start && port_ok && names && host_ok && password.1 > password.0 {
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
