//! A few connections, opened when first needed and reopened after a
//! failure, and one more that listens for change notifications.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use snodo::error::BackendError;
use snodo::task::StoreError;
use tokio::sync::{Mutex, MutexGuard, broadcast};
use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A PostgreSQL error as a store error, with PostgreSQL's own words.
pub(crate) fn pg(e: tokio_postgres::Error) -> StoreError {
    let message = match e.as_db_error() {
        Some(db) => format!("PostgreSQL: {}", db.message()),
        None => format!("PostgreSQL: {e}"),
    };
    StoreError::Backend(BackendError::with_source(message, e))
}

#[derive(Clone)]
pub(crate) struct Pool {
    config: Arc<Config>,
    slots: Arc<Vec<Mutex<Option<Client>>>>,
    next: Arc<AtomicUsize>,
    changes: broadcast::Sender<String>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("connections", &self.slots.len())
            .finish_non_exhaustive()
    }
}

/// A connection in use; dropping it returns it.
pub(crate) struct Conn<'a> {
    slot: MutexGuard<'a, Option<Client>>,
}

impl Conn<'_> {
    pub(crate) fn client(&mut self) -> &mut Client {
        self.slot.as_mut().expect("a connection in use is open")
    }

    /// Forgets a connection that failed, so that the next use opens a new
    /// one.
    pub(crate) fn check<T>(&mut self, outcome: &Result<T, StoreError>) {
        if outcome.is_err() && self.slot.as_ref().is_some_and(Client::is_closed) {
            *self.slot = None;
        }
    }
}

async fn open(config: &Config) -> Result<Client, StoreError> {
    let connecting = config.connect(NoTls);
    let (client, connection) = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
        .await
        .map_err(|_| StoreError::Backend(BackendError::new("PostgreSQL: connecting timed out")))?
        .map_err(pg)?;
    tokio::spawn(connection);
    Ok(client)
}

impl Pool {
    pub(crate) fn new(url: &str, size: usize) -> Result<Self, StoreError> {
        let mut config: Config = url
            .parse()
            .map_err(|e| StoreError::Invalid(format!("not a PostgreSQL URL: {e}")))?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("snodo");
        Ok(Self {
            config: Arc::new(config),
            slots: Arc::new((0..size).map(|_| Mutex::new(None)).collect()),
            next: Arc::new(AtomicUsize::new(0)),
            changes: broadcast::channel(1024).0,
        })
    }

    /// A connection: a free one if there is, else the next in turn.
    pub(crate) async fn get(&self) -> Result<Conn<'_>, StoreError> {
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let n = self.slots.len();
        let mut slot = None;
        for i in 0..n {
            if let Ok(guard) = self.slots[(start + i) % n].try_lock() {
                slot = Some(guard);
                break;
            }
        }
        let mut slot = match slot {
            Some(s) => s,
            None => self.slots[start % n].lock().await,
        };
        if slot.as_ref().is_none_or(Client::is_closed) {
            *slot = Some(open(&self.config).await?);
        }
        Ok(Conn { slot })
    }

    /// Runs `ddl` (idempotent `CREATE … IF NOT EXISTS` statements) in one
    /// transaction under the advisory lock `lock`, so that nodes starting at
    /// once never race to create the same table.
    pub(crate) async fn create_tables(&self, lock: i64, ddl: &str) -> Result<(), StoreError> {
        let mut conn = self.get().await?;
        let outcome = async {
            let tx = conn.client().transaction().await.map_err(pg)?;
            tx.batch_execute(&format!("SELECT pg_advisory_xact_lock({lock}); {ddl}"))
                .await
                .map_err(pg)?;
            tx.commit().await.map_err(pg)
        }
        .await;
        conn.check(&outcome);
        outcome
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<String> {
        self.changes.subscribe()
    }

    /// Listens on `channel` on a connection of its own, reconnecting after
    /// a failure (and announcing `""` then), for as long as a subscriber
    /// or a pool handle lives.
    pub(crate) fn listen(&self, channel: &str) {
        let channel = channel.to_string();
        let config = self.config.clone();
        let changes = self.changes.downgrade();
        tokio::spawn(async move {
            let mut first = true;
            loop {
                let Some(tx) = changes.upgrade() else { return };
                if let Ok(connected) =
                    tokio::time::timeout(CONNECT_TIMEOUT, config.connect(NoTls)).await
                    && let Ok((client, mut connection)) = connected
                {
                    let mut messages =
                        futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                    let listening =
                        async { client.batch_execute(&format!("LISTEN \"{channel}\"")).await };
                    let ready = tokio::select! {
                        r = listening => r.is_ok(),
                        _ = messages.next() => false,
                    };
                    if ready {
                        if !first {
                            let _ = tx.send(String::new());
                        }
                        first = false;
                        drop(tx);
                        while let Some(Ok(message)) = messages.next().await {
                            if let AsyncMessage::Notification(n) = message {
                                match changes.upgrade() {
                                    Some(tx) => {
                                        let _ = tx.send(n.payload().to_string());
                                    }
                                    None => return,
                                }
                            }
                        }
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
    }
}
