//! The initialize-era dialect: 2025-11-25 and 2025-06-18 served from the
//! same components as 2026-07-28.
//!
//! A dialect turns a revision's wire into the router's calls and back; the
//! router and the components never learn which revision a request came in
//! on. What is particular to these revisions lives here:
//!
//! - the handshake ([`Server::initialize`](crate::Server::initialize)) and the [`Session`] it opens:
//!   negotiated revision, client capabilities, log level, resource
//!   subscriptions, server-initiated requests awaiting an answer;
//! - the methods 2026-07-28 removed (`ping`, `logging/setLevel`,
//!   `resources/subscribe`, `resources/unsubscribe`);
//! - result shaping (no `resultType`, no cache hints, nothing newer than the
//!   negotiated revision);
//! - the input-required shim: a handler that returns
//!   [`InputRequired`](crate::InputRequired) is answered by real
//!   `elicitation/create`, `sampling/createMessage` and `roots/list` requests
//!   sent on the request's own stream, then run again with the answers and
//!   its request state, which never leaves the server;
//! - change notifications for the session ([`Session`] subscriptions fed by
//!   the same [`EventHub`](crate::server::EventHub) as `subscriptions/listen`).
//!
//! Transports own the session's lifetime: stdio keeps one per process, the
//! Streamable HTTP service keeps them in a
//! [`SessionStore`](crate::transport::http::SessionStore).

mod directory;
mod dispatch;
mod feed;
// Sessions are stored in a directory by the Streamable HTTP transport
// (feature `http`).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
mod records;
// Replaying streams is the Streamable HTTP transport's (feature `http`).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
mod replay;
mod session;
mod shape;
mod shim;

pub use directory::{
    Changed, Delta, DirectoryError, Loaded, MAX_RECORD_BYTES, MAX_RECORD_KEY, MAX_RECORD_MEMBERS,
    MemoryDirectory, SessionDirectory, StoredRecord,
};
pub use dispatch::{Initialized, MAX_DECLARATION_BYTES, MAX_SUBSCRIPTION_URI, new_session_id};
pub use feed::{notification_for, resync_for};
#[cfg_attr(not(feature = "http"), allow(unused_imports))]
pub(crate) use records::{Home, Opened};
pub use records::{SessionRecord, SessionRecords};
#[cfg(feature = "fuzzing")]
pub(crate) use records::{open_stored_record, seal_record_member, seal_record_part};
pub use replay::{
    DEFAULT_REPLAY_BUDGET, MAX_REPLAY_BYTES, MAX_REPLAY_EVENTS, MAX_REPLAY_STREAMS, ReplayBudget,
};
pub use session::{MAX_PENDING_SERVER_REQUESTS, MAX_SESSION_SUBSCRIPTIONS, PeerAnswer, Session};
pub use shim::{DEFAULT_INPUT_TIMEOUT, MAX_INPUT_ROUNDS};

pub(crate) use replay::ReplayLog;
#[cfg_attr(not(feature = "http"), allow(unused_imports))]
pub(crate) use session::SessionState;

/// Notifications queued for a session's standalone stream.
pub const OUTBOX_QUEUE: usize = 256;

pub(crate) use shape::listed_forms;
