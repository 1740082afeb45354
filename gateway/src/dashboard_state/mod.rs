//! What the dashboard keeps between requests, held by the shared state: activity samples for the
//! overview's charts and the last audit chain verification. Data only: this room imports the
//! metrics and the audit log, never a handler or the `Gateway` state.
//!
//! Layer 3 of the gateway (ARCHITECTURE.md, "Code map"): may import `audit`, `metrics`, `support`.

mod activity;
mod chain_status;

pub use activity::{Activity, sample_periodically};
pub use chain_status::ChainCache;

/// The state the dashboard keeps between requests.
#[derive(Default)]
pub struct DashboardState {
    /// Traffic and decisions sampled over time (the overview's charts).
    pub activity: Activity,
    /// The last audit chain verification.
    pub chain: ChainCache,
}
