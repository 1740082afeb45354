//! Small HTTP pieces every layer shares, one of each: the bearer-token reader, hex,
//! the JSON answer and the Server-Sent Events frame.
//!
//! This room may use `http`, `serde_json`, the response body type and the standard library only; it knows no handler, no state and no
//! configuration, so anything in the gateway can use it without a cycle.

pub mod body;
pub mod client;
pub mod content_type;
pub mod errors;
pub mod pages;
pub mod request_id;

mod answer;
mod bearer;
mod hex;
mod sse;

pub use answer::{json, text};
pub use bearer::bearer_token;
pub use hex::{hex, unhex};
pub use sse::sse_frame;
