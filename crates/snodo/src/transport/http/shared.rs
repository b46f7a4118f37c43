//! Initialize-era sessions shared by the nodes of one service: each node's
//! [`SessionStore`] holds its copies, the [`SessionRecords`] hold the
//! records every node reads, and the event hub's bus carries each change
//! to the nodes that hold a copy (see
//! [`SessionDirectory`](crate::server::legacy::SessionDirectory)).
//!
//! Neither the records nor the bus name a session by its id: both use the
//! keyed digest of the id that names its record (its [`Home`]). A node
//! learns a session's home when it opens the session or first reads its
//! record, and keeps it beside its copy, so that a change another node
//! announces finds the copy it concerns; and with it the generation of the
//! record's members its copy holds, so that while nobody else changes them
//! it reads the record's state only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use http::{HeaderMap, Response, StatusCode};

use super::body::McpBody;
use super::response::reject;
use super::session::SessionStore;
use crate::events::{SessionChange, SessionSink};
use crate::server::legacy::{Changed, Home, Opened, Session, SessionRecords, SessionState};
use crate::{Error, Principal, Server, wire};

/// Where a copy's record is, and the generation of its members the copy
/// holds (`None`: unknown, read them).
#[derive(Debug, Clone)]
struct Place {
    home: Home,
    generation: Option<u64>,
}

/// The places of the sessions this node holds a copy of: by id, and the id
/// by record key.
#[derive(Debug, Default)]
struct Places {
    by_id: HashMap<String, Place>,
    by_key: HashMap<String, String>,
}

/// [`Places`], bounded by the sessions the store holds.
struct Known {
    places: Mutex<Places>,
    store: Arc<dyn SessionStore>,
}

impl Known {
    fn lock(&self) -> std::sync::MutexGuard<'_, Places> {
        self.places.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn place(&self, id: &str) -> Option<Place> {
        self.lock().by_id.get(id).cloned()
    }

    fn home(&self, id: &str) -> Option<Home> {
        self.place(id).map(|p| p.home)
    }

    fn id_of(&self, key: &str) -> Option<String> {
        self.lock().by_key.get(key).cloned()
    }

    /// Remembers where `id`'s record is; past twice the store's sessions
    /// (and a margin), forgets the sessions the store no longer holds.
    fn remember(&self, id: &str, home: Home, generation: Option<u64>) {
        let mut places = self.lock();
        if places.by_id.len() >= 2 * self.store.len() + 64 {
            let store = &self.store;
            places.by_id.retain(|id, _| store.get(id).is_some());
            let Places { by_id, by_key } = &mut *places;
            by_key.retain(|_, id| by_id.contains_key(id));
        }
        let place = Place {
            home: home.clone(),
            generation,
        };
        if let Some(old) = places.by_id.insert(id.to_string(), place) {
            places.by_key.remove(&old.home.key);
        }
        places.by_key.insert(home.key, id.to_string());
    }

    /// Notes what a write here left the record's members at: `generation`,
    /// one past the copy's when this write changed them. Any other
    /// generation means someone else changed them too: read them again.
    fn wrote(&self, id: &str, generation: u64, changed_members: bool) {
        if let Some(place) = self.lock().by_id.get_mut(id) {
            let step = u64::from(changed_members);
            place.generation = place
                .generation
                .filter(|known| known + step == generation)
                .map(|_| generation);
        }
    }

    fn forget(&self, id: &str) {
        let mut places = self.lock();
        if let Some(place) = places.by_id.remove(id) {
            places.by_key.remove(&place.home.key);
        }
    }
}

/// Applies the changes other nodes announce to this node's copies.
struct LocalCopies(Arc<Known>);

impl SessionSink for LocalCopies {
    fn apply(&self, key: &str, owner: Option<&str>, change: &SessionChange) {
        let Some(id) = self.0.id_of(key) else { return };
        let Some(session) = self.0.store.get(&id) else {
            self.0.forget(&id);
            return;
        };
        // Only the session's own changes: a node announces a change with
        // the owner of the session it was made on.
        if session.owner() != owner {
            return;
        }
        session.apply_change(change);
        if *change == SessionChange::Ended {
            self.0.store.remove(&id);
            self.0.forget(&id);
        }
    }
}

/// The shared side of a service's sessions.
pub(super) struct Shared {
    records: SessionRecords,
    known: Arc<Known>,
    /// Held here; the hub holds it weakly.
    _sink: Arc<dyn SessionSink>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("records", &self.records)
            .finish_non_exhaustive()
    }
}

fn unavailable(error: impl std::fmt::Display) -> Response<McpBody> {
    reject(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!("Service unavailable: the session directory failed: {error}"),
    )
}

/// What a client is told when its session's record cannot take another
/// subscription.
fn record_full(changed: Changed) -> Error {
    use crate::server::legacy::{MAX_RECORD_BYTES, MAX_RECORD_MEMBERS};
    let why = match changed {
        Changed::TooManyMembers => format!("at most {MAX_RECORD_MEMBERS}"),
        _ => format!("the session's shared record holds at most {MAX_RECORD_BYTES} bytes"),
    };
    Error::invalid_params(format!("Too many subscriptions ({why})"))
}

impl Shared {
    /// Joins `store` to `records` and to the changes `server`'s hub brings.
    pub(super) fn new(
        server: &Server,
        store: Arc<dyn SessionStore>,
        records: SessionRecords,
    ) -> Self {
        let known = Arc::new(Known {
            places: Mutex::default(),
            store,
        });
        let sink: Arc<dyn SessionSink> = Arc::new(LocalCopies(known.clone()));
        server
            .events()
            .add_session_sink(Arc::downgrade(&sink) as Weak<_>);
        Self {
            records,
            known,
            _sink: sink,
        }
    }

    /// The owner of a session `initialize` opens now as `id`, for
    /// `principal`: the keyed digest of its key under the key the
    /// session's record will be named with.
    pub(super) fn owner_for_new(&self, id: &str, principal: Option<&Principal>) -> Option<String> {
        let home = self.records.home_for_new(id);
        let owner = principal.and_then(|p| self.records.owner_tag(&home, id, &p.key()));
        self.known.remember(id, home, None);
        owner
    }

    /// The owner the session `id` must have to serve `principal` (an
    /// owner no session has when the session's home is unknown here).
    pub(super) fn owner_of(&self, id: &str, principal: Option<&Principal>) -> Option<String> {
        let principal = principal?;
        Some(
            self.known
                .home(id)
                .and_then(|home| self.records.owner_tag(&home, id, &principal.key()))
                .unwrap_or_default(),
        )
    }

    /// Brings this node's copy of the session `id` up to date with the
    /// directory: adds it when another node opened it, drops it when it
    /// ended elsewhere (or its record no longer opens). A directory that
    /// fails is 503.
    pub(super) async fn refresh(
        &self,
        store: &dyn SessionStore,
        id: &str,
    ) -> Result<(), Response<McpBody>> {
        let copy = store.get(id);
        let found = match self.known.place(id) {
            Some(Place { home, generation }) => {
                let known = generation.filter(|_| copy.is_some());
                self.records
                    .load(&home, id, known)
                    .await
                    .map(|opened| opened.map(|opened| (home, opened)))
            }
            None => self.records.find(id).await.map(|found| {
                found.map(|(home, record, generation)| {
                    let record = Box::new(record);
                    (home, Opened::Whole { record, generation })
                })
            }),
        };
        match found {
            Err(e) => Err(unavailable(e)),
            Ok(None) => {
                if let Some(gone) = store.remove(id) {
                    gone.end();
                }
                self.known.forget(id);
                Ok(())
            }
            Ok(Some((
                _,
                Opened::Unchanged {
                    initialized,
                    log_level,
                },
            ))) => {
                // The copy holds the record's members already.
                if let Some(copy) = copy {
                    if initialized {
                        copy.mark_initialized();
                    }
                    if let Some(level) = log_level {
                        copy.set_log_level(level);
                    }
                }
                Ok(())
            }
            Ok(Some((home, Opened::Whole { record, generation }))) => {
                if let Some(copy) = copy {
                    self.known.remember(id, home, Some(generation));
                    copy.apply_record(&record);
                    return Ok(());
                }
                let copy = Arc::new(Session::from_record(&record));
                store.insert(copy).map_err(unavailable)?;
                // The place is remembered once the copy is in the store: a
                // change another node announces in between would otherwise
                // find the place without a copy and forget it, and the
                // request that loaded the copy would not find its owner (a
                // change it misses is read at the next request, the
                // directory holding it already).
                self.known.remember(id, home, Some(generation));
                Ok(())
            }
        }
    }

    /// Records a session `initialize` opened.
    pub(super) async fn opened(&self, session: &Session) -> Result<(), Response<McpBody>> {
        let home = self
            .known
            .home(session.id())
            .unwrap_or_else(|| self.records.home_for_new(session.id()));
        match self.records.create(&home, &session.record()).await {
            Ok(Changed::Done(generation)) => {
                self.known.remember(session.id(), home, Some(generation));
                Ok(())
            }
            Ok(other) => Err(unavailable(format!(
                "the session's record was refused ({other:?})"
            ))),
            Err(e) => Err(unavailable(e)),
        }
    }

    /// Records and announces what a request changed in the session. A
    /// subscription the session's record cannot take is undone here and
    /// returned as the error the client gets.
    pub(super) async fn changed(
        &self,
        server: &Server,
        session: &Session,
        before: &SessionState,
    ) -> Result<(), Error> {
        let changes = session.changes_since(before);
        let Some(home) = self.known.home(session.id()) else {
            return Ok(());
        };
        let mut refused = None;
        let mut state_written = false;
        for change in changes {
            // A failed write leaves the other nodes' copies as they were;
            // the announcement still reaches the nodes holding one.
            let written = match &change {
                SessionChange::Initialized | SessionChange::LogLevel(_) if !state_written => {
                    state_written = true;
                    let (initialized, level) = (session.is_initialized(), session.log_level());
                    Some(self.records.set_state(&home, initialized, level).await)
                }
                SessionChange::Subscribed(uri) => Some(self.records.subscribe(&home, uri).await),
                SessionChange::Unsubscribed(uri) => {
                    Some(self.records.unsubscribe(&home, uri).await)
                }
                _ => None,
            };
            match (&change, written) {
                (
                    SessionChange::Subscribed(uri),
                    Some(Ok(full @ (Changed::TooManyMembers | Changed::TooLarge))),
                ) => {
                    session.unsubscribe(uri);
                    refused = Some(record_full(full));
                    continue;
                }
                (_, Some(Ok(Changed::Done(generation)))) => {
                    let members = !matches!(
                        change,
                        SessionChange::Initialized | SessionChange::LogLevel(_)
                    );
                    self.known.wrote(session.id(), generation, members)
                }
                _ => {}
            }
            server
                .events()
                .publish_session(&home.key, session.owner(), change);
        }
        refused.map_or(Ok(()), Err)
    }

    /// Passes a client's message that concerns another node on: the
    /// answer to a server-initiated request this node did not send (`true`:
    /// nothing is left to do here), or a cancellation.
    pub(super) fn forward(
        &self,
        server: &Server,
        session: &Session,
        message: &wire::Message,
    ) -> bool {
        let home = self.known.home(session.id());
        let publish = |change: SessionChange| {
            if let Some(home) = &home {
                server
                    .events()
                    .publish_session(&home.key, session.owner(), change);
            }
        };
        match message {
            wire::Message::Response(response) => {
                if !session.resolve(response) {
                    publish(SessionChange::Answer(response.clone()));
                }
                true
            }
            wire::Message::Notification(n) if n.method == "notifications/cancelled" => {
                if let Some(id) = crate::protocol::cancelled_request(n) {
                    publish(SessionChange::Cancelled(id.to_value()));
                }
                false
            }
            _ => false,
        }
    }

    /// Whether the session is still in the directory (reading it renews its
    /// idle expiry: a client that only listens on a GET stream keeps its
    /// session). A directory that fails counts as yes.
    pub(super) async fn alive(&self, id: &str) -> bool {
        let Some(home) = self.known.home(id) else {
            return false;
        };
        !matches!(self.records.load(&home, id, None).await, Ok(None))
    }

    /// Ends a session everywhere (`DELETE`).
    pub(super) async fn ended(
        &self,
        server: &Server,
        session: &Session,
    ) -> Result<(), Response<McpBody>> {
        let Some(home) = self.known.home(session.id()) else {
            return Ok(());
        };
        self.records.remove(&home).await.map_err(unavailable)?;
        server
            .events()
            .publish_session(&home.key, session.owner(), SessionChange::Ended);
        // Its place stays (the request still has to find its copy here) until
        // the places are pruned.
        Ok(())
    }
}

/// The session id a request names.
pub(super) fn named_session(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(crate::protocol::legacy::SESSION_ID_HEADER)
        .and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Revision;
    use crate::transport::http::MemorySessions;

    /// A store holding one session owned by `w1`, whose record key is `r1`,
    /// and the sink that applies the bus's changes to it.
    fn copies() -> (Arc<Session>, LocalCopies) {
        let store: Arc<dyn SessionStore> = Arc::new(MemorySessions::default());
        let session = Arc::new(Session::new(
            "s1".into(),
            Revision::V2025_11_25,
            serde_json::json!({}),
            None,
            Some("w1".into()),
        ));
        store.insert(session.clone()).unwrap();
        let known = Arc::new(Known {
            places: Mutex::default(),
            store,
        });
        let home = Home {
            key: "r1".into(),
            kid: "k1".into(),
        };
        known.remember("s1", home, None);
        (session, LocalCopies(known))
    }

    #[test]
    fn a_change_reaches_only_the_copy_of_its_record_and_owner() {
        let (session, sink) = copies();
        let subscribed = SessionChange::Subscribed("demo://a".into());
        sink.apply("r1", Some("w2"), &subscribed);
        sink.apply("r1", None, &subscribed);
        sink.apply("r2", Some("w1"), &subscribed);
        assert!(
            session.subscriptions().is_empty(),
            "another owner, another record"
        );
        sink.apply("r1", Some("w1"), &subscribed);
        assert_eq!(session.subscriptions(), ["demo://a"]);
        sink.apply("r1", Some("w2"), &SessionChange::Ended);
        assert!(!session.is_ended());
        sink.apply("r1", Some("w1"), &SessionChange::Ended);
        assert!(session.is_ended());
    }

    #[test]
    fn a_copy_keeps_its_generation_only_through_its_own_writes() {
        let (_, LocalCopies(known)) = copies();
        let home = known.home("s1").unwrap();
        let generation = |known: &Known| known.place("s1").unwrap().generation;
        known.remember("s1", home.clone(), Some(3));
        known.wrote("s1", 4, true);
        assert_eq!(generation(&known), Some(4));
        known.wrote("s1", 4, false);
        assert_eq!(generation(&known), Some(4), "a state write");
        // Someone else changed the members meanwhile: read them again.
        known.wrote("s1", 5, false);
        assert_eq!(generation(&known), None);
        known.remember("s1", home, Some(5));
        known.wrote("s1", 7, true);
        assert_eq!(generation(&known), None);
    }

    #[test]
    fn answers_and_cancellations_reach_only_what_is_pending_or_in_flight() {
        let (session, sink) = copies();
        let (id, mut answer) = session.expect_answer().unwrap();
        let cancel = crate::CancelSignal::new();
        let call = crate::wire::RequestId::Number(7);
        session.track(&call, &cancel);
        // An answer to an id nothing awaits, a cancellation of a request not
        // in flight: nothing happens.
        let stray = serde_json::json!({"jsonrpc": "2.0", "id": "0123", "result": {}});
        sink.apply("r1", Some("w1"), &SessionChange::Answer(stray));
        sink.apply(
            "r1",
            Some("w1"),
            &SessionChange::Cancelled(serde_json::json!(8)),
        );
        assert!(answer.try_recv().is_err());
        assert!(!cancel.is_cancelled());
        // The right ids, from another owner: nothing either.
        let genuine =
            serde_json::json!({"jsonrpc": "2.0", "id": id.to_value(), "result": {"ok": 1}});
        sink.apply("r1", Some("w2"), &SessionChange::Answer(genuine.clone()));
        sink.apply(
            "r1",
            Some("w2"),
            &SessionChange::Cancelled(serde_json::json!(7)),
        );
        assert!(answer.try_recv().is_err());
        assert!(!cancel.is_cancelled());
        // From the session's owner: delivered.
        sink.apply("r1", Some("w1"), &SessionChange::Answer(genuine));
        assert_eq!(answer.try_recv().unwrap(), Ok(serde_json::json!({"ok": 1})));
        sink.apply(
            "r1",
            Some("w1"),
            &SessionChange::Cancelled(serde_json::json!(7)),
        );
        assert!(cancel.is_cancelled());
    }
}
