//! Randomness from the operating system, for session ids, nonces, tickets and keys. A failing
//! random source is not something a security gateway can carry on without, so it panics.

/// `N` bytes from the operating system's random source.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if let Err(error) = getrandom::fill(&mut bytes) {
        panic!("operating system random source failed: {error}");
    }
    bytes
}
