//! The scan of one raw-text element's content for tool markup, fed piece by piece: held back
//! up to `HOLD_LIMIT` bytes, then streamed with an overlap, so a marker is found wherever the
//! pieces are cut. Knows nothing of the rewriter's shared state.

/// Raw text held back per element before it streams with an overlap.
pub(in crate::page) const HOLD_LIMIT: usize = 64 * 1024;

/// Bytes kept back between pieces so a marker split across them is still seen: the longest
/// marker (`<context` plus the delimiter after it) is nine bytes; three more cover a UTF-8
/// character the cut may have to avoid splitting.
const OVERLAP: usize = 12;

/// Scanning state of one raw-text element.
#[derive(Debug)]
pub(in crate::page) enum RawTextScan {
    /// All content so far is held (content offset 0 is the buffer's start).
    Holding(String),
    /// Content past `HOLD_LIMIT` without a marker: only the overlap is held.
    Streaming(String),
    /// A marker was found: everything from it on is dropped.
    Leaked,
}

/// What to write in place of one piece of raw text.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::page) struct Verdict {
    pub(in crate::page) emit: String,
    pub(in crate::page) leak_found: bool,
}

impl RawTextScan {
    pub(in crate::page) fn new() -> Self {
        Self::Holding(String::new())
    }

    /// Takes the next piece of text; `last` marks the end of the element's content.
    pub(in crate::page) fn feed(&mut self, text: &str, last: bool) -> Verdict {
        let keep = |emit: String| Verdict { emit, leak_found: false };
        match self {
            Self::Leaked => keep(String::new()),
            Self::Holding(held) => {
                let from = held.len().saturating_sub(OVERLAP);
                held.push_str(text);
                if let Some(position) = find_marker(held.as_bytes(), from, last) {
                    // Within the limit the whole content goes; beyond it, what follows the marker.
                    let emit =
                        if position < HOLD_LIMIT { String::new() } else { held[..position].to_owned() };
                    *self = Self::Leaked;
                    return Verdict { emit, leak_found: true };
                }
                if last {
                    return keep(std::mem::take(held));
                }
                if held.len() > HOLD_LIMIT + OVERLAP {
                    let tail = held.split_off(floor_char_boundary(held, held.len() - OVERLAP));
                    let emit = std::mem::replace(held, tail);
                    *self = Self::Streaming(std::mem::take(held));
                    return keep(emit);
                }
                keep(String::new())
            }
            Self::Streaming(carry) => {
                carry.push_str(text);
                if let Some(position) = find_marker(carry.as_bytes(), 0, last) {
                    let emit = carry[..position].to_owned();
                    *self = Self::Leaked;
                    return Verdict { emit, leak_found: true };
                }
                if last {
                    return keep(std::mem::take(carry));
                }
                let tail = carry.split_off(floor_char_boundary(carry, carry.len().saturating_sub(OVERLAP)));
                keep(std::mem::replace(carry, tail))
            }
        }
    }
}

/// Position of the first tool or context marker starting at or after `from`: `toolname`
/// anywhere, or a `<tool` / `<context` tag opening (followed by whitespace, `/` or `>`, or by
/// the end of the text when `complete`). ASCII case-insensitive.
pub(in crate::page) fn find_marker(text: &[u8], from: usize, complete: bool) -> Option<usize> {
    let starts_with = |at: usize, marker: &[u8]| {
        text.get(at..at + marker.len()).is_some_and(|slice| slice.eq_ignore_ascii_case(marker))
    };
    let opens_tag = |at: usize, marker: &[u8]| {
        starts_with(at, marker)
            && match text.get(at + marker.len()) {
                Some(next) => next.is_ascii_whitespace() || matches!(next, b'/' | b'>'),
                None => complete,
            }
    };
    (from..text.len()).find(|&at| match text[at] {
        b'<' => opens_tag(at, b"<tool") || opens_tag(at, b"<context"),
        b't' | b'T' => starts_with(at, b"toolname"),
        _ => false,
    })
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}
