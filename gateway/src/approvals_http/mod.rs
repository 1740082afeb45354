//! The approvals over HTTP: the approver API on the gateway host (`api`) and the check that
//! holds an agent's submission to an approval-gated form until it is approved (`enforcement`).
//!
//! Sits above the shared state: may import `state`, `approvals`, `audit`, `config`, `http`,
//! `metrics`, `sso`; nothing imports it but `routes` and `proxy`.

pub mod api;
pub mod enforcement;
