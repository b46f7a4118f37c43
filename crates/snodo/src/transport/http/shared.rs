//! Initialize-era sessions shared by the nodes of one service: each node's
//! [`SessionStore`] holds its copies, the
//! [`SessionDirectory`] holds the records every node reads, and the event
//! hub's bus carries each change to the nodes that hold a copy (see
//! [`directory`](crate::server::legacy::SessionDirectory)).

use std::sync::{Arc, Weak};

use http::{HeaderMap, Response, StatusCode};

use super::body::McpBody;
use super::response::reject;
use super::session::SessionStore;
use crate::events::{SessionChange, SessionSink};
use crate::server::legacy::{Session, SessionDirectory, SessionState};
use crate::{Server, wire};

/// Applies the changes other nodes announce to this node's copies.
struct LocalCopies(Arc<dyn SessionStore>);

impl SessionSink for LocalCopies {
    fn apply(&self, id: &str, _owner: Option<&str>, change: &SessionChange) {
        if let Some(session) = self.0.get(id) {
            session.apply_change(change);
            if *change == SessionChange::Ended {
                self.0.remove(id);
            }
        }
    }
}

/// The shared side of a service's sessions.
pub(super) struct Shared {
    directory: Arc<dyn SessionDirectory>,
    /// Held here; the hub holds it weakly.
    _sink: Arc<dyn SessionSink>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

fn unavailable(error: impl std::fmt::Display) -> Response<McpBody> {
    reject(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!("Service unavailable: the session directory failed: {error}"),
    )
}

impl Shared {
    /// Joins `store` to `directory` and to the changes `server`'s hub brings.
    pub(super) fn new(
        server: &Server,
        store: Arc<dyn SessionStore>,
        directory: Arc<dyn SessionDirectory>,
    ) -> Self {
        let sink: Arc<dyn SessionSink> = Arc::new(LocalCopies(store));
        server
            .events()
            .add_session_sink(Arc::downgrade(&sink) as Weak<_>);
        Self {
            directory,
            _sink: sink,
        }
    }

    /// Brings this node's copy of the session `id` up to date with the
    /// directory: adds it when another node opened it, drops it when it
    /// ended elsewhere. A directory that fails is 503.
    pub(super) async fn refresh(
        &self,
        store: &dyn SessionStore,
        id: &str,
    ) -> Result<(), Response<McpBody>> {
        match self.directory.load(id).await {
            Err(e) => Err(unavailable(e)),
            Ok(None) => {
                if let Some(gone) = store.remove(id) {
                    gone.end();
                }
                Ok(())
            }
            Ok(Some(record)) => {
                if let Some(copy) = store.get(id) {
                    copy.apply_record(&record);
                    return Ok(());
                }
                let copy = Arc::new(Session::from_record(&record));
                store.insert(copy).map_err(unavailable)
            }
        }
    }

    /// Records a session `initialize` opened.
    pub(super) async fn opened(&self, session: &Session) -> Result<(), Response<McpBody>> {
        self.directory
            .save(&session.record())
            .await
            .map_err(unavailable)
    }

    /// Records and announces what a request changed in the session.
    pub(super) async fn changed(&self, server: &Server, session: &Session, before: &SessionState) {
        let changes = session.changes_since(before);
        if changes.is_empty() {
            return;
        }
        // A failed write leaves the other nodes' copies as they were; the
        // announcement still reaches the nodes holding one.
        let _ = self.directory.save(&session.record()).await;
        for change in changes {
            server.events().publish_session(session.id(), None, change);
        }
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
        match message {
            wire::Message::Response(response) => {
                if !session.resolve(response) {
                    server.events().publish_session(
                        session.id(),
                        None,
                        SessionChange::Answer(response.clone()),
                    );
                }
                true
            }
            wire::Message::Notification(n) if n.method == "notifications/cancelled" => {
                if let Some(id) = crate::protocol::cancelled_request(n) {
                    server.events().publish_session(
                        session.id(),
                        None,
                        SessionChange::Cancelled(id.to_value()),
                    );
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
        !matches!(self.directory.load(id).await, Ok(None))
    }

    /// Ends a session everywhere (`DELETE`).
    pub(super) async fn ended(&self, server: &Server, id: &str) -> Result<(), Response<McpBody>> {
        self.directory.remove(id).await.map_err(unavailable)?;
        server
            .events()
            .publish_session(id, None, SessionChange::Ended);
        Ok(())
    }
}

/// The session id a request names.
pub(super) fn named_session(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(crate::protocol::legacy::SESSION_ID_HEADER)
        .and_then(|v| v.to_str().ok())
}
