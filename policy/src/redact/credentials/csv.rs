//! Secrets in the columns of a table whose header names them: CSV (`,` or `;`) and TSV exports
//! such as `id,name,password,created` followed by rows of values.
//!
//! A header is a line of at least two cells separated by one separator (a table of two columns
//! takes only rows of two), each cell a name of up to three words of letters, digits, `_`, `-`
//! or `.` (quoted or not). When one whole cell is a
//! secret's name, the cell in the same column of each following row, when it has no spaces, is
//! checked like a quoted assigned value (not a placeholder, mask, path or sentence) and reported.
//!
//! Rows end at an empty line, a line without the separator, or a line with fewer cells than the
//! header (quoted cells may hold the separator; `""` is a quote inside one). A row with more cells
//! has a separator unquoted in some cell (`June 7, 2021`): its cell is counted from the left and
//! taken only when it looks like a secret (see `shape`).

use super::shape;
use super::value::{self, Value};

/// Rows read below one header.
const MAX_ROWS: usize = 1000;
/// Cells in a header.
const MAX_CELLS: usize = 200;

/// Handles the secret's name at `name_start..name_end` when it is a cell of a header line;
/// returns where scanning resumes, or `None` when the name is not in a header.
pub(super) fn at_header(
    text: &str,
    name_start: usize,
    name_end: usize,
    out: &mut Vec<super::Finding>,
) -> Option<usize> {
    let (separator, cell_start, cell_end) = cell(text.as_bytes(), name_start, name_end)?;
    let line_start = text[..cell_start].rfind('\n').map_or(0, |index| index + 1);
    let line_end = text[cell_end..].find('\n').map_or(text.len(), |index| cell_end + index);
    let header = text[line_start..line_end].trim_end_matches('\r');
    let cells = split(header, separator)?;
    if cells.len() < 2
        || cells.len() > MAX_CELLS
        || !cells.iter().all(|&(start, end)| is_name(&header[start..end]))
    {
        return None;
    }
    let column = text[line_start..cell_start].bytes().filter(|&b| b == separator).count();
    let name = &text[name_start..name_end];
    let mut at = line_end + 1;
    for _ in 0..MAX_ROWS {
        if at >= text.len() {
            break;
        }
        let end = text[at..].find('\n').map_or(text.len(), |index| at + index);
        let line = text[at..end].trim_end_matches('\r');
        // Two columns take only rows of two: a line of prose has a comma now and then.
        let fits =
            |row: &Vec<(usize, usize)>| row.len() >= cells.len() && (cells.len() > 2 || row.len() == 2);
        let Some(row) = split(line, separator).filter(fits) else {
            break;
        };
        if is_header(line, &row) {
            // Another header: it reads the rows below it itself. Reading them from here too
            // would read a file of header-like lines once per line.
            break;
        }
        let (start, stop) = row[column];
        let value = Value { start: at + start, end: at + stop, quoted: true };
        let written = value.text(text);
        // A row with more cells than the header has an unquoted separator in some cell: the
        // column is read from the left, and taken only when it looks like a secret.
        let sure = row.len() == cells.len() || shape::looks_secret(written);
        if stop > start
            && sure
            && !written.contains(char::is_whitespace)
            && value::accept(text, name, value, true, false)
        {
            super::secret(out, value.start, value.end);
        }
        at = end + 1;
    }
    Some(name_end)
}

/// The separator around the name at `name_start..name_end` and its cell's range (quotes
/// included), when the name is a whole cell: a separator or a line's end on both sides.
pub(super) fn cell(bytes: &[u8], name_start: usize, name_end: usize) -> Option<(u8, usize, usize)> {
    let quoted = name_start > 0 && bytes[name_start - 1] == b'"' && bytes.get(name_end) == Some(&b'"');
    let (cell_start, cell_end) = if quoted { (name_start - 1, name_end + 1) } else { (name_start, name_end) };
    let before = cell_start.checked_sub(1).map(|index| bytes[index]);
    let after = bytes.get(cell_end).copied();
    let separator = match (before, after) {
        (None | Some(b'\n'), Some(separator @ (b',' | b';' | b'\t'))) => separator,
        (Some(separator @ (b',' | b';' | b'\t')), None | Some(b'\n' | b'\r')) => separator,
        (Some(first @ (b',' | b';' | b'\t')), Some(second)) if first == second => first,
        _ => return None,
    };
    Some((separator, cell_start, cell_end))
}

/// Whether a row of `line` reads like a header of its own: every cell a name, one of them a
/// secret's, and no digit anywhere (rows of data have ids, dates and amounts).
fn is_header(line: &str, row: &[(usize, usize)]) -> bool {
    !line.bytes().any(|b| b.is_ascii_digit())
        && row.iter().all(|&(start, end)| is_name(&line[start..end]))
        && row.iter().any(|&(start, end)| super::key::classify(&line[start..end], false, None).is_some())
}

/// A header cell: a name of at most three words, perhaps quoted.
fn is_name(cell: &str) -> bool {
    let name = cell.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')).unwrap_or(cell).trim();
    !name.is_empty()
        && name.len() <= 64
        && name.split(' ').count() <= 3
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b' '))
}

/// The byte ranges of the cells of `line` (inside their quotes when quoted), or `None` for a line
/// that is empty or has no separator.
fn split(line: &str, separator: u8) -> Option<Vec<(usize, usize)>> {
    let bytes = line.as_bytes();
    if line.is_empty() || !bytes.contains(&separator) {
        return None;
    }
    let mut cells = Vec::new();
    let mut at = 0;
    loop {
        if bytes.get(at) == Some(&b'"') {
            let mut close = at + 1;
            loop {
                match bytes.get(close) {
                    Some(b'"') if bytes.get(close + 1) == Some(&b'"') => close += 2,
                    Some(b'"') => break,
                    Some(_) => close += 1,
                    None => return None,
                }
            }
            cells.push((at + 1, close));
            at = close + 1;
            if at < bytes.len() && bytes[at] != separator {
                return None;
            }
        } else {
            let end =
                bytes[at..].iter().position(|&b| b == separator).map_or(bytes.len(), |index| at + index);
            cells.push((at, end));
            at = end;
        }
        if at >= bytes.len() {
            return Some(cells);
        }
        at += 1;
        if cells.len() > MAX_CELLS {
            return None;
        }
    }
}
