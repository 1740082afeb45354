//! The wall clock as the gateway reads it for expiries (sessions, tickets, tokens, captured
//! audit texts): whole seconds since the UNIX epoch (a clock before 1970 reads as 0), their
//! RFC 3339 form, and the modification stamps that tell a changed file (policy, certificates).

/// Seconds since the UNIX epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}

/// Milliseconds since the UNIX epoch (for times other processes compare, where `Instant`s cannot
/// travel).
pub fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}

/// A UNIX time as RFC 3339 UTC, to the second.
pub fn utc(seconds: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds))
        .to_string()
}

/// What identifies a version of a file without reading it: its modification time and size.
pub fn file_stamp(path: &std::path::Path) -> Option<(std::time::SystemTime, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}
