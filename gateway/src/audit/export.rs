//! Exports for SIEMs: JSON lines (one record per line, exactly as stored, so a re-import equals
//! the log) and RFC 5424 syslog. Values are never written raw: JSON escapes control characters
//! (CR, LF, ESC, NUL), and syslog structured-data values escape `"`, `\` and `]`, so a user name
//! or path cannot forge a line.

use super::chain::Record;
use std::fmt::Write as _;

/// Syslog facility 13 (log audit), severity 6 (informational).
const PRIORITY: u8 = 13 * 8 + 6;
/// The private enterprise number used for Toolgate's structured data (the "example" number
/// RFC 5424 reserves for documentation is 32473; operators can rewrite it in their collector).
const SD_ID: &str = "toolgate@32473";

/// One JSON line.
pub fn json_line(record: &Record) -> String {
    serde_json::to_string(record).unwrap_or_default()
}

/// One RFC 5424 line: `<PRI>1 TIMESTAMP HOST APP PROCID MSGID [SD] MSG`.
pub fn syslog_line(record: &Record, hostname: &str) -> String {
    let event = &record.event;
    let kind = event.kind.map_or("unknown", |kind| kind.as_str());
    let mut line =
        format!("<{PRIORITY}>1 {} {} toolgate - {kind} [{SD_ID}", record.time, header_field(hostname));
    let mut parameter = |name: &str, value: &str| {
        let _ = write!(line, " {name}=\"{}\"", escape_parameter(value));
    };
    parameter("seq", &record.seq.to_string());
    parameter("hash", &record.hash);
    if let Some(actor) = &event.actor {
        parameter("user", &actor.user_id);
    }
    if let Some(site) = &event.site {
        parameter("site", site);
    }
    if let Some(decision) = &event.decision {
        parameter("decision", decision);
    }
    line.push_str("] ");
    line.push_str(&json_line(record));
    line
}

/// Header fields are printable US-ASCII without spaces (RFC 5424 §6); anything else becomes `_`.
fn header_field(value: &str) -> String {
    let cleaned: String =
        value.chars().take(255).map(|c| if c.is_ascii_graphic() { c } else { '_' }).collect();
    if cleaned.is_empty() { "-".into() } else { cleaned }
}

/// Structured-data values escape `"`, `\` and `]` (RFC 5424 §6.3.3); control characters are
/// written as `\u{..}` so no value can break the line.
fn escape_parameter(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for character in value.chars() {
        match character {
            '"' | '\\' | ']' => {
                escaped.push('\\');
                escaped.push(character);
            }
            control if control.is_control() => {
                let _ = write!(escaped, "\\u{{{:x}}}", u32::from(control));
            }
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::event::{AuditEvent, EventKind};

    #[test]
    fn hostile_values_cannot_break_lines() {
        let hostile = "eve\r\nFake: record\u{1b}[31m\0\"]\\";
        let event = AuditEvent::new(EventKind::Login).actor(hostile, None, &[]).site(&"x".repeat(65_536));
        let record = Record::seal(7, "2026-01-01T00:00:00.000Z".into(), "0".repeat(64), event);
        for line in [json_line(&record), syslog_line(&record, "gw host\n")] {
            assert!(
                !line.contains('\n')
                    && !line.contains('\r')
                    && !line.contains('\u{1b}')
                    && !line.contains('\0'),
                "{line:.200}"
            );
        }
        let syslog = syslog_line(&record, "gw host\n");
        assert!(
            syslog.starts_with(
                "<110>1 2026-01-01T00:00:00.000Z gw_host_ toolgate - login [toolgate@32473 seq=\"7\""
            ),
            "{syslog:.200}"
        );
        assert!(
            syslog.contains("user=\"eve\\u{d}\\u{a}Fake: record\\u{1b}[31m\\u{0}\\\"\\]\\\\\""),
            "{syslog:.300}"
        );
        let back: Record = serde_json::from_str(&json_line(&record)).expect("json line parses");
        assert_eq!(back, record, "JSON lines round-trip");
    }
}
