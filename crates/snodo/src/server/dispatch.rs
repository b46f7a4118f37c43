//! The one seam every transport uses: decode, admit, route, shape.
//!
//! Admission runs in the order the Streamable HTTP rules assume: removed
//! methods, `_meta`, standard headers (HTTP only), version, method and
//! capability, then the method's own checks (for `tools/call`: the tool and
//! its `Mcp-Param-*` headers). Only then does the request run, inline for a
//! plain request, or inside a [`ResponseStream`] when it asked for
//! notifications (`progressToken`, `logLevel`) or is a subscription.

use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tracing::Instrument as _;

use super::Server;
use super::catalog::Catalog;
use super::list::{self, Listing};
use super::registry::ToolEntry;
use super::reply::{Dispatched, Failure, Reply};
use super::stream::ResponseStream;
use crate::context::{CancelSignal, RequestInfo, Sink, TransportInfo};
use crate::protocol::{self, Method, RequestMeta, Revision};
use crate::telemetry::metrics::Gauge;
use crate::telemetry::server::{Era, ServerCall};
use crate::tool::ToolResult;
use crate::wire::{self, Message, RequestId};
use crate::{Context, Error};

/// Records how a routed request ended on its observation.
pub(super) fn observe(call: &ServerCall, out: &Result<Routed, Failure>) {
    match out {
        Ok(Routed::Object(result)) => call.result(result),
        Ok(Routed::Tool(result)) => call.tool_result(result),
        Ok(Routed::Encoded(_)) => call.ok(),
        Err(f) => call.error(&f.error),
    }
}

/// What a request resolved to during admission.
pub(super) enum Route {
    Known(Method),
    Extension(usize),
}

/// What routing a request produced.
pub(super) enum Routed {
    /// A result object; `resultType` and server info are stamped on it.
    Object(Map<String, Value>),
    /// An already encoded, already stamped result object.
    Encoded(Vec<u8>),
    /// A tool's result, encoded straight from its parts; stamped as
    /// [`Routed::Object`] is.
    Tool(ToolResult),
}

impl Routed {
    /// The outcome for an initialize-era session: a result object, which
    /// its path reshapes, unless it is a tool result that revision takes as
    /// it is (written out without building the object).
    pub(super) fn into_initialize_era(self) -> Self {
        match self {
            Routed::Tool(result) if result.fits_initialize_era() => Routed::Tool(result),
            Routed::Tool(result) => Routed::Object(result.into_map()),
            other => other,
        }
    }
}

/// A request that passed admission.
pub(super) struct Admitted {
    pub(super) id: RequestId,
    pub(super) method: String,
    pub(super) route: Route,
    pub(super) params: Map<String, Value>,
    /// What the request acts on, read out of its params at decode.
    pub(super) target: Option<String>,
    /// A call's `arguments`, read out of its params at decode.
    pub(super) arguments: Option<Map<String, Value>>,
    pub(super) meta: RequestMeta,
    pub(super) catalog: Arc<Catalog>,
    /// The tool a `tools/call` names, found once, at admission.
    pub(super) tool: Option<Arc<ToolEntry>>,
}

pin_project_lite::pin_project! {
    /// A routing future held to a deadline (see [`Server::route`]).
    pub(super) struct Timed<F> {
        #[pin]
        work: F,
        timer: Option<Pin<Box<tokio::time::Sleep>>>,
        deadline: tokio::time::Instant,
        signal: CancelSignal,
    }
}

impl<F: Future<Output = Result<Routed, Failure>>> Future for Timed<F> {
    type Output = Result<Routed, Failure>;

    fn poll(self: Pin<&mut Self>, task: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(outcome) = this.work.poll(task) {
            return Poll::Ready(outcome);
        }
        let deadline = *this.deadline;
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match timer.as_mut().poll(task) {
            Poll::Ready(()) => {
                this.signal.cancel();
                Poll::Ready(Err(Failure::ok(Error::internal("Request timed out"))))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

pin_project_lite::pin_project! {
    /// What routing an admitted request runs (see [`Server::route`]): an
    /// answer made without waiting, a tool call held in place, or one of the
    /// less usual methods, boxed so that its future does not size every
    /// request's.
    #[project = RoutingProj]
    pub(super) enum Routing<C> {
        Ready { out: Option<Result<Routed, Failure>> },
        Call { #[pin] call: C },
        Other { other: Pin<Box<dyn Future<Output = Result<Routed, Failure>> + Send>> },
    }
}

impl<C> Routing<C> {
    fn ready(out: Result<Routed, Failure>) -> Self {
        Routing::Ready { out: Some(out) }
    }

    fn other(future: impl Future<Output = Result<Routed, Failure>> + Send + 'static) -> Self {
        Routing::Other {
            other: Box::pin(future),
        }
    }
}

impl<C: Future<Output = Result<Routed, Failure>>> Future for Routing<C> {
    type Output = Result<Routed, Failure>;

    fn poll(self: Pin<&mut Self>, task: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            RoutingProj::Ready { out } => Poll::Ready(
                out.take()
                    .expect("a routing future polled after it finished"),
            ),
            RoutingProj::Call { call } => call.poll(task),
            RoutingProj::Other { other } => other.as_mut().poll(task),
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`Server::handle`]: an answer made at once, or a routed
    /// request with what finishing it needs.
    #[project = HandlingProj]
    #[project_replace = HandlingDone]
    pub(super) enum Handling<R> {
        Done { out: Option<Dispatched> },
        // The routing future first: dropped unfinished, it goes before the
        // call's record ends.
        Routing { #[pin] route: R, call: ServerCall, id: RequestId, server: Server },
    }
}

impl<R> Handling<R> {
    fn done(out: Dispatched) -> Self {
        Handling::Done { out: Some(out) }
    }
}

impl<R: Future<Output = Result<Routed, Failure>>> Future for Handling<R> {
    type Output = Dispatched;

    fn poll(mut self: Pin<&mut Self>, task: &mut std::task::Context<'_>) -> Poll<Dispatched> {
        let out = match self.as_mut().project() {
            HandlingProj::Done { out } => {
                return Poll::Ready(
                    out.take()
                        .expect("a request's future polled after it finished"),
                );
            }
            HandlingProj::Routing { route, call, .. } => {
                let _in = call.span().enter();
                std::task::ready!(route.poll(task))
            }
        };
        // The finished routing future is dropped here, outside the span.
        let HandlingDone::Routing {
            call, id, server, ..
        } = self.project_replace(Handling::Done { out: None })
        else {
            unreachable!("only a routed request has a routing future");
        };
        observe(&call, &out);
        Poll::Ready(Dispatched::Reply(server.finish(&id, out)))
    }
}

impl Server {
    /// Decodes one message (within the server's limits) and dispatches it.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use snodo::{Dispatched, Server, TransportInfo};
    /// let server = Server::builder("demo", "1.0.0").build().unwrap();
    /// let out = server.dispatch(br#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
    ///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#, TransportInfo::default()).await;
    /// let Dispatched::Reply(reply) = out else { panic!() };
    /// assert_eq!(reply.status, 200);
    /// # });
    /// ```
    pub async fn dispatch(&self, bytes: &[u8], transport: TransportInfo) -> Dispatched {
        match wire::decode(bytes, &self.inner.limits) {
            Ok(message) => self.handle(message, transport, CancelSignal::new()).await,
            Err(e) => Dispatched::Reply(Reply::undecodable(&e)),
        }
    }

    /// Dispatches an already decoded message with a transport-owned
    /// cancellation signal.
    ///
    /// The request is admitted and started at once, in the call; the
    /// returned future owns what it needs (it borrows neither the server
    /// nor the message) and finishes the request when polled.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use snodo::{CancelSignal, Dispatched, Server, TransportInfo};
    /// let server = Server::builder("demo", "1.0.0").build().unwrap();
    /// let message = snodo::model::decode(br#"{"jsonrpc":"2.0","id":7,"method":"server/discover",
    ///     "params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#, server.limits()).unwrap();
    /// let answer = server.handle(message, TransportInfo::default(), CancelSignal::new());
    /// drop(server);
    /// let Dispatched::Reply(reply) = tokio::spawn(answer).await.unwrap() else { panic!() };
    /// assert!(reply.body.starts_with(br#"{"jsonrpc":"2.0","id":7,"result":"#));
    /// # });
    /// ```
    pub fn handle(
        &self,
        message: Message,
        transport: TransportInfo,
        cancel: CancelSignal,
    ) -> impl Future<Output = Dispatched> + Send + use<> {
        let Message::Request(request) = message else {
            return Handling::done(Dispatched::Nothing);
        };
        let call = ServerCall::start(&request, &transport, Era::Modern, &self.inner.capture);
        let id = request.id.clone();
        self.start_background();
        let mut admitted = match self.admit(request, &transport) {
            Ok(a) => a,
            Err(f) => {
                call.error(&f.error);
                return Handling::done(f.refuse(&id));
            }
        };
        let listen = matches!(admitted.route, Route::Known(Method::Listen));
        let wants_stream =
            listen || admitted.meta.progress_token.is_some() || admitted.meta.log_level.is_some();
        if !wants_stream {
            let cx = self.context(&mut admitted, transport, cancel, None);
            // Started in the request's span: what routing answers without
            // waiting is answered here.
            let route = {
                let _in = call.span().enter();
                self.route(admitted, cx)
            };
            return Handling::Routing {
                route,
                call,
                id,
                server: self.clone(),
            };
        }
        let span = call.span().clone();
        let (tx, rx) = mpsc::channel(64);
        let server = self.clone();
        if listen {
            let opened = match self.open_listen(&admitted, &transport) {
                Ok(opened) => opened,
                Err(f) => {
                    call.error(&f.error);
                    return Handling::done(Dispatched::Reply(Reply::error(
                        f.status,
                        Some(&id),
                        &f.error,
                    )));
                }
            };
            let signal = cancel.clone();
            // Opened is answered: the stream ending later (the client
            // closing it) is no failure.
            call.ok();
            let future = async move {
                let _open = Gauge::ListenStreams.hold();
                let _call = call;
                server.listen(id, opened, tx, signal).await
            }
            .instrument(span);
            let stream = ResponseStream::new(future, rx, cancel, true);
            return Handling::done(Dispatched::Stream(stream));
        }
        let sink = Sink::new(
            tx,
            admitted.meta.progress_token.clone(),
            admitted.meta.log_level,
        );
        let cx = self.context(
            &mut admitted,
            transport,
            cancel.clone(),
            Some(Arc::new(sink)),
        );
        let future = async move {
            let out = server.route(admitted, cx).await;
            observe(&call, &out);
            Some(server.finish(&id, out).body.to_vec())
        }
        .instrument(span);
        Handling::done(Dispatched::Stream(ResponseStream::spawned(
            future, rx, cancel,
        )))
    }

    /// Encodes a routed outcome as a reply.
    pub(super) fn finish(&self, id: &RequestId, out: Result<Routed, Failure>) -> Reply {
        match out {
            // The usual result carries neither member of the stamp: it is
            // encoded with the stamp's bytes appended (no copy of the server
            // info into the map, no re-encoding of it).
            Ok(Routed::Object(result))
                if !result.contains_key("_meta") && !result.contains_key("resultType") =>
            {
                Reply::ok(wire::encode_result_with_tail(
                    id,
                    &result,
                    self.inner.result_tail.as_bytes(),
                ))
            }
            Ok(Routed::Object(mut result)) => {
                protocol::stamp_result(&mut result, &self.inner.info);
                Reply::ok(wire::encode_result(id, &result))
            }
            Ok(Routed::Tool(result)) if !result.has_protocol_members() => Reply::ok(
                wire::encode_result_with_tail(id, &result, self.inner.result_tail.as_bytes()),
            ),
            Ok(Routed::Tool(result)) => self.finish(id, Ok(Routed::Object(result.into_map()))),
            Ok(Routed::Encoded(result)) => Reply::ok(wire::encode_raw_result(id, &result)),
            Err(f) => Reply::error(f.status, Some(id), &f.error),
        }
    }

    /// Dispatches a JSON value in process and returns the JSON response, if
    /// any (`None` for notifications). Notifications a streamed request emits
    /// are dropped; use [`Server::dispatch_collect`] to see them.
    pub async fn dispatch_value(&self, message: Value) -> Option<Value> {
        let mut frames = self.dispatch_collect(message).await;
        frames.pop()
    }

    /// Dispatches a JSON value in process and returns every frame sent for it:
    /// notifications first, then the response (empty for notifications).
    pub async fn dispatch_collect(&self, message: Value) -> Vec<Value> {
        use futures_util::StreamExt;
        let Ok(bytes) = serde_json::to_vec(&message) else {
            return Vec::new();
        };
        match self.dispatch(&bytes, TransportInfo::default()).await {
            Dispatched::Nothing => Vec::new(),
            Dispatched::Reply(reply) | Dispatched::Forbidden(super::Forbidden { reply, .. }) => {
                serde_json::from_slice(&reply.body).into_iter().collect()
            }
            Dispatched::Stream(stream) => {
                stream
                    .filter_map(|frame| async move { serde_json::from_slice(&frame).ok() })
                    .collect()
                    .await
            }
        }
    }

    /// Calls a tool in process with a well-formed 2026-07-28 request and
    /// returns its result object, or the JSON-RPC error.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, Error> {
        let request = protocol::in_process_request(
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        let response = self
            .dispatch_value(request)
            .await
            .ok_or_else(|| Error::internal("no response"))?;
        if let Some(result) = response.get("result") {
            return Ok(result.clone());
        }
        Err(Error::from_json(
            response.get("error").unwrap_or(&Value::Null),
        ))
    }

    /// Builds the handler's context, moving what it needs out of the
    /// admitted request (no copies of `_meta` or the arguments).
    pub(super) fn context(
        &self,
        admitted: &mut Admitted,
        transport: TransportInfo,
        cancel: CancelSignal,
        sink: Option<Arc<Sink>>,
    ) -> Context {
        let mrtr = matches!(
            admitted.route,
            Route::Known(Method::ToolsCall | Method::PromptsGet | Method::ResourcesRead)
        );
        let (mut input_responses, mut request_state, mut arguments, mut target) =
            (None, None, None, None);
        let mut salient_params = Map::new();
        if mrtr {
            let params = &mut admitted.params;
            if let Some(Value::Object(map)) = params.remove("inputResponses") {
                input_responses = Some(map);
            }
            if let Some(Value::String(state)) = params.remove("requestState") {
                request_state = Some(state);
            }
            arguments = admitted
                .arguments
                .take()
                .map(|a| Arc::new(Value::Object(a)));
            target = admitted.target.take();
            // What is left is the handler's to read: moved into the
            // context, not copied.
            salient_params = std::mem::take(params);
        }
        let meta = &mut admitted.meta;
        Context::new(
            RequestInfo {
                protocol_version: std::mem::take(&mut meta.protocol_version),
                client_info: meta.client_info.take(),
                client_capabilities: std::mem::take(&mut meta.client_capabilities),
                request_id: Some(admitted.id.clone()),
                method: match admitted.route {
                    Route::Known(m) => std::borrow::Cow::Borrowed(m.as_str()),
                    Route::Extension(_) => std::borrow::Cow::Owned(admitted.method.clone()),
                },
                meta: std::mem::take(&mut meta.raw),
                transport,
                sink,
                input_responses,
                request_state,
                target,
                salient_params,
                arguments,
                events: self.inner.events.clone(),
                state: self.inner.state.clone(),
                task: None,
            },
            // The handler's own signal: the transport's cancellations reach it,
            // and a request timeout fires it without silencing the answer.
            cancel.child(),
        )
    }

    /// Routes an admitted request under the server's request timeout
    /// ([`ServerBuilder::request_timeout`](crate::ServerBuilder::request_timeout)):
    /// past it the handler's cancellation signal fires and the request fails
    /// with `-32603 Request timed out`, whatever the transport.
    ///
    /// The timer is armed only once the request has to wait: most requests
    /// finish on their first poll and never touch the timer wheel. The
    /// routing future is made here, at once, and held in place by the
    /// returned one (not an `async fn`, whose state would keep the admitted
    /// request beside the future that took it).
    pub(super) fn route(
        &self,
        admitted: Admitted,
        cx: Context,
    ) -> Timed<Routing<impl Future<Output = Result<Routed, Failure>> + Send + use<>>> {
        let signal = cx.cancellation().clone();
        let deadline = tokio::time::Instant::now() + self.inner.request_timeout;
        Timed {
            work: self.route_now(admitted, cx),
            timer: None,
            deadline,
            signal,
        }
    }

    /// Starts what `admitted` asks for: the answers made without waiting
    /// are made here, a tool call is held in place, the other methods are
    /// boxed.
    fn route_now(
        &self,
        admitted: Admitted,
        cx: Context,
    ) -> Routing<impl Future<Output = Result<Routed, Failure>> + Send + use<>> {
        let Admitted {
            route,
            params,
            target,
            catalog,
            method,
            tool,
            ..
        } = admitted;
        let method = match route {
            Route::Known(m) => m,
            Route::Extension(i) => {
                return Routing::other(async move {
                    catalog.extensions[i]
                        .handle(&method, params, cx)
                        .await
                        .map(Routed::Object)
                        .map_err(Failure::ok)
                });
            }
        };
        let server = self.clone();
        match method {
            Method::Discover => Routing::ready(Ok(Routed::Object(self.discover(&catalog)))),
            Method::ToolsList => Routing::ready(self.list_page(
                &cx,
                &params,
                "tools/list",
                "tools",
                &catalog.tools.listing,
                |key| super::Item::Tool(key),
            )),
            Method::ResourcesList => Routing::ready(self.list_page(
                &cx,
                &params,
                "resources/list",
                "resources",
                &catalog.resource_list,
                |key| super::Item::Resource(key),
            )),
            Method::ResourceTemplatesList => Routing::ready(self.list_page(
                &cx,
                &params,
                "resources/templates/list",
                "resourceTemplates",
                &catalog.template_list,
                |key| super::Item::Resource(key),
            )),
            Method::PromptsList => Routing::ready(self.list_page(
                &cx,
                &params,
                "prompts/list",
                "prompts",
                &catalog.prompt_list,
                |key| super::Item::Prompt(key),
            )),
            Method::ToolsCall => match tool {
                Some(entry) => Routing::Call {
                    call: server.call(entry, cx),
                },
                None => Routing::ready(Err(Error::internal("tools/call was not admitted").into())),
            },
            Method::ResourcesRead => {
                Routing::other(async move { server.read(&catalog, cx).await.map(Routed::Object) })
            }
            Method::PromptsGet => {
                Routing::other(
                    async move { server.get_prompt(&catalog, cx).await.map(Routed::Object) },
                )
            }
            Method::Complete => Routing::other(async move {
                server
                    .complete(&catalog, params, cx)
                    .await
                    .map(Routed::Object)
            }),
            Method::TasksGet => Routing::other(async move {
                server
                    .tasks_get(target.as_deref(), &cx)
                    .await
                    .map(Routed::Object)
            }),
            Method::TasksUpdate => Routing::other(async move {
                server
                    .tasks_update(target.as_deref(), &params, &cx)
                    .await
                    .map(Routed::Object)
            }),
            Method::TasksCancel => Routing::other(async move {
                server
                    .tasks_cancel(target.as_deref(), &cx)
                    .await
                    .map(Routed::Object)
            }),
            Method::Listen => {
                Routing::ready(Err(Error::internal("subscriptions are streamed").into()))
            }
        }
    }

    /// One page of a list, filtered by the policy before paging, spliced
    /// from the items' encoded text.
    fn list_page(
        &self,
        cx: &Context,
        params: &Map<String, Value>,
        method: &str,
        key: &str,
        listing: &Listing,
        item: fn(&str) -> super::Item<'_>,
    ) -> Result<Routed, Failure> {
        let listing = listing.for_client(cx.client_capabilities());
        let revision = cx.protocol_version();
        let legacy = Revision::parse(revision).filter(|r| r.is_legacy());
        let (size, cache, tail) = match legacy {
            None => (
                self.inner.page_size,
                Some(&self.inner.list_cache),
                self.inner.result_tail.as_str(),
            ),
            Some(_) => (self.inner.page_size, None, ""),
        };
        let listed = listing.in_revision(legacy);
        let by_scope = self.hides_by_scope() && cx.principal().is_some();
        let catalog = by_scope.then(|| self.catalog());
        let filtering = self.inner.policy.is_some() || by_scope;
        let page = if filtering {
            let seen: Vec<&str> = listing
                .keys
                .iter()
                .zip(&listed.items)
                .filter(|(key, _)| {
                    let it = item(key);
                    self.inner
                        .policy
                        .as_deref()
                        .is_none_or(|p| p.can_see(cx.principal(), it))
                        && catalog
                            .as_deref()
                            .is_none_or(|c| self.scope_visible(c, cx.principal(), it))
                })
                .map(|(_, text)| text.as_str())
                .collect();
            let digest = list::for_revision(list::catalog_digest(&seen), revision);
            list::page(method, key, &seen, digest, size, params, cache, tail)?
        } else {
            let digest = list::for_revision(listed.digest, revision);
            list::page(
                method,
                key,
                &listed.items,
                digest,
                size,
                params,
                cache,
                tail,
            )?
        };
        Ok(Routed::Encoded(page))
    }

    fn discover(&self, catalog: &Catalog) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert(
            "supportedVersions".into(),
            protocol::SUPPORTED_VERSIONS
                .iter()
                .map(|v| Value::from(*v))
                .collect(),
        );
        out.insert("capabilities".into(), catalog.capabilities.clone());
        if let Some(text) = &self.inner.instructions {
            out.insert("instructions".into(), text.clone().into());
        }
        self.inner.discover_cache.apply(&mut out);
        out
    }

    pub(super) fn policy(&self) -> Option<&dyn super::Policy> {
        self.inner.policy.as_deref()
    }
}
