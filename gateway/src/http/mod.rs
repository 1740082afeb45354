//! Small HTTP pieces every layer shares, one of each: the bearer-token reader and hex.
//!
//! This room may use `http` and the standard library only; it knows no handler, no state and no
//! configuration, so anything in the gateway can use it without a cycle.

mod bearer;
mod hex;

pub use bearer::bearer_token;
pub use hex::{hex, unhex};
