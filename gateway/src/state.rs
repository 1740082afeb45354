//! The gateway's shared state: checked configuration, the site table, the upstream client and
//! the metrics. Built once at start-up and shared by every connection behind an `Arc`.

use crate::agent::turns::Turns;
use crate::approvals::Approvals;
use crate::audit::AuditLog;
use crate::config::{Config, Site};
use crate::form_enforcement::GatedForms;
use crate::inventory::Inventory;
use crate::llm::LlmClient;
use crate::metrics::{Metrics, SiteRequestMetrics};
use crate::policy_reload::PolicyHandle;
use crate::sso::Sso;
use crate::sso::keys::KeyRing;
use crate::store::Store;
use crate::upstream::UpstreamClient;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Everything a request handler needs.
pub struct Gateway {
    /// The configuration in force.
    pub config: Arc<Config>,
    /// The client for upstream sites.
    pub client: UpstreamClient,
    /// Metrics, registered once.
    pub metrics: Metrics,
    /// The policy in force (consulted by the filtering and agent issues).
    pub policy: Arc<PolicyHandle>,
    /// Single sign-on; `None` only with `insecure_no_sso` (development).
    pub sso: Option<Arc<Sso>>,
    /// The gateway's own host (from `public_url`), where sign-in lives.
    pub gateway_host: String,
    /// The audit log.
    pub audit: Arc<AuditLog>,
    /// The tools and contexts pages reported.
    pub inventory: Arc<Inventory>,
    /// The model the agent talks to; `None` when no `[llm]` is configured.
    pub llm: Option<LlmClient>,
    /// Approval records of safety-critical tool calls.
    pub approvals: Arc<Approvals>,
    /// The agent turns in progress.
    pub turns: Arc<Turns>,
    /// Form actions whose agent-marked submissions need an approval (`form_enforcement.rs`).
    pub gated_forms: Arc<GatedForms>,
    /// Signs request tokens (CSRF) when there is no SSO to lend its session keys.
    local_keys: KeyRing,
    sites_by_host: HashMap<String, SiteEntry>,
    unknown_site_metrics: SiteRequestMetrics,
    draining: AtomicBool,
}

/// A configured site and its pre-resolved metrics.
pub struct SiteEntry {
    /// The site.
    pub site: Arc<Site>,
    /// Its request metrics.
    pub metrics: SiteRequestMetrics,
}

impl Gateway {
    /// Builds the state for `config`, enforcing `policy`.
    pub fn new(
        config: Config,
        metrics: Metrics,
        policy: Arc<PolicyHandle>,
        sso: Option<Arc<Sso>>,
        audit: Arc<AuditLog>,
        store: Arc<dyn Store>,
        llm: Option<LlmClient>,
    ) -> Self {
        let local_keys = KeyRing::ephemeral();
        // Approval tokens are signed with a key derived from the session keys (configured keys
        // survive restarts, so a pending approval does too) or, without SSO, this process's key.
        let approvals_key =
            sso.as_ref().map_or(&local_keys, |sso| &sso.keys).derived_key(b"toolgate approvals v1");
        let sites_by_host = config
            .sites
            .iter()
            .map(|site| {
                let entry = SiteEntry {
                    site: Arc::new(site.clone()),
                    metrics: metrics.site_requests(site.id.as_str()),
                };
                (site.host.clone(), entry)
            })
            .collect();
        let unknown_site_metrics = metrics.site_requests("-");
        Self {
            client: UpstreamClient::new(config.timeouts),
            gateway_host: config.gateway_host(),
            sso,
            audit,
            inventory: Arc::new(Inventory::new(store.clone())),
            llm,
            approvals: Arc::new(Approvals::new(store, approvals_key)),
            turns: Arc::default(),
            gated_forms: Arc::default(),
            local_keys,
            config: Arc::new(config),
            metrics,
            policy,
            sites_by_host,
            unknown_site_metrics,
            draining: AtomicBool::new(false),
        }
    }

    /// The keys that sign request tokens: the SSO session keys, else this process's own.
    pub fn request_keys(&self) -> &KeyRing {
        self.sso.as_ref().map_or(&self.local_keys, |sso| &sso.keys)
    }

    /// The site for a host name (lower-case, without port).
    pub fn site(&self, host: &str) -> Option<&SiteEntry> {
        self.sites_by_host.get(host)
    }

    /// Request metrics for requests whose host names no site.
    pub fn unknown_site_metrics(&self) -> &SiteRequestMetrics {
        &self.unknown_site_metrics
    }

    /// Whether `peer` is a configured trusted proxy.
    pub fn is_trusted_proxy(&self, peer: IpAddr) -> bool {
        self.config.server.trusted_proxies.iter().any(|net| net.contains(&peer))
    }

    /// Marks the gateway as shutting down (`/readyz` turns 503 so load balancers move away).
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// Whether shutdown has begun.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }
}
