//! Gateway integration tests: real upstreams, real gateways, real sockets, all on loopback
//! port 0. One binary; each module owns one area of behaviour.

mod cdp;
mod harness;

mod agent_api;
mod agent_failures;
mod agent_turn;
mod approver_api;
mod audit;
mod backup;
mod browser;
mod check_site;
mod cli;
mod compression;
mod csp;
mod dashboard;
mod demo;
mod deploy;
mod django_admin;
mod form_enforcement;
mod form_outcomes;
mod forms;
mod headers;
mod layers;
mod limits;
mod openai;
mod pages;
mod panel;
mod panel_forms;
mod panel_memory;
mod passthrough;
mod policy;
mod postgres;
mod process;
mod redaction;
mod reload;
mod runtime;
mod shared_audit;
mod sso_interop;
mod sso_tokens;
mod tls;
mod websocket;
