//! The state every clone of a client shares.

use std::collections::HashMap;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};

use snodo_rules::HeaderParam;
use tokio::sync::broadcast;

use super::options::Config;
use super::transport::Transport;
use super::version::Negotiated;

/// The state every clone of a [`Client`] shares.
pub(crate) struct Shared {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) config: Config,
    pub(crate) state: RwLock<Negotiated>,
    pub(crate) next_id: AtomicI64,
    pub(crate) tool_headers: Mutex<HashMap<String, Vec<HeaderParam>>>,
    pub(crate) events: broadcast::Sender<crate::wire::Notification>,
    /// Where requests go, for the request spans.
    pub(crate) peer: crate::telemetry::client::Peer,
    /// The `_meta` members every 2026-07-28 request repeats, encoded once.
    pub(crate) tails: super::encode::Tails,
}

impl Shared {
    pub(crate) fn state(&self) -> RwLockReadGuard<'_, Negotiated> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }
}
