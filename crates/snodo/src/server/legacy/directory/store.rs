//! What a directory stores and the trait every directory implements.

use std::fmt;

use crate::error::BackendError;
use crate::future::BoxFuture;

/// The largest record a directory stores (1 MiB): head, state, and every
/// member's name and value.
pub const MAX_RECORD_BYTES: usize = 1024 * 1024;

/// Most members (subscriptions) one record holds.
pub const MAX_RECORD_MEMBERS: usize = 1000;

/// The longest key of a record, in bytes.
pub const MAX_RECORD_KEY: usize = 64;

/// A record as a directory keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StoredRecord {
    /// What [`SessionDirectory::create`] wrote, unchanged since.
    pub head: Vec<u8>,
    /// The last state written.
    pub state: Vec<u8>,
    /// Every member's name and value, sorted by name.
    pub members: Vec<(String, Vec<u8>)>,
    /// How many times its members changed.
    pub generation: u64,
}

impl StoredRecord {
    /// A record of `head`, `state` and `members` (sorted here) at
    /// `generation`.
    pub fn new(
        head: Vec<u8>,
        state: Vec<u8>,
        mut members: Vec<(String, Vec<u8>)>,
        generation: u64,
    ) -> Self {
        members.sort_by(|a, b| a.0.cmp(&b.0));
        Self {
            head,
            state,
            members,
            generation,
        }
    }

    /// The bytes the record counts against [`MAX_RECORD_BYTES`].
    pub fn size(&self) -> usize {
        self.head.len()
            + self.state.len()
            + self
                .members
                .iter()
                .map(|(name, value)| name.len() + value.len())
                .sum::<usize>()
    }
}

/// What [`SessionDirectory::load`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Loaded {
    /// The whole record.
    Whole(StoredRecord),
    /// The members are of the generation the reader knows: the state only.
    Unchanged(Vec<u8>),
}

/// One change of a stored record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delta<'a> {
    /// Replaces the state.
    SetState(&'a [u8]),
    /// Adds a member, or replaces the value of the member of that name.
    Add {
        /// The member's name.
        name: &'a str,
        /// Its value.
        value: &'a [u8],
    },
    /// Removes the member of that name, if there is one.
    Remove {
        /// The member's name.
        name: &'a str,
    },
}

/// What became of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Changed {
    /// Written; the record's members are now of this generation.
    Done(u64),
    /// There is no live record of that key: nothing was written.
    Gone,
    /// The record holds [`MAX_RECORD_MEMBERS`] members already: nothing was
    /// written.
    TooManyMembers,
    /// The record would pass [`MAX_RECORD_BYTES`]: nothing was written.
    TooLarge,
}

/// A directory could not be reached or answered something unusable; the
/// backend's own error, if any, is the
/// [`source`](std::error::Error::source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryError(pub BackendError);

impl DirectoryError {
    /// A failure told in words only.
    pub fn new(message: impl Into<String>) -> Self {
        Self(BackendError::new(message))
    }

    /// A failure and the backend's own error under it.
    pub fn with_source(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self(BackendError::with_source(message, source))
    }
}

impl fmt::Display for DirectoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for DirectoryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.0)
    }
}

/// Where the nodes of one service keep their initialize-era sessions.
///
/// Keys are at most [`MAX_RECORD_KEY`] bytes of visible ASCII; names and
/// values are whatever the caller gives. Every write refreshes the record's
/// idle expiry, and so does [`load`](SessionDirectory::load).
pub trait SessionDirectory: Send + Sync + 'static {
    /// Stores a new record (replacing any of the same key) of `head` and
    /// `state`, with no member, at generation 0; [`Changed::TooLarge`] past
    /// [`MAX_RECORD_BYTES`]. It expires after the directory's idle time
    /// unless read or changed again.
    fn create<'a>(
        &'a self,
        key: &'a str,
        head: &'a [u8],
        state: &'a [u8],
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>>;
    /// The live record of `key`, refreshing its idle expiry: its state
    /// only when its members are of the generation `known`.
    fn load<'a>(
        &'a self,
        key: &'a str,
        known: Option<u64>,
    ) -> BoxFuture<'a, Result<Option<Loaded>, DirectoryError>>;
    /// Applies one change to the live record of `key`, atomically: written
    /// whole within the bounds, or not at all. A change of the members (an
    /// added member, a new value, a removed member) counts a generation.
    fn change<'a>(
        &'a self,
        key: &'a str,
        delta: Delta<'a>,
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>>;
    /// Removes a record; `true` when there was one.
    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>>;
}

impl<T: SessionDirectory + ?Sized> SessionDirectory for std::sync::Arc<T> {
    fn create<'a>(
        &'a self,
        key: &'a str,
        head: &'a [u8],
        state: &'a [u8],
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        (**self).create(key, head, state)
    }
    fn load<'a>(
        &'a self,
        key: &'a str,
        known: Option<u64>,
    ) -> BoxFuture<'a, Result<Option<Loaded>, DirectoryError>> {
        (**self).load(key, known)
    }
    fn change<'a>(
        &'a self,
        key: &'a str,
        delta: Delta<'a>,
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        (**self).change(key, delta)
    }
    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>> {
        (**self).remove(key)
    }
}
