//! Running tasks: a worker per task this node claimed (heartbeats, the
//! cancellation grace, the time limit), resuming a task whose input was
//! answered, and the sweeper that recovers tasks whose node stopped.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::engine::Engine;
use crate::context::{CancelSignal, RequestInfo, TransportInfo};
use crate::server::{Inner, Server};
use crate::task::{Lease, Renewal, Settle, TaskRecord, now_ms};
use crate::tool::Arguments;
use crate::wire::LazyObject;
use crate::{Context, Error, Principal};

/// What a task needs to run again, kept in its record's `work`: the
/// arguments, what the client declared, the principal, and the answers of
/// the rounds before the task existed.
pub(crate) struct Work {
    arguments: Value,
    protocol_version: String,
    client_capabilities: Value,
    client_info: Option<Value>,
    input_responses: Map<String, Value>,
    principal: Option<Principal>,
}

impl Work {
    pub(crate) fn from_request(cx: &Context) -> Self {
        Self {
            arguments: cx
                .shared_arguments()
                .map_or_else(|| Value::Object(Map::new()), |a| (*a).clone()),
            protocol_version: cx.protocol_version().to_string(),
            client_capabilities: cx.client_capabilities().clone(),
            client_info: cx.client_info().cloned(),
            input_responses: cx.input_responses().cloned().unwrap_or_default(),
            principal: cx.principal().cloned(),
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        let mut out = Map::new();
        out.insert("arguments".into(), self.arguments.clone());
        out.insert(
            "protocolVersion".into(),
            self.protocol_version.clone().into(),
        );
        out.insert(
            "clientCapabilities".into(),
            self.client_capabilities.clone(),
        );
        if let Some(info) = &self.client_info {
            out.insert("clientInfo".into(), info.clone());
        }
        if !self.input_responses.is_empty() {
            out.insert(
                "inputResponses".into(),
                Value::Object(self.input_responses.clone()),
            );
        }
        if let Some(p) = &self.principal {
            out.insert(
                "principal".into(),
                json!({
                    "subject": p.subject,
                    "claims": p.claims,
                    "clientId": p.client_id,
                    "scopes": p.scopes,
                    "expiresAt": p.expires_at,
                    "issuer": p.issuer,
                }),
            );
        }
        Value::Object(out)
    }

    fn from_value(work: &Value) -> Self {
        let text = |key: &str| work.get(key).and_then(Value::as_str).map(str::to_string);
        let principal = work.get("principal").filter(|p| p.is_object()).map(|p| {
            let mut principal = Principal::new(p["subject"].as_str().unwrap_or_default())
                .with_claims(p["claims"].clone());
            principal.client_id = p["clientId"].as_str().map(str::to_string);
            principal.scopes = p["scopes"]
                .as_array()
                .map(|s| {
                    s.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            principal.expires_at = p["expiresAt"].as_u64();
            principal.issuer = p["issuer"].as_str().map(str::to_string);
            principal
        });
        Self {
            arguments: work
                .get("arguments")
                .filter(|a| a.is_object())
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new())),
            protocol_version: text("protocolVersion")
                .unwrap_or_else(|| crate::protocol::LATEST_VERSION.into()),
            client_capabilities: work
                .get("clientCapabilities")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new())),
            client_info: work.get("clientInfo").cloned(),
            input_responses: work
                .get("inputResponses")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            principal,
        }
    }

    /// The handler's context: no request, no transport, the task's own
    /// cancellation signal, every answer so far.
    fn context(
        &self,
        server: &Server,
        record: &TaskRecord,
        link: crate::context::TaskLink,
        cancel: CancelSignal,
    ) -> Context {
        let mut responses = self.input_responses.clone();
        responses.extend(record.input_responses.clone());
        Context::new(
            RequestInfo {
                protocol_version: self.protocol_version.clone(),
                client_info: self.client_info.clone().map(LazyObject::from),
                client_capabilities: self.client_capabilities.clone().into(),
                request_id: None,
                method: std::borrow::Cow::Borrowed("tools/call"),
                meta: Map::new(),
                transport: TransportInfo {
                    principal: self.principal.clone(),
                    ..TransportInfo::default()
                },
                sink: None,
                input_responses: (!responses.is_empty()).then_some(responses),
                request_state: record.request_state.clone(),
                target: Some(record.tool.clone()),
                salient_params: Map::new(),
                arguments: Some(Arc::new(self.arguments.clone())),
                events: server.inner.events.clone(),
                state: server.inner.state.clone(),
                task: Some(Arc::new(link)),
            },
            cancel,
        )
    }
}

/// Runs a claimed task on this node.
pub(super) fn spawn_worker(server: Server, record: TaskRecord, lease: Lease) {
    let Some(engine) = server.task_engine().cloned() else {
        return;
    };
    let id = record.task_id.clone();
    let signal = CancelSignal::new();
    if record.cancel_requested {
        signal.cancel();
    }
    // Registered before the worker first runs, so that a cancellation that
    // comes right after the create reaches it.
    engine.running().insert(id.clone(), signal.clone());
    tokio::spawn(async move {
        let running = crate::telemetry::metrics::Gauge::Tasks.hold();
        let outcome = execute(&server, &engine, &record, &lease, &signal).await;
        engine.running().remove(&id);
        drop(running);
        if let Some(outcome) = outcome {
            crate::telemetry::metrics::task_settled(match &outcome {
                Settle::Completed(_) => "completed",
                Settle::Failed(_) => "failed",
                Settle::InputRequired { .. } => "input_required",
                Settle::Cancelled => "cancelled",
            });
            let waits = matches!(outcome, Settle::InputRequired { .. });
            settle(&engine, &lease, outcome).await;
            if waits {
                watch_input_wait(&server, &engine, id);
            }
        }
    });
}

/// Fails a task still waiting for input once it has waited
/// [`TaskOptions::input_wait`](crate::task::TaskOptions::input_wait) since
/// its last change (an answer to some of its requests starts the wait
/// again).
fn watch_input_wait(server: &Server, engine: &Arc<Engine>, id: String) {
    let weak: Weak<Inner> = Arc::downgrade(&server.inner);
    let wait = engine.options.input_wait;
    let wait = engine.options.ttl.map_or(wait, |ttl| wait.min(ttl));
    tokio::spawn(async move {
        let mut sleep = wait;
        loop {
            tokio::time::sleep(sleep).await;
            let Some(inner) = weak.upgrade() else { return };
            let Some(engine) = (Server { inner }).task_engine().cloned() else {
                return;
            };
            let store = &engine.options.store;
            let Ok(Some(record)) = store.get(&id).await else {
                return;
            };
            if record.status != crate::task::TaskStatus::InputRequired {
                return;
            }
            let waited = now_ms().saturating_sub(record.last_updated_at_ms);
            let wait_ms = wait.as_millis() as u64;
            if waited < wait_ms {
                sleep = Duration::from_millis(wait_ms - waited);
                continue;
            }
            let error = Error::internal(format!(
                "No answer to the task's input requests within {} s",
                wait.as_secs()
            ));
            let _ = store.fail(&id, error.to_json()).await;
            return;
        }
    });
}

/// Records an outcome, retrying a failing store a few times (a write refused
/// for a lost lease is final).
async fn settle(engine: &Engine, lease: &Lease, outcome: Settle) {
    let mut wait = Duration::from_millis(50);
    for _ in 0..5 {
        match engine.options.store.settle(lease, outcome.clone()).await {
            Ok(_) => return,
            Err(_) => {
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        }
    }
}

/// Claims a task whose input was answered, and runs it here.
pub(super) fn resume(server: Server, task_id: String) {
    tokio::spawn(async move {
        let Some(engine) = server.task_engine().cloned() else {
            return;
        };
        let options = &engine.options;
        if let Ok(Some((record, lease))) = options
            .store
            .claim(&task_id, &engine.node, options.lease)
            .await
        {
            spawn_worker(server.clone(), record, lease);
        }
    });
}

/// Orphaned tasks claimed at once.
const ORPHAN_BATCH: usize = 256;

/// Marks the background work stopped when the sweeper ends or is dropped
/// with its runtime (a server built inside one runtime and served on
/// another), so that the next start runs it again.
struct Sweeping(Weak<Engine>);

impl Drop for Sweeping {
    fn drop(&mut self) {
        if let Some(engine) = self.0.upgrade() {
            engine.sweeping.store(false, Ordering::Release);
        }
    }
}

/// Recovers orphaned tasks and purges expired ones every
/// `sweep_every`, for as long as the server lives.
pub(super) fn spawn_sweeper(server: &Server) {
    let weak: Weak<Inner> = Arc::downgrade(&server.inner);
    let every = server
        .task_engine()
        .map_or(Duration::from_secs(1), |e| e.options.sweep_every);
    let sweeping = Sweeping(server.task_engine().map_or_else(Weak::new, Arc::downgrade));
    tokio::spawn(async move {
        let _sweeping = sweeping;
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(inner) = weak.upgrade() else { return };
            let server = Server { inner };
            let Some(engine) = server.task_engine().cloned() else {
                return;
            };
            let options = &engine.options;
            // In batches, until none is left or a third of a lease has gone
            // by: a node that takes over thousands of tasks catches up
            // within the lease instead of 16 a second.
            let until = tokio::time::Instant::now() + options.lease / 3;
            while let Ok(claimed) = options
                .store
                .claim_orphans(&engine.node, options.lease, ORPHAN_BATCH)
                .await
            {
                let more = claimed.len() == ORPHAN_BATCH;
                for (record, lease) in claimed {
                    spawn_worker(server.clone(), record, lease);
                }
                if !more || tokio::time::Instant::now() >= until {
                    break;
                }
            }
            let _ = options.store.purge(now_ms(), 500).await;
        }
    });
}

/// Follows the store's changes, when it announces them: a listener of a
/// changed task gets its detailed form, and a task cancelled through another
/// node stops here at once.
pub(super) fn spawn_watcher(server: &Server) {
    let Some(mut changes) = server.task_engine().and_then(|e| e.options.store.changes()) else {
        return;
    };
    let weak: Weak<Inner> = Arc::downgrade(&server.inner);
    tokio::spawn(async move {
        loop {
            let changed = changes.recv().await;
            let Some(inner) = weak.upgrade() else { return };
            let server = Server { inner };
            let Some(engine) = server.task_engine().cloned() else {
                return;
            };
            let ids: Vec<String> = match changed {
                Ok(id) if !id.is_empty() => vec![id],
                // Changes may have been missed: look at every local task.
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    engine.running().keys().cloned().collect()
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            for id in ids {
                let Ok(Some(record)) = engine.options.store.get(&id).await else {
                    continue;
                };
                if record.cancel_requested
                    && let Some(signal) = engine.running().get(&id)
                {
                    signal.cancel();
                }
                server
                    .inner
                    .events
                    .publish(crate::events::Event::TaskChanged {
                        owner: record.owner.as_str().into(),
                        task: Arc::new(record.to_wire(true)),
                    });
            }
        }
    });
}

fn failed(error: &Error) -> Settle {
    Settle::Failed(error.to_json())
}

/// Runs the handler under the lease: heartbeats renew it (a lost lease stops
/// the run without a write), a cancellation gives the handler
/// `cancel_grace` to return, and past `max_runtime` the task fails.
/// `None`: nothing to record.
async fn execute(
    server: &Server,
    engine: &Engine,
    record: &TaskRecord,
    lease: &Lease,
    signal: &CancelSignal,
) -> Option<Settle> {
    let options = &engine.options;
    let catalog = server.catalog();
    let Some(entry) = catalog.tools.get(&record.tool).cloned() else {
        return Some(failed(&Error::invalid_params(format!(
            "Unknown tool: {}",
            record.tool
        ))));
    };
    let work = Work::from_value(&record.work);
    let link = crate::context::TaskLink::new(options.store.clone(), lease.clone());
    let cx = work.context(server, record, link, signal.clone());
    let args = Arguments::shared(Arc::new(work.arguments.clone()));
    let call =
        crate::server::call::run_task_call(entry, args, cx, work.client_capabilities.clone());
    tokio::pin!(call);
    let mut beat = tokio::time::interval((options.lease / 3).max(Duration::from_millis(10)));
    beat.tick().await;
    let deadline = tokio::time::sleep(options.max_runtime);
    tokio::pin!(deadline);
    let mut grace: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        tokio::select! {
            out = &mut call => {
                if grace.is_some() || signal.is_cancelled() {
                    return Some(Settle::Cancelled);
                }
                return Some(match out {
                    Ok(crate::server::call::TaskOutcome::Done(result)) => Settle::Completed(result),
                    Ok(crate::server::call::TaskOutcome::Input { requests, state }) => {
                        match requests.keys().find(|k| record.used_keys.contains(k) || work.input_responses.contains_key(*k)) {
                            Some(key) => failed(&Error::internal("Input request key reused")
                                .with_cause(format!("the key {key:?} was issued before in this task"))),
                            None => Settle::InputRequired { requests, state },
                        }
                    }
                    Err(error) => failed(&error),
                });
            }
            _ = beat.tick() => match options.store.renew(lease, options.lease).await {
                Ok(Renewal::Lost) => {
                    signal.cancel();
                    return None;
                }
                Ok(Renewal::Held { cancel_requested: true }) if grace.is_none() => {
                    signal.cancel();
                    grace = Some(Box::pin(tokio::time::sleep(options.cancel_grace)));
                }
                _ => {}
            },
            () = signal.cancelled(), if grace.is_none() => {
                grace = Some(Box::pin(tokio::time::sleep(options.cancel_grace)));
            }
            () = async { grace.as_mut().expect("armed").await }, if grace.is_some() => {
                return Some(Settle::Cancelled);
            }
            () = &mut deadline => {
                signal.cancel();
                return Some(failed(&Error::internal("The task ran past its time limit")));
            }
        }
    }
}
