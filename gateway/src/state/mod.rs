//! The gateway's shared state: checked configuration, the site table, the upstream clients and
//! the metrics. Built at start-up and shared by every connection behind an `Arc`; a reloaded
//! configuration builds a new one (`reconfigured`) that shares every long-lived part, such as
//! the running agent turns and per-user limits (`turns`).
//!
//! Layer 4 of the gateway (ARCHITECTURE.md, "Code map"): may import `approvals`, `audit`, `config`,
//! `dashboard_state`, `http`, `inventory`, `llm`, `metrics`, `net`, `outcomes`, `policy_store`,
//! `sso`, `store`, `support`.

pub mod continuations;
pub mod conversations;
mod turn_leases;
mod turn_owner;
pub mod turns;

use crate::approvals::GatedForms;
use crate::approvals::form_guard::GuardError;
use crate::approvals::{ApprovalError, Approvals};
use crate::audit::AuditLog;
use crate::config::{Config, Site};
use crate::http::errors::ProxyError;
use crate::inventory::Inventory;
use crate::llm::{LlmClient, LlmError};
use crate::metrics::{Metrics, PageCounters, SiteLabels, SiteRequestMetrics};
use crate::net::upstream::UpstreamClients;
use crate::outcomes::Outcomes;
use crate::policy_store::reload::PolicyHandle;
use crate::sso::Sso;
use crate::sso::keys::KeyRing;
use crate::sso::session::SessionId;
use crate::state::continuations::Continuations;
use crate::state::conversations::Conversations;
use crate::state::turns::{Owner, Turns};

/// The user id and session digest of requests without SSO (development).
const ANONYMOUS: &str = "anonymous";
use crate::store::StoreHandle;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Everything a request handler needs.
pub struct Gateway {
    /// The configuration in force.
    pub config: Arc<Config>,
    /// The clients for upstream sites (one per distinct TLS setting).
    pub upstreams: UpstreamClients,
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
    /// Form actions whose agent-marked submissions need an approval
    /// (`approvals_http/enforcement.rs`).
    pub gated_forms: Arc<GatedForms>,
    /// What sites answered agents' form submissions (`outcomes`).
    pub outcomes: Arc<Outcomes>,
    /// Turns whose page navigated away, waiting for the next page (`continuations`).
    pub continuations: Arc<Continuations>,
    /// The page agent's conversations, for the next turn to replay (`conversations`).
    pub conversations: Arc<Conversations>,
    /// The store every replica shares (or this process's embedded one).
    pub store: StoreHandle,
    /// Stored policy versions, when the dashboard manages the policy.
    pub policy_versions: Option<crate::policy_store::versions::PolicyVersions>,
    /// The dashboard's own state (activity samples, the last chain verification).
    pub dashboard: Arc<crate::dashboard_state::DashboardState>,
    /// Signs request tokens (CSRF) when there is no SSO to lend its session keys.
    local_keys: Arc<KeyRing>,
    sites_by_host: HashMap<String, Arc<SiteEntry>>,
    unknown_site_metrics: SiteRequestMetrics,
    draining: Arc<AtomicBool>,
}

/// The clients a configuration builds (reading TLS files and the model's key), rebuilt when it
/// reloads.
pub struct Clients {
    /// The clients for upstream sites.
    pub upstreams: UpstreamClients,
    /// The model client; `None` without `[llm]`.
    pub llm: Option<LlmClient>,
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
        clients: Clients,
        metrics: Metrics,
        policy: Arc<PolicyHandle>,
        sso: Option<Arc<Sso>>,
        audit: Arc<AuditLog>,
        store: StoreHandle,
    ) -> Self {
        let Clients { upstreams, llm } = clients;
        let local_keys = Arc::new(KeyRing::ephemeral());
        // Approval tokens are signed with a key derived from the session keys (configured keys
        // survive restarts, so a pending approval does too) or, without SSO, this process's key.
        let approvals_key =
            sso.as_ref().map_or(&*local_keys, |sso| &sso.keys).derived_key(b"toolgate approvals v1");
        // What replicas leave for each other in the shared store (tool results, sites' answers)
        // is sealed with the same keys as sessions.
        let record_keys: Arc<dyn crate::support::sealing::Sealer> =
            sso.as_ref().map_or_else(|| Arc::clone(&local_keys), |sso| Arc::clone(&sso.keys));
        let sites_by_host = site_table(&config, &metrics);
        let unknown_site_metrics = metrics.site_requests("-");
        Self {
            upstreams,
            gateway_host: config.gateway_host(),
            sso,
            audit,
            inventory: Arc::new(Inventory::new(store.clone())),
            llm,
            policy_versions: config
                .policy_in_store
                .then(|| crate::policy_store::versions::PolicyVersions::new(store.clone())),
            dashboard: Arc::default(),
            approvals: Arc::new(Approvals::new(store.clone(), approvals_key)),
            turns: Arc::new(Turns::new(store.clone(), Arc::clone(&record_keys))),
            gated_forms: Arc::new(GatedForms::new(store.clone())),
            outcomes: Arc::new(Outcomes::new(&store, record_keys)),
            store,
            continuations: Arc::default(),
            conversations: Arc::default(),
            local_keys,
            config: Arc::new(config),
            metrics,
            policy,
            sites_by_host,
            unknown_site_metrics,
            draining: Arc::default(),
        }
    }

    /// The gateway for a reloaded configuration: its sites, upstream clients, model client and
    /// settings, with every long-lived part of this one (store, audit, policy, sign-in,
    /// approvals, turns, inventory, gated forms, outcomes, continuations, conversations, dashboard state,
    /// metrics, draining flag).
    pub fn reconfigured(&self, config: Config, clients: Clients) -> Self {
        let Clients { upstreams, llm } = clients;
        Self {
            sites_by_host: site_table(&config, &self.metrics),
            unknown_site_metrics: self.metrics.site_requests("-"),
            upstreams,
            llm,
            gateway_host: self.gateway_host.clone(),
            sso: self.sso.clone(),
            audit: self.audit.clone(),
            inventory: self.inventory.clone(),
            policy_versions: self.policy_versions.clone(),
            store: self.store.clone(),
            dashboard: self.dashboard.clone(),
            approvals: self.approvals.clone(),
            turns: self.turns.clone(),
            gated_forms: self.gated_forms.clone(),
            outcomes: self.outcomes.clone(),
            continuations: self.continuations.clone(),
            conversations: self.conversations.clone(),
            local_keys: self.local_keys.clone(),
            config: Arc::new(config),
            metrics: self.metrics.clone(),
            policy: self.policy.clone(),
            draining: self.draining.clone(),
        }
    }

    /// Who a request on `site` belongs to, as turns, approvals and outcomes are bound: the
    /// user id and a keyed digest of the session (never the id); "anonymous" for either one
    /// missing (no SSO in development).
    pub fn owner(&self, site: &str, user: Option<&str>, session: Option<&SessionId>) -> Owner {
        Owner {
            user: user.unwrap_or(ANONYMOUS).to_owned(),
            session: session
                .map_or_else(|| ANONYMOUS.to_owned(), |session| self.audit.digest("session", session)),
            site: site.to_owned(),
        }
    }

    /// The keys that sign request tokens: the SSO session keys, else this process's own.
    pub fn request_keys(&self) -> &KeyRing {
        self.sso.as_ref().map_or(&*self.local_keys, |sso| &sso.keys)
    }

    /// The site for a host name (lower-case, without port).
    pub fn site(&self, host: &str) -> Option<&Arc<SiteEntry>> {
        self.sites_by_host.get(host)
    }

    /// The page rewriter's counters of `site` (resolved when the site table was built).
    pub fn page_counters(&self, site: &Site) -> Arc<PageCounters> {
        match self.sites_by_host.get(&site.host) {
            Some(entry) => Arc::clone(&entry.metrics.pages),
            // A site of an older configuration, still answering after a reload.
            None => Arc::new(self.metrics.page_counters(site.id.as_str())),
        }
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

/// Site entries by host, with their request metrics.
fn site_table(config: &Config, metrics: &Metrics) -> HashMap<String, Arc<SiteEntry>> {
    let upstream_reasons = ProxyError::UPSTREAM_FAILURES.map(ProxyError::reason);
    let llm_outcomes: Vec<&str> = ["ok", "client_gone"].into_iter().chain(LlmError::REASONS).collect();
    let block_reasons: Vec<&str> = GuardError::REASONS
        .into_iter()
        .chain(ApprovalError::REASONS)
        .chain([ProxyError::SubmissionTooLarge(0).reason()])
        .collect();
    let labels = SiteLabels {
        upstream_reasons: &upstream_reasons,
        llm_outcomes: &llm_outcomes,
        block_reasons: &block_reasons,
    };
    let entry = |site: &Site| {
        metrics.zero_site(site.id.as_str(), &labels);
        Arc::new(SiteEntry { site: Arc::new(site.clone()), metrics: metrics.site_requests(site.id.as_str()) })
    };
    config.sites.iter().map(|site| (site.host.clone(), entry(site))).collect()
}
