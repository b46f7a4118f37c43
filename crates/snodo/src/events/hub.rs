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
//! **Several nodes.** A hub given an [`EventBus`] and a [`Keyring`]
//! ([`EventHub::with_bus`]) also publishes every list change and resource
//! update on the bus, and delivers what the other nodes publish to its own
//! listeners, in the order each node published. Each envelope carries its
//! node's id, a sequence number and the time it was sealed, and is sealed
//! with the keyring's sealing key (HMAC-SHA256 under a key derived for the
//! bus; any key of the ring opens it). An envelope that does not open, or
//! whose time is more than [`REPLAY_WINDOW`] from this node's clock, or
//! whose number is not above the last one taken from its node, is dropped
//! and counted ([`EventHub::refused`]), with one log line at most every
//! 10 s. A gap in a node's sequence, or a lost bus connection, becomes
//! [`Event::Resync`], the overflow treatment for every listener.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

use super::bus::{Delivery, EventBus};
use super::envelope::{self, Body, Refused};
use super::event::{Event, SessionChange, SessionSink};
use super::window::{Admit, Window};
use crate::RandomUnavailable;
use crate::keyring::Keyring;

/// Events per listener queue.
pub const LISTENER_QUEUE: usize = 256;

/// How far an envelope's time may be from the receiver's clock, either way:
/// older (or newer) envelopes are refused, and within it each node's
/// sequence numbers are taken once.
pub const REPLAY_WINDOW: Duration = Duration::from_secs(30);

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

/// Most nodes a hub remembers the last sequence number of (see
/// [`Window`]).
const MAX_ORIGINS: usize = 1024;

/// At most one log line about refused envelopes in this time.
const REPORT_EVERY: Duration = Duration::from_secs(10);

/// A hub's connection to the bus.
struct Link {
    bus: Arc<dyn EventBus>,
    keys: Keyring,
    origin: Arc<str>,
    seq: AtomicU64,
    started: OnceLock<()>,
    sinks: Mutex<Vec<Weak<dyn SessionSink>>>,
    resyncs: AtomicU64,
    refused: AtomicU64,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("origin", &self.origin)
            .field("published", &self.seq.load(Ordering::Relaxed))
            .field("resyncs", &self.resyncs.load(Ordering::Relaxed))
            .field("refused", &self.refused.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Milliseconds since the Unix epoch, by this node's clock.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

impl Link {
    fn publish(&self, body: &Body) {
        let seq = self.seq.fetch_add(1, Ordering::AcqRel) + 1;
        let keys = self.keys.snapshot();
        if let Some(payload) = envelope::encode(&keys, &self.origin, seq, now_ms(), body) {
            self.bus.publish(payload);
        }
    }

    fn sinks(&self) -> Vec<Arc<dyn SessionSink>> {
        let mut sinks = self.sinks.lock().unwrap_or_else(|e| e.into_inner());
        sinks.retain(|s| s.strong_count() > 0);
        sinks.iter().filter_map(Weak::upgrade).collect()
    }
}

/// Why an envelope was dropped.
#[derive(Debug, Clone, Copy)]
enum Dropped {
    Forged,
    Malformed,
    Stale,
    Replayed,
    Crowded,
}

/// The refusals not yet logged, and when the last line was.
#[derive(Debug, Default)]
struct Report {
    counts: [u64; 5],
    last: Option<Instant>,
}

impl Report {
    fn pending(&self) -> bool {
        self.counts.iter().any(|n| *n > 0)
    }

    /// When the next line may be written.
    fn due(&self) -> Instant {
        self.last.map_or_else(Instant::now, |at| at + REPORT_EVERY)
    }

    fn note(&mut self, drop: Dropped, total: u64) {
        self.counts[drop as usize] += 1;
        if self.due() <= Instant::now() {
            self.flush(total);
        }
    }

    fn flush(&mut self, total: u64) {
        if !self.pending() {
            return;
        }
        let [forged, malformed, stale, replayed, crowded] = self.counts;
        tracing::warn!(
            target: "snodo::events",
            forged,
            malformed,
            stale,
            replayed,
            crowded,
            total,
            "{} bus envelopes refused (not sealed by a key of the ring, malformed, outside the \
             replay window, replayed, or from too many nodes at once)",
            forged + malformed + stale + replayed + crowded,
        );
        self.counts = [0; 5];
        self.last = Some(Instant::now());
    }
}

/// Delivers what the bus brings to the local listeners and session sinks.
async fn pump(link: Weak<Link>, tx: broadcast::Sender<Event>, mut rx: mpsc::Receiver<Delivery>) {
    let mut window = Window::new(REPLAY_WINDOW.as_millis() as u64, MAX_ORIGINS);
    let mut report = Report::default();
    loop {
        let pending = report.pending();
        let delivery = tokio::select! {
            delivery = rx.recv() => match delivery {
                Some(delivery) => delivery,
                None => return,
            },
            () = tokio::time::sleep_until(report.due()), if pending => {
                let total = link.upgrade().map_or(0, |l| l.refused.load(Ordering::Relaxed));
                report.flush(total);
                continue;
            }
        };
        let Some(link) = link.upgrade() else { return };
        let resync = |link: &Link| {
            link.resyncs.fetch_add(1, Ordering::Relaxed);
            let _ = tx.send(Event::Resync);
        };
        let refuse = |report: &mut Report, drop: Dropped| {
            let total = link.refused.fetch_add(1, Ordering::Relaxed) + 1;
            report.note(drop, total);
        };
        let bytes = match delivery {
            Delivery::Lost => {
                resync(&link);
                continue;
            }
            Delivery::Message(bytes) => bytes,
        };
        let envelope = match envelope::decode(&link.keys.snapshot(), &bytes) {
            Ok(envelope) => envelope,
            Err(Refused::Forged) => {
                refuse(&mut report, Dropped::Forged);
                continue;
            }
            Err(Refused::Malformed) => {
                refuse(&mut report, Dropped::Malformed);
                continue;
            }
        };
        if *envelope.origin == *link.origin {
            continue;
        }
        match window.admit(&envelope.origin, envelope.seq, envelope.time, now_ms()) {
            Admit::Fresh { gap } => {
                if gap {
                    resync(&link);
                }
            }
            Admit::Stale => {
                refuse(&mut report, Dropped::Stale);
                continue;
            }
            Admit::Replayed => {
                refuse(&mut report, Dropped::Replayed);
                continue;
            }
            Admit::Crowded => {
                refuse(&mut report, Dropped::Crowded);
                continue;
            }
        }
        match envelope.body {
            Body::Event(event) => {
                let _ = tx.send(event);
            }
            Body::Session { key, owner, change } => {
                for sink in link.sinks() {
                    sink.apply(&key, owner.as_deref(), &change);
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
    /// Every envelope is sealed with `keys`' sealing key and every envelope
    /// received must open with one of its keys (the nodes share one keyring,
    /// see [`keyring`](crate::server::keyring)); what does not is dropped and
    /// counted ([`EventHub::refused`]). A reload of the keyring is seen at
    /// once.
    ///
    /// The hub names itself on the bus with a random node id (64 bits).
    ///
    /// # Errors
    ///
    /// [`RandomUnavailable`] when the operating system's random source
    /// fails: a node with a guessable or shared id could take another
    /// node's envelopes for its own, so no hub joins the bus without one.
    ///
    /// ```
    /// use snodo::server::events::bus::MemoryBus;
    /// use snodo::server::events::{Event, EventHub};
    /// use snodo::server::keyring::Keyring;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (bus, keys) = (MemoryBus::new(), Keyring::single("k1", [7u8; 32]).unwrap());
    /// let a = EventHub::with_bus(16, bus.clone(), keys.clone()).unwrap();
    /// let b = EventHub::with_bus(16, bus, keys).unwrap();
    /// let mut heard = b.subscribe();
    /// a.tools_changed();
    /// assert_eq!(heard.recv().await.unwrap(), Event::ToolsListChanged);
    /// # });
    /// ```
    pub fn with_bus(
        max_open: usize,
        bus: impl EventBus,
        keys: Keyring,
    ) -> Result<Self, RandomUnavailable> {
        let origin = crate::random::hex(8)?;
        let mut hub = Self::new(max_open);
        hub.link = Some(Arc::new(Link {
            bus: Arc::new(bus),
            keys,
            origin: origin.into(),
            seq: AtomicU64::new(0),
            started: OnceLock::new(),
            sinks: Mutex::default(),
            resyncs: AtomicU64::new(0),
            refused: AtomicU64::new(0),
        }));
        hub.start();
        Ok(hub)
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

    /// How many envelopes from the bus this hub dropped: not sealed by a key
    /// of its ring (forged, or tampered with), malformed, outside the
    /// [`REPLAY_WINDOW`], replayed, or from a new node while it remembers
    /// 1 024 recent ones.
    pub fn refused(&self) -> u64 {
        self.link
            .as_ref()
            .map_or(0, |l| l.refused.load(Ordering::Relaxed))
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

    /// Tells the other nodes of a change of an initialize-era session,
    /// named by its keyed digest `key` (never its id), with its owner's
    /// keyed digest.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn publish_session(&self, key: &str, owner: Option<&str>, change: SessionChange) {
        if let Some(link) = &self.link {
            self.start();
            link.publish(&Body::Session {
                key: key.to_string(),
                owner: owner.map(str::to_string),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::bus::MemoryBus;
    use tokio::time::timeout;

    /// A keyring of the keys named (the last seals); `kN`'s secret is
    /// 32 bytes of `N`.
    fn ring(ids: &str) -> Keyring {
        Keyring::parse(&ring_text(ids)).unwrap()
    }

    async fn heard(rx: &mut broadcast::Receiver<Event>) -> Option<Event> {
        timeout(Duration::from_millis(300), rx.recv())
            .await
            .ok()?
            .ok()
    }

    /// Waits until `hub` refused `n` envelopes in all.
    async fn refused(hub: &EventHub, n: u64) {
        timeout(Duration::from_secs(5), async {
            while hub.refused() < n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{} refused, not {n}", hub.refused()));
    }

    #[tokio::test]
    async fn envelopes_outside_the_window_are_refused() {
        let (bus, keys) = (MemoryBus::new(), ring("k1"));
        let hub = EventHub::with_bus(4, bus.clone(), keys.clone()).unwrap();
        let mut rx = hub.subscribe();
        let seal = |seq: u64, time: u64| {
            envelope::encode(
                &keys.snapshot(),
                "elsewhere",
                seq,
                time,
                &Body::Event(Event::ToolsListChanged),
            )
            .unwrap()
        };
        let window = REPLAY_WINDOW.as_millis() as u64;
        bus.publish(seal(1, now_ms() - window - 1_000));
        bus.publish(seal(2, now_ms() + window + 1_000));
        refused(&hub, 2).await;
        assert_eq!(heard(&mut rx).await, None);
        bus.publish(seal(3, now_ms()));
        assert_eq!(heard(&mut rx).await, Some(Event::ToolsListChanged));
        // The same envelope, or an earlier number, again: replayed.
        bus.publish(seal(3, now_ms()));
        bus.publish(seal(2, now_ms()));
        refused(&hub, 4).await;
        assert_eq!(heard(&mut rx).await, None);
        assert_eq!(hub.resyncs(), 0);
    }

    #[tokio::test]
    async fn envelopes_cross_a_key_rotation() {
        // Step 1: B opens the new key; A does not yet seal with it.
        let bus = MemoryBus::new();
        let (keys_a, keys_b) = (ring("k1"), ring("k2,k1"));
        let a = EventHub::with_bus(4, bus.clone(), keys_a.clone()).unwrap();
        let b = EventHub::with_bus(4, bus.clone(), keys_b.clone()).unwrap();
        let (mut hear_a, mut hear_b) = (a.subscribe(), b.subscribe());
        a.tools_changed();
        assert_eq!(heard(&mut hear_a).await, Some(Event::ToolsListChanged));
        assert_eq!(heard(&mut hear_b).await, Some(Event::ToolsListChanged));
        b.prompts_changed();
        assert_eq!(heard(&mut hear_b).await, Some(Event::PromptsListChanged));
        assert_eq!(heard(&mut hear_a).await, Some(Event::PromptsListChanged));
        // Step 2: B seals with k2, which A does not hold yet: refused.
        keys_b.reload(&ring_text("k1,k2")).unwrap();
        b.resources_changed();
        assert_eq!(heard(&mut hear_b).await, Some(Event::ResourcesListChanged));
        refused(&a, 1).await;
        assert_eq!(heard(&mut hear_a).await, None);
        // Once A holds k2, B's envelopes open again (after the gap).
        keys_a.reload(&ring_text("k1,k2")).unwrap();
        b.resources_changed();
        assert_eq!(heard(&mut hear_b).await, Some(Event::ResourcesListChanged));
        assert_eq!(heard(&mut hear_a).await, Some(Event::Resync));
        assert_eq!(heard(&mut hear_a).await, Some(Event::ResourcesListChanged));
        // Step 3: k1 is gone everywhere.
        keys_a.reload(&ring_text("k2")).unwrap();
        keys_b.reload(&ring_text("k2")).unwrap();
        a.tools_changed();
        assert_eq!(heard(&mut hear_a).await, Some(Event::ToolsListChanged));
        assert_eq!(heard(&mut hear_b).await, Some(Event::ToolsListChanged));
        assert_eq!(b.refused(), 0);
    }

    #[tokio::test]
    async fn no_hub_joins_the_bus_without_a_random_node_id() {
        let (bus, keys) = (MemoryBus::new(), ring("k1"));
        {
            let _off = crate::random::failing();
            let err = EventHub::with_bus(4, bus.clone(), keys.clone()).unwrap_err();
            assert!(err.to_string().contains("random source failed"), "{err}");
        }
        let a = EventHub::with_bus(4, bus.clone(), keys.clone()).unwrap();
        let b = EventHub::with_bus(4, bus, keys).unwrap();
        let (a, b) = (a.node_id().unwrap(), b.node_id().unwrap());
        assert_ne!(a, b);
        assert!(a.len() == 16 && a.bytes().all(|c| c.is_ascii_hexdigit()));
    }

    fn ring_text(ids: &str) -> String {
        use base64::Engine;
        ids.split(',')
            .map(|id| {
                format!(
                    "{id}={}\n",
                    base64::engine::general_purpose::STANDARD.encode([id.as_bytes()[1]; 32])
                )
            })
            .collect()
    }
}
