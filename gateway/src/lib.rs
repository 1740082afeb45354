//! Toolgate's gateway: the only crate that speaks HTTP. It wires the pure crates together —
//! `injector` (HTML rewriting) and `policy` (decisions) — behind a streaming reverse proxy.
//!
//! Start with `routes/`: it maps each request to the handler that owns it. `ARCHITECTURE.md` at
//! the repository root has the map of these folders and the direction of their imports.

pub mod admin;
pub mod agent;
pub mod app;
pub mod approvals;
pub mod approvals_http;
pub mod audit;
pub mod cli;
pub mod config;
pub mod dashboard_http;
pub mod dashboard_state;
#[cfg(feature = "demo")]
pub mod demo;
pub mod http;
pub mod inventory;
pub mod llm;
pub mod metrics;
pub mod net;
pub mod openai;
pub mod page;
pub mod policy_store;
pub mod proxy;
pub mod routes;
pub mod sso;
pub mod state;
pub mod store;
pub mod support;
