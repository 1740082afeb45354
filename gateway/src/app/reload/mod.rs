//! Reloading without a restart. One task owns every reload: it listens for SIGHUP (one signal
//! stream for the whole gateway) and polls files once a second. SIGHUP reads the configuration
//! file again (with the policy, checked against the new sites), then the listener's certificate;
//! a change of the policy file or of the certificate files reloads that part alone.
//!
//! A reloaded configuration is a new `Gateway` sharing every long-lived part of the running one
//! (store, audit, approvals, turns, inventory, sessions, metrics), swapped in whole: each request
//! reads the gateway in force once and keeps it to its end. Nothing invalid ever replaces what
//! runs: a broken file is logged (with line and key), counted and audited, and changes nothing.

mod restart;

pub use restart::keep_running_values;

use crate::audit::event::{AuditEvent, EventKind};
use crate::config::{Config, ConfigError};
use crate::llm::{LlmClient, LlmError};
use crate::net::tls::{ServerCertificate, TlsError};
use crate::net::upstream::UpstreamClients;
use crate::policy_store::reload::PolicyLoadError;
use crate::state::{Clients, Gateway};
use crate::store::StoreHandle;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// How often the policy and certificate files are checked for changes.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The gateway in force, replaced whole when the configuration reloads.
pub struct LiveGateway(RwLock<Arc<Gateway>>);

impl LiveGateway {
    /// The gateway in force now (read it once per request and keep it).
    pub fn current(&self) -> Arc<Gateway> {
        // A poisoned lock still holds a whole gateway: writers only ever store complete values.
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn replace(&self, next: Arc<Gateway>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = next;
    }
}

/// Why a configuration reload was refused (the running configuration stays).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReloadError {
    /// The gateway was started from configuration text, not a file.
    #[error("there is no configuration file to read again")]
    NoFile,
    /// The file is unreadable or has problems (each with line and key).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A TLS file a site names cannot be used.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The policy in force does not fit the new configuration (or its file is broken).
    #[error("the policy does not fit the new configuration: {0}")]
    Policy(#[from] PolicyLoadError),
    /// The model client cannot be built (its API key is unreadable).
    #[error("llm: {0}")]
    Llm(#[from] LlmError),
}

/// What a configuration reload changed.
#[derive(Debug)]
pub struct ConfigReloaded {
    /// Sites configured now.
    pub sites: usize,
    /// Settings that differ in the file but keep their running value until a restart.
    pub restart_needed: Vec<&'static str>,
}

/// Drives every reload of one gateway.
pub struct Reloader {
    live: Arc<LiveGateway>,
    config_file: Option<PathBuf>,
    store: StoreHandle,
    certificate: Option<Arc<ServerCertificate>>,
    /// One reload at a time (SIGHUP, file polls and callers such as tests).
    serial: tokio::sync::Mutex<()>,
}

/// Registers for SIGHUP now, before the gateway announces itself, so that a SIGHUP sent right
/// after start-up reloads instead of killing the process (the default action).
pub fn hangup_signal() -> Option<Signal> {
    match signal(SignalKind::hangup()) {
        Ok(hangups) => Some(hangups),
        Err(error) => {
            tracing::warn!(error = %error, "cannot listen for SIGHUP; only file changes reload");
            None
        }
    }
}

impl Reloader {
    /// Reloads for `gateway`, whose configuration came from `gateway.config.source` (if any).
    pub fn new(
        gateway: Arc<Gateway>,
        store: StoreHandle,
        certificate: Option<Arc<ServerCertificate>>,
    ) -> Self {
        let config_file = gateway.config.source.clone();
        Self {
            live: Arc::new(LiveGateway(RwLock::new(gateway))),
            config_file,
            store,
            certificate,
            serial: Default::default(),
        }
    }

    /// The handle the listener reads the gateway in force from.
    pub fn live(&self) -> Arc<LiveGateway> {
        self.live.clone()
    }

    /// The gateway in force now.
    pub fn current(&self) -> Arc<Gateway> {
        self.live.current()
    }

    /// What SIGHUP does: the configuration (and with it the policy), else the policy alone,
    /// then the certificate. Each part that fails keeps its running version.
    pub async fn hangup(&self) {
        tracing::info!("SIGHUP received: reloading the configuration, the policy and the certificate");
        // The policy comes with the configuration: a rejected configuration changes nothing, its
        // policy included. Only a gateway without a configuration file reloads the policy alone.
        if self.config_file.is_some() {
            let _ = self.reload_config().await;
        } else {
            let _ = self.current().policy.reload().await;
        }
        let _ = self.reload_certificate().await;
    }

    /// Reads the configuration file again. If it is valid (and the policy and every TLS file
    /// fit it), new requests use it; restart-only settings keep their running values.
    pub async fn reload_config(&self) -> Result<ConfigReloaded, ReloadError> {
        let _serial = self.serial.lock().await;
        let path = self.config_file.clone().ok_or(ReloadError::NoFile)?;
        let running = self.current();
        let (running_config, store) = (running.config.clone(), self.store.clone());
        let file = path.clone();
        // Reading files and the system's roots blocks: keep it off the request threads.
        let prepared =
            tokio::task::spawn_blocking(move || prepare(&running_config, &file)).await.unwrap_or_else(
                |error| Err(ReloadError::Config(ConfigError::whole_file("reload", error.to_string()))),
            );
        let prepared = match prepared {
            Ok((config, clients, restart_needed)) => {
                match crate::policy_store::versions::in_force_at_start(&config, &store).await {
                    Ok(policy) => Ok(Prepared { config, clients, policy, restart_needed }),
                    Err(error) => Err(error.into()),
                }
            }
            Err(error) => Err(error),
        };
        let resource = path.display().to_string();
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(error) => {
                running.metrics.config_reloads.with_label_values(&["rejected"]).inc();
                // Problems name lines and keys of the operator's file; secrets are references.
                tracing::error!(file = %resource, problems = %error, "new configuration rejected; the running one stays");
                let mut event =
                    AuditEvent::new(EventKind::ConfigRejected).decision("rejected", "invalid configuration");
                event.explanation = Some(serde_json::Value::String(error.to_string()));
                running.audit.record_or_log(event.resource(&resource)).await;
                return Err(error);
            }
        };
        let Prepared { config, clients, policy, restart_needed } = prepared;
        for setting in &restart_needed {
            tracing::warn!(setting, "restart needed for {setting}: it keeps its running value until then");
        }
        let sites = config.sites.len();
        running.policy.set_sites(config.site_ids());
        running.policy.install(policy.0, policy.1);
        if let Some(sso) = &running.sso {
            sso.set_site_hosts(crate::sso::return_hosts(&config));
        }
        self.live.replace(Arc::new(running.reconfigured(config, clients)));
        running.metrics.config_reloads.with_label_values(&["applied"]).inc();
        tracing::info!(file = %resource, sites, restart_needed = restart_needed.len(), "configuration reloaded");
        let mut event =
            AuditEvent::new(EventKind::ConfigReload).decision("applied", &format!("{sites} sites"));
        if !restart_needed.is_empty() {
            event.explanation = Some(serde_json::json!({ "restart_needed": restart_needed }));
        }
        running.audit.record_or_log(event.resource(&resource)).await;
        Ok(ConfigReloaded { sites, restart_needed })
    }

    /// Reads the listener's certificate and key again; a pair that cannot be used is refused
    /// and the one in force stays. Without TLS there is nothing to do.
    pub async fn reload_certificate(&self) -> Result<(), TlsError> {
        let Some(certificate) = &self.certificate else { return Ok(()) };
        let _serial = self.serial.lock().await;
        let outcome = certificate.reload();
        let gateway = self.current();
        let file = certificate.cert_path().display().to_string();
        let event = match &outcome {
            Ok(()) => {
                gateway.metrics.tls_reloads.with_label_values(&["applied"]).inc();
                tracing::info!(file = %file, "certificate reloaded; new connections use it");
                AuditEvent::new(EventKind::CertificateReload).decision("applied", "certificate reloaded")
            }
            Err(error) => {
                gateway.metrics.tls_reloads.with_label_values(&["rejected"]).inc();
                // File paths and rustls' reason only: never key material.
                tracing::error!(file = %file, problem = %error, "new certificate rejected; the previous one stays in use");
                let mut event = AuditEvent::new(EventKind::CertificateRejected)
                    .decision("rejected", "unusable certificate");
                event.explanation = Some(serde_json::Value::String(error.to_string()));
                event
            }
        };
        gateway.audit.record_or_log(event.resource(&file)).await;
        outcome
    }

    /// Runs until `shutdown`: SIGHUP reloads everything; a changed policy file or certificate
    /// file reloads that part. Polling `stat` (not file-system events) also sees the symlink
    /// swaps Kubernetes uses to update mounted ConfigMaps and Secrets.
    pub async fn watch(self: Arc<Self>, mut hangups: Option<Signal>, shutdown: impl Future<Output = ()>) {
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
                _ = hangup => self.hangup().await,
                _ = ticker.tick() => {
                    {
                        let _serial = self.serial.lock().await;
                        self.current().policy.reload_if_changed().await;
                    }
                    if self.certificate.as_ref().is_some_and(|certificate| certificate.changed()) {
                        let _ = self.reload_certificate().await;
                    }
                }
            }
        }
    }
}

/// A checked configuration and everything built from it, ready to swap in.
struct Prepared {
    config: Config,
    clients: Clients,
    /// The policy for the new configuration and its stored version (0 for a file's).
    policy: (policy::Policy, u64),
    restart_needed: Vec<&'static str>,
}

/// Reads and checks the file and builds the clients the new gateway needs (its policy is read
/// after, from the store); touches nothing running.
fn prepare(
    running: &Config,
    path: &std::path::Path,
) -> Result<(Config, Clients, Vec<&'static str>), ReloadError> {
    let mut config = Config::load(path)?;
    let restart_needed = keep_running_values(running, &mut config);
    let upstreams = UpstreamClients::new(&config)?;
    let llm = config.llm.clone().map(LlmClient::new).transpose()?;
    Ok((config, Clients { upstreams, llm }, restart_needed))
}
