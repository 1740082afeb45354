//! The policy administration dashboard: server-rendered pages and form validation.
//!
//! Empty for now on purpose: the dashboard issue fills it. It will render and validate but own
//! no sockets; the gateway serves it on a host of its own (never a site host).
