//! The `Tool` trait and the definition a server publishes for a tool.

use std::future::Future;

use serde::Serialize;
use serde_json::Value;

use super::{Arguments, CallResult};
use crate::Context;
use crate::error::HandlerError;
use crate::future::BoxFuture;
use crate::mrtr::InputRequired;
use crate::task::TaskSupport;

/// A tool: metadata as plain JSON, and an async call.
pub trait Tool: Send + Sync + 'static {
    /// The tool's name: 1 to 128 characters of `A-Z a-z 0-9 _ - .`, unique in a server.
    fn name(&self) -> &str;

    /// A human-readable title.
    fn title(&self) -> Option<&str> {
        None
    }

    /// What the tool does, for the model.
    fn description(&self) -> Option<&str> {
        None
    }

    /// The input JSON Schema; its root must be `{"type": "object", ...}`.
    /// Published verbatim in `tools/list`.
    fn input_schema(&self) -> Value;

    /// The output JSON Schema, if the tool returns structured content.
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// The input schema as JSON text, in the order it was written.
    ///
    /// A `serde_json::Value` keeps object members sorted by key (unless the
    /// application turns on serde_json's `preserve_order`), so
    /// [`input_schema`](Tool::input_schema) forgets the order a schema was
    /// written in. When this returns text, `tools/list` publishes it instead;
    /// [`ServerBuilder::build`](crate::ServerBuilder::build) refuses text that
    /// does not parse to the same JSON as `input_schema`. `#[snodo::tool]`
    /// returns the schema written in its attribute.
    fn input_schema_text(&self) -> Option<&str> {
        None
    }

    /// The output schema as JSON text, in the order it was written; as
    /// [`input_schema_text`](Tool::input_schema_text) for
    /// [`output_schema`](Tool::output_schema).
    fn output_schema_text(&self) -> Option<&str> {
        None
    }

    /// Behaviour hints (`readOnlyHint`, `destructiveHint`, ...), as a JSON object.
    fn annotations(&self) -> Option<Value> {
        None
    }

    /// Icons, as a JSON array of `Icon` objects.
    fn icons(&self) -> Option<Value> {
        None
    }

    /// The OAuth scopes a principal needs to use this component over an
    /// authorized transport (none: the server's default scopes apply).
    fn required_scopes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The tool's `_meta` object.
    fn meta(&self) -> Option<Value> {
        None
    }

    /// The registered state the handler needs (see
    /// [`FromCall::state_needs`](crate::extract::FromCall::state_needs)):
    /// checked when the component is registered. `#[snodo::tool]` lists what
    /// its parameters need.
    fn state_needs(&self) -> Vec<crate::extract::StateNeed> {
        Vec::new()
    }

    /// Whether the tool runs as a task (never, by default): see
    /// [`crate::task`].
    fn task_support(&self) -> TaskSupport {
        TaskSupport::Never
    }

    /// How many times a task of this tool is run again when the node running
    /// it stops (none by default: the task fails). A tool that is retried
    /// should make its effects idempotent, keyed by
    /// [`Context::task_id`].
    fn task_retries(&self) -> u32 {
        0
    }

    /// Runs before a call becomes a task: returning input requests answers
    /// the `tools/call` with an `input_required` result (a multi round-trip
    /// round, no task yet); the client retries with its answers, which the
    /// task's handler then sees too. `None` (the default) starts the task.
    fn before_task(
        &self,
        args: &Arguments,
        cx: &Context,
    ) -> impl Future<Output = Result<Option<InputRequired>, HandlerError>> + Send {
        let _ = (args, cx);
        std::future::ready(Ok(None))
    }

    /// Runs the tool. Required arguments are present; the installed validator has
    /// accepted the arguments.
    fn call(&self, args: Arguments, cx: Context) -> impl Future<Output = CallResult> + Send;
}

/// The protocol-neutral definition of a tool, as `tools/list` publishes it
/// (and as a client receives it).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// A human-readable title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The input schema, verbatim.
    #[serde(default = "empty_object")]
    pub input_schema: Value,
    /// The output schema, verbatim.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Icons.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icons: Option<Value>,
    /// The tool's `_meta`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// Members this version does not model (e.g. `execution`), kept as
    /// received.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

impl ToolDefinition {
    /// The MCP App the tool renders in, if its `_meta` names one.
    pub fn app(&self) -> Option<crate::apps::ToolUi> {
        self.meta.as_ref().and_then(crate::apps::ToolUi::from_meta)
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// The definition of any tool.
pub fn definition<T: Tool + ?Sized>(tool: &T) -> ToolDefinition {
    ToolDefinition {
        name: tool.name().to_string(),
        title: tool.title().map(str::to_string),
        description: tool.description().map(str::to_string),
        input_schema: tool.input_schema(),
        output_schema: tool.output_schema(),
        annotations: tool.annotations(),
        icons: tool.icons(),
        meta: tool.meta(),
        extra: serde_json::Map::new(),
    }
}

/// The object-safe form of [`Tool`] the registry stores.
pub(crate) trait DynTool: Send + Sync + 'static {
    fn call_boxed(&self, args: Arguments, cx: Context) -> BoxFuture<'_, CallResult>;
    fn before_task_boxed<'a>(
        &'a self,
        args: &'a Arguments,
        cx: &'a Context,
    ) -> BoxFuture<'a, Result<Option<InputRequired>, HandlerError>>;
}

impl<T: Tool> DynTool for T {
    fn call_boxed(&self, args: Arguments, cx: Context) -> BoxFuture<'_, CallResult> {
        Box::pin(self.call(args, cx))
    }
    fn before_task_boxed<'a>(
        &'a self,
        args: &'a Arguments,
        cx: &'a Context,
    ) -> BoxFuture<'a, Result<Option<InputRequired>, HandlerError>> {
        Box::pin(self.before_task(args, cx))
    }
}
