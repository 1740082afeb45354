//! The approvals over HTTP: the approver API on the gateway host (`api`) and the check that
//! holds an agent's submission to an approval-gated form until it is approved (`enforcement`).
//!
//! Layer 5 of the gateway (ARCHITECTURE.md, "Code map"): may import `approvals`, `audit`, `config`,
//! `http`, `metrics`, `sso`, `state`, `support`.

pub mod api;
pub mod enforcement;
