//! Toolgate's gateway: the only crate that speaks HTTP. It wires the pure crates together —
//! `injector` (HTML rewriting) and `policy` (decisions) — behind a streaming reverse proxy.
//!
//! Start with `routes/`: it maps each request to the handler that owns it. `ARCHITECTURE.md` at
//! the repository root has the map of these folders and the direction of their imports.
//!
//! The public modules are what the binary, the benchmarks and the integration tests use:
//! starting a gateway (`app`, `config`, `demo`), the command line (`cli`), and the pieces the
//! tests look into (`audit`, `store`, `sso`, `approvals`, `llm`, `metrics`, `http`, `support`,
//! `admin`). Everything else is internal to the crate.

pub mod admin;
pub(crate) mod agent;
pub mod app;
pub mod approvals;
pub(crate) mod approvals_http;
pub mod audit;
pub mod cli;
pub mod config;
pub(crate) mod dashboard_http;
pub(crate) mod dashboard_state;
#[cfg(feature = "demo")]
pub mod demo;
pub mod http;
pub(crate) mod inventory;
pub mod llm;
pub mod metrics;
pub(crate) mod net;
pub(crate) mod openai;
pub(crate) mod outcomes;
pub(crate) mod page;
pub(crate) mod policy_store;
pub(crate) mod proxy;
pub(crate) mod routes;
pub mod sso;
pub(crate) mod state;
pub mod store;
pub mod support;

/// The agent-turn registry's types (owners, tool results, refusals), for driving replicas from
/// the integration tests.
pub use state::turns;
