//! How a server runs tasks: the store, time to live, leases and limits.

use std::sync::Arc;
use std::time::Duration;

use super::memory::MemoryTaskStore;

/// Tasks one principal (or, when anonymous, one remote address) may hold on
/// a node at once, from creation until they expire, by default.
pub const DEFAULT_MAX_TASKS_PER_SHARE: usize = 1000;

/// How long a task waits for its input requests to be answered before it
/// fails, by default.
pub const DEFAULT_INPUT_WAIT: Duration = Duration::from_secs(10 * 60);
use super::store::TaskStore;

/// Settings of the tasks a server runs, given to
/// [`ServerBuilder::tasks`](crate::ServerBuilder::tasks).
///
/// ```
/// use std::time::Duration;
/// use snodo::task::TaskOptions;
/// let options = TaskOptions::memory()
///     .ttl(Some(Duration::from_secs(600)))
///     .poll_interval(Duration::from_secs(1));
/// assert_eq!(options.lease_duration(), Duration::from_secs(15));
/// ```
#[derive(Clone)]
pub struct TaskOptions {
    pub(crate) store: Arc<dyn TaskStore>,
    /// `None`: a random id, drawn when the server is built.
    pub(crate) node: Option<String>,
    pub(crate) ttl: Option<Duration>,
    pub(crate) poll_interval: Duration,
    pub(crate) lease: Duration,
    pub(crate) max_runtime: Duration,
    pub(crate) cancel_grace: Duration,
    pub(crate) sweep_every: Duration,
    pub(crate) max_per_share: usize,
    pub(crate) input_wait: Duration,
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("node", &self.node)
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("lease", &self.lease)
            .field("max_runtime", &self.max_runtime)
            .finish_non_exhaustive()
    }
}

impl TaskOptions {
    /// Tasks in `store`.
    pub fn new<S: TaskStore>(store: S) -> Self {
        Self::shared(Arc::new(store))
    }

    /// Tasks in a store shared with other code (a test, another server).
    pub fn shared(store: Arc<dyn TaskStore>) -> Self {
        Self {
            store,
            node: None,
            ttl: Some(Duration::from_millis(super::model::DEFAULT_TTL_MS)),
            poll_interval: Duration::from_millis(super::model::DEFAULT_POLL_INTERVAL_MS),
            lease: Duration::from_secs(15),
            max_runtime: Duration::from_secs(60 * 60),
            cancel_grace: Duration::from_secs(5),
            sweep_every: Duration::from_secs(1),
            max_per_share: DEFAULT_MAX_TASKS_PER_SHARE,
            input_wait: DEFAULT_INPUT_WAIT,
        }
    }

    /// Tasks in a [`MemoryTaskStore`] (the default when a tool supports
    /// tasks and no store is set).
    pub fn memory() -> Self {
        Self::new(MemoryTaskStore::new())
    }

    /// Names this node in the leases it takes (by default a random id of
    /// 128 bits, drawn when the server is built: without the operating
    /// system's random source the build fails with
    /// [`BuildError::Random`](crate::BuildError::Random)).
    pub fn node_id(mut self, node: impl Into<String>) -> Self {
        self.node = Some(node.into());
        self
    }

    /// How long a task and its result are kept, from its creation (one hour
    /// by default; `None` keeps them until the store is emptied).
    pub fn ttl(mut self, ttl: Option<Duration>) -> Self {
        self.ttl = ttl.map(|t| t.max(Duration::from_millis(1)));
        self
    }

    /// The polling interval suggested to clients (500 ms by default).
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// How long a lease lasts unless renewed (15 s by default; renewed every
    /// third of it). A node that stops loses its tasks to another node this
    /// long after its last renewal.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    /// The lease duration.
    pub fn lease_duration(&self) -> Duration {
        self.lease
    }

    /// The longest a task may run before it fails with -32603 (one hour by
    /// default).
    pub fn max_runtime(mut self, limit: Duration) -> Self {
        self.max_runtime = limit;
        self
    }

    /// How long a cancelled task's handler may take to return before it is
    /// dropped (5 s by default).
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
        self
    }

    /// How often the node recovers tasks whose node stopped and purges
    /// expired ones (every second by default).
    pub fn sweep_every(mut self, every: Duration) -> Self {
        self.sweep_every = every.max(Duration::from_millis(10));
        self
    }

    /// How many tasks one principal (or, when anonymous, one remote address,
    /// the /64 network for IPv6) may hold on this node at once, from creation
    /// until they expire ([`DEFAULT_MAX_TASKS_PER_SHARE`] by default, at
    /// least one). The one over its share is refused with a retryable
    /// -32603 that says when to try again; no one else's task gives way.
    pub fn max_per_share(mut self, max: usize) -> Self {
        self.max_per_share = max.max(1);
        self
    }

    /// How long a task may wait for the client to answer its input requests
    /// before it fails with -32603 ([`DEFAULT_INPUT_WAIT`] by default; cut to
    /// the time to live).
    pub fn input_wait(mut self, wait: Duration) -> Self {
        self.input_wait = wait.max(Duration::from_millis(1));
        self
    }
}
