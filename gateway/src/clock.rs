//! The wall clock as the gateway reads it for expiries (sessions, tickets, tokens, captured
//! audit texts): whole seconds since the UNIX epoch. A clock before 1970 reads as 0.

/// Seconds since the UNIX epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}
