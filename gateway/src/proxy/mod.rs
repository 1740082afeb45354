//! Forwarding to a site: the headers the upstream sees and the browser gets back
//! (`forwarding`), and WebSocket tunnels (`websocket`).
//!
//! May import: `config`, `http`, `net`, `sso` (identities and cookies), `support`.

pub mod forwarding;
pub mod websocket;
