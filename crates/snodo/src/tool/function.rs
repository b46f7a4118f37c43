//! Tools made from closures, for definitions only known at run time.

use std::future::Future;

use serde_json::{Value, json};

use super::{Arguments, CallResult, Tool};
use crate::Context;

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
    handler: F,
}

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
    fn call(&self, args: Arguments, cx: Context) -> impl Future<Output = CallResult> + Send {
        (self.handler)(args, cx)
    }
}
