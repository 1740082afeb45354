//! Leaf helpers with no knowledge of the gateway: the wall clock (`clock`) and random tokens
//! (`random`). Imports nothing from the crate.
//!
//! Layer 0 of the gateway (ARCHITECTURE.md, "Code map"): imports nothing from the crate.

pub mod clock;
pub mod random;
