//! Traffic and decisions over time for the overview's charts: every minute the request and
//! tool-decision counters are sampled (a day is kept, in memory, per replica); the charts show
//! the increase between consecutive samples, the last one taken when the page is drawn.

use crate::metrics::Metrics;
use dashboard::Series;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How often the counters are sampled.
const INTERVAL: Duration = Duration::from_secs(60);
/// Samples kept (a day).
const KEEP: usize = 24 * 60;

/// Counter totals at one moment.
#[derive(Clone)]
struct Sample {
    at: u64,
    requests: BTreeMap<String, f64>,
    decisions: BTreeMap<String, f64>,
}

/// The samples taken so far.
#[derive(Default)]
pub struct Activity {
    samples: Mutex<VecDeque<Sample>>,
}

impl Activity {
    /// Takes a sample now.
    pub fn record(&self, metrics: &Metrics, at: u64) {
        let sample = take(metrics, at);
        let mut samples = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        if samples.len() == KEEP {
            samples.pop_front();
        }
        samples.push_back(sample);
    }

    /// Requests per interval by site (only `sites`), and tool decisions per interval by
    /// decision, up to `now`.
    pub fn series(&self, metrics: &Metrics, sites: &[String], now: u64) -> (Vec<Series>, Vec<Series>) {
        let mut samples: Vec<Sample> =
            self.samples.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect();
        samples.push(take(metrics, now));
        let traffic = sites.iter().map(|site| increases(&samples, site, |sample| &sample.requests)).collect();
        let mut decisions: Vec<String> =
            samples.iter().flat_map(|sample| sample.decisions.keys().cloned()).collect();
        decisions.sort();
        decisions.dedup();
        let decisions =
            decisions.iter().map(|label| increases(&samples, label, |sample| &sample.decisions)).collect();
        (traffic, decisions)
    }
}

fn take(metrics: &Metrics, at: u64) -> Sample {
    Sample {
        at,
        requests: metrics.totals_by("toolgate_requests_total", "site"),
        decisions: metrics.totals_by("toolgate_tool_decisions_total", "decision"),
    }
}

/// The increase of one labelled total between consecutive samples, at the later sample's time.
/// The first point is zero at the first sample (when sampling began), so a line shows from the
/// first minute on.
fn increases(samples: &[Sample], label: &str, of: impl Fn(&Sample) -> &BTreeMap<String, f64>) -> Series {
    let start = samples.first().filter(|_| samples.len() > 1).map(|first| (first.at, 0.0));
    let points = start
        .into_iter()
        .chain(samples.windows(2).map(|pair| {
            let before = of(&pair[0]).get(label).copied().unwrap_or(0.0);
            let after = of(&pair[1]).get(label).copied().unwrap_or(0.0);
            (pair[1].at, (after - before).max(0.0))
        }))
        .collect();
    Series { label: label.to_owned(), points }
}

/// Samples every minute until `shutdown` resolves.
pub async fn sample_periodically(
    dashboard: Arc<super::DashboardState>,
    metrics: Metrics,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let mut ticker = tokio::time::interval(INTERVAL);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            _ = ticker.tick() => dashboard.activity.record(&metrics, crate::support::clock::unix_now()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_show_the_increase_between_samples() {
        let metrics = Metrics::new();
        let activity = Activity::default();
        let site = metrics.site_requests("tasks");
        activity.record(&metrics, 100);
        for _ in 0..3 {
            site.record(crate::metrics::Route::Page, 200, 0.01);
        }
        metrics.tool_decisions.with_label_values(&["tasks", "deny"]).inc();
        let (traffic, decisions) = activity.series(&metrics, &["tasks".to_owned()], 160);
        assert_eq!(traffic.len(), 1);
        assert_eq!(traffic[0].points, vec![(100, 0.0), (160, 3.0)]);
        assert_eq!(
            decisions.iter().find(|series| series.label == "deny").map(|s| s.points.clone()),
            Some(vec![(100, 0.0), (160, 1.0)])
        );
    }
}
