//! The initialize-era request path: the handshake, the methods only these
//! revisions have, and the component methods run through the same router as
//! 2026-07-28, with their results shaped for the session's revision.

use std::sync::Arc;

use http::StatusCode;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::super::Server;
use super::super::admission::Lowered;
use super::super::dispatch::{Admitted, Route, Routed};
use super::super::reply::{Dispatched, Failure, Reply};
use super::super::stream::ResponseStream;
use super::{Session, shape};
use crate::context::{CancelSignal, Sink, TransportInfo};
use crate::error::code;
use crate::protocol::{LogLevel, Method, RequestMeta, Revision, keys, legacy};
use crate::telemetry::entered::in_span;
use crate::telemetry::server::{Era, ServerCall};
use crate::wire::{self, Message, Request, RequestId};
use crate::{Error, RandomUnavailable};
use tracing::Instrument as _;

/// Most bytes the client's `capabilities`, and its `clientInfo`, may take
/// (each, as JSON): a session keeps them for its lifetime.
pub const MAX_DECLARATION_BYTES: usize = 64 * 1024;

/// Longest resource URI a session may subscribe to, in bytes.
pub const MAX_SUBSCRIPTION_URI: usize = 8 * 1024;

/// A successful handshake: the new session and the encoded `initialize`
/// response.
#[derive(Debug)]
pub struct Initialized {
    /// The session the handshake opened.
    pub session: Arc<Session>,
    /// The `initialize` response.
    pub reply: Reply,
}

/// A fresh session id: 128 random bits from the operating system, as 32
/// lowercase hex digits (visible ASCII, as the transport requires).
///
/// # Errors
///
/// [`RandomUnavailable`] when the operating system's random source fails:
/// no session may be opened then (the HTTP transport answers 503).
pub fn new_session_id() -> Result<String, RandomUnavailable> {
    crate::random::hex(16)
}

/// A JSON-RPC error on an initialize-era session: HTTP 200, whatever the
/// code (a 404 would tell the client its session is gone).
fn error_reply(id: &RequestId, error: &Error) -> Dispatched {
    Dispatched::Reply(Reply::error(StatusCode::OK, Some(id), error))
}

/// [`error_reply`], recorded on the request's observation.
fn reject(observed: &ServerCall, id: &RequestId, error: &Error) -> Dispatched {
    observed.error(error);
    error_reply(id, error)
}

/// A refusal at admission, recorded on the request's observation: a JSON-RPC
/// error, or the scopes the principal lacks.
fn refuse(observed: &ServerCall, id: &RequestId, failure: Failure) -> Dispatched {
    observed.error(&failure.error);
    match failure.scopes {
        Some(_) => failure.refuse(id),
        None => error_reply(id, &failure.error),
    }
}

fn empty_result(id: &RequestId) -> Dispatched {
    Dispatched::Reply(Reply::ok(wire::encode_raw_result(id, b"{}")))
}

/// Undoes the tracking of a request in flight when it finishes.
struct Tracked {
    session: Arc<Session>,
    id: RequestId,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.session.untrack(&self.id);
    }
}

/// What one component request needs for each of its rounds.
pub(super) struct Call {
    pub(super) id: RequestId,
    pub(super) method: Method,
    pub(super) name: String,
    pub(super) params: Map<String, Value>,
    /// What the request acts on, read out of its params at decode.
    pub(super) target: Option<String>,
    /// A call's `arguments`, read out of its params at decode.
    pub(super) arguments: Option<Map<String, Value>>,
    pub(super) meta: Map<String, Value>,
    pub(super) progress_token: Option<Value>,
    /// The tool a `tools/call` names, found at admission.
    pub(super) tool: Option<Arc<crate::server::registry::ToolEntry>>,
    pub(super) session: Arc<Session>,
    pub(super) transport: TransportInfo,
    pub(super) cancel: CancelSignal,
    /// The request's span and outcome.
    pub(super) observed: ServerCall,
}

impl Server {
    /// The protocol revisions this server serves (all three unless the
    /// builder restricted them).
    pub fn revisions(&self) -> &[Revision] {
        &self.inner.revisions
    }

    /// Whether this server serves `revision`.
    pub fn serves(&self, revision: Revision) -> bool {
        self.inner.revisions.contains(&revision)
    }

    /// How long an initialize-era request waits for the client's answer to a
    /// request the server sent on a handler's behalf.
    pub fn input_timeout(&self) -> std::time::Duration {
        self.inner.input_timeout
    }

    /// Whether this server serves any initialize-era revision.
    pub fn serves_legacy(&self) -> bool {
        self.inner.revisions.iter().any(|r| r.is_legacy())
    }

    /// Answers an `initialize` request: negotiates the revision (a served
    /// initialize-era revision is echoed, anything else gets the newest one
    /// served) and opens a session, named and owned by what `open` gives
    /// (the session id, and the key of the authenticated principal, if
    /// any); `open` runs only once the handshake is admitted, and its `Err`
    /// is the answer.
    ///
    /// `transport` is what the transport knows of the exchange: where its
    /// authenticator asks the server to enforce scopes (an OAuth resource
    /// server does), the principal's grant must cover the server's default
    /// scopes, else `Err` is [`Dispatched::Forbidden`]. Any other refusal is
    /// [`Dispatched::Reply`]: malformed params (-32602), or a server that
    /// serves no initialize-era revision (-32601).
    ///
    /// ```
    /// use snodo::Server;
    /// let server = Server::builder("demo", "1.0.0").build().unwrap();
    /// let params = serde_json::json!({"protocolVersion": "2024-11-05", "capabilities": {},
    ///     "clientInfo": {"name": "c", "version": "1"}});
    /// let request = snodo::model::Request::new(
    ///     snodo::model::RequestId::Number(1),
    ///     "initialize",
    ///     params.as_object().unwrap().clone(),
    /// );
    /// let transport = snodo::handler::TransportInfo::default();
    /// let done = server.initialize(&request, &transport, || Ok((String::new(), None))).unwrap();
    /// assert_eq!(done.session.revision().as_str(), "2025-11-25");
    /// ```
    pub fn initialize(
        &self,
        request: &Request,
        transport: &TransportInfo,
        open: impl FnOnce() -> Result<(String, Option<String>), Dispatched>,
    ) -> Result<Initialized, Dispatched> {
        // The handshake passes no other admission: its scopes (the server's
        // defaults) are checked first, before a session is named.
        self.admit_scopes(transport, || {
            self.scopes_of("initialize", None, &request.params)
        })
        .map_err(|refused| refused.refuse(&request.id))?;
        let (session_id, owner) = open()?;
        let observed = ServerCall::start(
            request,
            &TransportInfo::default(),
            Era::Legacy {
                version: request
                    .params
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .and_then(|v| Revision::negotiate(v, &self.inner.revisions))
                    .map_or("", Revision::as_str),
                session: &session_id,
            },
            &self.inner.capture,
        );
        let fail = |error: Error| {
            observed.error(&error);
            Dispatched::Reply(Reply::error(StatusCode::OK, Some(&request.id), &error))
        };
        let Some(_) = self.inner.revisions.iter().find(|r| r.is_legacy()) else {
            return Err(fail(Error::method_not_found("initialize")));
        };
        let params = &request.params;
        let requested = match params.get("protocolVersion") {
            Some(Value::String(v)) => v.as_str(),
            _ => {
                return Err(fail(Error::invalid_params(
                    "initialize params need protocolVersion (a string)",
                )));
            }
        };
        let capabilities = match params.get("capabilities") {
            Some(v @ Value::Object(_)) => v.clone(),
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(_) => {
                return Err(fail(Error::invalid_params(
                    "initialize params: capabilities must be an object",
                )));
            }
        };
        let client_info = match params.get("clientInfo") {
            Some(v @ Value::Object(_)) => Some(v.clone()),
            None | Some(Value::Null) => None,
            Some(_) => {
                return Err(fail(Error::invalid_params(
                    "initialize params: clientInfo must be an object",
                )));
            }
        };
        let too_big =
            |v: &Value| !serde_json::to_string(v).is_ok_and(|t| t.len() <= MAX_DECLARATION_BYTES);
        if too_big(&capabilities) || client_info.as_ref().is_some_and(too_big) {
            return Err(fail(Error::invalid_params(format!(
                "initialize params: capabilities and clientInfo may hold at most {MAX_DECLARATION_BYTES} bytes each"
            ))));
        }
        let revision = Revision::negotiate(requested, &self.inner.revisions)
            .expect("a legacy revision is served");
        let catalog = self.catalog();
        let mut result = Map::new();
        result.insert("protocolVersion".into(), revision.as_str().into());
        result.insert(
            "capabilities".into(),
            shape::capabilities(&catalog.capabilities),
        );
        result.insert(
            "serverInfo".into(),
            shape::implementation(&self.inner.info, revision),
        );
        if let Some(text) = &self.inner.instructions {
            result.insert("instructions".into(), text.clone().into());
        }
        let session = Arc::new(Session::new(
            session_id,
            revision,
            capabilities,
            client_info,
            owner,
        ));
        session.touch();
        observed.result(&result);
        Ok(Initialized {
            session,
            reply: Reply::ok(wire::encode_result(&request.id, &result)),
        })
    }

    /// Dispatches one message of an initialize-era session: a request, a
    /// notification (`notifications/initialized`, `notifications/cancelled`)
    /// or the client's answer to a request the server sent.
    pub async fn handle_legacy(
        &self,
        message: Message,
        session: &Arc<Session>,
        transport: TransportInfo,
        cancel: CancelSignal,
    ) -> Dispatched {
        self.start_background();
        session.touch();
        let request = match message {
            Message::Request(request) => request,
            Message::Notification(n) => {
                match n.method.as_str() {
                    legacy::INITIALIZED => session.mark_initialized(),
                    "notifications/cancelled" => {
                        if let Some(id) = crate::protocol::cancelled_request(&n) {
                            session.cancel(&id);
                        }
                    }
                    _ => {}
                }
                return Dispatched::Nothing;
            }
            Message::Response(response) => {
                session.resolve(&response);
                return Dispatched::Nothing;
            }
        };
        let observed = ServerCall::start(
            &request,
            &transport,
            Era::Legacy {
                version: session.revision().as_str(),
                session: session.id(),
            },
            &self.inner.capture,
        );
        let span = observed.span().clone();
        let answer = self.legacy_request(request, session, transport, cancel, observed);
        in_span(&span, answer).await
    }

    /// A request of an initialize-era session, observed.
    async fn legacy_request(
        &self,
        request: Request,
        session: &Arc<Session>,
        transport: TransportInfo,
        cancel: CancelSignal,
        observed: ServerCall,
    ) -> Dispatched {
        let Request {
            id,
            method,
            mut params,
            meta,
            target,
            arguments,
            ..
        } = request;
        match method.as_str() {
            legacy::INITIALIZE => {
                let error =
                    Error::invalid_request("Invalid Request: the session is already initialized");
                observed.error(&error);
                return Dispatched::Reply(Reply::error(StatusCode::BAD_REQUEST, Some(&id), &error));
            }
            // The methods of this era alone pass the same scope check as the
            // rest (the defaults; a subscription's resource its own).
            legacy::PING | legacy::SET_LEVEL | legacy::SUBSCRIBE | legacy::UNSUBSCRIBE => {
                if let Err(f) = self.admit_scopes(&transport, || {
                    self.scopes_of(&method, target.as_deref(), &params)
                }) {
                    return refuse(&observed, &id, f);
                }
                return match method.as_str() {
                    legacy::PING => {
                        observed.ok();
                        empty_result(&id)
                    }
                    legacy::SET_LEVEL => match params
                        .get("level")
                        .and_then(Value::as_str)
                        .and_then(LogLevel::parse)
                    {
                        Some(level) => {
                            session.set_log_level(level);
                            observed.ok();
                            empty_result(&id)
                        }
                        None => reject(&observed, &id, &Error::invalid_params("Invalid log level")),
                    },
                    _ => self.subscription(&id, &method, target.as_deref(), session, &observed),
                };
            }
            _ => {}
        }
        let known = match Method::parse(&method) {
            Some(Method::Discover | Method::Listen) | None => {
                return reject(&observed, &id, &Error::method_not_found(&method));
            }
            // The Tasks extension does not exist in the initialize era.
            Some(m) if m.is_task_method() => {
                return reject(&observed, &id, &Error::method_not_found(&method));
            }
            Some(m) => m,
        };
        // Lowered to the 2026-07-28 form: the retry members mean nothing
        // here (the shim supplies them), the capabilities are the session's.
        params.remove("inputResponses");
        params.remove("requestState");
        let lowered = Lowered {
            target: target.as_deref(),
            params: &params,
            arguments: arguments.as_ref(),
            client_capabilities: session.client_capabilities(),
        };
        let tool = match self.admit_known(&self.catalog(), known, lowered, None, &transport) {
            Ok(tool) => tool,
            Err(f) => return refuse(&observed, &id, f),
        };
        let meta = match meta.into_value() {
            Some(Value::Object(meta)) => meta,
            None | Some(Value::Null) => Map::new(),
            Some(_) => {
                return reject(
                    &observed,
                    &id,
                    &Error::invalid_params("_meta must be an object"),
                );
            }
        };
        let progress_token = match meta.get(keys::PROGRESS_TOKEN) {
            None => None,
            Some(v @ Value::String(_)) => Some(v.clone()),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n.clone())),
            Some(_) => {
                return reject(
                    &observed,
                    &id,
                    &Error::invalid_params("progressToken must be a string or an integer"),
                );
            }
        };
        session.track(&id, &cancel);
        let call = Call {
            id: id.clone(),
            method: known,
            name: method,
            params,
            target,
            arguments,
            meta,
            progress_token,
            tool,
            session: session.clone(),
            transport,
            cancel,
            observed,
        };
        let tracked = Tracked {
            session: session.clone(),
            id,
        };
        let streams = call.progress_token.is_some() || session.log_level().is_some();
        if streams {
            return self.stream_call(call, None, tracked);
        }
        let first = self.round(&call, None, None, None).await;
        match first {
            Ok(Routed::Object(map)) if is_input_required(&map) => {
                self.stream_call(call, Some(map), tracked)
            }
            other => {
                drop(tracked);
                Dispatched::Reply(self.finish_legacy(&call, other))
            }
        }
    }

    /// `resources/subscribe` and `resources/unsubscribe`.
    fn subscription(
        &self,
        id: &RequestId,
        method: &str,
        uri: Option<&str>,
        session: &Session,
        observed: &ServerCall,
    ) -> Dispatched {
        let catalog = self.catalog();
        let subscribable = catalog
            .capabilities
            .get("resources")
            .and_then(|r| r.get("subscribe"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if !subscribable {
            return reject(observed, id, &Error::method_not_found(method));
        }
        let Some(uri) = uri else {
            return reject(observed, id, &Error::invalid_params("uri must be a string"));
        };
        if uri.len() > MAX_SUBSCRIPTION_URI {
            return reject(
                observed,
                id,
                &Error::invalid_params(format!("uri is longer than {MAX_SUBSCRIPTION_URI} bytes")),
            );
        }
        if method == legacy::SUBSCRIBE {
            if !session.subscribe(uri) {
                return reject(
                    observed,
                    id,
                    &Error::invalid_params(format!(
                        "Too many subscriptions (at most {})",
                        super::MAX_SESSION_SUBSCRIPTIONS
                    )),
                );
            }
        } else {
            session.unsubscribe(uri);
        }
        observed.ok();
        empty_result(id)
    }

    /// Runs the request on a stream: progress and log messages, the
    /// server-initiated requests of the input-required shim, then the
    /// response.
    fn stream_call(
        &self,
        call: Call,
        first: Option<Map<String, Value>>,
        tracked: Tracked,
    ) -> Dispatched {
        let (tx, rx) = mpsc::channel(64);
        let sink = Arc::new(Sink::new(
            tx.clone(),
            call.progress_token.clone(),
            call.session.log_level(),
        ));
        let server = self.clone();
        let cancel = call.cancel.clone();
        let span = call.observed.span().clone();
        let future = async move {
            let _tracked = tracked;
            let out = server.rounds(&call, first, &tx, sink).await;
            if call.cancel.is_cancelled() {
                return None;
            }
            Some(server.finish_legacy(&call, out).body.to_vec())
        }
        .instrument(span);
        Dispatched::Stream(ResponseStream::spawned(future, rx, cancel))
    }

    /// One run of the handler, with the answers of the previous round.
    pub(super) async fn round(
        &self,
        call: &Call,
        input_responses: Option<Map<String, Value>>,
        request_state: Option<String>,
        sink: Option<Arc<Sink>>,
    ) -> Result<Routed, Failure> {
        let mut params = call.params.clone();
        if let Some(responses) = input_responses {
            params.insert("inputResponses".into(), Value::Object(responses));
        }
        if let Some(state) = request_state {
            params.insert("requestState".into(), state.into());
        }
        let session = &call.session;
        let (client_capabilities, client_info) = session.declarations();
        let mut admitted = Admitted {
            id: call.id.clone(),
            method: call.name.clone(),
            route: Route::Known(call.method),
            params,
            target: call.target.clone(),
            arguments: call.arguments.clone(),
            meta: RequestMeta {
                protocol_version: session.revision().as_str().to_string(),
                client_capabilities,
                client_info,
                log_level: session.log_level(),
                progress_token: call.progress_token.clone(),
                raw: call.meta.clone(),
            },
            catalog: self.catalog(),
            tool: call.tool.clone(),
        };
        let cx = self.context(
            &mut admitted,
            call.transport.clone(),
            call.cancel.clone(),
            sink,
        );
        // The initialize-era shapes rework the result object.
        self.route(admitted, cx)
            .await
            .map(Routed::into_initialize_era)
    }

    /// Encodes the final outcome of a component request for the session.
    pub(super) fn finish_legacy(&self, call: &Call, out: Result<Routed, Failure>) -> Reply {
        let id = &call.id;
        match out {
            Ok(Routed::Tool(result)) if result.fits_initialize_era() => {
                call.observed.tool_result(&result);
                Reply::ok(wire::encode_result(id, &result))
            }
            Ok(Routed::Tool(result)) => {
                self.finish_legacy(call, Ok(Routed::Object(result.into_map())))
            }
            Ok(Routed::Object(mut map)) => {
                shape::result(&mut map);
                if call.method == Method::ToolsCall {
                    shape::tool_result(&mut map);
                }
                call.observed.result(&map);
                Reply::ok(wire::encode_result(id, &map))
            }
            Ok(Routed::Encoded(bytes)) => {
                call.observed.ok();
                Reply::ok(wire::encode_raw_result(id, &bytes))
            }
            Err(failure)
                if call.method == Method::ToolsCall
                    && matches!(
                        failure.error.code(),
                        code::MISSING_CLIENT_CAPABILITY | shape::CLIENT_FAILED
                    ) =>
            {
                // A tool can tell the model what went wrong: an `isError`
                // result, as a tool's own failure would be.
                let text = failure.error.message().to_string();
                let result = serde_json::json!({
                    "content": [{"type": "text", "text": text}],
                    "isError": true
                });
                if let Value::Object(map) = &result {
                    call.observed.result(map);
                }
                Reply::ok(wire::encode_result(id, &result))
            }
            Err(failure) => {
                let error = legacy_error(call, failure.error);
                call.observed.error(&error);
                Reply::error(StatusCode::OK, Some(id), &error)
            }
        }
    }
}

/// Whether a routed result asks the client for input.
pub(super) fn is_input_required(map: &Map<String, Value>) -> bool {
    map.get("resultType").and_then(Value::as_str) == Some("input_required")
}

/// The initialize-era form of an error: an unknown resource is -32002 (with
/// its `data.uri`); a missing client capability (-32021 has no meaning
/// here) is an internal error.
fn legacy_error(call: &Call, error: Error) -> Error {
    match error.code() {
        code::INVALID_PARAMS
            if call.method == Method::ResourcesRead
                && error.data().and_then(|d| d.get("uri")).is_some() =>
        {
            let data = error.data().cloned().unwrap_or(Value::Null);
            Error::new(-32002, "Resource not found").with_data(data)
        }
        code::MISSING_CLIENT_CAPABILITY => {
            Error::internal("The client did not declare a capability this request needs")
                .with_data(error.data().cloned().unwrap_or(Value::Null))
        }
        shape::CLIENT_FAILED => Error::internal(error.message().to_string()),
        _ => error,
    }
}
