//! Server-Sent Events frames: the one writer for the panel's turns, the OpenAI-compatible stream
//! and the demo's stand-in model.
//!
//! A frame is an optional `event:` line and the data, one `data:` line per line of it, then a
//! blank line (the WHATWG event-stream format), so data with a line break can never end a frame
//! early or forge another event.

/// One frame: `event: <name>` when named, the data's lines, a blank line.
pub fn sse_frame(event: Option<&str>, data: &str) -> String {
    let mut frame = String::with_capacity(data.len() + 16);
    if let Some(name) = event {
        frame.push_str("event: ");
        frame.push_str(name);
        frame.push('\n');
    }
    for line in data.split(['\n', '\r']) {
        frame.push_str("data: ");
        frame.push_str(line);
        frame.push('\n');
    }
    frame.push('\n');
    frame
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_name_the_event_and_split_lines() {
        assert_eq!(sse_frame(None, "[DONE]"), "data: [DONE]\n\n");
        assert_eq!(sse_frame(Some("text"), "{\"a\":1}"), "event: text\ndata: {\"a\":1}\n\n");
        // A line break in the data stays inside the frame.
        assert_eq!(sse_frame(None, "one\n\nevent: forged"), "data: one\ndata: \ndata: event: forged\n\n");
    }
}
