//! Tools made from closures, for definitions only known at run time.

use std::future::Future;

use serde_json::{Value, json};

use super::{Arguments, CallResult, Tool};
use std::sync::Arc;

use crate::Context;
use crate::error::HandlerError;
use crate::mrtr::InputRequired;
use crate::task::TaskSupport;

/// A tool whose handler is a closure.
///
/// ```
/// use snodo::tool::from_fn;
/// use snodo::ToolResult;
/// let echo = from_fn("echo", |args, _cx| async move {
///     Ok(ToolResult::text(args.str("text")?))
/// })
/// .description("Echoes its text")
/// .input_schema(serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}));
/// let server = snodo::Server::builder("s", "1").tool(echo).build().unwrap();
/// ```
pub struct FnTool<F> {
    name: String,
    title: Option<String>,
    description: Option<String>,
    input_schema: Value,
    output_schema: Option<Value>,
    annotations: Option<Value>,
    meta: Option<Value>,
    task_support: TaskSupport,
    task_retries: u32,
    before_task: Option<Arc<BeforeTask>>,
    handler: F,
}

/// What [`FnTool::before_task`] runs.
type BeforeTask = dyn Fn(&Arguments, &Context) -> Option<InputRequired> + Send + Sync;

impl<F> std::fmt::Debug for FnTool<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

/// A tool named `name` whose calls run `handler`. The input schema defaults
/// to `{"type": "object"}`.
pub fn from_fn<F, Fut>(name: impl Into<String>, handler: F) -> FnTool<F>
where
    F: Fn(Arguments, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = CallResult> + Send + 'static,
{
    FnTool {
        name: name.into(),
        title: None,
        description: None,
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: None,
        meta: None,
        task_support: TaskSupport::Never,
        task_retries: 0,
        before_task: None,
        handler,
    }
}

impl<F> FnTool<F> {
    /// Sets the title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the input schema.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Sets the output schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets the annotations.
    pub fn annotations(mut self, annotations: Value) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Sets the `_meta` object (an MCP Apps binding set with
    /// [`ui`](Self::ui) is kept).
    pub fn meta(mut self, meta: Value) -> Self {
        let ui = self.meta.as_ref().and_then(|m| m.get("ui")).cloned();
        self.meta = Some(meta);
        if let (Some(ui), Some(Value::Object(m))) = (ui, self.meta.as_mut()) {
            m.insert("ui".into(), ui);
        }
        self
    }

    /// Binds the tool to an MCP App (`_meta.ui`; see [`crate::apps`]).
    pub fn ui(mut self, ui: crate::apps::ToolUi) -> Self {
        self.meta = Some(ui.into_meta(self.meta.take()));
        self
    }

    /// Whether the tool runs as a task ([`Tool::task_support`]).
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// How often its task is run again when its node stops
    /// ([`Tool::task_retries`]).
    pub fn task_retries(mut self, retries: u32) -> Self {
        self.task_retries = retries;
        self
    }

    /// Input to ask for before the call becomes a task
    /// ([`Tool::before_task`]).
    pub fn before_task(
        mut self,
        ask: impl Fn(&Arguments, &Context) -> Option<InputRequired> + Send + Sync + 'static,
    ) -> Self {
        self.before_task = Some(Arc::new(ask));
        self
    }
}

impl<F, Fut> Tool for FnTool<F>
where
    F: Fn(Arguments, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = CallResult> + Send + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
    fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    fn input_schema(&self) -> Value {
        self.input_schema.clone()
    }
    fn output_schema(&self) -> Option<Value> {
        self.output_schema.clone()
    }
    fn annotations(&self) -> Option<Value> {
        self.annotations.clone()
    }
    fn meta(&self) -> Option<Value> {
        self.meta.clone()
    }
    fn task_support(&self) -> TaskSupport {
        self.task_support
    }
    fn task_retries(&self) -> u32 {
        self.task_retries
    }
    fn before_task(
        &self,
        args: &Arguments,
        cx: &Context,
    ) -> impl Future<Output = Result<Option<InputRequired>, HandlerError>> + Send {
        std::future::ready(Ok(self.before_task.as_ref().and_then(|ask| ask(args, cx))))
    }
    fn call(&self, args: Arguments, cx: Context) -> impl Future<Output = CallResult> + Send {
        (self.handler)(args, cx)
    }
}
