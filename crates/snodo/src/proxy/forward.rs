//! The components a proxy registers for a backend's tools, prompts and
//! resources: each forwards its request to the backend through the
//! backend's [`Client`], with the caller's progress, cancellation and
//! multi round-trip answers carried across.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::convert;
use super::naming::Naming;
use crate::client::{Client, ClientError, CompletionRef, Progress, RequestOptions};
use crate::error::BoxError;
use crate::prompt::{Prompt, PromptArgument, PromptArguments, PromptResult};
use crate::resource::{ReadRequest, ReadResult, Resource};
use crate::tool::{Arguments, CallResult, Tool, ToolDefinition, ToolResult};
use crate::{Context, Error};

/// What every forwarding component of one backend shares.
pub(crate) struct Link {
    /// The backend's id (named in errors).
    pub(crate) id: String,
    pub(crate) client: Client,
    pub(crate) naming: Naming,
    /// Whether the backend offers completions.
    pub(crate) completes: bool,
}

/// The options of a forwarded request: input requests come back to the
/// proxy (its own client answers them, or the backend's `input_required`
/// goes to the caller), the caller's answers of an earlier round go on, and
/// progress is sent to `progress`.
fn options(cx: &Context, progress: Option<mpsc::UnboundedSender<Progress>>) -> RequestOptions {
    let mut opts = RequestOptions::new().answer_input(false);
    let state = cx.request_state().map(str::to_owned);
    if let Some(responses) = cx.input_responses() {
        opts = opts.input_responses(responses.clone(), state);
    } else if state.is_some() {
        opts = opts.input_responses(Map::new(), state);
    }
    if let Some(tx) = progress {
        opts = opts.on_progress(move |p| {
            let _ = tx.send(p);
        });
    }
    opts
}

/// Runs the request `make` builds, passing the backend's progress on to
/// the caller while it runs; the caller's cancellation drops it (which
/// cancels it at the backend).
async fn run<T, F>(
    link: &Link,
    cx: &Context,
    make: impl FnOnce(RequestOptions) -> F,
) -> Result<T, BoxError>
where
    F: Future<Output = Result<T, ClientError>>,
{
    let (tx, mut rx) = if cx.wants_progress() {
        let (tx, rx) = mpsc::unbounded_channel();
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let request = make(options(cx, tx));
    tokio::pin!(request);
    loop {
        let progress = async {
            match &mut rx {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            out = &mut request => return out.map_err(|e| convert::error(&link.id, e)),
            Some(p) = progress => {
                let _ = cx.progress(p.progress, p.total, p.message.as_deref()).await;
            }
            () = cx.cancellation().cancelled() => {
                return Err(Box::new(Error::internal("the request was cancelled")));
            }
        }
    }
}

/// A backend's tool.
pub(crate) struct ForwardTool {
    pub(crate) link: Arc<Link>,
    /// The definition under the outside name.
    pub(crate) definition: ToolDefinition,
    /// The backend's name.
    pub(crate) remote: String,
}

impl Tool for ForwardTool {
    fn name(&self) -> &str {
        &self.definition.name
    }

    fn title(&self) -> Option<&str> {
        self.definition.title.as_deref()
    }

    fn description(&self) -> Option<&str> {
        self.definition.description.as_deref()
    }

    fn input_schema(&self) -> Value {
        self.definition.input_schema.clone()
    }

    fn output_schema(&self) -> Option<Value> {
        self.definition.output_schema.clone()
    }

    fn annotations(&self) -> Option<Value> {
        self.definition.annotations.clone()
    }

    fn icons(&self) -> Option<Value> {
        self.definition.icons.clone()
    }

    fn meta(&self) -> Option<Value> {
        self.definition.meta.clone()
    }

    async fn call(&self, args: Arguments, cx: Context) -> CallResult {
        let arguments = args.as_value().clone();
        let client = &self.link.client;
        let result = run(&self.link, &cx, |opts| {
            client.call_tool_with(&self.remote, arguments, opts)
        })
        .await?;
        let Value::Object(mut map) = result.to_wire() else {
            return Err(convert::protocol(
                "a tool result that is not an object".into(),
            ));
        };
        if map.get("resultType").and_then(Value::as_str) == Some("input_required") {
            return Ok(ToolResult::input_required(convert::input_required(&map)?));
        }
        convert::strip(&mut map);
        Ok(ToolResult::raw(map))
    }
}

/// A backend's prompt.
pub(crate) struct ForwardPrompt {
    pub(crate) link: Arc<Link>,
    pub(crate) name: String,
    pub(crate) remote: String,
    /// The listed definition (`title`, `description`, `arguments`, `icons`,
    /// `_meta`).
    pub(crate) listed: Map<String, Value>,
    pub(crate) arguments: Vec<PromptArgument>,
}

impl ForwardPrompt {
    fn text(&self, key: &str) -> Option<&str> {
        self.listed.get(key).and_then(Value::as_str)
    }
}

impl Prompt for ForwardPrompt {
    fn name(&self) -> &str {
        &self.name
    }

    fn title(&self) -> Option<&str> {
        self.text("title")
    }

    fn description(&self) -> Option<&str> {
        self.text("description")
    }

    fn arguments(&self) -> Vec<PromptArgument> {
        self.arguments.clone()
    }

    fn icons(&self) -> Option<Value> {
        self.listed.get("icons").cloned()
    }

    fn meta(&self) -> Option<Value> {
        self.listed.get("_meta").cloned()
    }

    async fn get(&self, args: PromptArguments, cx: Context) -> Result<PromptResult, BoxError> {
        let arguments: Map<String, Value> = args
            .iter()
            .map(|(k, v)| (k.to_owned(), Value::String(v.to_owned())))
            .collect();
        let client = &self.link.client;
        let result = run(&self.link, &cx, |opts| {
            client.get_prompt_with(&self.remote, Value::Object(arguments), opts)
        })
        .await?;
        convert::prompt_result(result)
    }

    fn completes(&self) -> bool {
        self.link.completes
    }

    async fn complete(
        &self,
        argument: &str,
        value: &str,
        context: &Map<String, Value>,
    ) -> Vec<String> {
        let reference = CompletionRef::Prompt(self.remote.clone());
        complete(&self.link, reference, argument, value, context).await
    }
}

/// A backend's resource or resource template.
pub(crate) struct ForwardResource {
    pub(crate) link: Arc<Link>,
    /// The outside URI (or template).
    pub(crate) uri: String,
    /// The backend's URI (or template).
    pub(crate) remote: String,
    pub(crate) template: bool,
    pub(crate) name: String,
    /// The listed definition.
    pub(crate) listed: Map<String, Value>,
}

impl ForwardResource {
    fn text(&self, key: &str) -> Option<&str> {
        self.listed.get(key).and_then(Value::as_str)
    }
}

impl Resource for ForwardResource {
    fn uri(&self) -> Option<&str> {
        (!self.template).then_some(self.uri.as_str())
    }

    fn uri_template(&self) -> Option<&str> {
        self.template.then_some(self.uri.as_str())
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn title(&self) -> Option<&str> {
        self.text("title")
    }

    fn description(&self) -> Option<&str> {
        self.text("description")
    }

    fn mime_type(&self) -> Option<&str> {
        self.text("mimeType")
    }

    fn annotations(&self) -> Option<Value> {
        self.listed.get("annotations").cloned()
    }

    fn size(&self) -> Option<u64> {
        self.listed.get("size").and_then(Value::as_u64)
    }

    fn icons(&self) -> Option<Value> {
        self.listed.get("icons").cloned()
    }

    fn meta(&self) -> Option<Value> {
        self.listed.get("_meta").cloned()
    }

    async fn read(&self, req: ReadRequest, cx: Context) -> Result<ReadResult, BoxError> {
        let naming = &self.link.naming;
        let Some(uri) = naming.backend_uri(&req.uri) else {
            return Err(Box::new(Error::invalid_params(format!(
                "{:?} is not a resource of backend {:?}",
                req.uri, self.link.id
            ))));
        };
        let client = &self.link.client;
        let result = run(&self.link, &cx, |opts| client.read_resource_with(uri, opts)).await?;
        convert::read_result(result, naming)
    }

    fn completes(&self) -> bool {
        self.template && self.link.completes
    }

    async fn complete(
        &self,
        variable: &str,
        value: &str,
        context: &Map<String, Value>,
    ) -> Vec<String> {
        let reference = CompletionRef::Resource(self.remote.clone());
        complete(&self.link, reference, variable, value, context).await
    }
}

/// Asks the backend for completions; a failure offers none.
async fn complete(
    link: &Link,
    reference: CompletionRef,
    argument: &str,
    value: &str,
    context: &Map<String, Value>,
) -> Vec<String> {
    let context = (!context.is_empty()).then(|| context.clone());
    match link
        .client
        .complete(reference, argument, value, context)
        .await
    {
        Ok(result) => result["completion"]["values"]
            .as_array()
            .map(|values| {
                values
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        Err(e) => {
            tracing::debug!(target: "snodo::proxy", backend = %link.id, error = %e, "completion failed");
            Vec::new()
        }
    }
}
