//! The policy in force: loaded at start-up, swapped atomically when its file changes or on
//! SIGHUP (`app/reload/` drives both), and never replaced by a document that fails to parse (the
//! old one stays, the failure is logged and counted). Request handlers take a cheap clone of
//! the current `Policy`.

use crate::audit::AuditLog;
use crate::audit::event::{AuditEvent, EventKind};
use crate::config::{Config, SiteId};
use crate::metrics::Metrics;
use policy::{Policy, PolicyErrors};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::SystemTime;

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
    /// The stored policy versions cannot be read or the seed version written.
    #[error("cannot read the dashboard's policy versions: {0}")]
    Store(#[from] crate::store::StoreError),
}

/// Reads and compiles the policy a configuration names (the built-in deny-all policy when it
/// names none). `check-config`, `policy explain` and the server all load through here.
pub fn load(config: &Config) -> Result<Policy, PolicyLoadError> {
    let (text, name) = source_text(config)?;
    Ok(Policy::parse(&text, &name, &config.site_ids())?)
}

/// The text of the policy a configuration names, and the name its problems are reported under:
/// the embedded demo policy, the file's content, or the empty built-in policy.
pub fn source_text(config: &Config) -> Result<(String, String), PolicyLoadError> {
    match (&config.policy_file, config.embedded_policy) {
        (_, Some(text)) => Ok((text.to_owned(), "<embedded policy>".to_owned())),
        (Some(path), None) => Ok((read_file(path)?, path.display().to_string())),
        (None, None) => Ok((String::new(), "<built-in policy>".to_owned())),
    }
}

fn read_file(path: &Path) -> Result<String, PolicyLoadError> {
    std::fs::read_to_string(path).map_err(|error| PolicyLoadError::Read {
        path: path.display().to_string(),
        reason: error.to_string(),
    })
}

fn load_file(path: &Path, sites: &[SiteId]) -> Result<Policy, PolicyLoadError> {
    Ok(Policy::parse(&read_file(path)?, &path.display().to_string(), sites)?)
}

/// The swappable policy in force.
pub struct PolicyHandle {
    current: RwLock<Policy>,
    /// The stored version in force (dashboard-managed policies; 0 for a file's).
    version: std::sync::atomic::AtomicU64,
    file: Option<PathBuf>,
    /// The sites policies may name; replaced when the configuration reloads.
    sites: RwLock<Vec<SiteId>>,
    /// The policy file's modification time and size when last read.
    last_seen: Mutex<Option<(SystemTime, u64)>>,
    metrics: Metrics,
    audit: Arc<AuditLog>,
}

impl PolicyHandle {
    /// Wraps the initially loaded policy and its stored version (0 for a file's).
    pub fn new(initial: (Policy, u64), config: &Config, metrics: Metrics, audit: Arc<AuditLog>) -> Self {
        let (initial, version) = initial;
        metrics.policy_rules.set(initial.rule_ids().count() as i64);
        Self {
            current: RwLock::new(initial),
            version: std::sync::atomic::AtomicU64::new(version),
            // A dashboard-managed policy lives in the store; its file only seeded version 1.
            file: config.policy_file.clone().filter(|_| !config.policy_in_store),
            sites: RwLock::new(config.site_ids()),
            last_seen: Mutex::new(config.policy_file.as_deref().and_then(crate::support::clock::file_stamp)),
            metrics,
            audit,
        }
    }

    /// The policy in force (a cheap clone).
    pub fn current(&self) -> Policy {
        // A poisoned lock still holds a complete policy: writers only ever store whole values.
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Puts a compiled policy in force at once (new requests see it; requests in flight finish
    /// with the one they took). `version` is the stored version of a dashboard-managed policy
    /// (0 for a file's): an older stored version never replaces a newer one, so a configuration
    /// reload that read the store just before a dashboard save cannot undo the save.
    pub fn install(&self, policy: Policy, version: u64) {
        use std::sync::atomic::Ordering;
        let rules = policy.rule_ids().count();
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if version < self.version.load(Ordering::Acquire) {
            return;
        }
        self.version.store(version, Ordering::Release);
        *current = policy;
        drop(current);
        self.metrics.policy_reloads.with_label_values(&["applied"]).inc();
        self.metrics.policy_rules.set(rules as i64);
    }

    /// The stored version in force (0 for a file's policy).
    pub fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The sites policies may name.
    pub fn sites(&self) -> Vec<SiteId> {
        self.sites.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Replaces the sites policies may name (a reloaded configuration, whose policy was already
    /// checked against them).
    pub fn set_sites(&self, sites: Vec<SiteId>) {
        *self.sites.write().unwrap_or_else(PoisonError::into_inner) = sites;
    }

    /// Reloads if the file's modification time or size changed since it was last read.
    pub async fn reload_if_changed(&self) {
        let Some(path) = &self.file else { return };
        let stamp = crate::support::clock::file_stamp(path);
        if stamp.is_some() && stamp != *self.last_seen.lock().unwrap_or_else(PoisonError::into_inner) {
            let _ = self.reload().await;
        }
    }

    /// Reads the file again; swaps the policy in only if the whole document is valid. Either
    /// way the outcome is audited.
    pub async fn reload(&self) -> Result<(), PolicyLoadError> {
        let Some(path) = &self.file else { return Ok(()) };
        *self.last_seen.lock().unwrap_or_else(PoisonError::into_inner) =
            crate::support::clock::file_stamp(path);
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
        match load_file(path, &self.sites()) {
            Ok(policy) => {
                let rules = policy.rule_ids().count();
                // A file's policy has no stored version (0), so nothing newer can block it.
                self.install(policy, 0);
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
            AuditLog::start(
                &crate::store::StoreHandle::Embedded(store),
                crate::audit::digest::DigestKey::new(b"k"),
                Metrics::new(),
            )
            .expect("audit"),
        )
    }

    #[tokio::test]
    async fn an_older_stored_version_never_replaces_a_newer_one() {
        let directory = tempfile::tempdir().expect("temp dir");
        let path = directory.path().join("policy.toml");
        std::fs::write(&path, GOOD).expect("write");
        let config = config_with_policy(&path);
        let sites = config.site_ids();
        let compile = |tool: &str| {
            let text = format!("[[rule]]\nid = \"r\"\nsites = [\"tasks\"]\ntools.allow = [\"{tool}\"]\n");
            Policy::parse(&text, "t", &sites).expect("policy")
        };
        let handle = PolicyHandle::new((compile("v2_tool"), 2), &config, Metrics::new(), audit());
        handle.install(compile("v1_tool"), 1);
        assert_eq!(decision(&handle, "v2_tool"), "allow", "version 1 came too late");
        handle.install(compile("v3_tool"), 3);
        assert_eq!(decision(&handle, "v3_tool"), "allow");
    }

    #[tokio::test]
    async fn a_broken_file_never_replaces_the_policy_in_force() {
        let directory = tempfile::tempdir().expect("temp dir");
        let path = directory.path().join("policy.toml");
        std::fs::write(&path, GOOD).expect("write");
        let config = config_with_policy(&path);
        let metrics = Metrics::new();
        let audit = audit();
        let handle = PolicyHandle::new(
            (load(&config).expect("good policy"), 0),
            &config,
            metrics.clone(),
            audit.clone(),
        );
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
