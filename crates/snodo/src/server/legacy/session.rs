//! The state of one initialize-era session: what was negotiated, the log
//! level, resource subscriptions, requests the server sent and awaits, and
//! requests in flight that a `notifications/cancelled` may stop.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::SessionRecord;
use crate::RandomUnavailable;
use crate::context::CancelSignal;
use crate::events::SessionChange;
use crate::protocol::{LogLevel, Revision};
use crate::wire::{LazyObject, RequestId};

/// Most resource URIs one session may subscribe to.
pub const MAX_SESSION_SUBSCRIPTIONS: usize = super::directory::MAX_RECORD_MEMBERS;

/// Most server-initiated requests one session may have unanswered.
pub const MAX_PENDING_SERVER_REQUESTS: usize = 64;

/// What the client answered to a request the server sent it: its `result`,
/// or its `error` object.
pub type PeerAnswer = Result<Value, Value>;

/// Why a server-initiated request could not be registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unregistered {
    /// [`MAX_PENDING_SERVER_REQUESTS`] await an answer already.
    Crowded,
    /// The request could get no unguessable id.
    Random(RandomUnavailable),
}

/// The part of a session's state that requests change (see
/// [`Session::changes_since`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionState {
    initialized: bool,
    log_level: Option<LogLevel>,
    /// Sorted.
    subscriptions: Vec<String>,
}

/// One initialize-era session.
///
/// Over stdio a session lasts as long as the process; over Streamable HTTP
/// it is named by its `Mcp-Session-Id` and lives in a
/// [`SessionStore`](crate::transport::http::SessionStore) until it is
/// deleted or expires.
pub struct Session {
    id: String,
    revision: Revision,
    /// Kept as shared text, so that each request gets them without a copy.
    client_capabilities: LazyObject,
    client_info: Option<LazyObject>,
    /// The [`key`](crate::Principal::key) of the principal that opened the
    /// session, if any.
    owner: Option<String>,
    initialized: AtomicBool,
    /// 0 = not set, otherwise `LogLevel as u8 + 1`.
    log_level: AtomicU8,
    subscriptions: Mutex<HashSet<String>>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<PeerAnswer>>>,
    in_flight: Mutex<HashMap<RequestId, CancelSignal>>,
    /// Where messages that belong to no request go (the standalone GET
    /// stream over HTTP, the pipe over stdio); `None` while nobody listens.
    outbox: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    created: Instant,
    /// Milliseconds since `created` of the last request.
    last_active: AtomicU64,
    ended: AtomicBool,
    /// Resumable streams (Streamable HTTP).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) replay: Mutex<super::ReplayLog>,
    /// Whose share of the session table the session counts against (see
    /// [`Share`](crate::transport::http::Share)); unset for a node's copy of
    /// a session another node opened.
    share: std::sync::OnceLock<Box<str>>,
    /// Counted in `snodo.server.sessions` while it lives.
    _counted: crate::telemetry::metrics::Held,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("revision", &self.revision)
            .field("initialized", &self.is_initialized())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session negotiated at `revision` with what the client declared.
    pub(crate) fn new(
        id: String,
        revision: Revision,
        client_capabilities: Value,
        client_info: Option<Value>,
        owner: Option<String>,
    ) -> Self {
        Self {
            id,
            revision,
            client_capabilities: LazyObject::shared(client_capabilities),
            client_info: client_info.map(LazyObject::shared),
            owner,
            initialized: AtomicBool::new(false),
            log_level: AtomicU8::new(0),
            subscriptions: Mutex::default(),
            pending: Mutex::default(),
            in_flight: Mutex::default(),
            outbox: Mutex::default(),
            created: Instant::now(),
            last_active: AtomicU64::new(0),
            ended: AtomicBool::new(false),
            replay: Mutex::default(),
            share: std::sync::OnceLock::new(),
            _counted: crate::telemetry::metrics::Gauge::Sessions.hold(),
        }
    }

    /// A node's copy of a session another node opened.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn from_record(record: &SessionRecord) -> Self {
        let session = Self::new(
            record.id.clone(),
            record.revision,
            record.client_capabilities.clone(),
            record.client_info.clone(),
            record.owner.clone(),
        );
        session.apply_record(record);
        session
    }

    /// What the session's record holds now.
    pub fn record(&self) -> SessionRecord {
        let mut record = SessionRecord::new(self.id.clone(), self.revision);
        record.client_capabilities = self.client_capabilities().clone();
        record.client_info = self.client_info().cloned();
        record.owner = self.owner.clone();
        record.initialized = self.is_initialized();
        record.log_level = self.log_level();
        record.subscriptions = self.subscriptions();
        record
    }

    /// Takes the state a record holds (read from the directory).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn apply_record(&self, record: &SessionRecord) {
        if record.initialized {
            self.mark_initialized();
        }
        match record.log_level {
            Some(level) => self.set_log_level(level),
            None => self.log_level.store(0, Ordering::Release),
        }
        let mut subs = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        subs.clear();
        subs.extend(
            record
                .subscriptions
                .iter()
                .take(MAX_SESSION_SUBSCRIPTIONS)
                .cloned(),
        );
    }

    /// Applies a change another node announced.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn apply_change(&self, change: &SessionChange) {
        match change {
            SessionChange::Initialized => self.mark_initialized(),
            SessionChange::LogLevel(level) => self.set_log_level(*level),
            SessionChange::Subscribed(uri) => {
                self.subscribe(uri);
            }
            SessionChange::Unsubscribed(uri) => self.unsubscribe(uri),
            SessionChange::Answer(response) => {
                self.resolve(response);
            }
            SessionChange::Cancelled(id) => {
                if let Some(id) = RequestId::from_value(id) {
                    self.cancel(&id);
                }
            }
            SessionChange::Ended => self.end(),
        }
    }

    /// What a request may change: taken before it, compared after it.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn state(&self) -> SessionState {
        SessionState {
            initialized: self.is_initialized(),
            log_level: self.log_level(),
            subscriptions: self.subscriptions(),
        }
    }

    /// The changes that lead from `before` to this session's state now.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn changes_since(&self, before: &SessionState) -> Vec<SessionChange> {
        let now = self.state();
        let mut changes = Vec::new();
        if now.initialized && !before.initialized {
            changes.push(SessionChange::Initialized);
        }
        if let Some(level) = now.log_level
            && now.log_level != before.log_level
        {
            changes.push(SessionChange::LogLevel(level));
        }
        for uri in &now.subscriptions {
            if before.subscriptions.binary_search(uri).is_err() {
                changes.push(SessionChange::Subscribed(uri.clone()));
            }
        }
        for uri in &before.subscriptions {
            if now.subscriptions.binary_search(uri).is_err() {
                changes.push(SessionChange::Unsubscribed(uri.clone()));
            }
        }
        changes
    }

    /// The session id (`Mcp-Session-Id` over HTTP; empty over stdio).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The negotiated revision.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// The capabilities the client declared at `initialize`.
    pub fn client_capabilities(&self) -> &Value {
        self.client_capabilities.get()
    }

    /// The client's `clientInfo`, if it sent one.
    pub fn client_info(&self) -> Option<&Value> {
        self.client_info.as_ref().map(LazyObject::get)
    }

    /// What the client declared at `initialize`, for one request: shared
    /// with the session, not copied.
    pub(crate) fn declarations(&self) -> (LazyObject, Option<LazyObject>) {
        (self.client_capabilities.clone(), self.client_info.clone())
    }

    /// Who owns the session: the [`key`](crate::Principal::key) of the
    /// principal that opened it or, for a session several nodes share, its
    /// keyed digest.
    pub fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// Whose share of the session table the session counts against: the
    /// principal or the remote address that opened it; `None` for a node's
    /// copy of a session another node opened (that node counted it).
    pub fn share(&self) -> Option<&str> {
        self.share.get().map(|s| &**s)
    }

    /// Sets [`Session::share`] (once; later calls change nothing).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn set_share(&self, share: impl Into<Box<str>>) {
        let _ = self.share.set(share.into());
    }

    /// Whether `notifications/initialized` arrived.
    pub fn is_initialized(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    pub(crate) fn mark_initialized(&self) {
        self.initialized.store(true, Ordering::Release);
    }

    /// The level `logging/setLevel` set, if any.
    pub fn log_level(&self) -> Option<LogLevel> {
        match self.log_level.load(Ordering::Acquire) {
            0 => None,
            n => LogLevel::ALL.get(usize::from(n - 1)).copied(),
        }
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        let index = LogLevel::ALL.iter().position(|l| *l == level).unwrap_or(0);
        self.log_level.store(index as u8 + 1, Ordering::Release);
    }

    /// Adds a resource subscription; `false` when the session holds the
    /// maximum already.
    pub(crate) fn subscribe(&self, uri: &str) -> bool {
        let mut subs = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        if subs.contains(uri) {
            return true;
        }
        if subs.len() >= MAX_SESSION_SUBSCRIPTIONS {
            return false;
        }
        subs.insert(uri.to_string());
        true
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uri);
    }

    /// The URIs the session subscribed to, sorted.
    pub fn subscriptions(&self) -> Vec<String> {
        let subs = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<String> = subs.iter().cloned().collect();
        out.sort();
        out
    }

    /// Whether a change of `uri` concerns this session: it subscribed to the
    /// URI or to a parent of it.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        let subs = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        subs.iter().any(|s| crate::protocol::uri_covers(s, uri))
    }

    /// Registers a server-initiated request and returns its id and the
    /// receiver of the client's answer; `Err` when too many are pending, or
    /// when the random source gives no id (nothing is registered then).
    ///
    /// The id is a string of 128 random bits (32 hex digits), so that an
    /// answer can only come from whoever saw the request: clients echo it
    /// back as they received it.
    pub(crate) fn expect_answer(
        &self,
    ) -> Result<(RequestId, oneshot::Receiver<PeerAnswer>), Unregistered> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.retain(|_, tx| !tx.is_closed());
        if pending.len() >= MAX_PENDING_SERVER_REQUESTS {
            return Err(Unregistered::Crowded);
        }
        let id = loop {
            let id = crate::random::hex(16).map_err(Unregistered::Random)?;
            let id = RequestId::String(id.into());
            if !pending.contains_key(&id) {
                break id;
            }
        };
        let (tx, rx) = oneshot::channel();
        pending.insert(id.clone(), tx);
        Ok((id, rx))
    }

    /// Forgets a server-initiated request (answered elsewhere or abandoned).
    pub(crate) fn forget(&self, id: &RequestId) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    /// Routes a response the client sent to the request that awaits it.
    /// `false` when the id names no pending request of this session (the
    /// response is dropped).
    pub fn resolve(&self, response: &Value) -> bool {
        let Some(id) = response.get("id").and_then(RequestId::from_value) else {
            return false;
        };
        let waiter = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        let Some(waiter) = waiter else {
            return false;
        };
        let answer = match (response.get("result"), response.get("error")) {
            (Some(result), _) => Ok(result.clone()),
            (None, Some(error)) => Err(error.clone()),
            (None, None) => Err(serde_json::json!({"code": -32600, "message": "empty response"})),
        };
        waiter.send(answer).is_ok()
    }

    /// Records a request in flight so that `notifications/cancelled` can stop it.
    pub(crate) fn track(&self, id: &RequestId, cancel: &CancelSignal) {
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), cancel.clone());
    }

    pub(crate) fn untrack(&self, id: &RequestId) {
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    /// Fires the cancellation signal of a request in flight.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        let signal = self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        signal.map(|s| s.cancel()).is_some()
    }

    /// Attaches the stream for messages that belong to no request, unless
    /// one is attached and open already or the session ended; `false` then.
    pub(crate) fn attach_outbox(&self, tx: mpsc::Sender<Vec<u8>>) -> bool {
        let mut outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_ended() || outbox.as_ref().is_some_and(|t| !t.is_closed()) {
            return false;
        }
        *outbox = Some(tx);
        true
    }

    /// Whether a stream for unrelated messages is attached and open.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn has_outbox(&self) -> bool {
        self.outbox
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|tx| !tx.is_closed())
    }

    /// Sends a notification that belongs to no request (for example
    /// `notifications/elicitation/complete`) on the session's standalone
    /// stream: the GET stream over HTTP, the pipe over stdio. `false` when no
    /// such stream is open or its queue is full: such notifications are
    /// hints, and are dropped rather than queued without bound.
    pub fn send_notification(&self, method: &str, params: serde_json::Map<String, Value>) -> bool {
        let frame = crate::wire::encode_notification(method, &params);
        let outbox = self.outbox.lock().unwrap_or_else(|e| e.into_inner());
        outbox.as_ref().is_some_and(|tx| tx.try_send(frame).is_ok())
    }

    /// Notes activity now.
    pub(crate) fn touch(&self) {
        let ms = self.created.elapsed().as_millis() as u64;
        self.last_active.store(ms, Ordering::Relaxed);
    }

    /// How long the session has been idle.
    pub fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_active.load(Ordering::Relaxed));
        self.created.elapsed().saturating_sub(last)
    }

    /// Ends the session: requests in flight are cancelled, pending server
    /// requests fail, the unrelated-message stream closes.
    pub fn end(&self) {
        self.ended.store(true, Ordering::Release);
        for (_, signal) in self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
        {
            signal.cancel();
        }
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        *self.outbox.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Whether [`Session::end`] was called.
    pub fn is_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn session() -> Session {
        Session::new("s".into(), Revision::V2025_11_25, json!({}), None, None)
    }

    #[test]
    fn answers_reach_only_the_request_that_awaits_them() {
        let s = session();
        let (id, mut rx) = s.expect_answer().unwrap();
        assert!(!s.resolve(&json!({"jsonrpc":"2.0","id":999,"result":{}})));
        assert!(s.resolve(&json!({"jsonrpc":"2.0","id":id.to_value(),"result":{"ok":true}})));
        assert_eq!(rx.try_recv().unwrap(), Ok(json!({"ok": true})));
        assert!(!s.resolve(&json!({"jsonrpc":"2.0","id":id.to_value(),"result":{}})));
    }

    #[test]
    fn server_request_ids_are_random_strings() {
        let s = session();
        let held: Vec<_> = (0..MAX_PENDING_SERVER_REQUESTS)
            .map(|_| s.expect_answer().unwrap())
            .collect();
        let ids: HashSet<String> = held
            .iter()
            .map(|(id, _)| match id {
                RequestId::String(text) => text.to_string(),
                other => panic!("a string id, not {other:?}"),
            })
            .collect();
        assert_eq!(ids.len(), held.len());
        assert!(
            ids.iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }

    #[test]
    fn a_request_that_gets_no_random_id_is_not_registered() {
        let s = session();
        {
            let _off = crate::random::failing();
            assert!(matches!(
                s.expect_answer().unwrap_err(),
                Unregistered::Random(_)
            ));
        }
        assert!(s.pending.lock().unwrap().is_empty());
    }

    #[test]
    fn pending_requests_and_subscriptions_are_bounded() {
        let s = session();
        let held: Vec<_> = (0..MAX_PENDING_SERVER_REQUESTS)
            .map(|_| s.expect_answer().unwrap())
            .collect();
        assert_eq!(s.expect_answer().unwrap_err(), Unregistered::Crowded);
        drop(held);
        assert!(
            s.expect_answer().is_ok(),
            "abandoned waiters free their slot"
        );
        for i in 0..MAX_SESSION_SUBSCRIPTIONS {
            assert!(s.subscribe(&format!("test://{i}")));
        }
        assert!(!s.subscribe("test://one-more"));
        assert!(s.subscribe("test://0"), "an existing subscription is fine");
        assert!(s.is_subscribed("test://1/child"));
        assert!(!s.is_subscribed("test://1x"));
    }

    #[test]
    fn log_level_round_trips() {
        let s = session();
        assert_eq!(s.log_level(), None);
        for level in LogLevel::ALL {
            s.set_log_level(*level);
            assert_eq!(s.log_level(), Some(*level));
        }
    }
}
