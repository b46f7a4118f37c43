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

/// Sessions one principal (or, when anonymous, one remote address) may hold
/// at once, by default.
pub const DEFAULT_MAX_SESSIONS_PER_SHARE: usize = 256;

/// How long a session may stay idle before it expires, by default.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// How long a session may stay idle, with no standalone stream open, before
/// it gives way to a new one when its table (the store, or its share) is
/// full, by default.
pub const DEFAULT_IDLE_UNDER_PRESSURE: Duration = Duration::from_secs(2 * 60);

/// Every this many new sessions the store drops expired ones, full or not.
const SWEEP_EVERY: usize = 64;

/// How long a session that never finished its handshake
/// (`notifications/initialized`) is safe from eviction when its table is full.
pub const UNFINISHED_GRACE: Duration = Duration::from_secs(5);

/// The store, or one share of it, is full: no session can be opened for this
/// client until one ends or expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionsFull {
    /// The limit reached: the store's, or the share's.
    pub max: usize,
    /// Whether the client's own share is full (the store as a whole may not
    /// be).
    pub per_share: bool,
    /// When a session may next give way (the `Retry-After` of the 503).
    pub retry_after: Duration,
}

impl fmt::Display for SessionsFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.per_share {
            write!(
                f,
                "too many open sessions for one client (at most {} each)",
                self.max
            )
        } else {
            write!(f, "too many open sessions (at most {})", self.max)
        }
    }
}

impl std::error::Error for SessionsFull {}

/// Keeps the live sessions of one HTTP endpoint.
///
/// Implementations must be cheap to call on every request; a session
/// returned by `get` must not be expired. A store bounds what each
/// [`Session::share`] may hold, so that one client cannot fill it for all.
pub trait SessionStore: Send + Sync + 'static {
    /// Adds a new session; `Err` when the store, or the session's share of
    /// it, is full.
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

/// The in-memory store: a bounded map, with a bound per share.
///
/// - Idle sessions (no request and no open standalone stream for the idle
///   time) expire when looked up, and are swept every 64 new sessions and
///   whenever a table is full.
/// - Each [`Session::share`] (a principal, or an anonymous client's remote
///   address) holds at most [`DEFAULT_MAX_SESSIONS_PER_SHARE`] sessions; the
///   one over its share is refused, whoever else has room.
/// - When the store or a share is full, a session of that table gives way
///   first if it never finished its handshake and has been idle for
///   [`UNFINISHED_GRACE`], then if it has been idle, with no standalone stream
///   open, for [`DEFAULT_IDLE_UNDER_PRESSURE`]: a client that did not come
///   back starts a new session (404, then `initialize`). Nothing else is
///   evicted; the new session is refused with a [`SessionsFull`] saying when
///   to try again.
///
/// ```
/// use snodo::transport::http::{MemorySessions, SessionStore};
/// let store = MemorySessions::new(2, std::time::Duration::from_secs(60)).max_per_share(1);
/// assert!(store.is_empty());
/// ```
pub struct MemorySessions {
    table: Mutex<Table>,
    max: usize,
    max_per_share: usize,
    idle: Duration,
    idle_under_pressure: Duration,
    unfinished_grace: Duration,
    inserts: std::sync::atomic::AtomicUsize,
}

impl fmt::Debug for MemorySessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemorySessions")
            .field("len", &self.len())
            .field("max", &self.max)
            .field("max_per_share", &self.max_per_share)
            .field("idle", &self.idle)
            .finish()
    }
}

impl Default for MemorySessions {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE)
    }
}

/// The sessions, and how many each share holds.
#[derive(Default)]
struct Table {
    sessions: HashMap<Box<str>, Arc<Session>>,
    shares: HashMap<Box<str>, usize>,
}

impl Table {
    fn insert(&mut self, session: Arc<Session>) {
        if let Some(share) = session.share() {
            *self.shares.entry(share.into()).or_default() += 1;
        }
        if let Some(old) = self.sessions.insert(session.id().into(), session) {
            self.uncount(&old);
        }
    }

    fn uncount(&mut self, session: &Session) {
        let Some(share) = session.share() else {
            return;
        };
        if let Some(n) = self.shares.get_mut(share) {
            *n -= 1;
            if *n == 0 {
                self.shares.remove(share);
            }
        }
    }

    fn remove(&mut self, id: &str) -> Option<Arc<Session>> {
        let gone = self.sessions.remove(id)?;
        self.uncount(&gone);
        Some(gone)
    }

    /// How many sessions `share` holds.
    fn held_by(&self, share: &str) -> usize {
        self.shares.get(share).copied().unwrap_or(0)
    }

    /// Ends and drops the sessions `drop` picks.
    fn drop_where(&mut self, mut drop: impl FnMut(&Session) -> bool) {
        let gone: Vec<Box<str>> = self
            .sessions
            .iter()
            .filter(|(_, s)| drop(s))
            .map(|(id, _)| id.clone())
            .collect();
        for id in gone {
            if let Some(session) = self.remove(&id) {
                session.end();
            }
        }
    }
}

impl MemorySessions {
    /// A store holding at most `max` sessions, each expiring after `idle`
    /// without a request.
    pub fn new(max: usize, idle: Duration) -> Self {
        Self {
            table: Mutex::default(),
            max: max.max(1),
            max_per_share: DEFAULT_MAX_SESSIONS_PER_SHARE,
            idle,
            idle_under_pressure: DEFAULT_IDLE_UNDER_PRESSURE,
            unfinished_grace: UNFINISHED_GRACE,
            inserts: std::sync::atomic::AtomicUsize::new(1),
        }
    }

    /// Sets how many sessions one share (a principal, or an anonymous
    /// client's remote address) may hold (default
    /// [`DEFAULT_MAX_SESSIONS_PER_SHARE`], at least one).
    pub fn max_per_share(mut self, max: usize) -> Self {
        self.max_per_share = max.max(1);
        self
    }

    /// Sets how long a session that never finished its handshake is safe
    /// from eviction when its table is full (default [`UNFINISHED_GRACE`]).
    pub fn unfinished_grace(mut self, grace: Duration) -> Self {
        self.unfinished_grace = grace;
        self
    }

    /// Sets how long a finished session may stay idle, with no standalone
    /// stream open, before it gives way when its table is full (default
    /// [`DEFAULT_IDLE_UNDER_PRESSURE`]).
    pub fn idle_under_pressure(mut self, idle: Duration) -> Self {
        self.idle_under_pressure = idle;
        self
    }

    /// Ended, or idle for the whole idle time with no standalone stream open
    /// (a client that only listens is not idle).
    fn expired(&self, session: &Session) -> bool {
        session.is_ended() || (session.idle_for() >= self.idle && !session.has_outbox())
    }

    /// How long until `session` may give way to a new one in a full table;
    /// `None` while it has a standalone stream open.
    fn yields_in(&self, session: &Session) -> Option<Duration> {
        if session.is_ended() {
            return Some(Duration::ZERO);
        }
        let after = if !session.is_initialized() {
            self.unfinished_grace
        } else if session.has_outbox() {
            return None;
        } else {
            self.idle_under_pressure.min(self.idle)
        };
        Some(after.saturating_sub(session.idle_for()))
    }

    /// Makes room in a full table (all of it, or one share's part) by
    /// dropping the session that has been idle longest among those that give
    /// way now; `false` when none does.
    fn make_room(&self, table: &mut Table, share: Option<&str>) -> bool {
        let victim = table
            .sessions
            .iter()
            .filter(|(_, s)| share.is_none_or(|share| s.share() == Some(share)))
            .filter(|(_, s)| self.yields_in(s) == Some(Duration::ZERO))
            // A handshake never finished goes before a finished session.
            .max_by_key(|(_, s)| (!s.is_initialized(), s.idle_for()))
            .map(|(id, _)| id.clone());
        match victim.and_then(|id| table.remove(&id)) {
            Some(gone) => {
                gone.end();
                true
            }
            None => false,
        }
    }

    /// The refusal of a table that stays full: when its first session may
    /// give way (at least a second; the idle time when none will).
    fn refusal(&self, table: &Table, share: Option<&str>) -> SessionsFull {
        let next = table
            .sessions
            .values()
            .filter(|s| share.is_none_or(|share| s.share() == Some(share)))
            .filter_map(|s| self.yields_in(s))
            .min()
            .unwrap_or(self.idle_under_pressure.min(self.idle));
        SessionsFull {
            max: if share.is_some() {
                self.max_per_share
            } else {
                self.max
            },
            per_share: share.is_some(),
            retry_after: next.max(Duration::from_secs(1)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SessionStore for MemorySessions {
    fn insert(&self, session: Arc<Session>) -> Result<(), SessionsFull> {
        let mut table = self.lock();
        let inserts = self
            .inserts
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let share = session.share();
        let share_full =
            |table: &Table| share.is_some_and(|share| table.held_by(share) >= self.max_per_share);
        if table.sessions.len() >= self.max
            || share_full(&table)
            || inserts.is_multiple_of(SWEEP_EVERY)
        {
            table.drop_where(|s| self.expired(s));
        }
        if share_full(&table) && !self.make_room(&mut table, share) {
            return Err(self.refusal(&table, share));
        }
        if table.sessions.len() >= self.max && !self.make_room(&mut table, None) {
            return Err(self.refusal(&table, None));
        }
        table.insert(session);
        Ok(())
    }

    fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut table = self.lock();
        let session = table.sessions.get(id)?;
        if self.expired(session) {
            if let Some(gone) = table.remove(id) {
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
        self.lock().sessions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Revision;
    use crate::server::legacy::new_session_id;

    fn session() -> Arc<Session> {
        Arc::new(Session::new(
            new_session_id().unwrap(),
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
        let full = store.insert(session()).unwrap_err();
        assert_eq!((full.max, full.per_share), (2, false));
        a.end();
        store.insert(session()).unwrap();
        assert_eq!(store.len(), 2);
        assert!(store.get(a.id()).is_none());
    }

    fn session_of(share: &str, initialized: bool) -> Arc<Session> {
        let s = session();
        s.set_share(share);
        if initialized {
            s.mark_initialized();
        }
        s.touch();
        s
    }

    #[test]
    fn a_share_over_its_bound_is_refused_and_evicts_no_one_else() {
        let store = MemorySessions::new(10, Duration::from_secs(60)).max_per_share(2);
        let others: Vec<_> = (0..2).map(|_| session_of("b", true)).collect();
        for s in &others {
            store.insert(s.clone()).unwrap();
        }
        store.insert(session_of("a", true)).unwrap();
        store.insert(session_of("a", true)).unwrap();
        let full = store.insert(session_of("a", true)).unwrap_err();
        assert!(full.per_share && full.max == 2, "{full:?}");
        // The share's sessions give way once idle for the store's idle time
        // (a minute here, shorter than the time under pressure).
        assert!(
            full.retry_after > Duration::from_secs(59)
                && full.retry_after <= Duration::from_secs(60)
        );
        assert!(full.to_string().contains("for one client"));
        assert!(others.iter().all(|s| store.get(s.id()).is_some()));
        // A copy of another node's session (no share) counts only globally.
        store.insert(session()).unwrap();
        assert_eq!(store.len(), 5);
    }

    #[test]
    fn a_full_share_reclaims_its_own_unfinished_handshakes_first() {
        let store = MemorySessions::new(10, Duration::from_secs(60))
            .max_per_share(2)
            .unfinished_grace(Duration::ZERO);
        let finished = session_of("a", true);
        let unfinished = session_of("a", false);
        store.insert(finished.clone()).unwrap();
        store.insert(unfinished.clone()).unwrap();
        store.insert(session_of("a", true)).unwrap();
        assert!(unfinished.is_ended() && store.get(unfinished.id()).is_none());
        assert!(store.get(finished.id()).is_some());
    }

    #[test]
    fn a_full_store_reclaims_idle_sessions_under_pressure_but_never_listeners() {
        let store =
            MemorySessions::new(2, Duration::from_secs(60)).idle_under_pressure(Duration::ZERO);
        let listening = session_of("a", true);
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        assert!(listening.attach_outbox(tx));
        let idle = session_of("b", true);
        store.insert(listening.clone()).unwrap();
        store.insert(idle.clone()).unwrap();
        store.insert(session_of("c", true)).unwrap();
        assert!(idle.is_ended());
        assert!(store.get(listening.id()).is_some());
    }

    #[test]
    fn retry_after_names_when_the_next_session_gives_way() {
        let store = MemorySessions::new(1, Duration::from_secs(60))
            .unfinished_grace(Duration::from_secs(4));
        store.insert(session_of("a", false)).unwrap();
        let full = store.insert(session_of("b", true)).unwrap_err();
        assert!(!full.per_share);
        assert!(
            full.retry_after > Duration::from_secs(3) && full.retry_after <= Duration::from_secs(4),
            "{full:?}"
        );
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
        let ids: std::collections::HashSet<String> =
            (0..100).map(|_| new_session_id().unwrap()).collect();
        assert_eq!(ids.len(), 100);
        assert!(
            ids.iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        );
    }
}
