//! One shutdown signal shared by every listener: triggered by SIGTERM/SIGINT (or by tests),
//! awaited by accept loops, which then stop accepting and drain.

use tokio::sync::watch;

/// A cloneable handle: anyone may trigger, anyone may wait.
#[derive(Clone)]
pub struct Shutdown {
    sender: watch::Sender<bool>,
}

impl Shutdown {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self { sender: watch::Sender::new(false) }
    }

    /// Fires the signal; every waiter wakes.
    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }

    /// Resolves once the signal has fired (immediately if it already has).
    pub fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.sender.subscribe();
        async move {
            // An error means every sender is gone, which can only happen once nobody can
            // trigger any more: treat it as shutdown.
            let _ = receiver.wait_for(|fired| *fired).await;
        }
    }

    /// Fires the signal on SIGTERM or Ctrl-C (SIGINT).
    pub fn on_process_signals(&self) {
        let shutdown = self.clone();
        tokio::spawn(async move {
            let terminate = async {
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(mut signal) => {
                        signal.recv().await;
                    }
                    Err(error) => {
                        tracing::error!(error = %error, "cannot listen for SIGTERM");
                        std::future::pending::<()>().await;
                    }
                }
            };
            tokio::select! {
                () = terminate => tracing::info!("SIGTERM received: draining"),
                _ = tokio::signal::ctrl_c() => tracing::info!("interrupt received: draining"),
            }
            shutdown.trigger();
        });
    }
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}
