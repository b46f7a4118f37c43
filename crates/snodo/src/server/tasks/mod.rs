//! The Tasks extension in the server: when a `tools/call` becomes a task,
//! and the `tasks/get`, `tasks/update` and `tasks/cancel` methods.
//!
//! Admission has already checked that the server runs tasks (-32601
//! otherwise) and that the request declared the extension (-32021
//! otherwise), in that order, before any task is looked up.

pub(crate) mod engine;
mod runner;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};

use super::Server;
use super::reply::Failure;
use crate::task::{Answered, Cancelled, NewTask, StoreError, TaskRecord};
use crate::{Context, Error, RandomUnavailable};

use engine::{Engine, owner_of, share_of};
pub(crate) use runner::Work;

fn store_failure(e: StoreError) -> Failure {
    let error = match &e {
        StoreError::Full { limit } => {
            crate::telemetry::refusals::note("tasks", &e);
            return Failure::ok(
                Error::internal("Too many tasks; retry later")
                    .with_data(json!({"retryable": true, "limit": limit})),
            );
        }
        StoreError::Invalid(why) => {
            return Error::invalid_params(format!("Invalid task: {why}")).into();
        }
        StoreError::Random(e) => return no_random(*e),
        _ => Error::internal("The task store is unavailable").with_data(json!({"retryable": true})),
    };
    Failure::ok(error.with_cause(e.to_string()))
}

/// A task refused because the operating system's random source failed:
/// -32603 naming the cause.
fn no_random(e: RandomUnavailable) -> Failure {
    Failure::ok(Error::internal(format!("The task cannot be created: {e}")))
}

fn task_id(target: Option<&str>) -> Result<&str, Failure> {
    match target {
        Some(id) if !id.is_empty() => Ok(id),
        _ => Err(Error::invalid_params("taskId must be a non-empty string").into()),
    }
}

/// Whether `answer` is shaped as the client's result for the input request
/// `asked`; `Err` names what was asked. Checked before the answer is taken,
/// so that a malformed answer is refused and the question stays open.
fn check_answer(asked: &Value, answer: &Value) -> Result<(), String> {
    let method = asked.get("method").and_then(Value::as_str).unwrap_or("");
    let fits = match method {
        "elicitation/create" => crate::context::ElicitResponse::from_value(answer).is_some(),
        "sampling/createMessage" => {
            answer.get("role").is_some_and(Value::is_string) && answer.get("content").is_some()
        }
        "roots/list" => answer.get("roots").is_some_and(Value::is_array),
        _ => answer.is_object(),
    };
    if fits {
        Ok(())
    } else {
        Err(format!("{method:?} (see the input request)"))
    }
}

fn not_found() -> Failure {
    Error::invalid_params("Task not found").into()
}

impl Server {
    pub(crate) fn task_engine(&self) -> Option<&Arc<Engine>> {
        self.inner.tasks.as_ref()
    }

    /// Starts the node's background work once, when a Tokio runtime is there
    /// to run it: the task sweeper (recovery of tasks whose node stopped,
    /// purging of expired ones) and the watcher of cancellations.
    ///
    /// [`ServerBuilder::build`](super::ServerBuilder::build) calls it, and so
    /// does every transport as it starts serving: a node recovers the tasks
    /// of a stopped node before its first request. A server built outside a
    /// runtime and driven through [`Server::handle`] or
    /// [`Server::handle_legacy`] starts it on its first request, and so does
    /// a server whose runtime ended (the sweeper ends with it).
    pub(crate) fn start_background(&self) {
        if let Some(engine) = self.task_engine()
            && !engine.sweeping.load(Ordering::Relaxed)
            && tokio::runtime::Handle::try_current().is_ok()
            && !engine.sweeping.swap(true, Ordering::AcqRel)
        {
            runner::spawn_sweeper(self);
            runner::spawn_watcher(self);
        }
    }

    /// Stores a task for a `tools/call` and starts it; the answer is the
    /// `CreateTaskResult`, sent only once `tasks/get` can read the task.
    pub(super) async fn start_task(
        &self,
        tool: &str,
        retries: u32,
        cx: &Context,
    ) -> Result<Map<String, Value>, Failure> {
        let Some(engine) = self.task_engine() else {
            return Err(Error::internal("tasks are not enabled").into());
        };
        let options = &engine.options;
        let work = Work::from_request(cx);
        let new = NewTask::new(owner_of(cx), tool, work.to_value())
            .map_err(no_random)?
            .ttl_ms(options.ttl.map(|t| t.as_millis() as u64))
            .poll_interval_ms(Some(options.poll_interval.as_millis() as u64))
            .retries(retries);
        let share = share_of(cx);
        let expires = new
            .ttl_ms
            .map_or(u64::MAX, |ttl| new.created_at_ms.saturating_add(ttl));
        if let Err(over) = engine.reserve(&share, new.created_at_ms, expires) {
            crate::telemetry::refusals::note(
                "tasks",
                &format_args!("too many tasks for one client (at most {} each)", over.max),
            );
            let error = Error::internal("Too many tasks for one client; retry later").with_data(
                json!({"retryable": true, "limit": over.max, "retryAfterMs": over.retry_after_ms}),
            );
            return Err(Failure::ok(error));
        }
        let lease = match options
            .store
            .create(new.clone(), &engine.node, options.lease)
            .await
        {
            Ok(lease) => lease,
            Err(e) => {
                engine.unreserve(&share, expires);
                return Err(store_failure(e));
            }
        };
        let record = TaskRecord::from_new(new);
        let mut out = record.to_wire(false);
        out.insert("resultType".into(), "task".into());
        let mut claimed = record;
        claimed.attempts = 1;
        runner::spawn_worker(self.clone(), claimed, lease);
        Ok(out)
    }

    /// The task `id`, when it exists and belongs to the caller.
    async fn owned_task(
        &self,
        engine: &Engine,
        id: &str,
        cx: &Context,
    ) -> Result<TaskRecord, Failure> {
        match engine.options.store.get(id).await.map_err(store_failure)? {
            Some(record) if record.owner == owner_of(cx) => Ok(record),
            _ => Err(not_found()),
        }
    }

    /// `tasks/get`: the detailed task.
    pub(super) async fn tasks_get(
        &self,
        target: Option<&str>,
        cx: &Context,
    ) -> Result<Map<String, Value>, Failure> {
        let engine = self.task_engine().ok_or_else(not_found)?;
        let record = self.owned_task(engine, task_id(target)?, cx).await?;
        Ok(record.to_wire(true))
    }

    /// `tasks/update`: answers to the task's input requests; an empty ack.
    pub(super) async fn tasks_update(
        &self,
        target: Option<&str>,
        params: &Map<String, Value>,
        cx: &Context,
    ) -> Result<Map<String, Value>, Failure> {
        let engine = self.task_engine().ok_or_else(not_found)?;
        let id = task_id(target)?;
        let responses = match params.get("inputResponses") {
            Some(Value::Object(map)) => map.clone(),
            _ => return Err(Error::invalid_params("inputResponses must be an object").into()),
        };
        let record = self.owned_task(engine, id, cx).await?;
        for (key, answer) in &responses {
            if let Some(asked) = record.input_requests.get(key) {
                check_answer(asked, answer).map_err(|why| {
                    Failure::from(Error::invalid_params(format!(
                        "inputResponses.{key} is not an answer to {why}"
                    )))
                })?;
            }
        }
        match engine
            .options
            .store
            .answer(id, responses)
            .await
            .map_err(store_failure)?
        {
            Answered::NotFound => Err(not_found()),
            Answered::TooLarge { limit } => Err(Error::invalid_params(format!(
                "inputResponses would take the task's answers past {limit} bytes"
            ))
            .into()),
            Answered::Accepted { ready } => {
                if ready {
                    runner::resume(self.clone(), id.to_string());
                }
                Ok(Map::new())
            }
        }
    }

    /// `tasks/cancel`: asks the task to stop; an empty ack, also for a task
    /// that had ended.
    pub(super) async fn tasks_cancel(
        &self,
        target: Option<&str>,
        cx: &Context,
    ) -> Result<Map<String, Value>, Failure> {
        let engine = self.task_engine().ok_or_else(not_found)?;
        let id = task_id(target)?;
        self.owned_task(engine, id, cx).await?;
        match engine
            .options
            .store
            .cancel(id)
            .await
            .map_err(store_failure)?
        {
            Cancelled::NotFound => Err(not_found()),
            Cancelled::Requested => {
                if let Some(signal) = engine.running().get(id) {
                    signal.cancel();
                }
                Ok(Map::new())
            }
            Cancelled::AlreadyTerminal | Cancelled::Now => Ok(Map::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::Value;

    use crate::task::{MemoryTaskStore, TaskOptions, TaskStore, TaskSupport};
    use crate::tool::from_fn;
    use crate::{Dispatched, Principal, Server, ToolResult, TransportInfo};

    const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"only_task","arguments":{},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}"#;

    fn server(store: &Arc<MemoryTaskStore>) -> Server {
        Server::builder("tasks", "1.0.0")
            .tool(
                from_fn("only_task", |_, _| async { Ok(ToolResult::text("ran")) })
                    .task_support(TaskSupport::Required),
            )
            .tasks(TaskOptions::shared(store.clone() as Arc<dyn TaskStore>))
            .build()
            .unwrap()
    }

    fn alice() -> TransportInfo {
        TransportInfo {
            principal: Some(Principal::new("alice")),
            ..TransportInfo::default()
        }
    }

    async fn call(server: &Server) -> Value {
        match server.dispatch(CALL.as_bytes(), alice()).await {
            Dispatched::Reply(reply) => serde_json::from_slice(&reply.body).unwrap(),
            other => panic!("one reply, not {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_task_that_gets_no_random_id_or_lease_is_refused_and_leaves_nothing() {
        let store = Arc::new(MemoryTaskStore::new());
        let server = server(&store);
        let engine = server.task_engine().unwrap().clone();
        let share = alice().share();
        // No id (the first draw fails), then no lease token (the second).
        for draws_before_failing in [0, 1] {
            let answer = {
                let _off = crate::random::failing_after(draws_before_failing);
                call(&server).await
            };
            assert_eq!(answer["error"]["code"], -32603, "{answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains("random source failed"), "{message}");
            assert!(store.is_empty(), "no task is stored");
            assert_eq!(engine.held(&share), 0, "the share's slot is given back");
        }
        let answer = call(&server).await;
        assert_eq!(answer["result"]["resultType"], "task", "{answer}");
        assert_eq!((store.len(), engine.held(&share)), (1, 1));
    }

    #[test]
    fn a_node_with_no_random_id_is_not_built() {
        let store = Arc::new(MemoryTaskStore::new());
        let refused = {
            let _off = crate::random::failing();
            Server::builder("tasks", "1.0.0")
                .tasks(TaskOptions::shared(store.clone() as Arc<dyn TaskStore>))
                .build()
                .unwrap_err()
        };
        assert!(matches!(refused, crate::BuildError::Random(_)), "{refused}");
        // A node named by its operator draws nothing.
        let _off = crate::random::failing();
        assert!(
            Server::builder("tasks", "1.0.0")
                .tasks(TaskOptions::shared(store as Arc<dyn TaskStore>).node_id("node-1"))
                .build()
                .is_ok()
        );
    }
}
