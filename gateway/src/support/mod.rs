//! Leaf helpers with no knowledge of the gateway: the wall clock (`clock`), random tokens
//! (`random`), per-key async locks (`keyed_lock`) and the sealing of records at rest
//! (`sealing`). Imports nothing from the crate.
//!
//! Layer 0 of the gateway (ARCHITECTURE.md, "Code map"): imports nothing from the crate.

pub mod clock;
pub mod keyed_lock;
pub mod random;
pub mod sealing;
