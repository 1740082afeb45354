//! The bytes between lol_html's output sink and the caller's `out` vector, with one optional
//! hold-back region.
//!
//! lol_html owns its sink for the rewriter's whole life, while the gateway hands a fresh `out`
//! to every `write`; the sink appends here and the page rewriter drains after each call. A hold
//! keeps back a form's output, from its start tag to its end, so that attributes derived from
//! the form's content (legend, labels, submit text) can still be added to the start tag; the
//! hold is bounded by its owner (see `forms.rs`), never by this type.

/// Output produced so far and not yet handed to the caller.
#[derive(Debug, Default)]
pub(super) struct Output {
    bytes: Vec<u8>,
    hold: Option<Hold>,
}

/// A region held back from the caller.
#[derive(Debug)]
struct Hold {
    /// Which form the hold belongs to.
    owner: u64,
    bytes: Vec<u8>,
    /// Length of the start tag at the beginning of `bytes`, once it has been written.
    tag_end: Option<usize>,
    /// Whether the start tag ends in `/>` rather than `>`.
    self_closing: bool,
}

impl Output {
    /// Appends output, to the hold if there is one.
    pub(super) fn push(&mut self, chunk: &[u8]) {
        match &mut self.hold {
            Some(hold) => hold.bytes.extend_from_slice(chunk),
            None => self.bytes.extend_from_slice(chunk),
        }
    }

    /// Starts holding output back for `owner`; refused (false) while another hold is open.
    pub(super) fn begin_hold(&mut self, owner: u64, self_closing: bool) -> bool {
        if self.hold.is_some() {
            return false;
        }
        self.hold = Some(Hold { owner, bytes: Vec::new(), tag_end: None, self_closing });
        true
    }

    /// Records that `owner`'s start tag is complete: everything held so far is that tag.
    pub(super) fn mark_tag_end(&mut self, owner: u64) {
        if let Some(hold) = self.hold.as_mut().filter(|hold| hold.owner == owner) {
            hold.tag_end.get_or_insert(hold.bytes.len());
        }
    }

    /// The owner of the open hold and how many bytes it holds.
    pub(super) fn held(&self) -> Option<(u64, usize)> {
        self.hold.as_ref().map(|hold| (hold.owner, hold.bytes.len()))
    }

    /// Ends `owner`'s hold: `attributes` (ASCII, each with a leading space) go into the held
    /// start tag, and everything held moves to the output. Returns false if `owner` has no open
    /// hold. Without a recorded start tag the bytes are released unchanged (fail closed: no tool).
    pub(super) fn release(&mut self, owner: u64, attributes: &str) -> bool {
        if self.hold.as_ref().is_none_or(|hold| hold.owner != owner) {
            return false;
        }
        let Some(hold) = self.hold.take() else {
            return false;
        };
        let closing = if hold.self_closing { &b"/>"[..] } else { &b">"[..] };
        match hold.tag_end.filter(|end| hold.bytes[..*end].ends_with(closing)) {
            Some(end) => {
                let insert_at = end - closing.len();
                self.bytes.extend_from_slice(&hold.bytes[..insert_at]);
                self.bytes.extend_from_slice(attributes.as_bytes());
                self.bytes.extend_from_slice(&hold.bytes[insert_at..]);
            }
            None => self.bytes.extend_from_slice(&hold.bytes),
        }
        true
    }

    /// Moves everything produced (and not held) to the end of `out`.
    pub(super) fn drain_into(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.bytes);
    }

    /// Drops everything produced so far, held or not: used after an error, so that output of
    /// the failing call never reaches the caller.
    pub(super) fn discard(&mut self) {
        self.bytes.clear();
        self.hold = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drained(output: &mut Output) -> String {
        let mut out = Vec::new();
        output.drain_into(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn held_output_is_released_with_attributes_in_the_start_tag() {
        let mut output = Output::default();
        output.push(b"<p>");
        assert!(output.begin_hold(7, false));
        assert!(!output.begin_hold(8, false), "only one hold at a time");
        output.push(b"<form id=a>");
        output.mark_tag_end(7);
        output.push(b"<input>");
        assert_eq!(drained(&mut output), "<p>");
        assert_eq!(output.held(), Some((7, 18)));
        assert!(!output.release(8, " x"));
        assert!(output.release(7, " toolname=\"a\""));
        output.push(b"</form>");
        assert_eq!(drained(&mut output), "<form id=a toolname=\"a\"><input></form>");
    }

    #[test]
    fn self_closing_tags_get_attributes_before_the_slash() {
        let mut output = Output::default();
        output.begin_hold(1, true);
        output.push(b"<form a=\"b\"/>");
        output.mark_tag_end(1);
        output.release(1, " c=\"d\"");
        assert_eq!(drained(&mut output), "<form a=\"b\" c=\"d\"/>");
    }

    #[test]
    fn without_a_start_tag_nothing_is_added() {
        let mut output = Output::default();
        output.begin_hold(1, false);
        output.push(b"text");
        output.release(1, " c=\"d\"");
        assert_eq!(drained(&mut output), "text");
    }
}
