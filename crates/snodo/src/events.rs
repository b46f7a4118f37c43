//! The event hub: list changes and resource updates, fanned out to open
//! `subscriptions/listen` streams.
//!
//! Each listener has a bounded queue (256 events). **Overflow policy:** a
//! listener that falls behind loses the oldest events and instead receives,
//! once, every notification type it subscribed to (each list_changed, and
//! `resources/updated` for each subscribed URI), so that it re-fetches what
//! may have changed. Events are idempotent hints, so nothing is lost but
//! duplicates.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::broadcast;

/// Whether a subscription to `subscribed` covers a change of `uri`: the
/// same URI, or a sub-resource of it (the next character after the prefix is
/// a `/`, or the subscribed URI ends with one). Shared by
/// `subscriptions/listen` filters and initialize-era session subscriptions.
pub(crate) fn uri_covers(subscribed: &str, uri: &str) -> bool {
    uri == subscribed
        || (uri.starts_with(subscribed)
            && (subscribed.ends_with('/') || uri[subscribed.len()..].starts_with('/')))
}

/// Events per listener queue.
pub const LISTENER_QUEUE: usize = 256;

/// Something listeners may want to hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The tool list changed.
    ToolsListChanged,
    /// The prompt list changed.
    PromptsListChanged,
    /// The resource list changed.
    ResourcesListChanged,
    /// A resource (or a sub-resource of it) changed.
    ResourceUpdated(Arc<str>),
    /// A task changed (the Tasks extension): its owner and its detailed
    /// wire form, as `tasks/get` answers it.
    TaskChanged {
        /// The principal the task belongs to (`""`: anonymous).
        owner: Arc<str>,
        /// The task's detailed wire form.
        task: Arc<serde_json::Map<String, serde_json::Value>>,
    },
    /// The server is shutting down: listen streams end.
    Shutdown,
}

/// Publishes events to every open listen stream. Cheap to clone.
#[derive(Debug, Clone)]
pub struct EventHub {
    tx: broadcast::Sender<Event>,
    open: Arc<AtomicUsize>,
    max_open: usize,
}

impl Default for EventHub {
    fn default() -> Self {
        Self::new(4096)
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
        }
    }

    /// Publishes an event to every open listener.
    pub fn publish(&self, event: Event) {
        let _ = self.tx.send(event);
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
        self.tx.subscribe()
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
                Ok(_) => return Some((Slot(self.open.clone()), self.tx.subscribe())),
                Err(now) => current = now,
            }
        }
    }
}
