//! Every Prometheus metric the gateway exports, registered in one place.
//!
//! Names follow `toolgate_*` with base units and `_total`/`_seconds` suffixes. Labels are
//! bounded: site ids come from the configuration, reasons and routes from fixed lists in code.
//! A user id or a path never becomes a label.
//!
//! Layer 0 of the gateway (ARCHITECTURE.md, "Code map"): imports nothing from the crate.

mod site;

pub use site::{PageCounters, SiteLabels, SiteRequestMetrics};

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};

/// The gateway's metrics and the registry that exports them.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    /// Requests answered, by site, route and status class.
    pub requests: IntCounterVec,
    /// Time to response headers, by site and route.
    pub request_duration: HistogramVec,
    /// Upstream failures, by site and reason.
    pub upstream_errors: IntCounterVec,
    /// Bytes of HTML that went through the rewriter (after decoding), by site.
    pub rewritten_bytes: IntCounterVec,
    /// HTML responses the rewriter refused or aborted, by site and reason.
    pub rewrite_failures: IntCounterVec,
    /// Client connections currently open.
    pub active_connections: IntGauge,
    /// `toolgate_connections_refused_total{reason}`: connections closed at accept because of
    /// `limits.max_connections` (`total`) or `limits.max_connections_per_ip` (`per_ip`), and
    /// connections closed for sending nothing within `timeouts.header_read` (`silent`).
    pub connections_refused: IntCounterVec,
    /// Policy reload attempts, by outcome (`applied`, `rejected`).
    pub policy_reloads: IntCounterVec,
    /// Rules in the policy in force.
    pub policy_rules: IntGauge,
    /// `toolgate_config_reloads_total{outcome}`: configuration reloads (SIGHUP), `applied` or
    /// `rejected`.
    pub config_reloads: IntCounterVec,
    /// `toolgate_tls_reloads_total{outcome}`: listener certificate reloads, `applied` or `rejected`.
    pub tls_reloads: IntCounterVec,
    /// Audit records made durable.
    pub audit_records: IntCounter,
    /// Audit batches that could not be written.
    pub audit_write_failures: IntCounter,
    /// `toolgate_audit_chain_damaged`: 1 when the last full verification of the audit chain
    /// found damage, 0 otherwise (and before the first one finishes).
    pub audit_chain_damaged: IntGauge,
    /// Sign-in events by outcome (`login`, `login_failed`, `logout`, `backchannel_logout`,
    /// `backchannel_refused`, `refreshed`, `refresh_failed`).
    pub sign_ins: IntCounterVec,
    /// `toolgate_catalog_decisions_total{site, kind, decision}`: what pages were told to show.
    pub catalog_decisions: IntCounterVec,
    /// `toolgate_inventory_changes_total{site, change}`: new, changed, ignored, store_failed.
    pub inventory_changes: IntCounterVec,
    /// `toolgate_page_filter_total{site, action}`: tools, contexts and leaks removed from pages,
    /// forms turned into tools.
    pub page_filter: IntCounterVec,
    /// `toolgate_llm_calls_total{site, outcome}`: model calls by outcome (`ok` or an error reason).
    pub llm_calls: IntCounterVec,
    /// `toolgate_llm_tokens_total{direction}`: tokens in and out, as the model reported them.
    pub llm_tokens: IntCounterVec,
    /// `toolgate_llm_call_duration_seconds`: one model answer, request to last chunk.
    pub llm_latency: Histogram,
    /// `toolgate_tool_decisions_total{site, decision}`: the policy's answer to each model tool call.
    pub tool_decisions: IntCounterVec,
    /// `toolgate_approvals_total{event}`: approvals requested, approved, denied, expired.
    pub approvals: IntCounterVec,
    /// `toolgate_enforced_blocks_total{site, reason}`: agent-marked form submissions the proxy
    /// refused (reasons from the form guard and the approval errors).
    pub enforced_blocks: IntCounterVec,
    /// `toolgate_store_backups_total{outcome}`: backups through the admin listener (`completed`,
    /// `failed`, `refused`).
    pub store_backups: IntCounterVec,
}

impl Metrics {
    /// Creates and registers every metric.
    pub fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new("toolgate_requests_total", "Requests answered by the gateway."),
            &["site", "route", "status"],
        );
        let request_duration = HistogramVec::new(
            HistogramOpts::new("toolgate_request_duration_seconds", "Time from request to response headers.")
                .buckets(vec![
                    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                ]),
            &["site", "route"],
        );
        let upstream_errors = IntCounterVec::new(
            Opts::new("toolgate_upstream_errors_total", "Upstream failures by reason."),
            &["site", "reason"],
        );
        let rewritten_bytes = IntCounterVec::new(
            Opts::new("toolgate_rewritten_bytes_total", "HTML bytes streamed through the rewriter."),
            &["site"],
        );
        let rewrite_failures = IntCounterVec::new(
            Opts::new("toolgate_rewrite_failures_total", "HTML responses refused or cut by the rewriter."),
            &["site", "reason"],
        );
        let active_connections =
            IntGauge::new("toolgate_active_connections", "Client connections currently open.");
        let connections_refused = IntCounterVec::new(
            Opts::new(
                "toolgate_connections_refused_total",
                "Client connections refused or closed early, by reason.",
            ),
            &["reason"],
        );
        let policy_reloads = IntCounterVec::new(
            Opts::new("toolgate_policy_reloads_total", "Policy reload attempts by outcome."),
            &["outcome"],
        );
        let policy_rules = IntGauge::new("toolgate_policy_rules", "Rules in the policy in force.");
        let config_reloads = IntCounterVec::new(
            Opts::new("toolgate_config_reloads_total", "Configuration reload attempts by outcome."),
            &["outcome"],
        );
        let tls_reloads = IntCounterVec::new(
            Opts::new("toolgate_tls_reloads_total", "Listener certificate reload attempts by outcome."),
            &["outcome"],
        );
        let sign_ins = IntCounterVec::new(
            Opts::new("toolgate_sign_in_events_total", "Sign-in events by outcome."),
            &["outcome"],
        );
        let catalog_decisions = IntCounterVec::new(
            Opts::new("toolgate_catalog_decisions_total", "Policy answers to page catalog reports."),
            &["site", "kind", "decision"],
        );
        let inventory_changes = IntCounterVec::new(
            Opts::new("toolgate_inventory_changes_total", "Tool inventory updates by kind of change."),
            &["site", "change"],
        );
        let page_filter = IntCounterVec::new(
            Opts::new("toolgate_page_filter_total", "Page elements removed or rewritten by the filter."),
            &["site", "action"],
        );
        let llm_calls = IntCounterVec::new(
            Opts::new("toolgate_llm_calls_total", "Model calls by outcome."),
            &["site", "outcome"],
        );
        let llm_tokens = IntCounterVec::new(
            Opts::new("toolgate_llm_tokens_total", "Model tokens by direction."),
            &["direction"],
        );
        let llm_latency = Histogram::with_opts(
            HistogramOpts::new(
                "toolgate_llm_call_duration_seconds",
                "One model answer, request to last chunk.",
            )
            .buckets(vec![0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0]),
        );
        let tool_decisions = IntCounterVec::new(
            Opts::new("toolgate_tool_decisions_total", "Policy decisions on the model's tool calls."),
            &["site", "decision"],
        );
        let approvals = IntCounterVec::new(
            Opts::new("toolgate_approvals_total", "Approvals requested and decided."),
            &["event"],
        );
        let enforced_blocks = IntCounterVec::new(
            Opts::new(
                "toolgate_enforced_blocks_total",
                "Form submissions refused for want of a valid approval.",
            ),
            &["site", "reason"],
        );
        let store_backups = IntCounterVec::new(
            Opts::new("toolgate_store_backups_total", "Store backups through the admin listener by outcome."),
            &["outcome"],
        );
        let audit_records = IntCounter::new("toolgate_audit_records_total", "Audit records made durable.");
        let audit_write_failures = IntCounter::new(
            "toolgate_audit_write_failures_total",
            "Audit batches that could not be written.",
        );
        let audit_chain_damaged = IntGauge::new(
            "toolgate_audit_chain_damaged",
            "1 when the last full verification of the audit chain found damage, else 0.",
        );
        let metrics = (|| -> prometheus::Result<Self> {
            let requests = requests?;
            let request_duration = request_duration?;
            let upstream_errors = upstream_errors?;
            let rewritten_bytes = rewritten_bytes?;
            let rewrite_failures = rewrite_failures?;
            let active_connections = active_connections?;
            let connections_refused = connections_refused?;
            let policy_reloads = policy_reloads?;
            let policy_rules = policy_rules?;
            let config_reloads = config_reloads?;
            let tls_reloads = tls_reloads?;
            let sign_ins = sign_ins?;
            let catalog_decisions = catalog_decisions?;
            let inventory_changes = inventory_changes?;
            let page_filter = page_filter?;
            let llm_calls = llm_calls?;
            let llm_tokens = llm_tokens?;
            let llm_latency = llm_latency?;
            let tool_decisions = tool_decisions?;
            let approvals = approvals?;
            let enforced_blocks = enforced_blocks?;
            let store_backups = store_backups?;
            let audit_records = audit_records?;
            let audit_write_failures = audit_write_failures?;
            let audit_chain_damaged = audit_chain_damaged?;
            registry.register(Box::new(requests.clone()))?;
            registry.register(Box::new(request_duration.clone()))?;
            registry.register(Box::new(upstream_errors.clone()))?;
            registry.register(Box::new(rewritten_bytes.clone()))?;
            registry.register(Box::new(rewrite_failures.clone()))?;
            registry.register(Box::new(active_connections.clone()))?;
            registry.register(Box::new(connections_refused.clone()))?;
            registry.register(Box::new(policy_reloads.clone()))?;
            registry.register(Box::new(policy_rules.clone()))?;
            registry.register(Box::new(config_reloads.clone()))?;
            registry.register(Box::new(tls_reloads.clone()))?;
            registry.register(Box::new(sign_ins.clone()))?;
            registry.register(Box::new(catalog_decisions.clone()))?;
            registry.register(Box::new(inventory_changes.clone()))?;
            registry.register(Box::new(page_filter.clone()))?;
            registry.register(Box::new(llm_calls.clone()))?;
            registry.register(Box::new(llm_tokens.clone()))?;
            registry.register(Box::new(llm_latency.clone()))?;
            registry.register(Box::new(tool_decisions.clone()))?;
            registry.register(Box::new(approvals.clone()))?;
            registry.register(Box::new(enforced_blocks.clone()))?;
            registry.register(Box::new(store_backups.clone()))?;
            registry.register(Box::new(audit_records.clone()))?;
            registry.register(Box::new(audit_write_failures.clone()))?;
            registry.register(Box::new(audit_chain_damaged.clone()))?;
            // Every documented series of a counter with a fixed label set exists from the start,
            // at 0, so an alert on its increase fires from the first event (a series that appears
            // with its first event has no earlier sample to increase from).
            let zero = |counter: &IntCounterVec, values: &[&str]| {
                for value in values {
                    counter.with_label_values(&[value]);
                }
            };
            zero(&connections_refused, &["total", "per_ip", "silent"]);
            zero(&policy_reloads, &["applied", "rejected"]);
            zero(&config_reloads, &["applied", "rejected"]);
            zero(&tls_reloads, &["applied", "rejected"]);
            zero(
                &sign_ins,
                &[
                    "login",
                    "login_failed",
                    "logout",
                    "backchannel_logout",
                    "backchannel_refused",
                    "refreshed",
                    "refresh_failed",
                ],
            );
            zero(&llm_tokens, &["input", "output"]);
            zero(&approvals, &["requested", "approved", "denied", "expired", "consumed"]);
            zero(&store_backups, &["completed", "failed", "refused"]);
            Ok(Self {
                registry: registry.clone(),
                requests,
                request_duration,
                upstream_errors,
                rewritten_bytes,
                rewrite_failures,
                active_connections,
                connections_refused,
                policy_reloads,
                policy_rules,
                config_reloads,
                tls_reloads,
                sign_ins,
                catalog_decisions,
                inventory_changes,
                page_filter,
                llm_calls,
                llm_tokens,
                llm_latency,
                tool_decisions,
                approvals,
                enforced_blocks,
                store_backups,
                audit_records,
                audit_write_failures,
                audit_chain_damaged,
            })
        })();
        // The names, help texts and label sets above are constants; registration can only fail
        // if they are malformed or registered twice, which the unit test below rules out.
        #[allow(clippy::expect_used)]
        metrics.expect("metric definitions are valid constants")
    }

    /// A counter family's current total per value of one label (the dashboard's charts).
    pub fn totals_by(&self, family: &str, label: &str) -> std::collections::BTreeMap<String, f64> {
        let mut totals = std::collections::BTreeMap::new();
        for metric_family in self.registry.gather().iter().filter(|found| found.name() == family) {
            for metric in metric_family.get_metric() {
                let Some(value) = metric.get_label().iter().find(|pair| pair.name() == label) else {
                    continue;
                };
                *totals.entry(value.value().to_owned()).or_insert(0.0) += metric.get_counter().get_value();
            }
        }
        totals
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut buffer = Vec::new();
        let encoder = TextEncoder::new();
        // Encoding into a Vec cannot fail for I/O reasons; a failure would be a metric bug.
        if encoder.encode(&self.registry.gather(), &mut buffer).is_err() {
            return String::new();
        }
        String::from_utf8(buffer).unwrap_or_default()
    }
}

/// Which branch of the request path answered; the `route` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// A reserved `/.toolgate/` path.
    Reserved,
    /// The agent API (`/.toolgate/agent/…`).
    Agent,
    /// An HTML page, rewritten.
    Page,
    /// Anything else, streamed untouched.
    PassThrough,
    /// A protocol upgrade (WebSocket).
    Upgrade,
    /// A redirect into sign-in.
    SignIn,
    /// A failure answered by the gateway.
    Error,
    /// The policy administration dashboard (its own host).
    Dashboard,
}

impl Route {
    const ALL: [Route; 8] = [
        Self::Reserved,
        Self::Agent,
        Self::Page,
        Self::PassThrough,
        Self::Upgrade,
        Self::SignIn,
        Self::Error,
        Self::Dashboard,
    ];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Reserved => "reserved",
            Self::Agent => "agent",
            Self::Page => "page",
            Self::PassThrough => "pass_through",
            Self::Upgrade => "upgrade",
            Self::SignIn => "sign_in",
            Self::Error => "error",
            Self::Dashboard => "dashboard",
        }
    }
}

/// The reasons `toolgate_rewrite_failures_total` counts (the page rewriter's failures).
pub const REWRITE_FAILURE_REASONS: [&str; 3] = ["rewrite_memory", "page_encoding", "rewrite_stream"];

/// The changes `toolgate_inventory_changes_total` counts (the agent catalog's inventory update).
pub const INVENTORY_CHANGES: [&str; 4] = ["new", "changed", "ignored", "store_failed"];

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_register_and_render() {
        let metrics = Metrics::new();
        metrics.requests.with_label_values(&["tasks", "proxy", "2xx"]).inc();
        metrics.active_connections.set(3);
        let text = metrics.render();
        assert!(text.contains("toolgate_requests_total{route=\"proxy\",site=\"tasks\",status=\"2xx\"} 1"));
        assert!(text.contains("toolgate_active_connections 3"));
    }

    #[test]
    fn documented_series_exist_at_zero_from_the_start() {
        let text = Metrics::new().render();
        for series in [
            "toolgate_config_reloads_total{outcome=\"rejected\"} 0",
            "toolgate_policy_reloads_total{outcome=\"rejected\"} 0",
            "toolgate_tls_reloads_total{outcome=\"rejected\"} 0",
            "toolgate_store_backups_total{outcome=\"completed\"} 0",
            "toolgate_connections_refused_total{reason=\"silent\"} 0",
            "toolgate_approvals_total{event=\"expired\"} 0",
        ] {
            assert!(text.contains(series), "{series} missing:\n{text}");
        }
    }
}
