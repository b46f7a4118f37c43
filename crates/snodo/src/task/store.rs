//! The `TaskStore` trait: where tasks live, and the rules every store keeps.

use std::time::Duration;

use serde_json::{Map, Value};

use super::model::{Lease, NewTask, TaskRecord};
use crate::RandomUnavailable;
use crate::error::BackendError;
use crate::future::BoxFuture;

/// Why a store could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreError {
    /// The store holds as many tasks as it may; retry later.
    Full {
        /// The limit reached.
        limit: usize,
    },
    /// A task with this id exists already.
    Duplicate,
    /// The input is not acceptable (an id too long, ...).
    Invalid(String),
    /// The backend failed (a lost connection, a full disk, ...); its own
    /// error is the [`source`](std::error::Error::source).
    Backend(BackendError),
    /// The operating system's random source failed, so no lease token
    /// could be drawn; nothing was changed.
    Random(RandomUnavailable),
}

impl From<RandomUnavailable> for StoreError {
    fn from(e: RandomUnavailable) -> Self {
        StoreError::Random(e)
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Full { limit } => write!(f, "the task store is full ({limit} tasks)"),
            StoreError::Duplicate => f.write_str("a task with this id exists already"),
            StoreError::Invalid(why) => write!(f, "invalid task: {why}"),
            StoreError::Backend(why) => write!(f, "the task store failed: {why}"),
            StoreError::Random(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Backend(e) => std::error::Error::source(e),
            StoreError::Random(e) => Some(e),
            _ => None,
        }
    }
}

/// How a worker's task ended, or paused.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Settle {
    /// Finished with this result (`completed`).
    Completed(Value),
    /// Finished with this JSON-RPC error object (`failed`).
    Failed(Value),
    /// Waiting on these input requests (`input_required`), with the state
    /// the handler wants back. The lease is released.
    InputRequired {
        /// New input requests by key (keys never issued before).
        requests: Map<String, Value>,
        /// The handler's state for its next run.
        state: Option<String>,
    },
    /// Stopped after a cancellation (`cancelled`).
    Cancelled,
}

/// What renewing a lease found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Renewal {
    /// Still held, now until the new expiry; `cancel_requested` says whether
    /// the client asked to cancel.
    Held {
        /// The client asked to cancel.
        cancel_requested: bool,
    },
    /// Lost: another claim superseded it, it lapsed, or the task ended or
    /// expired. The worker stops without writing.
    Lost,
}

/// What `tasks/update` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Answered {
    /// No such task (or it expired).
    NotFound,
    /// Answers were taken (keys not outstanding are ignored); `ready` says
    /// that nothing is outstanding any more, so the task is `working` again
    /// and waits for a worker to claim it.
    Accepted {
        /// Every outstanding request is answered.
        ready: bool,
    },
    /// Nothing was taken: the answers would take the task's past this many
    /// bytes ([`MAX_TASK_ANSWER_BYTES`](super::MAX_TASK_ANSWER_BYTES)).
    TooLarge {
        /// The limit.
        limit: usize,
    },
}

/// What `tasks/cancel` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cancelled {
    /// No such task (or it expired).
    NotFound,
    /// It had ended already; nothing changed.
    AlreadyTerminal,
    /// Nothing ran it (waiting on input, or unclaimed): it is `cancelled` now.
    Now,
    /// A worker runs it: the request is recorded, and the worker (which sees
    /// it when it renews its lease) stops and settles it.
    Requested,
}

/// Storage for tasks: the source of truth that every node of a service
/// shares.
///
/// Transitions are atomic; terminal tasks never change; workers write only
/// under a current [`Lease`], so at most one worker at a time runs a task, and
/// a worker that lost its lease cannot overwrite its successor's work. An
/// expired task (past `created_at + ttl`) reads as missing even before
/// [`TaskStore::purge`] removes it.
///
/// The `snodo-test` crate's `task_store::run` is a test suite for these
/// rules: run it against any store.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task, `working` and leased to `holder` for `lease`,
    /// and returns the lease. The task is readable by [`TaskStore::get`] once
    /// this returns.
    fn create(
        &self,
        task: NewTask,
        holder: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<Lease, StoreError>>;

    /// The task, unless it is missing or expired.
    fn get<'a>(&'a self, task_id: &'a str)
    -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// Claims a `working` task that no worker holds (one whose input was
    /// just answered). `None` when it is missing, not `working`, or leased,
    /// even by a lapsed lease (those are [`TaskStore::claim_orphans`]'s).
    /// Every claim counts an attempt.
    fn claim<'a>(
        &'a self,
        task_id: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<Option<(TaskRecord, Lease)>, StoreError>>;

    /// Recovers up to `limit` `working` tasks, oldest first, whose lease
    /// lapsed (their node stopped) or that no worker holds, as
    /// [`transition::recover`](super::transition::recover) says: a lapsed
    /// task uses a retry, or fails (out of retries), or is cancelled (a
    /// cancellation was asked for). Returns the ones claimed to run.
    fn claim_orphans<'a>(
        &'a self,
        holder: &'a str,
        lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<(TaskRecord, Lease)>, StoreError>>;

    /// Extends a lease.
    fn renew<'a>(
        &'a self,
        lease: &'a Lease,
        extend: Duration,
    ) -> BoxFuture<'a, Result<Renewal, StoreError>>;

    /// Records a worker's outcome under its lease; `false` (and no change)
    /// when the lease is no longer current.
    fn settle<'a>(
        &'a self,
        lease: &'a Lease,
        outcome: Settle,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Sets a running task's status message under the worker's lease (how
    /// far it got); `false` (and no change) when the lease is no longer
    /// current.
    fn note<'a>(
        &'a self,
        lease: &'a Lease,
        message: String,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Ends a task outside any lease, when it is not terminal already: a task
    /// whose node stopped, out of retries. `false` when nothing changed.
    fn fail<'a>(
        &'a self,
        task_id: &'a str,
        error: Value,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Takes the answers of `tasks/update`: the keys now outstanding move to
    /// the task's responses at once (the next `get` sees them gone); other
    /// keys are ignored, as is an update for a task that waits on nothing.
    fn answer<'a>(
        &'a self,
        task_id: &'a str,
        responses: Map<String, Value>,
    ) -> BoxFuture<'a, Result<Answered, StoreError>>;

    /// `tasks/cancel`.
    fn cancel<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Cancelled, StoreError>>;

    /// Removes up to `limit` tasks expired at `now_ms`; returns how many.
    fn purge(&self, now_ms: u64, limit: usize) -> BoxFuture<'_, Result<usize, StoreError>>;

    /// The ids of tasks as they change (an outcome, an input round, an
    /// answer, a cancellation), from every node that shares the store, when
    /// the store can tell; `""` says that changes may have been missed.
    /// Servers use it to send `notifications/tasks` and to stop at once a
    /// task cancelled through another node. `None` (the default): each
    /// server hears only its own changes, and a cancellation made elsewhere
    /// reaches a worker when it renews its lease.
    fn changes(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        None
    }
}
