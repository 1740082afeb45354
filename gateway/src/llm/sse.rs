//! A Server-Sent Events decoder (the WHATWG `text/event-stream` rules) for answers streamed in
//! arbitrary pieces: lines end in LF, CRLF or CR, `data:` lines of one event are joined with
//! LF, comments and other fields are ignored, and one event may not exceed a size bound.

/// Why the event stream cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an event of the answer is larger than {0} bytes")]
pub(crate) struct EventTooLarge(pub(crate) usize);

/// Turns bytes into the `data` of each complete event.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    /// Bytes not yet split into lines.
    pending: Vec<u8>,
    /// The data of the event being read, each line followed by LF.
    data: Vec<u8>,
    max_event_bytes: usize,
    started: bool,
}

impl SseDecoder {
    /// A decoder that refuses events larger than `max_event_bytes`.
    pub(crate) fn new(max_event_bytes: usize) -> Self {
        Self { pending: Vec::new(), data: Vec::new(), max_event_bytes, started: false }
    }

    /// Feeds the next bytes; returns the data of every event they complete.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, EventTooLarge> {
        self.pending.extend_from_slice(bytes);
        if !self.started && self.pending.len() >= 3 {
            self.started = true;
            if self.pending.starts_with(b"\xEF\xBB\xBF") {
                self.pending.drain(..3);
            }
        }
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.pending[start..].iter().position(|&b| b == b'\n' || b == b'\r') {
            let end = start + offset;
            let next = match self.pending[end] {
                b'\r' if end + 1 == self.pending.len() => break, // An LF may follow in the next piece.
                b'\r' if self.pending[end + 1] == b'\n' => end + 2,
                _ => end + 1,
            };
            let line = self.pending[start..end].to_vec();
            self.line(&line, &mut events);
            start = next;
        }
        self.pending.drain(..start);
        if self.pending.len() + self.data.len() > self.max_event_bytes {
            return Err(EventTooLarge(self.max_event_bytes));
        }
        Ok(events)
    }

    /// At the end of the stream: a last line without its terminator still counts, and an event
    /// missing its blank line is delivered (servers sometimes end right after `data: [DONE]`).
    pub(crate) fn finish(&mut self) -> Vec<Vec<u8>> {
        let mut events = Vec::new();
        let rest = std::mem::take(&mut self.pending);
        let rest = rest.strip_suffix(b"\r").unwrap_or(&rest);
        if !rest.is_empty() {
            self.line(rest, &mut events);
        }
        self.line(b"", &mut events);
        events
    }

    fn line(&mut self, line: &[u8], events: &mut Vec<Vec<u8>>) {
        if line.is_empty() {
            // Dispatch: the data without its last LF; an event without data is no event.
            if self.data.pop().is_some() {
                events.push(std::mem::take(&mut self.data));
            }
            return;
        }
        if line.starts_with(b":") {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        if field == b"data" {
            self.data.extend_from_slice(value);
            self.data.push(b'\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], piece: usize) -> Vec<Vec<u8>> {
        let mut decoder = SseDecoder::new(1024);
        let mut events = Vec::new();
        for chunk in input.chunks(piece) {
            events.extend(decoder.push(chunk).expect("within bounds"));
        }
        events.extend(decoder.finish());
        events
    }

    #[test]
    fn events_survive_any_split_and_any_line_ending() {
        let input = b"\xEF\xBB\xBF: keep-alive\r\n\r\ndata: {\"a\":1}\r\n\r\nevent: x\rdata:two\rdata: lines\r\rid: 7\ndata: [DONE]\n\n";
        let expected: Vec<Vec<u8>> = vec![b"{\"a\":1}".to_vec(), b"two\nlines".to_vec(), b"[DONE]".to_vec()];
        for piece in 1..input.len() {
            assert_eq!(decode_in_pieces(input, piece), expected, "pieces of {piece} bytes");
        }
    }

    #[test]
    fn a_last_event_without_blank_line_is_delivered_at_the_end() {
        assert_eq!(decode_in_pieces(b"data: [DONE]", 4), vec![b"[DONE]".to_vec()]);
        // `data:` with no value is an event with empty data; a comment alone is no event.
        assert_eq!(decode_in_pieces(b"data:\n\n: only a comment\n\n", 3), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn an_oversized_event_is_refused_even_without_line_breaks() {
        let mut decoder = SseDecoder::new(16);
        assert_eq!(decoder.push(b"data: 0123456789"), Ok(Vec::new()));
        assert_eq!(decoder.push(b"abcdef"), Err(EventTooLarge(16)));
        let mut decoder = SseDecoder::new(16);
        assert_eq!(decoder.push(b"data: 0123456789\ndata: abcdef\n"), Err(EventTooLarge(16)));
    }
}
