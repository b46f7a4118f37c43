//! The Tasks extension in the client: calling a tool as a task, reading,
//! answering and cancelling tasks, and waiting for a task's result.

use super::error::Repr;
use std::collections::HashSet;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Client, ClientError, ProtocolErrorKind, RequestOptions};
use crate::Error;
use crate::task::TaskStatus;
use crate::tool::ToolResult;

/// A task as `tasks/get` (or a `CreateTaskResult`) describes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Task {
    /// The task id.
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// A message for people, if the server gave one.
    #[serde(default)]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601).
    pub created_at: String,
    /// When it last changed (ISO 8601).
    pub last_updated_at: String,
    /// How long the server keeps it, from creation (`None`: unlimited).
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// How often the server suggests polling.
    #[serde(default)]
    pub poll_interval_ms: Option<u64>,
    /// What it waits on (`input_required`), by key.
    #[serde(default)]
    pub input_requests: Map<String, Value>,
    /// Its result (`completed`).
    #[serde(default)]
    pub result: Option<ToolResult>,
    /// Its JSON-RPC error (`failed`).
    #[serde(default)]
    pub error: Option<Value>,
}

impl Task {
    fn from_wire(value: Value) -> Result<Self, ClientError> {
        serde_json::from_value(value).map_err(|source| ClientError::decode("task", source))
    }
}

/// What calling a tool as a task gave.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TaskCall {
    /// The server answered inline.
    Done(ToolResult),
    /// The server made a task: wait for it with [`Client::wait_task`].
    Task(Box<Task>),
}

/// How [`Client::wait_task`] polls.
#[derive(Debug, Clone)]
pub struct TaskWait {
    first: Duration,
    max: Duration,
    limit: Option<Duration>,
}

impl Default for TaskWait {
    fn default() -> Self {
        Self {
            first: Duration::from_millis(500),
            max: Duration::from_secs(5),
            limit: None,
        }
    }
}

impl TaskWait {
    /// Polls first after the server's `pollIntervalMs` (500 ms when it gives
    /// none), then half as long again each time nothing changed, up to 5 s;
    /// a change starts over.
    pub fn new() -> Self {
        Self::default()
    }

    /// The longest wait between two polls.
    pub fn max_interval(mut self, max: Duration) -> Self {
        self.max = max.max(Duration::from_millis(1));
        self
    }

    /// Gives up (a [`ClientErrorKind::Timeout`](super::ClientErrorKind::Timeout) error) after this long.
    pub fn limit(mut self, limit: Duration) -> Self {
        self.limit = Some(limit);
        self
    }
}

fn task_params(task_id: &str) -> Value {
    json!({ "taskId": task_id })
}

impl Client {
    /// Calls a tool, allowing the server to answer with a task (the request
    /// declares the Tasks extension). Input asked for before the task exists
    /// is answered through the client's handlers, as for any call.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
        opts: RequestOptions,
    ) -> Result<TaskCall, ClientError> {
        let mut params = Map::new();
        params.insert("name".into(), name.into());
        if let Some(args) = super::handle::object_or_null(arguments, "tool arguments")? {
            params.insert("arguments".into(), Value::Object(args));
        }
        let result = self
            .request("tools/call", Value::Object(params))
            .options(opts.allow_tasks(true))
            .await?;
        if result.get("resultType").and_then(Value::as_str) == Some("task") {
            return Ok(TaskCall::Task(Box::new(Task::from_wire(result)?)));
        }
        super::handle::tool_result(name, result).map(TaskCall::Done)
    }

    /// `tasks/get`: the task as it is now.
    pub async fn get_task(&self, task_id: &str) -> Result<Task, ClientError> {
        let opts = RequestOptions::new().allow_tasks(true);
        let value = self
            .request("tasks/get", task_params(task_id))
            .options(opts)
            .await?;
        Task::from_wire(value)
    }

    /// `tasks/update`: answers to the task's input requests, by key.
    pub async fn update_task(
        &self,
        task_id: &str,
        responses: Map<String, Value>,
    ) -> Result<(), ClientError> {
        let opts = RequestOptions::new().allow_tasks(true);
        let params = json!({"taskId": task_id, "inputResponses": responses});
        self.request("tasks/update", params).options(opts).await?;
        Ok(())
    }

    /// `tasks/cancel`: asks the server to stop the task (also fine for a
    /// task that has ended).
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), ClientError> {
        let opts = RequestOptions::new().allow_tasks(true);
        self.request("tasks/cancel", task_params(task_id))
            .options(opts)
            .await?;
        Ok(())
    }

    /// Polls a task until it ends and returns its result: `failed` is the
    /// task's JSON-RPC error, `cancelled` is a [`ClientErrorKind::TaskCancelled`](super::ClientErrorKind::TaskCancelled) error.
    /// Input the task asks for is answered through the client's handlers
    /// (each key once); input no handler can give is
    /// a [`ClientErrorKind::TaskInput`](super::ClientErrorKind::TaskInput) error. `on_change` sees the task each time its
    /// status or message changes.
    pub async fn wait_task(
        &self,
        task_id: &str,
        wait: TaskWait,
        mut on_change: impl FnMut(&Task) + Send,
    ) -> Result<ToolResult, ClientError> {
        let started = tokio::time::Instant::now();
        let mut answered: HashSet<String> = HashSet::new();
        let mut last: Option<(TaskStatus, Option<String>)> = None;
        let mut pause = wait.first;
        loop {
            let task = self.get_task(task_id).await?;
            let seen = (task.status, task.status_message.clone());
            if last.as_ref() != Some(&seen) {
                on_change(&task);
                pause = task
                    .poll_interval_ms
                    .map_or(wait.first, Duration::from_millis)
                    .clamp(Duration::from_millis(1), wait.max);
                last = Some(seen);
            } else {
                pause = (pause + pause / 2).min(wait.max);
            }
            match task.status {
                TaskStatus::Completed => {
                    return task.result.ok_or_else(|| {
                        ClientError::protocol(
                            ProtocolErrorKind::MalformedResult,
                            "a completed task without a result",
                        )
                    });
                }
                TaskStatus::Failed => {
                    let error = task.error.unwrap_or_default();
                    return Err(ClientError::rpc(Error::from_json(&error), None));
                }
                TaskStatus::Cancelled => {
                    return Err(Repr::TaskCancelled {
                        task_id: task.task_id,
                    }
                    .into());
                }
                TaskStatus::InputRequired => {
                    let fresh: Map<String, Value> = task
                        .input_requests
                        .into_iter()
                        .filter(|(key, _)| !answered.contains(key))
                        .collect();
                    if !fresh.is_empty() {
                        let handlers = &self.shared.config.handlers;
                        let Some(answers) = super::mrtr::answer_all(handlers, &fresh).await? else {
                            return Err(Repr::TaskInput {
                                task_id: task.task_id,
                                requests: fresh,
                            }
                            .into());
                        };
                        answered.extend(answers.keys().cloned());
                        self.update_task(task_id, answers).await?;
                        continue;
                    }
                }
                TaskStatus::Working => {}
            }
            if let Some(limit) = wait.limit
                && started.elapsed() + pause > limit
            {
                return Err(ClientError::timeout(
                    super::TimeoutKind::Request,
                    started.elapsed(),
                ));
            }
            tokio::time::sleep(pause).await;
        }
    }
}
