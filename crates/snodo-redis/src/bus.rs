//! The event bus on Redis pub/sub: one channel per service.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use redis::Client;
use snodo::error::BackendError;
use snodo::server::events::bus::{BUS_QUEUE, Delivery, EventBus, MAX_BUS_PAYLOAD};
use tokio::sync::mpsc;

use crate::connection::{CONNECT_TIMEOUT, Link, RedisError, client};

/// The channel a bus uses unless told otherwise.
pub const DEFAULT_CHANNEL: &str = "snodo:events";

/// The longest pause between two attempts to reconnect.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// An [`EventBus`] on Redis pub/sub.
///
/// Publishing goes through one connection, in order, from a bounded queue
/// ([`BUS_QUEUE`] payloads); a payload Redis refused or could not take is
/// sent again once the connection is back. Each subscription holds a
/// connection of its own, and reports [`Delivery::Lost`] each time it had to
/// subscribe again.
#[derive(Clone)]
pub struct RedisBus {
    client: Client,
    channel: String,
    queue: mpsc::Sender<Bytes>,
}

impl fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBus")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

fn backoff(attempt: u32) -> Duration {
    (Duration::from_millis(50) * 2u32.saturating_pow(attempt.min(6))).min(MAX_BACKOFF)
}

impl RedisBus {
    /// A bus on `channel` of the Redis server at `url`
    /// (`redis://host:port/db`); fails when Redis cannot be reached now.
    pub async fn connect(url: &str, channel: &str) -> Result<Self, RedisError> {
        if channel.is_empty() {
            return Err(RedisError(BackendError::new("the channel name is empty")));
        }
        let client = client(url)?;
        let link = Link::open(client.clone()).await?;
        let (queue, rx) = mpsc::channel(BUS_QUEUE);
        tokio::spawn(publish_loop(link, channel.to_string(), rx));
        Ok(Self {
            client,
            channel: channel.to_string(),
            queue,
        })
    }

    /// The channel the bus publishes on.
    pub fn channel(&self) -> &str {
        &self.channel
    }
}

async fn publish_loop(link: Link, channel: String, mut rx: mpsc::Receiver<Bytes>) {
    while let Some(payload) = rx.recv().await {
        let mut attempt = 0;
        loop {
            let cmd = redis::cmd("PUBLISH")
                .arg(&channel)
                .arg(payload.as_ref())
                .clone();
            match link.run::<i64>(&cmd).await {
                Ok(_) => break,
                Err(_) => {
                    tokio::time::sleep(backoff(attempt)).await;
                    attempt += 1;
                }
            }
        }
    }
}

async fn subscribe_loop(client: Client, channel: String, out: mpsc::Sender<Delivery>) {
    let mut attempt = 0;
    let mut first = true;
    loop {
        if out.is_closed() {
            return;
        }
        let subscribed = async {
            let mut pubsub = tokio::time::timeout(CONNECT_TIMEOUT, client.get_async_pubsub())
                .await
                .ok()?
                .ok()?;
            tokio::time::timeout(CONNECT_TIMEOUT, pubsub.subscribe(&channel))
                .await
                .ok()?
                .ok()?;
            Some(pubsub)
        }
        .await;
        let Some(pubsub) = subscribed else {
            tokio::time::sleep(backoff(attempt)).await;
            attempt += 1;
            continue;
        };
        attempt = 0;
        if !first && out.send(Delivery::Lost).await.is_err() {
            return;
        }
        first = false;
        let mut messages = pubsub.into_on_message();
        loop {
            tokio::select! {
                message = messages.next() => match message {
                    Some(message) => {
                        let payload = message.get_payload_bytes();
                        if payload.len() > MAX_BUS_PAYLOAD {
                            continue;
                        }
                        let delivery = Delivery::Message(Bytes::copy_from_slice(payload));
                        if out.send(delivery).await.is_err() {
                            return;
                        }
                    }
                    // The connection is gone: subscribe again.
                    None => break,
                },
                _ = out.closed() => return,
            }
        }
    }
}

impl EventBus for RedisBus {
    fn publish(&self, payload: Bytes) {
        // A full queue drops the payload: the receivers see the gap in this
        // node's sequence and resync.
        let _ = self.queue.try_send(payload);
    }

    fn subscribe(&self) -> mpsc::Receiver<Delivery> {
        let (out, rx) = mpsc::channel(BUS_QUEUE);
        tokio::spawn(subscribe_loop(
            self.client.clone(),
            self.channel.clone(),
            out,
        ));
        rx
    }
}
