//! What other replicas changed, as it happens: a replica that changes shared state a waiting
//! request cares about (an approval decided, a policy version saved) announces it with
//! `pg_notify` on the `toolgate` channel, and every replica's one listening connection hands it
//! to the subscribers in that process. A notice says only what changed (`approval:<id>`,
//! `policy:<version>`); the subscriber reads the record itself, so a notice carries nothing
//! secret and a forged one can only cause a re-read.
//!
//! Notices are not durable: when the listening connection drops, the ones sent meanwhile are
//! lost, so every (re)connection delivers [`RESYNC`] and subscribers then re-read all they wait
//! for. The listener starts with the first subscriber and reconnects every second until the
//! database answers again.

use super::failure;
use crate::store::StoreError;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast;
use tokio_postgres::AsyncMessage;

/// The channel every replica listens on.
const CHANNEL: &str = "toolgate";
/// The topic of the notice a (re)connected listener delivers: re-read everything.
pub const RESYNC: &str = "resync";
/// Notices buffered per subscriber; one that falls behind gets a lag error (and re-reads).
const BUFFER: usize = 1024;
/// The pause before the listener tries the database again.
const RECONNECT: Duration = Duration::from_secs(1);

/// One change another replica (or this one) announced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// What kind of record changed (`approval`, `policy`, or [`RESYNC`]).
    pub topic: String,
    /// Which one.
    pub key: String,
}

impl Notice {
    fn parse(payload: &str) -> Option<Self> {
        let (topic, key) = payload.split_once(':')?;
        Some(Self { topic: topic.to_owned(), key: key.to_owned() })
    }
}

/// How the listener connects (its own connection, outside the pool: `LISTEN` holds it).
pub(super) struct Listener {
    config: tokio_postgres::Config,
    tls: Option<Arc<rustls::ClientConfig>>,
    notices: std::sync::OnceLock<broadcast::Sender<Notice>>,
}

impl Listener {
    pub(super) fn new(config: tokio_postgres::Config, tls: Option<Arc<rustls::ClientConfig>>) -> Self {
        Self { config, tls, notices: std::sync::OnceLock::new() }
    }

    /// A new subscriber; the first one starts the listening task.
    pub(super) fn subscribe(self: &Arc<Self>) -> broadcast::Receiver<Notice> {
        let mut started = false;
        let sender = self.notices.get_or_init(|| {
            started = true;
            broadcast::Sender::new(BUFFER)
        });
        let receiver = sender.subscribe();
        if started {
            let (listener, notices) = (Arc::clone(self), sender.downgrade());
            tokio::spawn(async move { listener.run(notices).await });
        }
        receiver
    }

    /// Listens until every sender is gone, reconnecting after each failure.
    async fn run(self: Arc<Self>, notices: broadcast::WeakSender<Notice>) {
        loop {
            let result = match &self.tls {
                Some(tls) => {
                    let connector = tokio_postgres_rustls::MakeRustlsConnect::new(tls.as_ref().clone());
                    match self.config.connect(connector).await {
                        Ok((client, connection)) => listen(client, connection, &notices).await,
                        Err(error) => Err(failure(error)),
                    }
                }
                None => match self.config.connect(tokio_postgres::NoTls).await {
                    Ok((client, connection)) => listen(client, connection, &notices).await,
                    Err(error) => Err(failure(error)),
                },
            };
            if notices.upgrade().is_none() {
                return;
            }
            if let Err(error) = result {
                tracing::warn!(error = %error, "the database's change notices stopped; reconnecting");
            }
            tokio::time::sleep(RECONNECT).await;
        }
    }
}

/// Listens on one connection until it fails; delivers [`RESYNC`] once listening.
async fn listen<S, T>(
    client: tokio_postgres::Client,
    mut connection: tokio_postgres::Connection<S, T>,
    notices: &broadcast::WeakSender<Notice>,
) -> Result<(), StoreError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // The connection must be polled for the client's statements to complete, and its
    // notifications arrive there too: one task drives it and forwards them.
    let (forward, mut messages) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|context| connection.poll_message(context)).await {
                Some(Ok(AsyncMessage::Notification(notification))) => {
                    if forward.send(Ok(notification.payload().to_owned())).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => {
                    let _ = forward.send(Err(failure(error)));
                    return;
                }
                None => {
                    let _ =
                        forward.send(Err(StoreError("database: the notice connection closed".to_owned())));
                    return;
                }
            }
        }
    });
    let outcome = async {
        client.batch_execute(&format!("LISTEN {CHANNEL}")).await.map_err(failure)?;
        deliver(notices, Notice { topic: RESYNC.to_owned(), key: String::new() })?;
        while let Some(payload) = messages.recv().await {
            if let Some(notice) = Notice::parse(&payload?) {
                deliver(notices, notice)?;
            }
        }
        Ok(())
    }
    .await;
    driver.abort();
    outcome
}

/// Hands a notice to the subscribers; fails once nobody can subscribe any more.
fn deliver(notices: &broadcast::WeakSender<Notice>, notice: Notice) -> Result<(), StoreError> {
    let sender = notices.upgrade().ok_or_else(|| StoreError("the store is gone".to_owned()))?;
    let _ = sender.send(notice);
    Ok(())
}

impl super::PgStore {
    /// Tells every replica (this one too) that `key` of `topic` changed.
    pub async fn announce(&self, topic: &str, key: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        let payload = format!("{topic}:{key}");
        client.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload]).await.map_err(failure)?;
        Ok(())
    }

    /// The changes announced from now on, [`RESYNC`] first once listening.
    pub fn subscribe(&self) -> broadcast::Receiver<Notice> {
        self.listener.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_is_a_topic_and_a_key() {
        assert_eq!(
            Notice::parse("approval:Ab-9"),
            Some(Notice { topic: "approval".to_owned(), key: "Ab-9".to_owned() })
        );
        assert_eq!(Notice::parse("policy:12:x").map(|notice| notice.key), Some("12:x".to_owned()));
        assert_eq!(Notice::parse("garbage"), None);
    }
}
