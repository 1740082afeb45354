//! Small HTTP pieces every layer shares, one of each: the response body type and idle timeout
//! (`body`), errors and error pages (`errors`, `pages`), request ids, the browser's reading of
//! `Content-Type`, the content coding a client's `Accept-Encoding` prefers (`accept_encoding`),
//! the client and address of a request (`client`), the bearer-token reader, hex,
//! percent-decoding, the JSON answer and the Server-Sent Events frame.
//!
//! It knows no handler and no state, so anything in the gateway can use it without a cycle.
//!
//! Layer 1 of the gateway (ARCHITECTURE.md, "Code map"): may import `config`, `support`.

pub mod accept_encoding;
pub mod body;
pub mod client;
pub mod content_type;
pub mod errors;
pub mod pages;
pub mod request_id;

mod answer;
mod bearer;
mod hex;
mod percent;
mod sse;

pub use answer::{json, text};
pub use bearer::bearer_token;
pub use hex::{hex, unhex};
pub use percent::percent_decode;
pub use sse::sse_frame;
