//! Initialize-era sessions shared by several nodes: a [`SessionDirectory`]
//! keeps each session's record where every node can read it.
//!
//! With a directory, the Streamable HTTP service writes a session's record
//! when `initialize` opens it and changes it as the session's state changes
//! (`notifications/initialized`, `logging/setLevel`, `resources/subscribe`,
//! `resources/unsubscribe`), reads it on every request that names the
//! session (so a session opened on one node serves requests on any other,
//! and one deleted anywhere is 404 everywhere), and removes it on `DELETE`.
//! Reading refreshes the record's idle expiry. The nodes also tell each
//! other of each change over the [`EventHub`](crate::events::EventHub)'s
//! bus, so that the node holding the session's GET stream filters resource
//! updates with the current subscriptions, and the answer to a
//! server-initiated request reaches the node whose request awaits it.
//!
//! A directory stores what [`SessionRecords`](super::SessionRecords) gives
//! it, opaque: records named by a keyed digest of the session id (never the
//! id), each of a *head* written once, a *state* replaced as a whole (a few
//! bytes), and *members* (the subscriptions) added and removed one at a
//! time, every part sealed with the service's keyring. A change is a delta,
//! applied atomically within the bounds: a record holds at most
//! [`MAX_RECORD_MEMBERS`] members and [`MAX_RECORD_BYTES`] bytes (head,
//! state, and each member's name and value), and a change past them is
//! refused, never applied in part. Each change of the members counts one
//! *generation*: a node that read (or wrote) the members of a generation
//! reads only the state while the generation stays the same.
//!
//! `snodo-redis` and `snodo-postgres` provide directories;
//! [`MemoryDirectory`] is the in-process one (tests, or several services in
//! one process). The `snodo-test` crate's `session_directory::run` is the
//! test suite every directory passes.

mod memory;
#[cfg(test)]
mod sealing_tests;
mod store;

pub use memory::MemoryDirectory;
pub use store::{
    Changed, Delta, DirectoryError, Loaded, MAX_RECORD_BYTES, MAX_RECORD_KEY, MAX_RECORD_MEMBERS,
    SessionDirectory, StoredRecord,
};
