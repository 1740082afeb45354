//! `POST /backup` on the admin listener: streams a consistent copy of the running gateway's
//! store (`store::backup`) to `toolgate store backup`, which cannot open the store itself while
//! the gateway holds it (sled allows one process).
//!
//! Who may call it: the admin listener is internal but not private (Prometheus and health
//! checkers reach it), so a backup also needs a loopback peer and the token the gateway writes
//! at start into `backup.token` in the store directory (mode 0600). Whoever can read the
//! store's files can take a backup; nobody else can. One backup runs at a time, and each one is
//! audited before it starts.

use crate::audit::event::{AuditEvent, EventKind};
use crate::config::StoreLocation;
use crate::http::body::{self, ProxyBody};
use crate::http::text;
use crate::state::Gateway;
use crate::store::backup::{self, BackupError, Item};
use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The token file's name inside the store directory.
pub const TOKEN_FILE: &str = "backup.token";

/// Bytes handed to the connection at a time.
const CHUNK: usize = 64 * 1024;

/// The backup token of this process and whether a backup is running.
pub struct BackupAccess {
    /// The token, or why backups are off.
    token: Result<String, &'static str>,
    token_path: Option<PathBuf>,
    running: AtomicBool,
}

impl BackupAccess {
    /// Writes a fresh token into the store directory. Without a store directory, or when the
    /// file cannot be written, backups through the admin listener are off (and say why).
    pub fn prepare(location: &StoreLocation) -> Self {
        let directory = match location {
            StoreLocation::Directory(directory) => directory,
            StoreLocation::Memory => {
                return Self::off("the store is in memory (store.path = \":memory:\"): nothing to back up");
            }
            StoreLocation::Database(_) => {
                return Self::off(
                    "the store is a shared database: `toolgate store backup` reads it directly, or use pg_dump",
                );
            }
        };
        let path = directory.join(TOKEN_FILE);
        let token = crate::http::hex(&crate::support::random::random_bytes::<32>());
        match write_private(&path, token.as_bytes()) {
            Ok(()) => Self { token: Ok(token), token_path: Some(path), running: AtomicBool::new(false) },
            Err(error) => {
                tracing::warn!(path = %path.display(), error = %error, "backup token not written; backups through the admin listener are off");
                Self::off("the backup token could not be written (see the gateway's log)")
            }
        }
    }

    fn off(reason: &'static str) -> Self {
        Self { token: Err(reason), token_path: None, running: AtomicBool::new(false) }
    }

    /// Removes the token file (at shutdown): a stopped gateway takes no backups.
    pub fn withdraw(&self) {
        if let Some(path) = &self.token_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Answers `/backup`.
pub async fn handle<B>(
    gateway: &Arc<Gateway>,
    access: &Arc<BackupAccess>,
    peer: SocketAddr,
    request: &Request<B>,
) -> Response<ProxyBody> {
    let refuse = |status, message: &str| {
        gateway.metrics.store_backups.with_label_values(&["refused"]).inc();
        text(status, format!("{message}\n"))
    };
    if request.method() != Method::POST {
        let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "only POST\n");
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let token = match &access.token {
        Ok(token) => token,
        Err(reason) => return refuse(StatusCode::NOT_FOUND, reason),
    };
    if !peer.ip().to_canonical().is_loopback() {
        tracing::warn!(peer = %peer.ip(), "backup refused: not from loopback");
        return refuse(StatusCode::FORBIDDEN, "backups are taken on the gateway's own host (loopback) only");
    }
    let presented = crate::http::bearer_token(request.headers()).unwrap_or_default();
    if aws_lc_rs::constant_time::verify_slices_are_equal(presented.as_bytes(), token.as_bytes()).is_err() {
        tracing::warn!("backup refused: wrong or missing token");
        return refuse(
            StatusCode::UNAUTHORIZED,
            &format!(
                "send `Authorization: Bearer <token>` with the token from {TOKEN_FILE} in the store directory"
            ),
        );
    }
    if access.running.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return refuse(StatusCode::CONFLICT, "a backup is already running");
    }
    let running = RunningBackup(access.clone());
    let event = AuditEvent::new(EventKind::StoreBackup).decision("started", "operator").resource("store");
    if gateway.audit.record(event).await.is_err() {
        return refuse(StatusCode::SERVICE_UNAVAILABLE, "the audit log cannot be written; no backup");
    }
    let (sender, mut response) = body::event_stream();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/vnd.toolgate.backup"));
    let gateway = gateway.clone();
    tokio::task::spawn_blocking(move || {
        let _running = running;
        let mut chunk = backup::MAGIC.to_vec();
        let result = backup::walk(gateway.audit.store(), &mut |item| {
            let last = matches!(item, Item::End { .. });
            backup::encode(&item, &mut chunk);
            if chunk.len() >= CHUNK || last {
                sender
                    .blocking_send(Bytes::from(std::mem::take(&mut chunk)))
                    .map_err(|_| BackupError::Aborted("the client went away".into()))?;
            }
            Ok(())
        });
        match result {
            Ok(records) => {
                gateway.metrics.store_backups.with_label_values(&["completed"]).inc();
                tracing::info!(records, "store backup sent");
            }
            Err(error) => {
                gateway.metrics.store_backups.with_label_values(&["failed"]).inc();
                tracing::error!(error = %error, "store backup failed");
            }
        }
    });
    response
}

/// Marks the end of a backup when dropped, however it ended.
struct RunningBackup(Arc<BackupAccess>);

impl Drop for RunningBackup {
    fn drop(&mut self) {
        self.0.running.store(false, Ordering::Release);
    }
}

/// Writes `bytes` to `path` readable by the owner only, replacing it atomically.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let partial = path.with_extension("token.partial");
    // `mode` applies only to a file it creates.
    let _ = std::fs::remove_file(&partial);
    let mut file =
        std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&partial)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&partial, path)
}
