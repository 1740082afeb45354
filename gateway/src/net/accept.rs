//! Taking the next connection off a listening socket, for the user-facing and the admin
//! listener alike.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// How long to wait after a failed accept before trying again.
const BACKOFF: Duration = Duration::from_millis(50);

/// The next connection on `listener`. A failed accept (out of file descriptors and the like) is
/// logged with `listener_name` and retried after a short pause instead of spinning. Cancel-safe:
/// dropping the future loses no connection.
pub async fn next_connection(listener: &TcpListener, listener_name: &'static str) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(error) => {
                tracing::warn!(error = %error, listener = listener_name, "accept failed");
                tokio::time::sleep(BACKOFF).await;
            }
        }
    }
}
