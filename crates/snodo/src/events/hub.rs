//! The event hub: list changes and resource updates, fanned out to open
//! `subscriptions/listen` streams.
//!
//! Each listener has a bounded queue (256 events). **Overflow policy:** a
//! listener that falls behind loses the oldest events and instead receives,
//! once, every notification type it subscribed to (each list_changed, and
//! `resources/updated` for each subscribed URI), so that it re-fetches what
//! may have changed. Events are idempotent hints, so nothing is lost but
//! duplicates.
//!
//! **Several nodes.** A hub given an [`EventBus`] ([`EventHub::with_bus`])
//! also publishes every list change and resource update on the bus, and
//! delivers what the other nodes publish to its own listeners, in the order
//! each node published. Each envelope carries its node's id and a sequence
//! number: a gap in a node's sequence, or a lost bus connection, becomes
//! [`Event::Resync`], the overflow treatment for every listener.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use tokio::sync::{broadcast, mpsc};

use super::bus::{Delivery, EventBus};
use super::envelope::{self, Body};
use super::event::{Event, SessionChange, SessionSink};

/// Events per listener queue.
pub const LISTENER_QUEUE: usize = 256;

/// Publishes events to every open listen stream. Cheap to clone.
#[derive(Debug, Clone)]
pub struct EventHub {
    tx: broadcast::Sender<Event>,
    open: Arc<AtomicUsize>,
    max_open: usize,
    link: Option<Arc<Link>>,
}

impl Default for EventHub {
    fn default() -> Self {
        Self::new(4096)
    }
}

/// Most origins a hub remembers the last sequence number of (nodes that
/// restarted leave theirs behind; the oldest are forgotten first).
const MAX_ORIGINS: usize = 1024;

/// A hub's connection to the bus.
struct Link {
    bus: Arc<dyn EventBus>,
    origin: Arc<str>,
    seq: AtomicU64,
    started: OnceLock<()>,
    sinks: Mutex<Vec<Weak<dyn SessionSink>>>,
    resyncs: AtomicU64,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("origin", &self.origin)
            .field("published", &self.seq.load(Ordering::Relaxed))
            .field("resyncs", &self.resyncs.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Link {
    fn publish(&self, body: &Body) {
        let seq = self.seq.fetch_add(1, Ordering::AcqRel) + 1;
        if let Some(payload) = envelope::encode(&self.origin, seq, body) {
            self.bus.publish(payload);
        }
    }

    fn sinks(&self) -> Vec<Arc<dyn SessionSink>> {
        let mut sinks = self.sinks.lock().unwrap_or_else(|e| e.into_inner());
        sinks.retain(|s| s.strong_count() > 0);
        sinks.iter().filter_map(Weak::upgrade).collect()
    }
}

/// A random node id: 64 bits, hex.
fn new_origin() -> Arc<str> {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default();
        bytes = (nanos ^ u64::from(std::process::id())).to_le_bytes();
    }
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
        .into()
}

/// Delivers what the bus brings to the local listeners and session sinks.
async fn pump(link: Weak<Link>, tx: broadcast::Sender<Event>, mut rx: mpsc::Receiver<Delivery>) {
    let mut last: HashMap<String, (u64, u64)> = HashMap::new();
    let mut arrivals = 0u64;
    while let Some(delivery) = rx.recv().await {
        let Some(link) = link.upgrade() else { return };
        let resync = |link: &Link| {
            link.resyncs.fetch_add(1, Ordering::Relaxed);
            let _ = tx.send(Event::Resync);
        };
        let bytes = match delivery {
            Delivery::Lost => {
                resync(&link);
                continue;
            }
            Delivery::Message(bytes) => bytes,
        };
        let Some(envelope) = envelope::decode(&bytes) else {
            continue;
        };
        if *envelope.origin == *link.origin {
            continue;
        }
        arrivals += 1;
        match last.get_mut(&envelope.origin) {
            Some((seq, seen)) => {
                if envelope.seq != *seq + 1 {
                    resync(&link);
                }
                *seq = envelope.seq;
                *seen = arrivals;
            }
            None => {
                if last.len() >= MAX_ORIGINS
                    && let Some(oldest) = last
                        .iter()
                        .min_by_key(|(_, (_, seen))| *seen)
                        .map(|(origin, _)| origin.clone())
                {
                    last.remove(&oldest);
                }
                last.insert(envelope.origin.clone(), (envelope.seq, arrivals));
            }
        }
        match envelope.body {
            Body::Event(event) => {
                let _ = tx.send(event);
            }
            Body::Session { id, change } => {
                for sink in link.sinks() {
                    sink.apply(&id, &change);
                }
            }
        }
    }
}

/// An open subscription slot; frees itself when dropped.
pub(crate) struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl EventHub {
    /// A hub allowing at most `max_open` subscriptions at once.
    pub fn new(max_open: usize) -> Self {
        let (tx, _) = broadcast::channel(LISTENER_QUEUE);
        Self {
            tx,
            open: Arc::default(),
            max_open,
            link: None,
        }
    }

    /// A hub allowing at most `max_open` subscriptions at once, joined to
    /// the other nodes on `bus`: the list changes and resource updates
    /// published here reach their listeners, and theirs reach ours.
    ///
    /// ```
    /// use snodo::events::bus::MemoryBus;
    /// use snodo::events::{Event, EventHub};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let bus = MemoryBus::new();
    /// let (a, b) = (EventHub::with_bus(16, bus.clone()), EventHub::with_bus(16, bus));
    /// let mut heard = b.subscribe();
    /// a.tools_changed();
    /// assert_eq!(heard.recv().await.unwrap(), Event::ToolsListChanged);
    /// # });
    /// ```
    pub fn with_bus(max_open: usize, bus: impl EventBus) -> Self {
        let mut hub = Self::new(max_open);
        hub.link = Some(Arc::new(Link {
            bus: Arc::new(bus),
            origin: new_origin(),
            seq: AtomicU64::new(0),
            started: OnceLock::new(),
            sinks: Mutex::default(),
            resyncs: AtomicU64::new(0),
        }));
        hub.start();
        hub
    }

    /// This node's id on the bus, if the hub has one.
    pub fn node_id(&self) -> Option<&str> {
        self.link.as_ref().map(|l| &*l.origin)
    }

    /// How many times this hub told its listeners to resync (a lost bus, or
    /// a gap in a node's messages).
    pub fn resyncs(&self) -> u64 {
        self.link
            .as_ref()
            .map_or(0, |l| l.resyncs.load(Ordering::Relaxed))
    }

    /// Whether the hub is joined to other nodes by a bus.
    pub fn is_shared(&self) -> bool {
        self.link.is_some()
    }

    /// Starts receiving from the bus, once, when a runtime is there to run
    /// the receiver (a hub built outside one starts on first use).
    fn start(&self) {
        let Some(link) = &self.link else { return };
        if link.started.get().is_some() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        if link.started.set(()).is_ok() {
            let rx = link.bus.subscribe();
            tokio::spawn(pump(Arc::downgrade(link), self.tx.clone(), rx));
        }
    }

    /// Publishes an event to every open listener, and to the other nodes'
    /// listeners when the hub has a bus.
    pub fn publish(&self, event: Event) {
        if let Some(link) = &self.link
            && event.crosses_nodes()
        {
            self.start();
            link.publish(&Body::Event(event.clone()));
        }
        let _ = self.tx.send(event);
    }

    /// A receiver of every event from now on (the local ones and, with a
    /// bus, the other nodes'), outside the subscription count.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.start();
        self.tx.subscribe()
    }

    /// Tells the other nodes of a change of an initialize-era session.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn publish_session(&self, id: &str, change: SessionChange) {
        if let Some(link) = &self.link {
            self.start();
            link.publish(&Body::Session {
                id: id.to_string(),
                change,
            });
        }
    }

    /// Where the session changes the other nodes announce are applied (the
    /// HTTP service's sessions); held weakly.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn add_session_sink(&self, sink: Weak<dyn SessionSink>) {
        if let Some(link) = &self.link {
            self.start();
            link.sinks
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(sink);
        }
    }

    /// Announces that the tool list changed.
    pub fn tools_changed(&self) {
        self.publish(Event::ToolsListChanged);
    }

    /// Announces that the prompt list changed.
    pub fn prompts_changed(&self) {
        self.publish(Event::PromptsListChanged);
    }

    /// Announces that the resource list changed.
    pub fn resources_changed(&self) {
        self.publish(Event::ResourcesListChanged);
    }

    /// Announces that the resource at `uri` changed.
    pub fn resource_updated(&self, uri: &str) {
        self.publish(Event::ResourceUpdated(uri.into()));
    }

    /// Ends every open listen stream (`notifications/cancelled`, then the
    /// final result).
    pub fn shutdown(&self) {
        self.publish(Event::Shutdown);
    }

    /// How many listen streams are open.
    pub fn open_subscriptions(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// A receiver of every event from now on, outside the subscription
    /// count (initialize-era sessions, which are bounded on their own).
    pub(crate) fn receiver(&self) -> broadcast::Receiver<Event> {
        self.subscribe()
    }

    pub(crate) fn try_open(&self) -> Option<(Slot, broadcast::Receiver<Event>)> {
        let mut current = self.open.load(Ordering::Acquire);
        loop {
            if current >= self.max_open {
                return None;
            }
            match self.open.compare_exchange(
                current,
                current + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Some((Slot(self.open.clone()), self.subscribe())),
                Err(now) => current = now,
            }
        }
    }
}
