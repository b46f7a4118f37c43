//! The components a proxy registers for a backend's tools, prompts and
//! resources: each shapes its request (injected arguments, the backend's
//! own name) and forwards it as a [flight](super::flight), with the
//! caller's progress, cancellation and multi round-trip answers carried
//! across.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::convert;
use super::flight::{Call, Link, run};
use super::shaping::{self, Injection, Shaping};
use crate::client::CompletionRef;
use crate::error::HandlerError;
use crate::prompt::{Prompt, PromptArgument, PromptArguments, PromptDefinition, PromptResult};
use crate::resource::{ReadRequest, ReadResult, Resource, ResourceDefinition, TemplateDefinition};
use crate::tool::{Arguments, CallResult, Tool, ToolDefinition, ToolResult};
use crate::{Context, Error};

/// A backend's tool.
#[derive(Clone)]
pub(crate) struct ForwardTool {
    pub(crate) link: Arc<Link>,
    /// The definition under the outside name.
    pub(crate) definition: ToolDefinition,
    /// The backend's name.
    pub(crate) remote: String,
    /// The arguments its calls receive.
    pub(crate) injections: Vec<Injection>,
    pub(crate) shaping: Arc<Shaping>,
}

impl ForwardTool {
    /// Whether its annotations say a call may be repeated
    /// (`readOnlyHint` or `idempotentHint`).
    fn repeatable(&self) -> bool {
        let hint = |key: &str| {
            self.definition
                .annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
                == Some(true)
        };
        hint("readOnlyHint") || hint("idempotentHint")
    }
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
        within_bound(&self.shaping, &self.link.id, args.as_value())?;
        let audited = self
            .link
            .stats
            .audit()
            .is_some_and(|a| a.wants_arguments())
            .then(|| args.as_value().clone());
        let mut arguments = match args.as_value() {
            Value::Object(_) => Value::Object(args.into_map()),
            other => other.clone(),
        };
        shaping::inject(&mut arguments, &self.injections);
        let remote = &self.remote;
        let repeatable = self.repeatable();
        // Moved into the first attempt; a retry sends a copy (kept only
        // when the backend's limits may retry).
        // `retries` is what `run` is told, so that a spare exists whenever
        // a retry is allowed.
        let retries = repeatable && self.link.guard().attempts() > 1;
        let (mut first, spare) = match retries {
            true => (Some(arguments.clone()), Some(arguments)),
            false => (Some(arguments), None),
        };
        let call = Call {
            identity: self.shaping.forwards_identity(),
            method: "tools/call",
            name: &self.definition.name,
            arguments: audited.as_ref(),
        };
        let result = run(&self.link, &cx, call, retries, move |client, opts| {
            let arguments = first
                .take()
                .or_else(|| spare.clone())
                .unwrap_or(Value::Null);
            let (client, remote) = (client.clone(), remote.clone());
            async move { client.forward_call(&remote, arguments).options(opts).await }
        })
        .await?;
        match result {
            Ok(answer) => convert::tool_result(answer),
            Err(input) => Ok(ToolResult::input_required(input)),
        }
    }
}

/// A backend's prompt.
#[derive(Clone)]
pub(crate) struct ForwardPrompt {
    pub(crate) link: Arc<Link>,
    /// The backend's name for it.
    pub(crate) remote: String,
    /// Its definition as listed, under the outside name.
    pub(crate) definition: PromptDefinition,
    pub(crate) shaping: Arc<Shaping>,
}

impl Prompt for ForwardPrompt {
    fn name(&self) -> &str {
        &self.definition.name
    }

    fn title(&self) -> Option<&str> {
        self.definition.title.as_deref()
    }

    fn description(&self) -> Option<&str> {
        self.definition.description.as_deref()
    }

    fn arguments(&self) -> Vec<PromptArgument> {
        self.definition.arguments.clone()
    }

    fn icons(&self) -> Option<Value> {
        self.definition.icons.clone()
    }

    fn meta(&self) -> Option<Value> {
        self.definition.meta.clone()
    }

    async fn get(&self, args: PromptArguments, cx: Context) -> Result<PromptResult, HandlerError> {
        let arguments: Map<String, Value> = args
            .iter()
            .map(|(k, v)| (k.to_owned(), Value::String(v.to_owned())))
            .collect();
        if self.shaping.argument_bound().is_some() {
            within_bound(
                &self.shaping,
                &self.link.id,
                &Value::Object(arguments.clone()),
            )?;
        }
        // The raw request: the answer is read once, by `convert`.
        let params = json!({"name": self.remote, "arguments": arguments});
        let mut params = Some(params);
        let audited = self
            .link
            .stats
            .audit()
            .is_some_and(|a| a.wants_arguments())
            .then(|| params.as_ref().map(|p| p["arguments"].clone()))
            .flatten();
        let call = Call {
            identity: self.shaping.forwards_identity(),
            method: "prompts/get",
            name: &self.definition.name,
            arguments: audited.as_ref(),
        };
        let result = run(&self.link, &cx, call, false, move |client, opts| {
            let (client, params) = (client.clone(), params.take().unwrap_or_default());
            async move { client.forward("prompts/get", params).options(opts).await }
        })
        .await?;
        match result {
            Ok(answer) => convert::prompt_result(answer.into_value()),
            Err(input) => Ok(PromptResult::input_required(input)),
        }
    }

    fn completes(&self) -> bool {
        // A prompt without arguments has nothing to complete.
        self.link.completes && !self.definition.arguments.is_empty()
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

/// A backend's resource or resource template, as listed.
#[derive(Clone)]
pub(crate) enum Listed {
    /// A resource with a fixed URI.
    Fixed(ResourceDefinition),
    /// A template.
    Template(TemplateDefinition),
}

impl Listed {
    /// The backend's URI or template.
    pub(crate) fn uri(&self) -> &str {
        match self {
            Listed::Fixed(r) => &r.uri,
            Listed::Template(t) => &t.uri_template,
        }
    }

    /// The backend's name for it, unless empty.
    pub(crate) fn name(&self) -> Option<&str> {
        let name = match self {
            Listed::Fixed(r) => &r.name,
            Listed::Template(t) => &t.name,
        };
        (!name.is_empty()).then_some(name.as_str())
    }
}

/// A backend's resource or resource template.
#[derive(Clone)]
pub(crate) struct ForwardResource {
    pub(crate) link: Arc<Link>,
    /// The outside URI (or template).
    pub(crate) uri: String,
    /// The backend's URI (or template).
    pub(crate) remote: String,
    pub(crate) name: String,
    /// The listed definition.
    pub(crate) listed: Listed,
    pub(crate) shaping: Arc<Shaping>,
    /// The URIs of the backend's fixed resources left out by its shaping
    /// (as [`shaping::uri_key`] spells them).
    pub(crate) hidden: Arc<std::collections::HashSet<String>>,
}

/// One member of either kind of listed definition.
macro_rules! listed {
    ($self:ident, $member:ident) => {
        match &$self.listed {
            Listed::Fixed(r) => &r.$member,
            Listed::Template(t) => &t.$member,
        }
    };
}

impl ForwardResource {
    fn is_template(&self) -> bool {
        matches!(self.listed, Listed::Template(_))
    }
}

impl Resource for ForwardResource {
    fn uri(&self) -> Option<&str> {
        (!self.is_template()).then_some(self.uri.as_str())
    }

    fn uri_template(&self) -> Option<&str> {
        self.is_template().then_some(self.uri.as_str())
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn title(&self) -> Option<&str> {
        listed!(self, title).as_deref()
    }

    fn description(&self) -> Option<&str> {
        listed!(self, description).as_deref()
    }

    fn mime_type(&self) -> Option<&str> {
        listed!(self, mime_type).as_deref()
    }

    fn annotations(&self) -> Option<Value> {
        listed!(self, annotations).clone()
    }

    fn size(&self) -> Option<u64> {
        match &self.listed {
            Listed::Fixed(r) => r.size,
            Listed::Template(_) => None,
        }
    }

    fn icons(&self) -> Option<Value> {
        listed!(self, icons).clone()
    }

    fn meta(&self) -> Option<Value> {
        listed!(self, meta).clone()
    }

    async fn read(&self, req: ReadRequest, cx: Context) -> Result<ReadResult, HandlerError> {
        let naming = &self.link.naming;
        let Some(uri) = naming.backend_uri(&req.uri).map(|u| u.into_owned()) else {
            return Err(HandlerError::protocol(Error::invalid_params(format!(
                "{:?} is not a resource of backend {:?}",
                req.uri, self.link.id
            ))));
        };
        if self.shaping.hides_uri(&uri) || self.hidden.contains(&shaping::uri_key(&uri)) {
            // As for a URI no resource serves: a hidden one is not there.
            return Err(HandlerError::protocol(
                Error::invalid_params("Resource not found").with_data(json!({"uri": req.uri})),
            ));
        }
        let call = Call {
            identity: self.shaping.forwards_identity(),
            method: "resources/read",
            name: &req.uri,
            arguments: None,
        };
        let result = run(&self.link, &cx, call, false, move |client, opts| {
            let (client, params) = (client.clone(), json!({ "uri": uri }));
            async move { client.forward("resources/read", params).options(opts).await }
        })
        .await?;
        match result {
            Ok(answer) => convert::read_result(answer.into_value(), naming),
            Err(input) => Ok(ReadResult::input_required(input)),
        }
    }

    fn completes(&self) -> bool {
        self.is_template() && self.link.completes
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

/// Refuses arguments past the backend's `max_argument_bytes`.
fn within_bound(shaping: &Shaping, id: &str, arguments: &Value) -> Result<(), HandlerError> {
    let Some(bound) = shaping.argument_bound() else {
        return Ok(());
    };
    let bytes = crate::wire::encoded_len(arguments);
    if bytes <= bound {
        return Ok(());
    }
    Err(HandlerError::protocol(
        Error::invalid_params(format!(
            "the arguments take {bytes} bytes, past the {bound} backend {id:?} takes"
        ))
        .with_data(json!({"maxArgumentBytes": bound, "argumentBytes": bytes})),
    ))
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
        Ok(completion) => completion.values,
        Err(e) => {
            tracing::debug!(target: "snodo::proxy", backend = %link.id, error = %e, "completion failed");
            Vec::new()
        }
    }
}
