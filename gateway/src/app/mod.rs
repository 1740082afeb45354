//! Starting and stopping a whole gateway on listeners the caller bound: the user-facing
//! listener (`listener`) and the admin server, sharing one state and one shutdown signal, with
//! its reloads (`reload`), shutdown signal (`shutdown`) and logging (`telemetry`, its JSON lines
//! by `log_format`, written out by `log_writer`). The binary, the demo and the integration
//! tests all start gateways through here.
//!
//! Layer 8 of the gateway (ARCHITECTURE.md, "Code map"): may import every layer below it.

pub mod listener;
mod log_format;
mod log_writer;
pub mod reload;
mod replicas;
pub mod shutdown;
pub mod telemetry;

use crate::admin;
use crate::app::shutdown::Shutdown;
use crate::audit::digest::DigestKey;
use crate::audit::{AuditLog, AuditStartError};
use crate::config::secrets::SecretRef;
use crate::config::{Config, StoreLocation};
use crate::metrics::Metrics;
use crate::net::tls::{self, TlsError};
use crate::net::upstream::UpstreamClients;
use crate::policy_store::reload::{PolicyHandle, PolicyLoadError};
use crate::sso::{Sso, SsoStartError};
use crate::state::{Clients, Gateway};
use crate::store::{PgSettings, PgStore, SledStore, Store, StoreError, StoreHandle};
use reload::Reloader;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// A started gateway.
pub struct Running {
    /// Where users connect.
    pub address: SocketAddr,
    /// Where health checks and Prometheus connect.
    pub admin_address: SocketAddr,
    /// Triggering it stops accepting and drains.
    pub shutdown: Shutdown,
    /// The gateway's state as started (the dashboard and tests reach approvals, inventory…
    /// here; those are shared with every reloaded version, the configuration is not).
    pub state: Arc<Gateway>,
    /// Reloads the configuration, policy and certificate (what SIGHUP does), and knows the
    /// gateway in force.
    pub reloader: Arc<Reloader>,
    server: JoinHandle<()>,
    admin: JoinHandle<()>,
}

/// Why a gateway could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The TLS certificate or key is unusable.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The policy file is unreadable or invalid.
    #[error(transparent)]
    Policy(#[from] PolicyLoadError),
    /// The store cannot be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Single sign-on cannot start (secrets, keys).
    #[error(transparent)]
    Sso(#[from] SsoStartError),
    /// The audit log cannot start (damaged store, unreadable key).
    #[error(transparent)]
    Audit(#[from] AuditStartError),
    /// The database password could not be read.
    #[error("store.password: {0}")]
    StorePassword(crate::config::secrets::SecretError),
    /// The audit key could not be read.
    #[error("audit.key: {0}")]
    AuditKey(#[from] crate::config::secrets::SecretError),
    /// The model client cannot be built (its API key is unreadable).
    #[error("llm: {0}")]
    Llm(#[from] crate::llm::LlmError),
}

/// How often expired sessions, logins, tickets and captured audit texts are removed.
const SWEEP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(600);

impl Running {
    /// Waits until the gateway has stopped (after the shutdown signal fired and it drained).
    pub async fn stopped(self) {
        let _ = self.server.await;
        self.shutdown.trigger();
        let _ = self.admin.await;
        // Records queued without waiting (a model's answer) are durable before the process ends.
        if self.state.audit.flush().await.is_err() {
            tracing::error!("the audit log could not be flushed at shutdown");
        }
    }

    /// Fires the shutdown signal and waits for the drain.
    pub async fn stop(self) {
        self.shutdown.trigger();
        self.stopped().await;
    }
}

/// Starts serving on the given listeners.
pub async fn start(
    config: Config,
    listener: TcpListener,
    admin_listener: TcpListener,
    shutdown: Shutdown,
) -> Result<Running, StartError> {
    let certificate = config.server.tls.as_ref().map(tls::ServerCertificate::load).transpose()?.map(Arc::new);
    let tls = match (&certificate, &config.server.tls) {
        (Some(certificate), Some(settings)) => {
            Some(tls::acceptor(certificate.clone(), settings.min_version)?)
        }
        _ => None,
    };
    let upstreams = UpstreamClients::new(&config)?;
    let metrics = Metrics::new();
    let store = open_store(&config).await?;
    // Reading the audit key and the chain's end may block: off the workers.
    let audit = {
        let (config, store, metrics) = (config.clone(), store.clone(), metrics.clone());
        tokio::task::spawn_blocking(move || -> Result<_, StartError> {
            let key = audit_key(&config, store.blocking_store().as_ref())?;
            Ok(Arc::new(AuditLog::start(&store, key, metrics)?))
        })
        .await
        .map_err(|error| StoreError(format!("start-up stopped: {error}")))??
    };
    let initial = crate::policy_store::versions::in_force_at_start(&config, &store).await?;
    let policy = Arc::new(PolicyHandle::new(initial, &config, metrics.clone(), audit.clone()));
    let address = listener.local_addr().unwrap_or(config.server.listen);
    let admin_address = admin_listener.local_addr().unwrap_or(config.server.admin_listen);
    let sso = match &config.sso {
        Some(settings) => {
            Some(Arc::new(Sso::new(&config, settings, store.clone(), audit.clone(), metrics.clone())?))
        }
        None => {
            tracing::warn!("insecure_no_sso: single sign-on is OFF; every request reaches sites anonymously");
            None
        }
    };
    let clients = Clients { upstreams, llm: config.llm.clone().map(crate::llm::LlmClient::new).transpose()? };
    let gateway = Arc::new(Gateway::new(config, clients, metrics, policy, sso.clone(), audit, store.clone()));
    gateway.gated_forms.load().await;
    if !store.is_shared() {
        // Leases of turns a previous run of this process held: nobody runs them any more.
        gateway.turns.forget_every_lease().await?;
    }
    tokio::spawn(sweep_periodically(gateway.clone(), sso, shutdown.wait()));
    tokio::spawn(replicas::follow(gateway.clone(), shutdown.wait()));
    let reloader = Arc::new(Reloader::new(gateway.clone(), store.clone(), certificate));
    // One SIGHUP stream drives every reload; it is registered before `start` returns.
    tokio::spawn(reloader.clone().watch(reload::hangup_signal(), shutdown.wait()));
    if gateway.config.dashboard.is_some() {
        tokio::spawn(crate::dashboard_state::sample_periodically(
            gateway.dashboard.clone(),
            gateway.metrics.clone(),
            shutdown.wait(),
        ));
    }
    // Start-up checked only the end of the audit chain; the whole of it is verified now, off to
    // the side, and damage found there shows in the metric, /readyz, the log and the dashboard.
    let verifying = gateway.clone();
    tokio::spawn(async move { verifying.dashboard.chain.verify(&verifying.audit, &verifying.metrics).await });
    let admin = tokio::spawn(admin::serve(gateway.clone(), admin_listener, shutdown.wait()));
    let server = tokio::spawn(listener::serve(reloader.live(), listener, tls, shutdown.wait()));
    Ok(Running { address, admin_address, shutdown, state: gateway, reloader, server, admin })
}

/// Removes expired sign-in records, old approvals, captured audit texts, parked tool results,
/// idle turn records, forgotten form gates and shared form outcomes, until shutdown.
async fn sweep_periodically(
    gateway: Arc<Gateway>,
    sso: Option<Arc<Sso>>,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let mut ticker = tokio::time::interval(SWEEP_INTERVAL);
    loop {
        tokio::select! {
            () = &mut shutdown => return,
            _ = ticker.tick() => {
                let signed_in = match &sso {
                    Some(sso) => sso.sweep().await,
                    None => Ok(0),
                };
                let now = crate::support::clock::unix_now();
                // Approvals stay an hour past their expiry (for the dashboard), then go.
                let approvals =
                    gateway.approvals.sweep(now).await.map_err(|error| StoreError(error.to_string()));
                let texts = gateway.store.blocking_store();
                let texts = crate::store::blocking(move || crate::audit::content::sweep(texts.as_ref())).await;
                let turns = gateway.turns.sweep().await;
                let gates = gateway.gated_forms.sweep(now).await;
                let outcomes = gateway.outcomes.sweep().await;
                let removed = [signed_in, approvals, texts, turns, gates, outcomes]
                    .into_iter()
                    .sum::<Result<usize, StoreError>>();
                match removed {
                    Ok(removed) if removed > 0 => tracing::info!(removed, "expired records removed"),
                    Ok(_) => {}
                    Err(error) => tracing::error!(error = %error, "store sweep failed"),
                }
            }
        }
    }
}

/// Opens the store the configuration names: the embedded store (on the blocking pool: opening
/// reads its files), or a connection pool to the shared database, migrated.
pub async fn open_store(config: &Config) -> Result<StoreHandle, StartError> {
    let embedded = |store: SledStore| StoreHandle::Embedded(Arc::new(store));
    Ok(match &config.store {
        StoreLocation::Directory(path) => {
            let (path, cache_bytes) = (path.clone(), config.store_cache_bytes);
            embedded(crate::store::blocking(move || SledStore::open(&path, cache_bytes)).await?)
        }
        StoreLocation::Memory => embedded(SledStore::temporary()?),
        StoreLocation::Database(database) => {
            let password = database
                .password
                .as_ref()
                .map(SecretRef::read)
                .transpose()
                .map_err(StartError::StorePassword)?;
            let settings = PgSettings {
                url: database.url.clone(),
                password,
                tls: tls::database::client_config(&database.tls)?,
                pool_size: database.pool_size,
            };
            StoreHandle::Postgres(PgStore::connect(&settings).await?)
        }
    })
}

/// The audit key: the configured secret, else one generated on first start and kept in the
/// store (so digests stay comparable across restarts; configure a key to keep it apart from the
/// log it protects).
pub fn audit_key(config: &Config, store: &dyn Store) -> Result<DigestKey, StartError> {
    if let Some(reference) = &config.audit.key {
        return Ok(DigestKey::new(reference.read()?.as_bytes()));
    }
    const GENERATED: &[u8] = b"audit.generated_key";
    if let Some(key) = store.get(crate::store::Table::Meta, GENERATED)? {
        return Ok(DigestKey::new(&key));
    }
    let key = crate::support::random::random_bytes::<32>();
    // Replicas starting together on one database: the first key stored is everybody's.
    if store.compare_and_swap(crate::store::Table::Meta, GENERATED, None, Some(&key))? {
        store.flush()?;
        tracing::warn!("no audit.key configured: generated one and kept it in the store");
    }
    let key = store
        .get(crate::store::Table::Meta, GENERATED)?
        .ok_or_else(|| StoreError("the generated audit key vanished".to_owned()))?;
    Ok(DigestKey::new(&key))
}
