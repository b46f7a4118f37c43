//! What a task is: its status, its stored record, and its wire form.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::RandomUnavailable;

/// Where a task is in its life.
///
/// `working` and `input_required` move on; `completed`, `failed` and
/// `cancelled` are terminal and never change. A tool's own failure (an
/// `isError` result) is `completed`; `failed` is kept for JSON-RPC errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Running, or waiting to run.
    Working,
    /// Waiting on the client's answers to its `inputRequests`.
    InputRequired,
    /// Finished with a result (an `isError` result included).
    Completed,
    /// Finished with a JSON-RPC error.
    Failed,
    /// Cancelled by the client.
    Cancelled,
}

impl TaskStatus {
    /// The wire name (`working`, `input_required`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Reads a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }

    /// Whether the status never changes again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// Whether a tool runs as a task.
///
/// Only requests that declare the `io.modelcontextprotocol/tasks` extension
/// in their `_meta` can get a task back; the tool's support decides what
/// happens to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Always runs inline, even when the client allows tasks (the default).
    #[default]
    Never,
    /// Runs as a task when the request declares the extension, inline
    /// otherwise.
    Optional,
    /// Runs only as a task: a request that does not declare the extension
    /// fails with -32021 naming it.
    Required,
}

impl TaskSupport {
    /// Reads `never`, `optional` or `required`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "never" => TaskSupport::Never,
            "optional" => TaskSupport::Optional,
            "required" => TaskSupport::Required,
            _ => return None,
        })
    }
}

/// A lease on a task: the right to run it until `expires_at_ms`.
///
/// Every write a worker makes names its lease; a store refuses a write whose
/// lease is no longer current (its `generation` was superseded by another
/// claim, or it expired), so a worker that lost its task cannot overwrite the
/// work of the one that took it over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The task leased.
    pub task_id: String,
    /// Who holds it (a node id).
    pub holder: String,
    /// A random token, new with every claim.
    pub token: String,
    /// Counts the claims of the task; a fencing token.
    pub generation: u64,
    /// When the lease lapses, in milliseconds since the Unix epoch.
    pub expires_at_ms: u64,
}

/// What a new task is created with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NewTask {
    /// The task id: unguessable, at most [`MAX_TASK_ID`] bytes.
    pub task_id: String,
    /// The principal the task belongs to (`""` for an anonymous client).
    pub owner: String,
    /// The tool called.
    pub tool: String,
    /// What running the task needs again (arguments, capabilities, ...):
    /// an object the runner writes and reads back.
    pub work: Value,
    /// How long the task and its result are kept, from creation; `None` is
    /// unlimited.
    pub ttl_ms: Option<u64>,
    /// The polling interval suggested to clients.
    pub poll_interval_ms: Option<u64>,
    /// How many times a task whose node stopped is run again before it fails.
    pub retries: u32,
    /// When the task was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
}

impl NewTask {
    /// A task for `tool` owned by `owner`, with a fresh id
    /// ([`new_task_id`]), created now.
    ///
    /// # Errors
    ///
    /// [`RandomUnavailable`] when the operating system's random source
    /// fails.
    pub fn new(
        owner: impl Into<String>,
        tool: impl Into<String>,
        work: Value,
    ) -> Result<Self, RandomUnavailable> {
        Ok(Self {
            task_id: new_task_id()?,
            owner: owner.into(),
            tool: tool.into(),
            work,
            ttl_ms: Some(DEFAULT_TTL_MS),
            poll_interval_ms: Some(DEFAULT_POLL_INTERVAL_MS),
            retries: 0,
            created_at_ms: now_ms(),
        })
    }

    /// With this time to live (`None`: unlimited).
    pub fn ttl_ms(mut self, ttl_ms: Option<u64>) -> Self {
        self.ttl_ms = ttl_ms;
        self
    }

    /// With this suggested polling interval.
    pub fn poll_interval_ms(mut self, interval: Option<u64>) -> Self {
        self.poll_interval_ms = interval;
        self
    }

    /// Run again up to `retries` times when its node stops.
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }
}

/// A task as a store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task id.
    pub task_id: String,
    /// The principal it belongs to (`""`: anonymous).
    pub owner: String,
    /// The tool called.
    pub tool: String,
    /// What running it needs (see [`NewTask::work`]).
    pub work: Value,
    /// Where it is.
    pub status: TaskStatus,
    /// A message for people, if any.
    pub status_message: Option<String>,
    /// Creation time, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// Time of the last change.
    pub last_updated_at_ms: u64,
    /// Time to live from creation (`None`: unlimited).
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval.
    pub poll_interval_ms: Option<u64>,
    /// The tool's result, once `completed`.
    pub result: Option<Value>,
    /// The JSON-RPC error object, once `failed`.
    pub error: Option<Value>,
    /// The input requests still unanswered, by key (`input_required`).
    pub input_requests: Map<String, Value>,
    /// Every answer received so far, by key; the handler sees them.
    pub input_responses: Map<String, Value>,
    /// Every input key ever issued: keys are unique for a task's life.
    pub used_keys: Vec<String>,
    /// The state the handler returned with its last input requests.
    pub request_state: Option<String>,
    /// Whether the client asked to cancel while the task ran.
    pub cancel_requested: bool,
    /// How many times the task was claimed.
    pub attempts: u32,
    /// How many more runs a stopped node's task gets.
    pub retries: u32,
    /// The current lease, if a worker holds one.
    pub lease: Option<Lease>,
    /// Counts every change; compare-and-set stores use it.
    pub revision: u64,
}

impl TaskRecord {
    /// The record a store keeps for a new task (`working`, unclaimed).
    pub fn from_new(task: NewTask) -> Self {
        Self {
            task_id: task.task_id,
            owner: task.owner,
            tool: task.tool,
            work: task.work,
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: task.created_at_ms,
            last_updated_at_ms: task.created_at_ms,
            ttl_ms: task.ttl_ms,
            poll_interval_ms: task.poll_interval_ms,
            result: None,
            error: None,
            input_requests: Map::new(),
            input_responses: Map::new(),
            used_keys: Vec::new(),
            request_state: None,
            cancel_requested: false,
            attempts: 0,
            retries: task.retries,
            lease: None,
            revision: 0,
        }
    }

    /// Whether its time to live ran out at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.ttl_ms
            .is_some_and(|ttl| self.created_at_ms.saturating_add(ttl) <= now_ms)
    }

    /// Whether `lease` is the task's current, unexpired lease at `now_ms`.
    pub fn holds(&self, lease: &Lease, now_ms: u64) -> bool {
        self.lease.as_ref().is_some_and(|current| {
            current.generation == lease.generation
                && current.token == lease.token
                && current.expires_at_ms > now_ms
        }) && !self.status.is_terminal()
    }

    /// The wire form: the `Task` fields, and with `detailed` what its status
    /// carries (`inputRequests`, `result` or `error`), as `tasks/get` and
    /// `notifications/tasks` send it.
    pub fn to_wire(&self, detailed: bool) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert("taskId".into(), self.task_id.clone().into());
        out.insert("status".into(), self.status.as_str().into());
        if let Some(message) = &self.status_message {
            out.insert("statusMessage".into(), message.clone().into());
        }
        out.insert("createdAt".into(), iso8601(self.created_at_ms).into());
        out.insert(
            "lastUpdatedAt".into(),
            iso8601(self.last_updated_at_ms).into(),
        );
        out.insert("ttlMs".into(), self.ttl_ms.map_or(Value::Null, Value::from));
        if let Some(interval) = self.poll_interval_ms {
            out.insert("pollIntervalMs".into(), interval.into());
        }
        if detailed {
            match self.status {
                TaskStatus::InputRequired => {
                    out.insert(
                        "inputRequests".into(),
                        Value::Object(self.input_requests.clone()),
                    );
                }
                TaskStatus::Completed => {
                    out.insert("result".into(), self.result.clone().unwrap_or_default());
                }
                TaskStatus::Failed => {
                    out.insert("error".into(), self.error.clone().unwrap_or_default());
                }
                TaskStatus::Working | TaskStatus::Cancelled => {}
            }
        }
        out
    }
}

/// The extension's identifier, in capabilities and `_meta`.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// How long a task and its result are kept by default: one hour.
pub const DEFAULT_TTL_MS: u64 = 60 * 60 * 1000;

/// The polling interval suggested to clients by default: 500 ms.
pub const DEFAULT_POLL_INTERVAL_MS: u64 = 500;

/// The error a task gets when the node that ran it stopped and it has no
/// retry left.
pub fn node_stopped_error() -> serde_json::Value {
    serde_json::json!({
        "code": crate::error::code::INTERNAL_ERROR,
        "message": "The node running the task stopped",
    })
}

/// Whether client capabilities (a request's `_meta`
/// `io.modelcontextprotocol/clientCapabilities`) declare the extension.
pub fn declared(client_capabilities: &serde_json::Value) -> bool {
    client_capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some_and(|v| !v.is_null())
}

/// The longest task id a store accepts, in bytes.
pub const MAX_TASK_ID: usize = 256;

/// Most bytes a task's work (the call's arguments and what running it again
/// needs), encoded as JSON, may take in a store.
pub const MAX_TASK_WORK_BYTES: usize = 256 * 1024;

/// Most bytes a task's answers to its input requests may take together.
pub const MAX_TASK_ANSWER_BYTES: usize = 256 * 1024;

/// Most bytes a task's result, its input requests and its handler's state
/// may take; a larger result fails the task with -32603.
pub const MAX_TASK_RESULT_BYTES: usize = 1024 * 1024;

/// A fresh task id: 128 random bits, as 32 lowercase hex digits.
///
/// # Errors
///
/// [`RandomUnavailable`] when the operating system's random source fails:
/// no task may be created then (a guessable id would let others read it).
pub fn new_task_id() -> Result<String, RandomUnavailable> {
    crate::random::hex(16)
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `ms` since the Unix epoch as an ISO 8601 UTC timestamp with milliseconds
/// (`2026-07-28T12:00:00.000Z`).
///
/// ```
/// assert_eq!(snodo::task::iso8601(0), "1970-01-01T00:00:00.000Z");
/// assert_eq!(snodo::task::iso8601(1_785_240_000_123), "2026-07-28T12:00:00.123Z");
/// ```
pub fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}
