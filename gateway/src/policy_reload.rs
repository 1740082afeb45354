//! The policy in force: loaded at start-up, swapped atomically when its file changes or on
//! SIGHUP, and never replaced by a document that fails to parse (the old one stays, the failure
//! is logged and counted). Request handlers take a cheap clone of the current `Policy`.

use crate::audit::AuditLog;
use crate::audit::event::{AuditEvent, EventKind};
use crate::config::{Config, SiteId};
use crate::metrics::Metrics;
use policy::{Policy, PolicyErrors};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::{PoisonError, RwLock};
use std::time::{Duration, SystemTime};

/// How often the policy file is checked for changes.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Why a policy could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyLoadError {
    /// The file could not be read.
    #[error("{path}: cannot read the policy: {reason}")]
    Read {
        /// The policy file.
        path: String,
        /// What the operating system said.
        reason: String,
    },
    /// The document has problems (each with file, line and key).
    #[error("{0}")]
    Invalid(#[from] PolicyErrors),
}

/// Reads and compiles the policy a configuration names (the built-in deny-all policy when it
/// names none). `check-config`, `policy explain` and the server all load through here.
pub fn load(config: &Config) -> Result<Policy, PolicyLoadError> {
    match (&config.policy_file, config.embedded_policy) {
        (_, Some(text)) => Ok(Policy::parse(text, "<embedded policy>", &config.site_ids())?),
        (Some(path), None) => load_file(path, &config.site_ids()),
        (None, None) => Ok(Policy::parse("", "<built-in policy>", &config.site_ids())?),
    }
}

fn load_file(path: &Path, sites: &[SiteId]) -> Result<Policy, PolicyLoadError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|error| PolicyLoadError::Read { path: name.clone(), reason: error.to_string() })?;
    Ok(Policy::parse(&text, &name, sites)?)
}

/// The swappable policy in force.
pub struct PolicyHandle {
    current: RwLock<Policy>,
    file: Option<PathBuf>,
    sites: Vec<SiteId>,
    metrics: Metrics,
    audit: Arc<AuditLog>,
}

impl PolicyHandle {
    /// Wraps the initially loaded policy.
    pub fn new(initial: Policy, config: &Config, metrics: Metrics, audit: Arc<AuditLog>) -> Self {
        metrics.policy_rules.set(initial.rule_ids().count() as i64);
        Self {
            current: RwLock::new(initial),
            file: config.policy_file.clone(),
            sites: config.site_ids(),
            metrics,
            audit,
        }
    }

    /// The policy in force (a cheap clone).
    pub fn current(&self) -> Policy {
        // A poisoned lock still holds a complete policy: writers only ever store whole values.
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Reads the file again; swaps the policy in only if the whole document is valid. Either
    /// way the outcome is audited.
    pub async fn reload(&self) -> Result<(), PolicyLoadError> {
        let Some(path) = &self.file else { return Ok(()) };
        let outcome = self.swap(path);
        let event = match &outcome {
            Ok(rules) => {
                AuditEvent::new(EventKind::PolicyReload).decision("applied", &format!("{rules} rules"))
            }
            Err(error) => {
                let mut event =
                    AuditEvent::new(EventKind::PolicyRejected).decision("rejected", "invalid policy");
                event.explanation = Some(serde_json::Value::String(error.to_string()));
                event
            }
        };
        self.audit.record_or_log(event.resource(&path.display().to_string())).await;
        outcome.map(drop)
    }

    fn swap(&self, path: &Path) -> Result<usize, PolicyLoadError> {
        match load_file(path, &self.sites) {
            Ok(policy) => {
                let rules = policy.rule_ids().count();
                *self.current.write().unwrap_or_else(PoisonError::into_inner) = policy;
                self.metrics.policy_reloads.with_label_values(&["applied"]).inc();
                self.metrics.policy_rules.set(rules as i64);
                tracing::info!(file = %path.display(), rules, "policy reloaded");
                Ok(rules)
            }
            Err(error) => {
                self.metrics.policy_reloads.with_label_values(&["rejected"]).inc();
                // The problems name lines and keys of the operator's own file, never secrets.
                tracing::error!(file = %path.display(), problems = %error, "new policy rejected; the previous policy stays in force");
                Err(error)
            }
        }
    }

    /// Reloads whenever the file's modification time or size changes, and on SIGHUP, until
    /// `shutdown` resolves. Polling (rather than file-system events) also sees the symlink swaps
    /// Kubernetes uses to update mounted ConfigMaps.
    pub async fn watch(&self, shutdown: impl Future<Output = ()>) {
        let mut hangups = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
            Ok(signal) => Some(signal),
            Err(error) => {
                tracing::warn!(error = %error, "cannot listen for SIGHUP; policy reloads on file change only");
                None
            }
        };
        let mut last_seen = self.file.as_deref().and_then(file_stamp);
        let mut ticker = tokio::time::interval(POLL_INTERVAL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            let hangup = async {
                match hangups.as_mut() {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = &mut shutdown => return,
                _ = hangup => {
                    tracing::info!("SIGHUP received: reloading the policy");
                    last_seen = self.file.as_deref().and_then(file_stamp);
                    let _ = self.reload().await;
                }
                _ = ticker.tick() => {
                    let stamp = self.file.as_deref().and_then(file_stamp);
                    if stamp.is_some() && stamp != last_seen {
                        last_seen = stamp;
                        let _ = self.reload().await;
                    }
                }
            }
        }
    }
}

/// What identifies a version of the file without reading it.
fn file_stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_with_policy(path: &Path) -> Config {
        let text = format!(
            "public_url = \"http://g.test\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\ninsecure_no_sso = true\n\
             [policy]\nfile = \"{}\"\n[store]\npath = \":memory:\"\n[sites.tasks]\nhost = \"tasks.test\"\nupstream = \"http://127.0.0.1:1\"\n",
            path.display()
        );
        Config::parse(&text, "test.toml").expect("config")
    }

    const GOOD: &str = "[[rule]]\nid = \"everyone\"\nsites = [\"tasks\"]\ntools.allow = [\"add_task\"]\n";

    fn decision(handle: &PolicyHandle, tool: &str) -> String {
        let subject = policy::Subject { user: policy::UserId::new("alice"), email: None, groups: vec![] };
        let view = handle.current().view(&subject, &SiteId::new("tasks"));
        view.tool(&policy::ToolRef::named(tool)).0.label().to_owned()
    }

    fn audit() -> Arc<AuditLog> {
        let store = Arc::new(crate::store::SledStore::temporary().expect("store"));
        Arc::new(
            AuditLog::start(store, crate::audit::digest::DigestKey::new(b"k"), Metrics::new())
                .expect("audit"),
        )
    }

    #[tokio::test]
    async fn a_broken_file_never_replaces_the_policy_in_force() {
        let directory = tempfile::tempdir().expect("temp dir");
        let path = directory.path().join("policy.toml");
        std::fs::write(&path, GOOD).expect("write");
        let config = config_with_policy(&path);
        let metrics = Metrics::new();
        let audit = audit();
        let handle =
            PolicyHandle::new(load(&config).expect("good policy"), &config, metrics.clone(), audit.clone());
        assert_eq!(decision(&handle, "add_task"), "allow");

        std::fs::write(&path, GOOD.replace("tools.allow", "tools.alow")).expect("write");
        let error = handle.reload().await.expect_err("broken policy");
        assert!(error.to_string().contains("policy.toml"), "{error}");
        assert_eq!(decision(&handle, "add_task"), "allow", "old policy stays in force");

        std::fs::write(&path, GOOD.replace("tools.allow", "tools.deny")).expect("write");
        handle.reload().await.expect("valid policy");
        assert_eq!(decision(&handle, "add_task"), "deny", "new policy in force");
        let text = metrics.render();
        assert!(text.contains("toolgate_policy_reloads_total{outcome=\"rejected\"} 1"), "{text}");
        assert!(text.contains("toolgate_policy_reloads_total{outcome=\"applied\"} 1"), "{text}");
        let page = crate::audit::query::find(audit.store(), &Default::default(), 0, 10).expect("query");
        let kinds: Vec<_> = page.records.iter().filter_map(|record| record.event.kind).collect();
        assert_eq!(kinds, [EventKind::PolicyRejected, EventKind::PolicyReload], "both outcomes are audited");
    }

    #[test]
    fn policies_may_only_name_configured_sites() {
        let directory = tempfile::tempdir().expect("temp dir");
        let path = directory.path().join("policy.toml");
        std::fs::write(&path, GOOD.replace("[\"tasks\"]", "[\"payroll\"]")).expect("write");
        let error = load(&config_with_policy(&path)).expect_err("unknown site");
        assert!(error.to_string().contains("payroll"), "{error}");
    }
}
