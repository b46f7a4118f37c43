//! The `tools/call` pipeline: lookup, header check, authorization, required
//! arguments, validation, the call itself, and the output check — in that
//! order.

use http::HeaderMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::catalog::Catalog;
use super::dispatch::Routed;
use super::registry::ToolEntry;
use super::reply::Failure;
use super::{Server, outcome};
use crate::error::HandlerError;
use crate::protocol::headers;
use crate::schema::{CompiledSchema, ValidationError};
use crate::task::TaskSupport;
use crate::tool::{Arguments, ResultShape, ToolResult};
use crate::{Context, Error};

fn tool_name(target: Option<&str>) -> Result<&str, Failure> {
    match target {
        Some(n) if !n.is_empty() => Ok(n),
        _ => Err(Error::invalid_params("Tool name must be a non-empty string").into()),
    }
}

impl Server {
    /// Admission for `tools/call`: the tool exists, `arguments` is an object,
    /// and over HTTP every `Mcp-Param-*` header matches the body. Returns the
    /// tool, found once here for the whole request.
    ///
    /// `target` and `arguments` are what the decoder read out of `params`;
    /// an `arguments` member left in `params` had another type.
    pub(super) fn admit_call(
        &self,
        catalog: &Catalog,
        target: Option<&str>,
        params: &Map<String, Value>,
        arguments: Option<&Map<String, Value>>,
        http_headers: Option<&HeaderMap>,
    ) -> Result<Arc<ToolEntry>, Failure> {
        let name = tool_name(target)?;
        let Some(entry) = catalog.tools.get(name) else {
            return Err(Error::invalid_params(format!("Unknown tool: {name}")).into());
        };
        let args = match params.get("arguments") {
            None | Some(Value::Null) => arguments,
            Some(_) => return Err(Error::invalid_params("Tool arguments must be an object").into()),
        };
        if let Some(h) = http_headers {
            headers::check_params(h, &entry.headers, args.unwrap_or(&Map::new()))
                .map_err(Failure::bad_request)?;
        }
        Ok(entry.clone())
    }

    /// Runs an admitted call of the tool `entry`.
    pub(super) async fn call(self, entry: Arc<ToolEntry>, cx: Context) -> Result<Routed, Failure> {
        let name = entry.name();
        if let Some(policy) = self.policy() {
            policy
                .check(&cx, super::Item::Tool(name))
                .map_err(Failure::ok)?;
        }
        let args = cx
            .shared_arguments()
            .unwrap_or_else(|| Arc::new(Value::Object(Map::new())));
        // The handler takes the context; this handle on it (no copy) reads
        // the client's capabilities afterwards.
        let asker = cx.clone();
        let allowed = cx.allows_tasks() && self.task_engine().is_some();
        if entry.task == TaskSupport::Required && !allowed {
            return Err(Failure::ok(super::tasks::engine::missing_extension()));
        }
        let as_task = allowed && entry.task != TaskSupport::Never;
        let entry = &*entry;
        let result = match admit(entry, &args)? {
            Some(refusal) => refusal,
            None if as_task => {
                let arguments = Arguments::shared(args);
                let first = entry.tool.before_task_boxed(&arguments, &cx);
                match outcome::run(first, "Tool raised an exception").await? {
                    Ok(Some(request)) => {
                        return outcome::input_required(&request, asker.client_capabilities())
                            .map(Routed::Object);
                    }
                    Ok(None) => {
                        // Boxed: a plain call's future need not hold a
                        // task start's.
                        let task = Box::pin(self.start_task(name, entry.task_retries, &cx)).await;
                        return task.map(Routed::Object);
                    }
                    Err(failure) => tool_failure(failure)?,
                }
            }
            None => invoke(entry, Arguments::shared(args), cx).await?,
        };
        if let Some(request) = result.as_input_required() {
            return outcome::input_required(request, asker.client_capabilities())
                .map(Routed::Object);
        }
        check_output(entry, &result)?;
        Ok(Routed::Tool(result))
    }
}

/// How a task's run of a tool ended: a result (the wire `CallToolResult`),
/// or input requests to wait on.
pub(super) enum TaskOutcome {
    Done(Value),
    Input {
        requests: Map<String, Value>,
        state: Option<String>,
    },
}

/// A task's run of a tool: the call and the output check of an inline call
/// (its arguments were admitted when the task was created); a JSON-RPC error
/// fails the task.
pub(super) async fn run_task_call(
    entry: Arc<ToolEntry>,
    args: Arguments,
    cx: Context,
    caps: Value,
) -> Result<TaskOutcome, Error> {
    let result = invoke(&entry, args, cx).await.map_err(|f| f.error)?;
    if let Some(request) = result.as_input_required() {
        crate::mrtr::check_input_required(request, &caps)?;
        return Ok(TaskOutcome::Input {
            requests: request.requests().clone(),
            state: request.request_state().map(str::to_string),
        });
    }
    check_output(&entry, &result).map_err(|f| f.error)?;
    match result.to_wire() {
        Value::Object(mut map) => {
            map.entry("resultType").or_insert_with(|| "complete".into());
            Ok(TaskOutcome::Done(Value::Object(map)))
        }
        _ => Err(Error::internal("Tool returned an invalid result")),
    }
}

/// Required arguments, then the installed validator. `Some` is the `isError`
/// result that refuses the call.
fn admit(entry: &ToolEntry, instance: &Value) -> Result<Option<ToolResult>, Failure> {
    let missing: Vec<&str> = entry
        .required
        .iter()
        .filter(|name| instance.get(name.as_str()).is_none())
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Ok(Some(ToolResult::error(format!(
            "Missing required arguments: {}",
            missing.join(", ")
        ))));
    }
    match validate(entry.input.as_ref(), instance) {
        Ok(()) => Ok(None),
        Err(ValidationError::Invalid(v)) => {
            Ok(Some(ToolResult::error(format!("Invalid arguments {v}"))))
        }
        Err(ValidationError::Failed(reason)) => Err(Error::internal("Schema validator failed")
            .with_cause(reason)
            .into()),
    }
}

/// Runs a validator, turning a panic into a validator failure.
fn validate(schema: &dyn CompiledSchema, instance: &Value) -> Result<(), ValidationError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| schema.validate(instance)))
        .unwrap_or_else(|_| Err(ValidationError::Failed("validator panicked".into())))
}

/// Calls the tool and normalizes its outcome: a protocol error fails the
/// request, the tool's own failure becomes an `isError` result, a panic is
/// -32603.
async fn invoke(entry: &ToolEntry, args: Arguments, cx: Context) -> Result<ToolResult, Failure> {
    match outcome::run(entry.tool.call_boxed(args, cx), "Tool raised an exception").await? {
        Ok(result) => Ok(result),
        Err(failure) => tool_failure(failure),
    }
}

/// A tool's failure in the shape its type says.
fn tool_failure(failure: HandlerError) -> Result<ToolResult, Failure> {
    match failure.into_tool_outcome() {
        Ok(message) => Ok(ToolResult::error(message)),
        Err(error) => Err(Failure::ok(error)),
    }
}

/// A tool with an output schema must return conforming structured content,
/// unless it returns an error or input-required result.
fn check_output(entry: &ToolEntry, result: &ToolResult) -> Result<(), Failure> {
    let Some(schema) = &entry.output else {
        return Ok(());
    };
    match result.shape() {
        ResultShape::Error | ResultShape::InputRequired => Ok(()),
        ResultShape::Unstructured => {
            Err(Error::internal("Tool omitted structured output required by output schema").into())
        }
        ResultShape::Structured => {
            let value = result.structured_content().unwrap_or(&Value::Null);
            match validate(schema.as_ref(), value) {
                Ok(()) => Ok(()),
                Err(ValidationError::Invalid(v)) => {
                    Err(Error::internal("Tool output failed schema validation")
                        .with_cause(v.to_string())
                        .into())
                }
                Err(ValidationError::Failed(reason)) => {
                    Err(Error::internal("Schema validator failed")
                        .with_cause(reason)
                        .into())
                }
            }
        }
    }
}
