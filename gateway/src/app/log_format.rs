//! The JSON log line: one object per line, written straight into `tracing-subscriber`'s line
//! buffer.
//!
//! The shape is `tracing-subscriber`'s own JSON with `flatten_event` and the current span:
//! `timestamp`, `level`, the event's fields (`message` first), `target`, then `span` with the
//! span's fields and its `name`. `tracing-subscriber` builds that line through `serde_json` and
//! an `io::Write` adaptor that checks every small piece for UTF-8 again, and it stores a span's
//! fields as a JSON object that it parses back for every line logged inside the span; on the
//! per-request `answered` line that was about 36,000 instructions, a quarter of a JSON request's
//! whole cost. Here a span's fields are kept as a ready JSON fragment (`"k":v,…`) and copied
//! into each line as they are.

use std::fmt::{self, Write as _};
use tracing::field::{Field, Visit};
use tracing::span::Record;
use tracing::{Event, Subscriber};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// Formats an event as one JSON object and a newline.
pub struct JsonLine;

/// Formats a span's fields as a JSON fragment, `"key":value` pairs separated by commas.
pub struct JsonFields;

impl<S> FormatEvent<S, JsonFields> for JsonLine
where
    S: Subscriber + for<'lookup> LookupSpan<'lookup>,
{
    fn format_event(
        &self,
        context: &FmtContext<'_, S, JsonFields>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let metadata = event.metadata();
        writer.write_str("{\"timestamp\":\"")?;
        SystemTime.format_time(&mut writer)?;
        write!(writer, "\",\"level\":\"{}\"", metadata.level())?;
        let mut fields = JsonVisitor { writer: writer.by_ref(), first: false, result: Ok(()) };
        event.record(&mut fields);
        fields.result?;
        writer.write_str(",\"target\":")?;
        write_string(&mut writer, metadata.target())?;
        if let Some(span) = context.parent_span() {
            writer.write_str(",\"span\":{")?;
            let extensions = span.extensions();
            if let Some(stored) = extensions.get::<FormattedFields<JsonFields>>()
                && !stored.fields.is_empty()
            {
                writer.write_str(&stored.fields)?;
                writer.write_char(',')?;
            }
            writer.write_str("\"name\":")?;
            write_string(&mut writer, span.name())?;
            writer.write_char('}')?;
        }
        writer.write_str("}\n")
    }
}

impl<'writer> FormatFields<'writer> for JsonFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let mut visitor = JsonVisitor { writer, first: true, result: Ok(()) };
        fields.record(&mut visitor);
        visitor.result
    }

    fn add_fields(&self, current: &'writer mut FormattedFields<Self>, fields: &Record<'_>) -> fmt::Result {
        let first = current.fields.is_empty();
        let mut visitor = JsonVisitor { writer: current.as_writer(), first, result: Ok(()) };
        fields.record(&mut visitor);
        visitor.result
    }
}

/// Writes fields as `"name":value` pairs; strings and `Debug` values escaped as JSON strings.
struct JsonVisitor<'writer> {
    writer: Writer<'writer>,
    /// No comma before the next pair.
    first: bool,
    result: fmt::Result,
}

impl JsonVisitor<'_> {
    fn pair(&mut self, field: &Field, value: impl FnOnce(&mut Writer<'_>) -> fmt::Result) {
        if self.result.is_err() {
            return;
        }
        let separator = if std::mem::take(&mut self.first) { "" } else { "," };
        self.result = self
            .writer
            .write_str(separator)
            .and_then(|()| write_string(&mut self.writer, field.name()))
            .and_then(|()| self.writer.write_char(':'))
            .and_then(|()| value(&mut self.writer));
    }
}

impl Visit for JsonVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.pair(field, |writer| write_string(writer, value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.pair(field, |writer| write!(writer, "{value}"));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.pair(field, |writer| write!(writer, "{value}"));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.pair(field, |writer| write!(writer, "{value}"));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        // JSON has no NaN or infinity; Rust's `Display` of a finite f64 is a JSON number.
        self.pair(field, |writer| {
            if value.is_finite() { write!(writer, "{value}") } else { writer.write_str("null") }
        });
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.pair(field, |writer| {
            writer.write_char('"')?;
            write!(Escaping(writer), "{value:?}")?;
            writer.write_char('"')
        });
    }
}

/// `text` as a JSON string, quotes included.
fn write_string(writer: &mut impl fmt::Write, text: &str) -> fmt::Result {
    writer.write_char('"')?;
    Escaping(writer).write_str(text)?;
    writer.write_char('"')
}

/// Escapes what passes through for the inside of a JSON string (RFC 8259, section 7): the
/// quote, the backslash and the control characters; everything else is copied in runs.
struct Escaping<'a, W: fmt::Write>(&'a mut W);

impl<W: fmt::Write> fmt::Write for Escaping<'_, W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let mut plain_from = 0;
        for (at, byte) in text.bytes().enumerate() {
            let escaped = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            self.0.write_str(&text[plain_from..at])?;
            if escaped.is_empty() {
                write!(self.0, "\\u{byte:04x}")?;
            } else {
                self.0.write_str(escaped)?;
            }
            plain_from = at + 1;
        }
        self.0.write_str(&text[plain_from..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::fmt::MakeWriter;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("capture").extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;
        fn make_writer(&'a self) -> Captured {
            self.clone()
        }
    }

    /// The lines `log` writes, each parsed as JSON.
    fn lines(log: impl FnOnce()) -> Vec<serde_json::Value> {
        let captured = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(captured.clone())
            .fmt_fields(JsonFields)
            .event_format(JsonLine)
            .finish();
        tracing::subscriber::with_default(subscriber, log);
        let text = String::from_utf8(captured.0.lock().expect("capture").clone()).expect("UTF-8");
        assert!(text.ends_with('\n'), "{text:?}");
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
            .collect()
    }

    #[test]
    fn an_event_in_a_span_has_the_documented_shape() {
        let lines = lines(|| {
            let span = tracing::info_span!("request", request_id = "5d4e", method = %"GET", site = "a");
            let _entered = span.enter();
            tracing::info!(
                route = "page",
                status = 200_u16,
                latency_ms = 3.5,
                ok = true,
                delta = -2_i64,
                "answered"
            );
        });
        let line = &lines[0];
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["message"], "answered");
        assert_eq!(line["route"], "page");
        assert_eq!(line["status"], 200);
        assert_eq!(line["latency_ms"], 3.5);
        assert_eq!(line["ok"], true);
        assert_eq!(line["delta"], -2);
        assert_eq!(line["target"], module_path!());
        assert_eq!(
            line["span"],
            serde_json::json!({"request_id": "5d4e", "method": "GET", "site": "a", "name": "request"})
        );
        let timestamp = line["timestamp"].as_str().expect("timestamp");
        assert!(
            timestamp.len() >= 20 && timestamp.ends_with('Z') && timestamp.as_bytes()[10] == b'T',
            "{timestamp}"
        );
        // `message` comes first, as in tracing-subscriber's own JSON.
        let text = line.to_string();
        assert!(text.find("\"message\"") < text.find("\"route\""), "{text}");
    }

    #[test]
    fn strings_and_debug_values_are_escaped_and_non_finite_numbers_are_null() {
        let awkward = "quote \" backslash \\ newline \n tab \t bell \u{7} nul \u{0} é ✓ \u{2028}";
        let lines = lines(|| {
            tracing::warn!(text = awkward, debug = ?awkward, nan = f64::NAN, infinite = f64::INFINITY, "{}", awkward);
        });
        let line = &lines[0];
        assert_eq!(line["text"], awkward);
        assert_eq!(line["debug"], format!("{awkward:?}"));
        assert_eq!(line["message"], awkward);
        assert!(line["nan"].is_null() && line["infinite"].is_null(), "{line}");
        assert!(line.get("span").is_none(), "no span, no span object: {line}");
    }

    #[test]
    fn fields_recorded_later_join_the_span_and_empty_spans_keep_only_their_name() {
        let lines = lines(|| {
            let span = tracing::info_span!("turn", user = tracing::field::Empty, step = 1_u64);
            span.record("user", "alice");
            span.in_scope(|| tracing::info!("inside"));
            tracing::info_span!("quiet").in_scope(|| tracing::info!("inside quiet"));
        });
        assert_eq!(lines[0]["span"], serde_json::json!({"step": 1, "user": "alice", "name": "turn"}));
        assert_eq!(lines[1]["span"], serde_json::json!({"name": "quiet"}));
    }
}
