//! The network edge: the user-facing listener (TCP, TLS, HTTP/1.1 and HTTP/2), the listener's
//! and upstreams' TLS, and the pooled client that talks to upstream sites.
//!
//! May import: `config`, `http`, `metrics`, `support`, `audit` (certificate events), `app` (the
//! gateway state and reload handle the listener serves) and `routes` (where each request goes).

pub mod tls;
pub mod upstream;
