//! The network below HTTP handling: taking connections off a listening socket (`accept`), the
//! limits on open connections (`connections`), the deadline for a connection's first byte
//! (`first_byte`), the listener's and the upstreams' TLS (`tls`), the keep-alive connections
//! to upstream sites (`pool`) and the client that talks to them through it (`upstream`). The
//! listener itself is `app/listener.rs`: it serves the router, which sits above everything here.
//!
//! Layer 2 of the gateway (ARCHITECTURE.md, "Code map"): may import `config`, `http`, `metrics`,
//! `support`.

pub mod accept;
pub mod connections;
pub mod first_byte;
pub mod pool;
pub mod tls;
pub mod upstream;
