//! Toolgate's gateway: the only crate that speaks HTTP. It wires the pure crates together —
//! `injector` (HTML rewriting) and `policy` (decisions) — behind a streaming reverse proxy.
//!
//! Start with `proxy.rs`: it reads top to bottom as the life of a request. `ARCHITECTURE.md`
//! at the repository root has the map and the invariants.

pub mod admin;
pub mod admin_backup;
pub mod admin_client;
pub mod agent;
pub mod app;
pub mod approvals;
pub mod approver_api;
pub mod audit;
pub mod audit_cli;
pub mod body;
pub mod cli;
pub mod clock;
pub mod config;
pub mod content_type;
pub mod dashboard_http;
pub mod dashboard_state;
pub mod decode;
#[cfg(feature = "demo")]
pub mod demo;
pub mod errors;
pub mod form_enforcement;
pub mod forwarding;
pub mod html;
pub mod http;
pub mod inventory;
pub mod llm;
pub mod metrics;
pub mod openai;
pub mod page_policy;
pub mod pages;
pub mod policy_cli;
pub mod policy_reload;
pub mod policy_versions;
pub mod proxy;
pub mod random;
pub mod reload;
pub mod request_id;
pub mod reserved;
pub mod rewrite_body;
pub mod secrets;
pub mod server;
pub mod shutdown;
pub mod sso;
pub mod state;
pub mod store;
pub mod store_cli;
pub mod telemetry;
pub mod tls;
pub mod turns;
pub mod upstream;
pub mod websocket;
