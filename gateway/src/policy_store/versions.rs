//! Dashboard-managed policy versions (`[policy] managed_by = "dashboard"`): every saved policy
//! is a new numbered version in the store, and the newest version is the one in force.
//!
//! Invariants:
//! - Versions are never changed or removed; a rollback is a new version with an old text.
//! - A save names the version it was based on and writes `base + 1` with compare-and-swap, so of
//!   two concurrent edits of the same version exactly one lands; the other is told to reload.
//! - Only text that compiled is stored (the caller validates first), so whatever the store holds
//!   can be put in force at start-up.

use crate::config::Config;
use crate::inventory::sha256_hex;
use crate::policy_store::reload::{self, PolicyLoadError};
use crate::store::{StoreError, StoreHandle, Table};
use crate::support::clock::unix_now;
use policy::Policy;
use serde::{Deserialize, Serialize};

/// One stored version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyVersion {
    /// From 1, without gaps.
    pub version: u64,
    /// The whole policy document.
    pub text: String,
    /// SHA-256 (hex) of `text`.
    pub digest: String,
    /// Who saved it (user id; `toolgate` for the seed).
    pub author: String,
    /// When (UNIX seconds).
    pub at: u64,
    /// What the author said about it (at most 500 characters).
    pub comment: String,
}

impl PolicyVersion {
    fn new(version: u64, text: String, author: &str, comment: &str, at: u64) -> Self {
        let digest = sha256_hex(text.as_bytes());
        let comment = comment.chars().take(MAX_COMMENT).collect();
        Self { version, text, digest, author: author.to_owned(), at, comment }
    }
}

/// Why a version could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// Someone saved another version since `base` was read.
    #[error(
        "the policy changed since you opened it (version {current} is in force now); reload and apply your edit again"
    )]
    Conflict {
        /// The version in force now.
        current: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Longest comment kept with a version.
const MAX_COMMENT: usize = 500;

/// The versions in a store.
#[derive(Clone)]
pub struct PolicyVersions {
    store: StoreHandle,
}

impl PolicyVersions {
    /// Versions in `store`.
    pub fn new(store: StoreHandle) -> Self {
        Self { store }
    }

    /// The version in force (the newest), if any was ever saved.
    pub async fn current(&self) -> Result<Option<PolicyVersion>, StoreError> {
        self.store.last(Table::PolicyVersions).await?.map(|(_, bytes)| decode(&bytes)).transpose()
    }

    /// One version.
    pub async fn get(&self, version: u64) -> Result<Option<PolicyVersion>, StoreError> {
        self.store
            .get(Table::PolicyVersions, &version.to_be_bytes())
            .await?
            .map(|bytes| decode(&bytes))
            .transpose()
    }

    /// Up to `limit` versions, newest first.
    pub async fn history(&self, limit: usize) -> Result<Vec<PolicyVersion>, StoreError> {
        let newest = self.current().await?.map_or(0, |current| current.version);
        let from = newest.saturating_sub(limit as u64).saturating_add(1).max(1);
        let mut versions = self
            .store
            .range(Table::PolicyVersions, &from.to_be_bytes(), limit)
            .await?
            .iter()
            .map(|(_, bytes)| decode(bytes))
            .collect::<Result<Vec<_>, _>>()?;
        versions.reverse();
        Ok(versions)
    }

    /// Stores `text` as version `base + 1`, unless another version was saved after `base`.
    pub async fn save(
        &self,
        base: u64,
        text: &str,
        author: &str,
        comment: &str,
        at: u64,
    ) -> Result<PolicyVersion, SaveError> {
        let version = PolicyVersion::new(base + 1, text.to_owned(), author, comment, at);
        let bytes = serde_json::to_vec(&version).map_err(|error| StoreError(error.to_string()))?;
        let current = self.current().await?.map_or(0, |current| current.version);
        if current != base {
            return Err(SaveError::Conflict { current });
        }
        let key = version.version.to_be_bytes();
        if self.store.compare_and_swap(Table::PolicyVersions, &key, None, Some(&bytes)).await? {
            self.store.flush().await?;
            // The other replicas put it in force when they hear of it (`catch_up`); one that
            // misses the notice catches up at its next resync.
            if let Err(error) = self.store.announce("policy", &version.version.to_string()).await {
                tracing::warn!(error = %error, "a policy save could not be announced to the other replicas");
            }
            Ok(version)
        } else {
            let current = self.current().await?.map_or(0, |current| current.version);
            Err(SaveError::Conflict { current })
        }
    }
}

impl PolicyVersions {
    /// Puts the newest stored version in force if it is newer than the one `policy` holds
    /// (another replica saved it); returns the version now in force.
    pub async fn catch_up(&self, policy: &reload::PolicyHandle) -> Result<u64, PolicyLoadError> {
        let in_force = policy.version();
        let Some(newest) = self.current().await? else { return Ok(in_force) };
        if newest.version <= in_force {
            return Ok(in_force);
        }
        let source = format!("<policy version {}>", newest.version);
        let compiled = Policy::parse(&newest.text, &source, &policy.sites())?;
        policy.install(compiled, newest.version);
        tracing::info!(version = newest.version, "policy version saved on another replica is in force");
        Ok(newest.version)
    }
}

/// The policy to enforce at start-up. A file-managed policy is read from its file; a
/// dashboard-managed one is the newest stored version, and when there is none yet, the file (or
/// the embedded or built-in policy) is stored as version 1 first.
/// Returns the policy with its stored version (0 for a file-managed policy).
pub async fn in_force_at_start(
    config: &Config,
    store: &StoreHandle,
) -> Result<(Policy, u64), PolicyLoadError> {
    if !config.policy_in_store {
        return Ok((reload::load(config)?, 0));
    }
    let versions = PolicyVersions::new(store.clone());
    let compiled = |stored: PolicyVersion| -> Result<(Policy, u64), PolicyLoadError> {
        let source = format!("<policy version {}>", stored.version);
        Ok((Policy::parse(&stored.text, &source, &config.site_ids())?, stored.version))
    };
    if let Some(current) = versions.current().await? {
        return compiled(current);
    }
    let (seed, name) = reload::source_text(config)?;
    let policy = Policy::parse(&seed, &name, &config.site_ids())?;
    let comment = "the policy in force when the dashboard took over";
    match versions.save(0, &seed, "toolgate", comment, unix_now()).await {
        Ok(_) => Ok((policy, 1)),
        // Another replica seeded the store first: its version is the one in force.
        Err(SaveError::Conflict { .. }) => versions.current().await?.map_or_else(
            || Err(PolicyLoadError::Store(StoreError("the seeded policy version vanished".into()))),
            compiled,
        ),
        Err(SaveError::Store(error)) => Err(error.into()),
    }
}

fn decode(bytes: &[u8]) -> Result<PolicyVersion, StoreError> {
    serde_json::from_slice(bytes).map_err(|error| StoreError(format!("unreadable policy version: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    fn versions() -> PolicyVersions {
        PolicyVersions::new(StoreHandle::Embedded(std::sync::Arc::new(
            SledStore::temporary().expect("store"),
        )))
    }

    #[tokio::test]
    async fn saves_number_versions_and_the_newest_is_in_force() {
        let versions = versions();
        assert_eq!(versions.current().await.expect("current"), None);
        let first = versions.save(0, "a = 1\n", "alice", "first", 10).await.expect("save");
        let second = versions.save(1, "a = 2\n", "bob", "second", 20).await.expect("save");
        assert_eq!((first.version, second.version), (1, 2));
        assert_eq!(versions.current().await.expect("current"), Some(second.clone()));
        assert_eq!(versions.get(1).await.expect("get"), Some(first.clone()));
        assert_eq!(versions.history(10).await.expect("history"), vec![second, first]);
        assert_eq!(versions.history(1).await.expect("history").len(), 1);
    }

    #[tokio::test]
    async fn an_edit_of_an_old_version_is_refused_and_changes_nothing() {
        let versions = versions();
        versions.save(0, "a = 1\n", "alice", "", 10).await.expect("save");
        versions.save(1, "a = 2\n", "bob", "", 20).await.expect("save");
        let stale = versions.save(1, "a = 3\n", "carol", "", 30).await;
        assert!(matches!(stale, Err(SaveError::Conflict { current: 2 })), "{stale:?}");
        assert_eq!(versions.current().await.expect("current").map(|v| v.text), Some("a = 2\n".to_owned()));
    }

    #[tokio::test]
    async fn at_start_the_seed_becomes_version_one_and_later_the_newest_version_is_in_force() {
        let directory = tempfile::tempdir().expect("temp dir");
        let seed = directory.path().join("policy.toml");
        std::fs::write(&seed, "[[rule]]\nid = \"seeded\"\nsites = [\"tasks\"]\ntools.allow = [\"a\"]\n")
            .expect("write");
        let text = format!(
            "public_url = \"http://g.test\"\n[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n\
             insecure_no_sso = true\n[policy]\nfile = \"{}\"\nmanaged_by = \"dashboard\"\n[store]\npath = \":memory:\"\n\
             [sites.tasks]\nhost = \"tasks.test\"\nupstream = \"http://127.0.0.1:1\"\n",
            seed.display()
        );
        let config = Config::parse(&text, "t.toml").expect("config");
        let store = StoreHandle::Embedded(std::sync::Arc::new(SledStore::temporary().expect("store")));
        let ids =
            |(policy, _): &(Policy, u64)| policy.rule_ids().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(ids(&in_force_at_start(&config, &store).await.expect("seeded")), ["seeded"]);
        let versions = PolicyVersions::new(store.clone());
        assert_eq!(
            versions.current().await.expect("current").map(|v| (v.version, v.author)),
            Some((1, "toolgate".into()))
        );
        std::fs::write(&seed, "this file is no longer read").expect("write");
        versions
            .save(1, "[[rule]]\nid = \"edited\"\nsites = [\"tasks\"]\n", "erin", "", 5)
            .await
            .expect("save");
        assert_eq!(
            ids(&in_force_at_start(&config, &store).await.expect("stored")),
            ["edited"],
            "the newest version wins"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_saves_of_one_version_land_exactly_once() {
        let versions = versions();
        versions.save(0, "a = 0\n", "seed", "", 1).await.expect("save");
        let racers: Vec<_> = (0..8)
            .map(|n| {
                let versions = versions.clone();
                tokio::spawn(async move { versions.save(1, &format!("a = {n}\n"), "x", "", 2).await.is_ok() })
            })
            .collect();
        let mut outcomes = Vec::new();
        for racer in racers {
            outcomes.push(racer.await.unwrap_or(false));
        }
        assert_eq!(outcomes.iter().filter(|ok| **ok).count(), 1);
        assert_eq!(versions.current().await.expect("current").map(|v| v.version), Some(2));
    }
}
