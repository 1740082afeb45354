//! A site's series, resolved once per site when the site table is built: recording a request
//! or a rewritten page then costs atomic updates and no label hashing. Also the site's series
//! created at 0, so an alert on their increase fires on the first event.

use super::{INVENTORY_CHANGES, Metrics, REWRITE_FAILURE_REASONS, Route};
use prometheus::{Histogram, IntCounter};
use std::sync::Arc;

const STATUS_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// The request counters and histograms of one site, resolved once so that recording a request
/// costs two atomic updates and no label hashing.
pub struct SiteRequestMetrics {
    requests: Vec<[IntCounter; 5]>,
    durations: Vec<Histogram>,
    /// The page rewriter's counters of the site.
    pub pages: Arc<PageCounters>,
}

/// The page rewriter's counters of one site, resolved once, so a rewritten page looks up no
/// labels.
pub struct PageCounters {
    /// `toolgate_rewritten_bytes_total`.
    pub rewritten_bytes: IntCounter,
    /// `toolgate_rewrite_failures_total`, by `REWRITE_FAILURE_REASONS` in order.
    pub failures: [IntCounter; 3],
    /// `toolgate_page_filter_total{action="tool_removed"}`.
    pub tools_removed: IntCounter,
    /// `…{action="context_removed"}`.
    pub contexts_removed: IntCounter,
    /// `…{action="form_tooled"}`.
    pub forms_tooled: IntCounter,
    /// `…{action="leak_removed"}`.
    pub leaks_removed: IntCounter,
}

impl SiteRequestMetrics {
    /// Records one answered request.
    pub fn record(&self, route: Route, status: u16, seconds: f64) {
        let route_index = Route::ALL.iter().position(|candidate| *candidate == route).unwrap_or(0);
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.requests[route_index][class].inc();
        self.durations[route_index].observe(seconds);
    }
}

/// The known label values of a site's series, owned by the modules that produce them.
pub struct SiteLabels<'a> {
    /// `toolgate_upstream_errors_total{reason}`.
    pub upstream_reasons: &'a [&'a str],
    /// `toolgate_llm_calls_total{outcome}`.
    pub llm_outcomes: &'a [&'a str],
    /// `toolgate_enforced_blocks_total{reason}`.
    pub block_reasons: &'a [&'a str],
}

impl Metrics {
    /// Creates every documented series of `site` that has a fixed label set, at 0, like the
    /// global ones in `new`: an `increase(…) > 0` alert then fires on the site's first failure.
    pub fn zero_site(&self, site: &str, labels: &SiteLabels<'_>) {
        for reason in labels.upstream_reasons {
            self.upstream_errors.with_label_values(&[site, reason]);
        }
        for reason in REWRITE_FAILURE_REASONS {
            self.rewrite_failures.with_label_values(&[site, reason]);
        }
        for change in INVENTORY_CHANGES {
            self.inventory_changes.with_label_values(&[site, change]);
        }
        for outcome in labels.llm_outcomes {
            self.llm_calls.with_label_values(&[site, outcome]);
        }
        for reason in labels.block_reasons {
            self.enforced_blocks.with_label_values(&[site, reason]);
        }
    }

    /// Resolves the request metrics of the site labelled `site` (`-` for unknown hosts).
    pub fn site_requests(&self, site: &str) -> SiteRequestMetrics {
        SiteRequestMetrics {
            requests: Route::ALL
                .iter()
                .map(|route| {
                    STATUS_CLASSES.map(|class| self.requests.with_label_values(&[site, route.label(), class]))
                })
                .collect(),
            durations: Route::ALL
                .iter()
                .map(|route| self.request_duration.with_label_values(&[site, route.label()]))
                .collect(),
            pages: Arc::new(self.page_counters(site)),
        }
    }

    /// Resolves the page rewriter's counters of the site labelled `site`.
    pub fn page_counters(&self, site: &str) -> PageCounters {
        let filter = |action: &str| self.page_filter.with_label_values(&[site, action]);
        PageCounters {
            rewritten_bytes: self.rewritten_bytes.with_label_values(&[site]),
            failures: REWRITE_FAILURE_REASONS
                .map(|reason| self.rewrite_failures.with_label_values(&[site, reason])),
            tools_removed: filter("tool_removed"),
            contexts_removed: filter("context_removed"),
            forms_tooled: filter("form_tooled"),
            leaks_removed: filter("leak_removed"),
        }
    }
}
