//! Maps byte offsets in a policy document to lines and key paths for error messages.
//!
//! Serde stops at the first structural error and only knows a byte span; this module turns that
//! span into a line number and, by walking toml's spanned document tree, into the key path an
//! admin recognises (`rule[1].tools.alow`).

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// Line starts of one document, for offset → line lookups.
pub(crate) struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Self {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(index, _)| index + 1)).collect();
        Self { starts }
    }

    /// The 1-based line holding byte `offset`.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&start| start <= offset).max(1)
    }
}

/// The key path of the innermost key or value whose span holds `offset`, or "" at top level.
pub(crate) fn key_path_at(text: &str, offset: usize) -> String {
    let Ok(root) = DeTable::parse(text) else {
        return String::new();
    };
    let mut path = String::new();
    walk_table(root.get_ref(), offset, &mut path);
    path
}

fn walk_table(table: &DeTable<'_>, offset: usize, path: &mut String) {
    for (key, value) in table {
        let on_key = contains(&key.span(), offset);
        if on_key || contains(&value.span(), offset) || holds_offset(value, offset) {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key.get_ref());
            if !on_key {
                walk_value(value, offset, path);
            }
            return;
        }
    }
}

fn walk_value(value: &Spanned<DeValue<'_>>, offset: usize, path: &mut String) {
    match value.get_ref() {
        DeValue::Table(table) => walk_table(table, offset, path),
        DeValue::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                if contains(&item.span(), offset) || holds_offset(item, offset) {
                    path.push_str(&format!("[{index}]"));
                    walk_value(item, offset, path);
                    return;
                }
            }
        }
        _ => {}
    }
}

/// Whether a table or array holds `offset` in one of its children; array-of-tables headers give
/// spans that do not cover their bodies, so the children are asked too.
fn holds_offset(value: &Spanned<DeValue<'_>>, offset: usize) -> bool {
    match value.get_ref() {
        DeValue::Table(table) => table.iter().any(|(k, v)| {
            contains(&k.span(), offset) || contains(&v.span(), offset) || holds_offset(v, offset)
        }),
        DeValue::Array(items) => {
            items.iter().any(|item| contains(&item.span(), offset) || holds_offset(item, offset))
        }
        _ => false,
    }
}

fn contains(span: &Range<usize>, offset: usize) -> bool {
    span.start <= offset && offset < span.end.max(span.start + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_based() {
        let lines = Lines::new("a\nb\n\nc");
        assert_eq!(lines.line(0), 1);
        assert_eq!(lines.line(2), 2);
        assert_eq!(lines.line(4), 3);
        assert_eq!(lines.line(5), 4);
    }

    #[test]
    fn key_paths_reach_into_arrays_of_tables() {
        let text = "[[rule]]\nid = \"a\"\n[[rule]]\nid = \"b\"\ntools.alow = [\"x\"]\n";
        let offset = text.find("alow").unwrap_or_default();
        assert_eq!(key_path_at(text, offset), "rule[1].tools.alow");
    }
}
