//! Email addresses: a local part, `@`, and a dotted domain with an alphabetic top-level label.

/// The regex alternative for email candidates.
pub(crate) const PATTERN: &str =
    r"[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)*\.\p{L}{2,24}(?-u:\b)";

/// The byte length of `candidate` when it is an address; the pattern already is the check, so
/// this only refuses a local part made of dots.
pub(crate) fn recognize(candidate: &str) -> Option<usize> {
    let local = candidate.split('@').next()?;
    (!local.bytes().all(|b| b == b'.')).then_some(candidate.len())
}
