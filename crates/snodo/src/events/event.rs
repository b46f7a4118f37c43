//! What listeners hear about: [`Event`], and the changes of initialize-era
//! sessions that nodes sharing a bus tell each other ([`SessionChange`]).

use std::sync::Arc;

use serde_json::Value;

use crate::protocol::LogLevel;

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
    /// Events may have been missed (the bus between nodes was lost, or a
    /// node's messages arrived with a gap): every listener gets the overflow
    /// treatment, one notification of each type it subscribed to, so that
    /// it re-fetches what may have changed.
    Resync,
    /// The server is shutting down: listen streams end.
    Shutdown,
}

impl Event {
    /// Whether nodes sharing a bus tell each other of this event. Task
    /// changes travel through the task store's own announcements, and a
    /// shutdown is a node's own business.
    pub(crate) fn crosses_nodes(&self) -> bool {
        matches!(
            self,
            Event::ToolsListChanged
                | Event::PromptsListChanged
                | Event::ResourcesListChanged
                | Event::ResourceUpdated(_)
        )
    }
}

/// A change of an initialize-era session made on one node, which the nodes
/// sharing a bus apply to their copy of the session (the node that holds the
/// session's GET stream, or the request a server-initiated request belongs
/// to, may be another one).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionChange {
    /// `notifications/initialized` arrived.
    Initialized,
    /// `logging/setLevel` set the level.
    LogLevel(LogLevel),
    /// `resources/subscribe` added a subscription.
    Subscribed(String),
    /// `resources/unsubscribe` removed one.
    Unsubscribed(String),
    /// The client answered a request the server sent it: the whole
    /// JSON-RPC response, for the node whose request awaits it.
    Answer(Value),
    /// The client cancelled one of its requests
    /// (`notifications/cancelled`): the request's id, for the node that
    /// runs it.
    Cancelled(Value),
    /// The session ended (`DELETE`).
    Ended,
}

/// Where a node applies the session changes other nodes announce.
pub(crate) trait SessionSink: Send + Sync + 'static {
    /// Applies `change` to the session whose keyed digest is `key`, if this
    /// node holds it and its owner's digest is `owner`.
    fn apply(&self, key: &str, owner: Option<&str>, change: &SessionChange);
}
