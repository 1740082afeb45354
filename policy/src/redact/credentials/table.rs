//! Secrets in the columns of Markdown and HTML tables whose header names them (CSV's are
//! `csv`'s): `| user | password |` + `|---|---|` + `| ada | … |`, and a `<th>Password</th>` in a
//! header row with the cell in the same column of each following `<tr>`.
//!
//! A cell's text is taken when it is one token and passes the checks of a quoted value (not a
//! placeholder, mask, path or sentence), as the cells of a CSV column are. The table is read
//! for at most `MAX_ROWS` rows and `MAX_TABLE` bytes after its header.

use super::Finding;
use super::html::starts_tag;
use super::key::{self, Key};
use super::run;
use super::value::Value;

/// Rows read below one header.
const MAX_ROWS: usize = 200;

/// Bytes read below one header.
const MAX_TABLE: usize = 64 * 1024;

/// Longest header line or header row, in bytes.
const MAX_HEADER: usize = 2048;

/// The name at `name_start..name_end` as a whole cell of a Markdown table's header line, followed
/// by its delimiter row. Returns where scanning resumes when it is one.
pub(super) fn markdown(
    text: &str,
    name_start: usize,
    name_end: usize,
    out: &mut Vec<Finding>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let after = run(bytes, name_end, 16, |b| b == b' ' || b == b'\t');
    if bytes.get(after) != Some(&b'|') {
        return None;
    }
    // The cell may start with a qualifier (`| API key |`).
    let window = super::char_boundary(text, name_start.saturating_sub(32));
    let qualifier =
        text[window..name_start].trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == ' ' || c == '\t');
    if !qualifier.ends_with('|') {
        return None;
    }
    let (line_start, line_end) = line_around(text, name_start, name_end)?;
    let header = pipe_cells(&text[line_start..line_end])?;
    let column = header
        .iter()
        .position(|&(start, end)| line_start + start <= name_start && name_end <= line_start + end)?;
    let (cell_start, cell_end) = header[column];
    secret_name(&text[line_start + cell_start..line_start + cell_end])?;
    let mut at = line_end + 1;
    let delimiter_end = line_end_from(text, at);
    let delimiter = pipe_cells(text.get(at..delimiter_end)?)?;
    let dashes =
        |cell: &str| !cell.trim_matches(':').is_empty() && cell.trim_matches(':').bytes().all(|b| b == b'-');
    if delimiter.len() != header.len() || !delimiter.iter().all(|&(s, e)| dashes(&text[at + s..at + e])) {
        return None;
    }
    at = delimiter_end + 1;
    let stop = text.len().min(at + MAX_TABLE);
    for _ in 0..MAX_ROWS {
        if at >= stop {
            break;
        }
        let end = line_end_from(text, at);
        let Some(row) = pipe_cells(&text[at..end]).filter(|row| row.len() == header.len()) else {
            break;
        };
        let (start, stop) = row[column];
        report(text, Value { start: at + start, end: at + stop, quoted: true }, out);
        at = end + 1;
    }
    Some(line_end)
}

/// The name at `name_start..name_end` as the text of a `<th>` in a table's header row: the cells
/// in its column of the rows below. Returns where scanning resumes when it is one.
pub(super) fn html(text: &str, name_start: usize, name_end: usize, out: &mut Vec<Finding>) -> Option<usize> {
    let bytes = text.as_bytes();
    let close = run(bytes, name_end, 8, |b| matches!(b, b' ' | b'\t' | b':'));
    if !starts_tag(bytes, close, "/th") {
        return None;
    }
    let window = super::char_boundary(text, name_start.saturating_sub(MAX_HEADER));
    let row_start = window + rfind_tag(&text[window..name_start], "tr")?;
    let cell_open = window + rfind_tag(&text[window..name_start], "th")?;
    if cell_open < row_start {
        return None;
    }
    let cell_text = text.get(tag_end(bytes, cell_open)?..close)?;
    secret_name(cell_text.trim())?;
    let column = count_cells(&text[row_start..cell_open]);
    let header_end =
        name_end + find_tag(&text[name_end..super::floor_boundary(text, name_end + MAX_HEADER)], "/tr")?;
    let stop = super::floor_boundary(text, header_end + MAX_TABLE);
    let mut at = header_end;
    for _ in 0..MAX_ROWS {
        let Some(offset) = find_tag(&text[at..stop], "tr") else { break };
        let row = at + offset;
        if find_tag(&text[at..row], "/table").is_some() {
            break;
        }
        let row_end = find_tag(&text[row..stop], "/tr").map_or(stop, |offset| row + offset);
        if find_tag(&text[row..row_end], "th").is_some() {
            // The next table's header (or this one's again): its own names decide.
            break;
        }
        if let Some(value) = nth_cell(text, row + 3, row_end, column) {
            report(text, value, out);
        }
        at = row_end.max(row + 3);
    }
    Some(name_end)
}

/// Reports a cell's text as a secret when it is one token that passes a quoted value's checks.
fn report(text: &str, cell: Value, out: &mut Vec<Finding>) {
    if cell.end > cell.start && !cell.text(text).contains(char::is_whitespace) {
        super::password(text, cell, out);
    }
}

/// `Some` when a header cell's text names a secret (a password, a token, an API key…).
fn secret_name(cell: &str) -> Option<()> {
    let (qualifier, name) = cell.rsplit_once(' ').map_or((None, cell), |(before, name)| (Some(before), name));
    match key::classify(name, false, qualifier) {
        Some(Key::Secret { .. }) => Some(()),
        _ => None,
    }
}

/// The cells of a Markdown table's line, each trimmed, relative to the line: `None` when the line
/// does not start and end with `|`.
fn pipe_cells(line: &str) -> Option<Vec<(usize, usize)>> {
    let trimmed = line.trim_end_matches(['\r', ' ', '\t']);
    let lead = trimmed.len() - trimmed.trim_start_matches([' ', '\t']).len();
    let inner = trimmed[lead..].strip_prefix('|')?.strip_suffix('|')?;
    let mut cells = Vec::new();
    let mut at = lead + 1;
    for cell in inner.split('|') {
        let start = at + (cell.len() - cell.trim_start().len());
        let end = at + cell.trim_end().len();
        cells.push((start, end.max(start)));
        at += cell.len() + 1;
    }
    Some(cells)
}

/// The line holding `name_start..name_end`, when it is no longer than `MAX_HEADER`.
fn line_around(text: &str, name_start: usize, name_end: usize) -> Option<(usize, usize)> {
    let line_start = super::line_start_within(text, name_start, MAX_HEADER)?;
    let line_end = line_end_from(text, name_end);
    (line_end - line_start <= MAX_HEADER).then_some((line_start, line_end))
}

/// The end of the line that `at` is on (its `\n`, or the text's end).
fn line_end_from(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text[at..].find('\n').map_or(text.len(), |offset| at + offset)
}

/// The text of cell `column` (from 0) of a row whose cells start after `from`, up to the next tag.
fn nth_cell(text: &str, from: usize, row_end: usize, column: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut at = from;
    let mut seen = 0;
    while at < row_end {
        let offset = text[at..row_end].find('<')?;
        let open = at + offset;
        let cell = starts_tag(bytes, open, "td") || starts_tag(bytes, open, "th");
        if cell && seen == column {
            let start = tag_end(bytes, open).filter(|&start| start <= row_end)?;
            let end = start + text[start..row_end].find('<').unwrap_or(row_end - start);
            let written = &text[start..end];
            let lead = written.len() - written.trim_start().len();
            let start = start + lead;
            return Some(Value { start, end: start + written.trim().len(), quoted: true });
        }
        seen += usize::from(cell);
        at = open + 1;
    }
    None
}

/// How many `<td>` and `<th>` cells open in `row`.
fn count_cells(row: &str) -> usize {
    let bytes = row.as_bytes();
    (0..bytes.len()).filter(|&at| starts_tag(bytes, at, "td") || starts_tag(bytes, at, "th")).count()
}

/// Past the `>` of the tag opening at `at`.
fn tag_end(bytes: &[u8], at: usize) -> Option<usize> {
    let close = run(bytes, at, 256, |b| b != b'>');
    (bytes.get(close) == Some(&b'>')).then_some(close + 1)
}

/// The offset of the first tag `name` in `text`.
fn find_tag(text: &str, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    text.match_indices('<').map(|(at, _)| at).find(|&at| starts_tag(bytes, at, name))
}

/// The offset of the last tag `name` in `text`.
fn rfind_tag(text: &str, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    text.rmatch_indices('<').map(|(at, _)| at).find(|&at| starts_tag(bytes, at, name))
}
