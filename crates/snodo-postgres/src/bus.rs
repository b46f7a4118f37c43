//! The event bus on PostgreSQL `LISTEN/NOTIFY`.
//!
//! A payload of valid UTF-8 under [`INLINE_LIMIT`] bytes travels in the
//! notification itself (`i` + payload); a larger one (NOTIFY takes at most
//! 8 000 bytes) goes by reference: it is written to `snodo_bus_payloads`
//! and the notification carries `r` + its row id, which each receiver
//! reads before it delivers anything after it, so that order holds. Rows
//! older than [`KEEP_PAYLOADS`] are deleted as new ones are written.
//!
//! `LISTEN` needs a session of its own: point the bus at PostgreSQL itself
//! or at a session-pooled connection, never at a transaction pooler (it
//! would deliver nothing).

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use snodo::server::events::bus::{BUS_QUEUE, Delivery, EventBus, MAX_BUS_PAYLOAD};
use snodo::task::StoreError;
use tokio::sync::{broadcast, mpsc};

use crate::pool::{Pool, pg};

/// The channel a bus uses unless told otherwise.
pub const DEFAULT_BUS_CHANNEL: &str = "snodo_events";

/// The largest payload sent inside the notification.
pub const INLINE_LIMIT: usize = 7_900;

/// How long payloads sent by reference are kept.
pub const KEEP_PAYLOADS: Duration = Duration::from_secs(300);

/// An [`EventBus`] on PostgreSQL `LISTEN/NOTIFY`.
#[derive(Clone)]
pub struct PostgresBus {
    pool: Pool,
    channel: String,
    queue: mpsc::Sender<Bytes>,
}

impl fmt::Debug for PostgresBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresBus")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

fn check_channel(channel: &str) -> Result<(), StoreError> {
    let ok = (1..=63).contains(&channel.len())
        && channel
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(StoreError::Invalid(
            "a channel name is 1 to 63 characters of [a-z0-9_]".into(),
        ))
    }
}

impl PostgresBus {
    /// A bus on `channel` of the database at `url`; creates the table of
    /// payloads sent by reference, and fails when PostgreSQL cannot be
    /// reached now.
    pub async fn connect(url: &str, channel: &str) -> Result<Self, StoreError> {
        check_channel(channel)?;
        let pool = Pool::new(url, 2)?;
        pool.create_tables(
            7244015130475512834,
            "CREATE TABLE IF NOT EXISTS snodo_bus_payloads (
                 id bigserial PRIMARY KEY,
                 body bytea NOT NULL,
                 created_at timestamptz NOT NULL DEFAULT now()
                 );",
        )
        .await?;
        pool.listen(channel);
        let (queue, rx) = mpsc::channel(BUS_QUEUE);
        tokio::spawn(publish_loop(pool.clone(), channel.to_string(), rx));
        Ok(Self {
            pool,
            channel: channel.to_string(),
            queue,
        })
    }

    /// The channel the bus notifies on.
    pub fn channel(&self) -> &str {
        &self.channel
    }
}

async fn send(pool: &Pool, channel: &str, payload: &[u8], sent: u64) -> Result<(), StoreError> {
    let mut conn = pool.get().await?;
    let outcome = async {
        let client = conn.client();
        match std::str::from_utf8(payload) {
            Ok(text) if text.len() <= INLINE_LIMIT && !text.contains('\0') => {
                client
                    .execute("SELECT pg_notify($1, $2)", &[&channel, &format!("i{text}")])
                    .await
                    .map_err(pg)?;
            }
            _ => {
                let tx = client.transaction().await.map_err(pg)?;
                let row = tx
                    .query_one(
                        "INSERT INTO snodo_bus_payloads (body) VALUES ($1) RETURNING id",
                        &[&payload],
                    )
                    .await
                    .map_err(pg)?;
                let id: i64 = row.get(0);
                tx.execute("SELECT pg_notify($1, $2)", &[&channel, &format!("r{id}")])
                    .await
                    .map_err(pg)?;
                if sent.is_multiple_of(64) {
                    let keep = KEEP_PAYLOADS.as_secs_f64();
                    tx.execute(
                        "DELETE FROM snodo_bus_payloads \
                         WHERE created_at < now() - make_interval(secs => $1)",
                        &[&keep],
                    )
                    .await
                    .map_err(pg)?;
                }
                tx.commit().await.map_err(pg)?;
            }
        }
        Ok(())
    }
    .await;
    conn.check(&outcome);
    outcome
}

async fn publish_loop(pool: Pool, channel: String, mut rx: mpsc::Receiver<Bytes>) {
    let mut sent = 0u64;
    while let Some(payload) = rx.recv().await {
        let mut attempt = 0u32;
        while send(&pool, &channel, &payload, sent).await.is_err() {
            let pause = Duration::from_millis(50) * 2u32.saturating_pow(attempt.min(5));
            tokio::time::sleep(pause.min(Duration::from_secs(2))).await;
            attempt += 1;
        }
        sent += 1;
    }
}

async fn fetch(pool: &Pool, id: i64) -> Option<Bytes> {
    for _ in 0..5 {
        let Ok(mut conn) = pool.get().await else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let outcome = conn
            .client()
            .query_opt("SELECT body FROM snodo_bus_payloads WHERE id = $1", &[&id])
            .await
            .map_err(pg);
        conn.check(&outcome);
        match outcome {
            Ok(row) => {
                let body: Vec<u8> = row?.get(0);
                return (body.len() <= MAX_BUS_PAYLOAD).then(|| Bytes::from(body));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    None
}

async fn deliver(pool: Pool, mut heard: broadcast::Receiver<String>, out: mpsc::Sender<Delivery>) {
    loop {
        let delivery = match heard.recv().await {
            // The listening connection came back: notifications may have
            // been missed.
            Ok(payload) if payload.is_empty() => Delivery::Lost,
            Ok(payload) => match payload.split_at_checked(1) {
                Some(("i", text)) => Delivery::Message(Bytes::from(text.to_string())),
                Some(("r", id)) => match id.parse::<i64>() {
                    Ok(id) => match fetch(&pool, id).await {
                        Some(body) => Delivery::Message(body),
                        None => Delivery::Lost,
                    },
                    Err(_) => continue,
                },
                _ => continue,
            },
            Err(broadcast::error::RecvError::Lagged(_)) => Delivery::Lost,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if out.send(delivery).await.is_err() {
            return;
        }
    }
}

impl EventBus for PostgresBus {
    fn publish(&self, payload: Bytes) {
        // A full queue drops the payload: the receivers see the gap in this
        // node's sequence and resync.
        let _ = self.queue.try_send(payload);
    }

    fn subscribe(&self) -> mpsc::Receiver<Delivery> {
        let (out, rx) = mpsc::channel(BUS_QUEUE);
        tokio::spawn(deliver(self.pool.clone(), self.pool.subscribe(), out));
        rx
    }
}
