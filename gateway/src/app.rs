//! Starting and stopping a whole gateway on listeners the caller bound: the user-facing
//! server and the admin server, sharing one state and one shutdown signal. The binary, the
//! demo and the integration tests all start gateways through here.

use crate::config::Config;
use crate::metrics::Metrics;
use crate::policy_reload::{self, PolicyHandle, PolicyLoadError};
use crate::shutdown::Shutdown;
use crate::state::Gateway;
use crate::tls::{self, TlsError};
use crate::{admin, server};
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
}

impl Running {
    /// Waits until the gateway has stopped (after the shutdown signal fired and it drained).
    pub async fn stopped(self) {
        let _ = self.server.await;
        self.shutdown.trigger();
        let _ = self.admin.await;
    }

    /// Fires the shutdown signal and waits for the drain.
    pub async fn stop(self) {
        self.shutdown.trigger();
        self.stopped().await;
    }
}

/// Starts serving on the given listeners.
pub fn start(
    config: Config,
    listener: TcpListener,
    admin_listener: TcpListener,
    shutdown: Shutdown,
) -> Result<Running, StartError> {
    let tls = config.server.tls.as_ref().map(tls::acceptor).transpose()?;
    let metrics = Metrics::new();
    let policy = Arc::new(PolicyHandle::new(policy_reload::load(&config)?, &config, metrics.clone()));
    let address = listener.local_addr().unwrap_or(config.server.listen);
    let admin_address = admin_listener.local_addr().unwrap_or(config.server.admin_listen);
    let gateway = Arc::new(Gateway::new(config, metrics, policy.clone()));
    let watch_shutdown = shutdown.wait();
    tokio::spawn(async move { policy.watch(watch_shutdown).await });
    let admin = tokio::spawn(admin::serve(gateway.clone(), admin_listener, shutdown.wait()));
    let server = tokio::spawn(server::serve(gateway, listener, tls, shutdown.wait()));
    Ok(Running { address, admin_address, shutdown, server, admin })
}
