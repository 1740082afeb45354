//! Char boundaries near a byte index, for recognizers that bound their look-arounds in bytes (the
//! standard library's `floor_char_boundary` is newer than the workspace's `rust-version`).
//! Imports nothing.

/// The first char boundary at or after `index` (at most the text's length).
pub(crate) fn char_boundary(text: &str, mut index: usize) -> usize {
    while index < text.len() && !text.is_char_boundary(index) {
        index += 1;
    }
    index.min(text.len())
}

/// The last char boundary at or before `index`.
pub(crate) fn floor_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}
