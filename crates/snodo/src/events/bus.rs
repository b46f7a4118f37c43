//! The seam between nodes: an [`EventBus`] carries the events one node
//! raises to every other node's [`EventHub`](super::EventHub).
//!
//! A bus moves opaque payloads (the hub's envelopes: origin node, sequence
//! number, event); it needs no ordering across nodes, only that the
//! payloads one node publishes arrive in the order it published them, and
//! that a receiver learns when it may have missed some
//! ([`Delivery::Lost`]). The hub turns a loss, or a gap in a node's
//! sequence, into [`Event::Resync`](super::Event::Resync) for its listeners.
//!
//! [`MemoryBus`] joins hubs in one process (tests, or several servers in
//! one binary); `snodo-redis` (pub/sub) and `snodo-postgres`
//! (`LISTEN/NOTIFY`) join processes. The `snodo-test` crate's
//! `event_bus::run` is the test suite every bus passes.

use bytes::Bytes;
use tokio::sync::{broadcast, mpsc};

/// The largest payload a hub publishes (1 MiB); buses may refuse larger.
pub const MAX_BUS_PAYLOAD: usize = 1024 * 1024;

/// Payloads a subscriber's queue holds before the bus reports
/// [`Delivery::Lost`] and drops the oldest.
pub const BUS_QUEUE: usize = 4096;

/// What a subscriber receives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delivery {
    /// A payload some node published (this one included).
    Message(Bytes),
    /// Payloads may have been missed: the connection was lost and is back,
    /// or the subscriber fell behind.
    Lost,
}

/// Publishes payloads to every node and delivers every node's payloads.
///
/// `publish` never blocks: an implementation queues the payload (bounded)
/// and sends it in order, retrying over a reconnection; a payload it has to
/// drop shows as a gap in the publisher's sequence, which receivers treat
/// as a loss.
pub trait EventBus: Send + Sync + 'static {
    /// Queues `payload` for every subscriber of every node.
    fn publish(&self, payload: Bytes);
    /// Starts a subscription: every payload published from now on, and
    /// [`Delivery::Lost`] whenever some may have been missed. The stream
    /// ends only when the bus is dropped.
    fn subscribe(&self) -> mpsc::Receiver<Delivery>;
}

impl<T: EventBus + ?Sized> EventBus for std::sync::Arc<T> {
    fn publish(&self, payload: Bytes) {
        (**self).publish(payload)
    }
    fn subscribe(&self) -> mpsc::Receiver<Delivery> {
        (**self).subscribe()
    }
}

/// A bus inside one process: clones share it, every subscriber receives
/// every payload.
///
/// ```
/// use snodo::server::events::bus::{Delivery, EventBus, MemoryBus};
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let bus = MemoryBus::new();
/// let mut rx = bus.subscribe();
/// bus.clone().publish("hello".into());
/// assert_eq!(rx.recv().await, Some(Delivery::Message("hello".into())));
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct MemoryBus {
    tx: broadcast::Sender<Bytes>,
}

impl Default for MemoryBus {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryBus {
    /// A new, empty bus.
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(BUS_QUEUE);
        Self { tx }
    }
}

impl EventBus for MemoryBus {
    fn publish(&self, payload: Bytes) {
        let _ = self.tx.send(payload);
    }

    fn subscribe(&self) -> mpsc::Receiver<Delivery> {
        let mut rx = self.tx.subscribe();
        let (out, deliveries) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let delivery = match rx.recv().await {
                    Ok(payload) => Delivery::Message(payload),
                    Err(broadcast::error::RecvError::Lagged(_)) => Delivery::Lost,
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if out.send(delivery).await.is_err() {
                    return;
                }
            }
        });
        deliveries
    }
}
