//! Where the Streamable HTTP transport keeps initialize-era sessions.
//!
//! A session is named by the `Mcp-Session-Id` the server issued at
//! `initialize` (128 random bits, hex). The store bounds how many exist at
//! once and expires idle ones; a deleted, expired or never-issued id is
//! answered 404, so the client starts a new session.
//!
//! [`SessionStore`] is the seam for other stores; [`MemorySessions`] is the
//! default.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::server::legacy::Session;

/// Sessions one server holds at once, by default.
pub const DEFAULT_MAX_SESSIONS: usize = 4096;

/// How long a session may stay idle before it expires, by default.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// Every this many new sessions the store drops expired ones, full or not.
const SWEEP_EVERY: usize = 64;

/// How long a session that never finished its handshake
/// (`notifications/initialized`) is safe from eviction when the store is full.
pub const UNFINISHED_GRACE: Duration = Duration::from_secs(10);

/// The store is full: no session can be opened until one ends or expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionsFull {
    /// The store's limit.
    pub max: usize,
}

impl fmt::Display for SessionsFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "too many open sessions (at most {})", self.max)
    }
}

impl std::error::Error for SessionsFull {}

/// Keeps the live sessions of one HTTP endpoint.
///
/// Implementations must be cheap to call on every request; a session
/// returned by `get` must not be expired.
pub trait SessionStore: Send + Sync + 'static {
    /// Adds a new session; `Err` when the store is full.
    fn insert(&self, session: Arc<Session>) -> Result<(), SessionsFull>;
    /// The live session with this id.
    fn get(&self, id: &str) -> Option<Arc<Session>>;
    /// Removes a session and returns it.
    fn remove(&self, id: &str) -> Option<Arc<Session>>;
    /// How many sessions are held.
    fn len(&self) -> usize;
    /// Whether no session is held.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: SessionStore> SessionStore for Arc<T> {
    fn insert(&self, session: Arc<Session>) -> Result<(), SessionsFull> {
        (**self).insert(session)
    }
    fn get(&self, id: &str) -> Option<Arc<Session>> {
        (**self).get(id)
    }
    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        (**self).remove(id)
    }
    fn len(&self) -> usize {
        (**self).len()
    }
}

/// The in-memory store: a bounded map; idle sessions (no request and no open
/// standalone stream for the idle time) expire when looked up, and are swept
/// every 64 new sessions and whenever the store is full. A full store also
/// evicts the longest-idle session that never sent `notifications/initialized`
/// (idle at least [`UNFINISHED_GRACE`], see
/// [`MemorySessions::unfinished_grace`]) before it refuses a new one.
///
/// ```
/// use snodo::transport::http::{MemorySessions, SessionStore};
/// let store = MemorySessions::new(2, std::time::Duration::from_secs(60));
/// assert!(store.is_empty());
/// ```
pub struct MemorySessions {
    sessions: Mutex<HashMap<Box<str>, Arc<Session>>>,
    max: usize,
    idle: Duration,
    unfinished_grace: Duration,
    inserts: std::sync::atomic::AtomicUsize,
}

impl fmt::Debug for MemorySessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySessions")
            .field("len", &self.len())
            .field("max", &self.max)
            .field("idle", &self.idle)
            .finish()
    }
}

impl Default for MemorySessions {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE)
    }
}

impl MemorySessions {
    /// A store holding at most `max` sessions, each expiring after `idle`
    /// without a request.
    pub fn new(max: usize, idle: Duration) -> Self {
        Self {
            sessions: Mutex::default(),
            max: max.max(1),
            idle,
            unfinished_grace: UNFINISHED_GRACE,
            inserts: std::sync::atomic::AtomicUsize::new(1),
        }
    }

    /// Sets how long a session that never finished its handshake is safe
    /// from eviction when the store is full (default [`UNFINISHED_GRACE`]).
    pub fn unfinished_grace(mut self, grace: Duration) -> Self {
        self.unfinished_grace = grace;
        self
    }

    /// Ended, or idle for the whole idle time with no standalone stream open
    /// (a client that only listens is not idle).
    fn expired(&self, session: &Session) -> bool {
        session.is_ended() || (session.idle_for() >= self.idle && !session.has_outbox())
    }

    /// Ends and drops every expired session.
    fn sweep(&self, map: &mut HashMap<Box<str>, Arc<Session>>) {
        map.retain(|_, s| {
            let live = !self.expired(s);
            if !live {
                s.end();
            }
            live
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SessionStore for MemorySessions {
    fn insert(&self, session: Arc<Session>) -> Result<(), SessionsFull> {
        let mut map = self.lock();
        let inserts = self
            .inserts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if map.len() >= self.max || inserts.is_multiple_of(SWEEP_EVERY) {
            self.sweep(&mut map);
        }
        if map.len() >= self.max {
            // Still full: the handshake that was never finished and has been
            // idle longest gives way, so that a flood of bare `initialize`
            // requests cannot lock finished sessions' clients out.
            let stale = map
                .iter()
                .filter(|(_, s)| !s.is_initialized() && s.idle_for() >= self.unfinished_grace)
                .max_by_key(|(_, s)| s.idle_for())
                .map(|(id, _)| id.clone());
            if let Some(id) = stale
                && let Some(gone) = map.remove(&id)
            {
                gone.end();
            }
        }
        if map.len() >= self.max {
            return Err(SessionsFull { max: self.max });
        }
        map.insert(session.id().into(), session);
        Ok(())
    }

    fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut map = self.lock();
        let session = map.get(id)?;
        if self.expired(session) {
            if let Some(gone) = map.remove(id) {
                gone.end();
            }
            return None;
        }
        Some(session.clone())
    }

    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().remove(id)
    }

    fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Revision;
    use crate::server::legacy::new_session_id;

    fn session() -> Arc<Session> {
        Arc::new(Session::new(
            new_session_id(),
            Revision::V2025_11_25,
            serde_json::json!({}),
            None,
            None,
        ))
    }

    #[test]
    fn the_store_is_bounded_and_ended_sessions_make_room() {
        let store = MemorySessions::new(2, Duration::from_secs(60));
        let (a, b) = (session(), session());
        store.insert(a.clone()).unwrap();
        store.insert(b).unwrap();
        assert_eq!(store.insert(session()), Err(SessionsFull { max: 2 }));
        a.end();
        store.insert(session()).unwrap();
        assert_eq!(store.len(), 2);
        assert!(store.get(a.id()).is_none());
    }

    #[test]
    fn idle_sessions_expire() {
        let store = MemorySessions::new(8, Duration::ZERO);
        let s = session();
        store.insert(s.clone()).unwrap();
        assert!(store.get(s.id()).is_none(), "expired at once");
        assert!(s.is_ended());
        assert!(store.is_empty());
    }

    #[test]
    fn session_ids_are_unguessable_visible_ascii() {
        let ids: std::collections::HashSet<String> = (0..100).map(|_| new_session_id()).collect();
        assert_eq!(ids.len(), 100);
        assert!(
            ids.iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        );
    }
}
