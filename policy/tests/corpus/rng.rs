//! A small seeded PRNG (SplitMix64) and the draws the generators need.
//!
//! The corpus must be the same on every machine and every run for a given seed, so nothing here
//! reads the clock or the OS: one `u64` state, advanced by SplitMix64 (Steele, Lea and Flood),
//! which passes BigCrush and is more than good enough for picking test data.

/// Decimal digits.
pub const DIGITS: &[u8] = b"0123456789";
/// Upper-case letters.
pub const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// Lower-case letters.
pub const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
/// Lower-case hex digits.
pub const HEX: &[u8] = b"0123456789abcdef";
/// Base62 in GitHub's order: digits, upper case, lower case.
pub const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Upper-case letters and digits.
pub const UPPER_DIGITS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// Lower-case letters and digits.
pub const LOWER_DIGITS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// SplitMix64.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// An independent generator derived from this one and `stream` (so one part of the corpus can
    /// change without shifting every other part).
    pub fn fork(&mut self, stream: u64) -> Rng {
        Rng::new(self.next_u64() ^ stream.wrapping_mul(0xA076_1D64_78BD_642F))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by Lemire's multiply-shift (the bias is below 2^-40 for the
    /// small `n` used here).
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0, "below(0)");
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    /// A uniformly chosen element.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A uniformly chosen word.
    pub fn word(&mut self, words: &[&'static str]) -> &'static str {
        words[self.below(words.len())]
    }

    /// An element chosen by weight (`(weight, item)` pairs, weights > 0 in total).
    pub fn weighted<'a, T>(&mut self, items: &'a [(u32, T)]) -> &'a T {
        let total: u32 = items.iter().map(|(weight, _)| weight).sum();
        let mut target = self.below(total as usize) as u32;
        for (weight, item) in items {
            if target < *weight {
                return item;
            }
            target -= weight;
        }
        &items[items.len() - 1].1
    }

    /// `n` characters drawn from `alphabet`.
    pub fn string(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n).map(|_| char::from(alphabet[self.below(alphabet.len())])).collect()
    }

    /// Between `low` and `high` characters drawn from `alphabet`.
    pub fn string_between(&mut self, alphabet: &[u8], low: usize, high: usize) -> String {
        let n = self.range(low, high);
        self.string(alphabet, n)
    }

    /// Between `low` and `high` decimal digits.
    pub fn digits_between(&mut self, low: usize, high: usize) -> String {
        self.string_between(DIGITS, low, high)
    }

    /// `n` decimal digits.
    pub fn digits(&mut self, n: usize) -> String {
        self.string(DIGITS, n)
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}
