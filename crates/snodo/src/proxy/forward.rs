//! The components a proxy registers for a backend's tools, prompts and
//! resources: each forwards its request to the backend through the
//! backend's [`Client`], with the caller's progress, cancellation and
//! multi round-trip answers carried across.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::audit::Entry;
use super::callers::{Callers, Child};
use super::convert;
use super::guard::{self, Guard};
use super::naming::Naming;
use super::relay::{self, Letter, Mailbox, Relay};
use super::shaping::{self, Injection, Shaping};
use super::stats::Stats;
use crate::client::{Client, ClientError, CompletionRef, Progress, RequestOptions};
use crate::error::HandlerError;
use crate::mrtr::InputRequired;
use crate::prompt::{Prompt, PromptArgument, PromptArguments, PromptDefinition, PromptResult};
use crate::protocol::LogLevel;
use crate::resource::{ReadRequest, ReadResult, Resource, ResourceDefinition, TemplateDefinition};
use crate::tool::{Arguments, CallResult, Tool, ToolDefinition, ToolResult};
use crate::{Context, Error};

/// The header that carries the caller's subject to a backend.
pub(crate) const SUBJECT_HEADER: &str = "x-snodo-subject";
/// The header that carries the caller's scopes to a backend.
pub(crate) const SCOPES_HEADER: &str = "x-snodo-scopes";

/// What every forwarding component of one backend shares.
pub(crate) struct Link {
    /// The backend's id (named in errors).
    pub(crate) id: String,
    pub(crate) client: Client,
    pub(crate) naming: Naming,
    /// Whether the backend offers completions.
    pub(crate) completes: bool,
    /// Where the backend's own requests are routed.
    pub(crate) relay: Relay,
    /// Its limits, replaced when they change.
    pub(crate) guard: std::sync::RwLock<Arc<Guard>>,
    /// The proxy's counters.
    pub(crate) stats: Arc<Stats>,
    /// The servers started for each caller, when it is such a backend.
    pub(crate) callers: std::sync::RwLock<Option<Arc<Callers>>>,
    /// Told when `callers` is replaced.
    pub(crate) callers_set: tokio::sync::Notify,
}

impl Link {
    /// The backend's limits now.
    pub(crate) fn guard(&self) -> Arc<Guard> {
        self.guard.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The servers started for each caller, when it is such a backend.
    pub(crate) fn callers(&self) -> Option<Arc<Callers>> {
        self.callers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Replaces the servers started for each caller.
    pub(crate) fn set_callers(&self, callers: Option<Arc<Callers>>) {
        *self.callers.write().unwrap_or_else(|e| e.into_inner()) = callers;
        self.callers_set.notify_one();
    }

    /// Where the request of `cx` goes, its caller's own server started
    /// when it is not running.
    async fn via(&self, cx: &Context) -> Result<Via<'_>, HandlerError> {
        match self.callers() {
            None => Ok(Via::Backend(self)),
            Some(callers) => {
                let child = callers.child(&self.id, cx).await?;
                Ok(Via::Caller(callers, child))
            }
        }
    }

    /// Where the request of `cx` goes, when that is running (the caller's
    /// own server is not started).
    fn via_running(&self, cx: &Context) -> Option<Via<'_>> {
        match self.callers() {
            None => Some(Via::Backend(self)),
            Some(callers) => {
                let child = callers.running_child(cx)?;
                Some(Via::Caller(callers, child))
            }
        }
    }

    /// Refuses a request that has no caller to start a server for.
    fn check_caller(&self, cx: &Context) -> Result<(), HandlerError> {
        match self.callers() {
            Some(callers) => callers.caller_of(&self.id, cx).map(|_| ()),
            None => Ok(()),
        }
    }
}

/// Where one request goes: the backend's client, or the caller's own
/// server.
enum Via<'a> {
    Backend(&'a Link),
    Caller(Arc<Callers>, Arc<Child>),
}

impl Via<'_> {
    fn parts(&self) -> (&Client, &Relay) {
        match self {
            Via::Backend(link) => (&link.client, &link.relay),
            Via::Caller(_, child) => {
                let (client, relay) = child.parts().expect("a caller's server is started first");
                (client, relay)
            }
        }
    }

    /// Forgets a caller's server whose connection failed (the next
    /// request starts another).
    fn failed(&self, e: &ClientError) {
        if let Via::Caller(callers, child) = self
            && !e.is_rpc()
            && !e.is_timeout()
        {
            callers.forget(child);
        }
    }
}

/// The options of a forwarded request: input requests come back to the
/// proxy (the backend's `input_required` goes to the caller), the caller's
/// answers of an earlier round go on, progress is posted to `mailbox`, and
/// the caller's identity goes along when `identity` says so.
fn options(cx: &Context, mailbox: Arc<Mailbox>, identity: bool) -> RequestOptions {
    let mut opts = RequestOptions::new().answer_input(false);
    if identity && let Some(principal) = cx.principal() {
        let scopes = principal.scopes.join(" ");
        for (name, value) in [
            (SUBJECT_HEADER, principal.subject.as_str()),
            (SCOPES_HEADER, scopes.as_str()),
        ] {
            if let Ok(value) = http::HeaderValue::from_str(value) {
                opts = opts.header(http::HeaderName::from_static(name), value);
            }
        }
    }
    let state = cx.request_state().map(str::to_owned);
    if let Some(responses) = cx.input_responses() {
        opts = opts.input_responses(responses.clone(), state);
    } else if state.is_some() {
        opts = opts.input_responses(Map::new(), state);
    }
    // The caller's log level (2026-07-28 `_meta`) goes to the backend.
    let level = cx
        .meta()
        .get(crate::protocol::keys::LOG_LEVEL)
        .and_then(Value::as_str);
    if let Some(level) = level.and_then(LogLevel::parse) {
        opts = opts.log_level(level);
    }
    // Past the queue's bound an update is dropped: a later one says more.
    opts.on_progress(move |p| mailbox.progress(p))
}

/// How a flight to the backend ended.
enum Ended {
    /// Its answer.
    Answer(Value),
    /// The caller must give input first.
    Input(InputRequired),
    /// It failed.
    Failed(ClientError),
}

/// Runs the request `make` builds at the backend, or resumes the one the
/// caller's `requestState` names, and waits for its answer: the result, or
/// the input the caller must give (a request the backend sent its client
/// while it ran, the request then parked until the caller answers). The
/// backend's progress goes to the caller meanwhile; the caller's
/// cancellation cancels the backend's request. A new request passes the
/// backend's limits first, and one that may be repeated (`repeatable`) is
/// tried again as they allow.
async fn run<F>(
    link: &Link,
    cx: &Context,
    call: Call<'_>,
    repeatable: bool,
    make: impl FnMut(&Client, RequestOptions) -> F,
) -> Result<Result<Value, InputRequired>, HandlerError>
where
    F: Future<Output = Result<Value, ClientError>> + Send + 'static,
{
    // Counted and audited even when the request is dropped before its end
    // (the server's timeout, or the caller gone): then as `cancelled`.
    let mut record = Record {
        link,
        cx,
        call,
        since: std::time::Instant::now(),
        done: false,
    };
    let out = attempt(link, cx, record.call.identity, repeatable, make).await;
    record.end(Some(&out));
    out
}

/// Counts and audits one forwarded request when it ends or is dropped.
struct Record<'a> {
    link: &'a Link,
    cx: &'a Context,
    call: Call<'a>,
    since: std::time::Instant,
    done: bool,
}

impl Record<'_> {
    /// Records the request's end (`None`: dropped unanswered).
    fn end(&mut self, out: Option<&Result<Result<Value, InputRequired>, HandlerError>>) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let (link, call) = (self.link, &self.call);
        let took = self.since.elapsed();
        let failed = !matches!(out, Some(Ok(_)));
        link.stats.request(&link.id, call.method, took, failed);
        let Some(audit) = link.stats.audit() else {
            return;
        };
        let code = out
            .and_then(|o| o.as_ref().err())
            .and_then(HandlerError::as_protocol)
            .map(Error::code);
        let outcome = match out {
            None => "cancelled",
            Some(Ok(Ok(value))) if value.get("isError") == Some(&Value::Bool(true)) => "tool_error",
            Some(Ok(Ok(_))) => "ok",
            Some(Ok(Err(_))) => "input_required",
            Some(Err(_))
                if matches!(
                    code,
                    Some(
                        crate::error::code::RATE_LIMITED | crate::error::code::BACKEND_UNAVAILABLE
                    )
                ) =>
            {
                "refused"
            }
            Some(Err(_)) => "error",
        };
        audit.record(Entry {
            principal: self.cx.principal().map(|p| p.subject.as_str()),
            method: call.method,
            name: call.name,
            backend: &link.id,
            outcome,
            code,
            took,
            arguments: call.arguments.filter(|_| audit.wants_arguments()),
        });
    }
}

impl Drop for Record<'_> {
    fn drop(&mut self) {
        self.end(None);
    }
}

/// What a forwarded request is, for the counters and the audit log, and
/// whether the caller's identity goes with it.
struct Call<'a> {
    method: &'static str,
    identity: bool,
    /// The tool or prompt name, or the URI, as served.
    name: &'a str,
    /// The caller's arguments.
    arguments: Option<&'a Value>,
}

/// [`run`]'s work, uncounted.
async fn attempt<F>(
    link: &Link,
    cx: &Context,
    identity: bool,
    repeatable: bool,
    mut make: impl FnMut(&Client, RequestOptions) -> F,
) -> Result<Result<Value, InputRequired>, HandlerError>
where
    F: Future<Output = Result<Value, ClientError>> + Send + 'static,
{
    let parked = cx
        .request_state()
        .filter(|s| s.starts_with(relay::STATE_PREFIX));
    if let Some(state) = parked {
        let gone = || {
            Error::invalid_params(
                "the requestState names no request waiting for input (it ended, or waited too long)",
            )
        };
        // Resumed where it was parked: a caller's own server that is gone
        // is not started again for it.
        let via = link.via_running(cx).ok_or_else(gone)?;
        let relay = via.parts().1;
        let mut flight = relay.resume(state).ok_or_else(gone)?;
        if let Some((key, reply)) = flight.waiting.take() {
            let Some(answer) = cx.input_response(&key) else {
                return Err(HandlerError::protocol(Error::invalid_params(format!(
                    "inputResponses has no answer {key:?}"
                ))));
            };
            let _ = reply.send(Ok(answer.clone()));
        }
        return finish(link, &via, follow(link, relay, cx, flight).await?);
    }
    // A caller's own server is started once the request has passed the
    // backend's limits; a request that has no caller is refused first.
    link.check_caller(cx)?;
    let guard = link.guard();
    if guard.is_open_door() {
        let via = link.via(cx).await?;
        let (client, relay) = via.parts();
        let flight = start(client, relay, cx, identity, &mut make);
        return finish(link, &via, follow(link, relay, cx, flight).await?);
    }
    let attempts = if repeatable { guard.attempts() } else { 1 };
    guard.earn();
    let mut attempt = 1;
    loop {
        let pass = match guard.admit(&link.id, cx).await {
            Ok(pass) => pass,
            Err(refused) => {
                if let Some(why) = refused.why {
                    link.stats.refused(&link.id, why);
                }
                return Err(refused.error);
            }
        };
        let via = match link.via(cx).await {
            Ok(via) => via,
            Err(e) => {
                // A caller's server that cannot start is a failure of the
                // backend.
                guard.record(pass, true);
                return Err(e);
            }
        };
        let (client, relay) = via.parts();
        let flight = start(client, relay, cx, identity, &mut make);
        let ended = follow(link, relay, cx, flight).await?;
        match ended {
            Ended::Failed(e) if guard::counts(&e) => {
                guard.record(pass, true);
                if attempt < attempts && guard.spend() {
                    tracing::debug!(target: "snodo::proxy", backend = %link.id, error = %e, attempt, "trying the call again");
                    via.failed(&e);
                    attempt += 1;
                    continue;
                }
                return finish(link, &via, Ended::Failed(e));
            }
            ended => {
                guard.record(pass, false);
                return finish(link, &via, ended);
            }
        }
    }
}

/// Starts the request `make` builds at the backend (through `client`).
fn start<F>(
    client: &Client,
    relay: &Relay,
    cx: &Context,
    identity: bool,
    make: &mut impl FnMut(&Client, RequestOptions) -> F,
) -> relay::Flight
where
    F: Future<Output = Result<Value, ClientError>> + Send + 'static,
{
    let mailbox = Arc::new(Mailbox::default());
    // Polled by the caller's request, under its span: the backend request's
    // client span (and the trace context sent to the backend) continue the
    // caller's trace, and no task is spawned per call.
    let task: relay::BackendRequest =
        Box::pin(make(client, options(cx, mailbox.clone(), identity)));
    relay.start(task, mailbox)
}

/// What an ended flight answers the caller.
fn finish(
    link: &Link,
    via: &Via<'_>,
    ended: Ended,
) -> Result<Result<Value, InputRequired>, HandlerError> {
    if let Ended::Failed(e) = &ended {
        via.failed(e);
    }
    match ended {
        Ended::Answer(value) if crate::client::is_input_required(&value) => {
            Ok(Err(convert::input_required(&value)?))
        }
        Ended::Answer(value) => Ok(Ok(value)),
        Ended::Input(input) => Ok(Err(input)),
        Ended::Failed(e) => Err(convert::error(&link.id, e)),
    }
}

/// Follows a flight to its end, carrying progress, log messages and input
/// requests to the caller.
async fn follow(
    link: &Link,
    relay: &Relay,
    cx: &Context,
    mut flight: relay::Flight,
) -> Result<Ended, HandlerError> {
    loop {
        tokio::select! {
            // What the backend sent first: progress and log messages sent
            // before its answer reach the caller before the answer.
            biased;
            letter = flight.mailbox.next() => {
                let ask = match letter {
                    Letter::Progress(p) => {
                        pass_progress(cx, p).await;
                        continue;
                    }
                    Letter::Log(m) => {
                        pass_log(cx, m).await;
                        continue;
                    }
                    Letter::Ask(ask) => ask,
                };
                let key = format!("{}-{}", ask.method.replace('/', "-"), relay.round());
                let input = InputRequired::new().request(key.clone(), ask.method, ask.params);
                flight.waiting = Some((key, ask.reply));
                let state = relay.park(flight).map_err(|e| {
                    Error::internal(format!(
                        "backend {:?} asked for input, and the request cannot wait for it: {e}",
                        link.id
                    ))
                })?;
                return Ok(Ended::Input(input.state(state)));
            }
            out = &mut flight.task => {
                // What the backend sent before its answer, in the same
                // poll, reaches the caller first (a request of the
                // backend's left unanswered hears that the caller did not
                // answer).
                while let Some(letter) = flight.mailbox.take() {
                    match letter {
                        Letter::Progress(p) => pass_progress(cx, p).await,
                        Letter::Log(m) => pass_log(cx, m).await,
                        Letter::Ask(_) => {}
                    }
                }
                return Ok(match out {
                    Ok(value) => Ended::Answer(value),
                    Err(e) => Ended::Failed(e),
                });
            }
            () = cx.cancellation().cancelled() => {
                return Err(HandlerError::protocol(Error::internal("the request was cancelled")));
            }
        }
    }
}

/// Passes a backend's progress update to a caller that asked for progress.
async fn pass_progress(cx: &Context, p: Progress) {
    if cx.wants_progress() {
        let _ = cx.progress(p.progress, p.total, p.message.as_deref()).await;
    }
}

/// Passes a backend's log message to the caller (at the caller's level).
async fn pass_log(cx: &Context, m: crate::client::LogMessage) {
    if let Some(level) = LogLevel::parse(&m.level) {
        cx.log_as(level, m.logger.as_deref(), m.data).await;
    }
}

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
            async move {
                let result = client.call_tool(&remote, arguments).options(opts).await?;
                Ok(result.into_wire())
            }
        })
        .await?;
        let value = match result {
            Ok(value) => value,
            Err(input) => return Ok(ToolResult::input_required(input)),
        };
        let Value::Object(mut map) = value else {
            return Err(convert::protocol(
                "a tool result that is not an object".into(),
            ));
        };
        convert::strip(&mut map);
        Ok(ToolResult::raw(map))
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
            async move { client.request("prompts/get", params).options(opts).await }
        })
        .await?;
        match result {
            Ok(value) => convert::prompt_result(value),
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
            async move { client.request("resources/read", params).options(opts).await }
        })
        .await?;
        match result {
            Ok(value) => convert::read_result(value, naming),
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
