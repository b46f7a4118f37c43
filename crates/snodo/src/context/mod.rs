//! What a handler knows about the request it serves.

mod cancel;
mod elicit;
mod notify;
mod share;
mod task_link;

pub use cancel::CancelSignal;
pub use elicit::{ElicitAction, ElicitResponse};
pub(crate) use notify::Sink;
pub use notify::{MAX_PROGRESS_MESSAGE, MAX_PROGRESS_UPDATES, ProgressError};
pub use share::Share;
pub(crate) use task_link::TaskLink;

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::wire::{LazyObject, RequestId};

/// An authenticated principal, attached by the transport or the application.
///
/// An OAuth resource server fills every field from the verified token;
/// middleware of an application's own may set just a subject.
///
/// ```
/// use snodo::Principal;
/// let p = Principal::new("user-1").with_scopes(["demo:read"]);
/// assert!(p.has_scope("demo:read"));
/// assert!(!p.has_scope("files:write"));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Principal {
    /// A stable subject identifier (user id, client id, ...).
    pub subject: String,
    /// Any claims the authenticator wants to pass on (for a JWT, its claims).
    pub claims: Value,
    /// The OAuth client the token was issued to.
    pub client_id: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the credential expires, in seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    /// The issuer that vouched for the principal.
    pub issuer: Option<String>,
}

impl Principal {
    /// A principal known by its subject alone.
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            claims: Value::Null,
            ..Self::default()
        }
    }

    /// With these claims.
    pub fn with_claims(mut self, claims: Value) -> Self {
        self.claims = claims;
        self
    }

    /// With these scopes.
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Whether the principal is an OAuth client acting for itself (a
    /// client-credentials token: its subject is its client id) rather than a
    /// user.
    pub fn is_client(&self) -> bool {
        self.client_id.as_deref() == Some(self.subject.as_str())
    }

    /// What tells principals apart wherever something belongs to one
    /// (initialize-era sessions, tasks, listen streams, sealed request
    /// state): the issuer, whether it is a client or a user, and the
    /// subject. The same subject from two issuers is two principals, and a
    /// client whose id equals a user's subject is not that user.
    ///
    /// ```
    /// use snodo::Principal;
    /// let mut user = Principal::new("svc");
    /// user.client_id = Some("web".into());
    /// let mut client = Principal::new("svc");
    /// client.client_id = Some("svc".into());
    /// assert_ne!(user.key(), client.key());
    /// ```
    pub fn key(&self) -> String {
        let issuer = self.issuer.as_deref().unwrap_or("");
        let kind = if self.is_client() { "client" } else { "user" };
        // The issuer's length first, so that no issuer and subject pair
        // reads as another.
        format!("{}:{issuer} {kind} {}", issuer.len(), self.subject)
    }
}

/// Per-request context handed to every handler.
///
/// It is cheap to clone and immutable: it carries the protocol version the
/// client asked for, its declared capabilities and info, the request id and
/// `_meta`, a cancellation signal, and whatever the transport attached (HTTP
/// headers, an authenticated principal, arbitrary typed extensions).
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<RequestInfo>,
    cancel: CancelSignal,
}

/// The parts of a [`Context`], filled in by the dispatcher.
#[derive(Debug)]
pub(crate) struct RequestInfo {
    pub(crate) protocol_version: String,
    pub(crate) client_info: Option<LazyObject>,
    pub(crate) client_capabilities: LazyObject,
    pub(crate) request_id: Option<RequestId>,
    /// The method: a known one's static name, an extension's as sent.
    pub(crate) method: std::borrow::Cow<'static, str>,
    pub(crate) meta: Map<String, Value>,
    pub(crate) transport: TransportInfo,
    /// Where progress and log notifications go, when the request asked for them.
    pub(crate) sink: Option<Arc<Sink>>,
    /// `inputResponses` of a multi round-trip retry.
    pub(crate) input_responses: Option<Map<String, Value>>,
    /// `requestState` of a multi round-trip retry (untrusted).
    pub(crate) request_state: Option<String>,
    /// What the request acts on (a tool's or prompt's name, a resource's
    /// URI), read out of its params when it was decoded.
    pub(crate) target: Option<String>,
    /// The request's params without `_meta`, the target, `arguments`,
    /// `inputResponses` and `requestState`.
    pub(crate) salient_params: Map<String, Value>,
    /// The request's `arguments` object, shared with the handler.
    pub(crate) arguments: Option<Arc<Value>>,
    /// The server's event hub.
    pub(crate) events: crate::events::EventHub,
    /// The state registered with `ServerBuilder::state`.
    pub(crate) state: Arc<http::Extensions>,
    /// The task the handler runs for, when it runs as one.
    pub(crate) task: Option<Arc<task_link::TaskLink>>,
}

/// What the transport attached to a request.
#[derive(Debug, Default, Clone)]
pub struct TransportInfo {
    /// Which transport carried the request.
    pub kind: TransportKind,
    /// The HTTP request headers (Streamable HTTP only).
    pub headers: Option<http::HeaderMap>,
    /// The authenticated principal, if any.
    pub principal: Option<Principal>,
    /// Typed values an application's middleware attached.
    pub extensions: http::Extensions,
}

impl TransportInfo {
    /// Whose share of the tables every client uses this request counts
    /// against: its principal, or its remote address when anonymous (see
    /// [`Share`]).
    pub fn share(&self) -> Share {
        let peer = self.extensions.get::<ConnectionInfo>().map(|c| c.peer.ip());
        Share::of(self.principal.as_ref().map(Principal::key).as_deref(), peer)
    }
}

/// Put in a request's extensions by an authenticator that asks the server
/// to enforce its principal's scopes (the OAuth resource server does):
/// admission then refuses a request whose component, or the server's
/// defaults, need scopes the grant lacks.
#[cfg(feature = "auth")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct EnforceScopes;

/// The connection that carried an HTTP request, as the built-in listener
/// sees it (in [`TransportInfo::extensions`]; absent when the service is
/// mounted elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionInfo {
    /// The client's address.
    pub peer: std::net::SocketAddr,
    /// The address the listener accepted on.
    pub local: std::net::SocketAddr,
    /// The request's HTTP version.
    pub http_version: http::Version,
}

/// The transport that carried a request to a server, or that a client uses.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// Called in process, without a transport.
    #[default]
    Direct,
    /// Newline-delimited JSON over a child process's pipes.
    Stdio,
    /// Streamable HTTP.
    Http,
}

impl Context {
    pub(crate) fn new(info: RequestInfo, cancel: CancelSignal) -> Self {
        Self {
            inner: Arc::new(info),
            cancel,
        }
    }

    /// A context for calling a handler directly in tests: protocol 2026-07-28, no
    /// client capabilities, no request id.
    pub fn detached() -> Self {
        Self::new(
            RequestInfo {
                protocol_version: crate::protocol::LATEST_VERSION.into(),
                client_info: None,
                client_capabilities: LazyObject::default(),
                request_id: None,
                method: std::borrow::Cow::Borrowed(""),
                meta: Map::new(),
                transport: TransportInfo::default(),
                sink: None,
                input_responses: None,
                request_state: None,
                target: None,
                salient_params: Map::new(),
                arguments: None,
                events: crate::events::EventHub::default(),
                state: Arc::default(),
                task: None,
            },
            CancelSignal::new(),
        )
    }

    /// The protocol revision of this request (e.g. `"2026-07-28"`).
    pub fn protocol_version(&self) -> &str {
        &self.inner.protocol_version
    }

    /// `io.modelcontextprotocol/clientInfo`, when the client sent it.
    pub fn client_info(&self) -> Option<&Value> {
        self.inner.client_info.as_ref().map(LazyObject::get)
    }

    /// `io.modelcontextprotocol/clientCapabilities` (an object, `{}` for none).
    pub fn client_capabilities(&self) -> &Value {
        self.inner.client_capabilities.get()
    }

    /// Whether the client declared the top-level capability `name` (e.g. `"elicitation"`).
    pub fn client_supports(&self, name: &str) -> bool {
        self.inner
            .client_capabilities
            .get()
            .get(name)
            .is_some_and(|v| !v.is_null())
    }

    /// The JSON-RPC id of the request (`None` when called directly).
    pub fn request_id(&self) -> Option<&RequestId> {
        self.inner.request_id.as_ref()
    }

    /// The JSON-RPC method of the request.
    pub fn method(&self) -> &str {
        &self.inner.method
    }

    /// The request's `params._meta` object, without the members given typed
    /// by [`Context::protocol_version`], [`Context::client_capabilities`] and
    /// [`Context::client_info`].
    pub fn meta(&self) -> &Map<String, Value> {
        &self.inner.meta
    }

    /// The transport that carried the request.
    pub fn transport(&self) -> TransportKind {
        self.inner.transport.kind
    }

    /// The HTTP request headers (Streamable HTTP only).
    pub fn headers(&self) -> Option<&http::HeaderMap> {
        self.inner.transport.headers.as_ref()
    }

    /// The authenticated principal, if a transport or middleware attached one.
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.transport.principal.as_ref()
    }

    /// A typed value that middleware attached to the request.
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner.transport.extensions.get::<T>()
    }

    /// The cancellation signal of this request.
    pub fn cancellation(&self) -> &CancelSignal {
        &self.cancel
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Reports progress. Sent only when the request carried a `progressToken`
    /// (otherwise `Err(ProgressError::NotRequested)`, which callers may ignore);
    /// values must strictly increase, at most 1 000 updates of at most 4 KiB
    /// of message each.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        if self.cancel.is_cancelled() {
            return Err(ProgressError::Closed);
        }
        match (&self.inner.sink, &self.inner.task) {
            (Some(sink), _) => sink.progress(progress, total, message).await,
            (None, Some(task)) => task.progress(progress, total, message).await,
            (None, None) => Err(ProgressError::NotRequested),
        }
    }

    /// Whether the client asked for progress on this request.
    pub fn wants_progress(&self) -> bool {
        self.inner
            .sink
            .as_ref()
            .is_some_and(|s| s.progress_token.is_some())
    }

    /// Sends a `notifications/message` log entry, if the request set
    /// `io.modelcontextprotocol/logLevel` at or below `level`. Returns whether
    /// it was sent.
    pub async fn log(&self, level: crate::protocol::LogLevel, data: impl Into<Value>) -> bool {
        self.log_as(level, None, data).await
    }

    /// Like [`Context::log`], naming the logger.
    pub async fn log_as(
        &self,
        level: crate::protocol::LogLevel,
        logger: Option<&str>,
        data: impl Into<Value>,
    ) -> bool {
        if self.cancel.is_cancelled() {
            return false;
        }
        match &self.inner.sink {
            Some(sink) => sink.log(level, logger, data.into()).await,
            None => false,
        }
    }

    /// The `inputResponses` of a multi round-trip retry, if any.
    pub fn input_responses(&self) -> Option<&Map<String, Value>> {
        self.inner.input_responses.as_ref()
    }

    /// The client's answer to the input request `key`, if it sent one.
    pub fn input_response(&self, key: &str) -> Option<&Value> {
        self.inner.input_responses.as_ref()?.get(key)
    }

    /// The client's answer to an elicitation, when it has the expected shape.
    pub fn elicitation(&self, key: &str) -> Option<ElicitResponse> {
        ElicitResponse::from_value(self.input_response(key)?)
    }

    /// The echoed `requestState` of a retry. Untrusted: open sealed state with
    /// [`crate::mrtr::StateSealer::open`].
    pub fn request_state(&self) -> Option<&str> {
        self.inner.request_state.as_deref()
    }

    /// The request's params without `_meta`, `inputResponses` and
    /// `requestState`: what sealed request state binds to. Built on each call.
    pub fn params(&self) -> Map<String, Value> {
        let mut params = self.inner.salient_params.clone();
        if let (Some(key), Some(target)) = (
            crate::wire::target_member(self.method()),
            &self.inner.target,
        ) {
            params.insert(key.into(), target.clone().into());
        }
        if let Some(args) = &self.inner.arguments {
            params.insert("arguments".into(), (**args).clone());
        }
        params
    }

    /// What the request acts on: a tool's or prompt's name, a resource's
    /// URI, when it was a string.
    pub(crate) fn target(&self) -> Option<&str> {
        self.inner.target.as_deref()
    }

    /// The request's params as [`Context::params`] gives them, without the
    /// target and `arguments`, not copied.
    pub(crate) fn salient_params(&self) -> &Map<String, Value> {
        &self.inner.salient_params
    }

    /// The request's `arguments` object (tools and prompts), shared, not copied.
    pub(crate) fn shared_arguments(&self) -> Option<Arc<Value>> {
        self.inner.arguments.clone()
    }

    /// State of type `S` registered with
    /// [`ServerBuilder::state`](crate::ServerBuilder::state); handlers usually
    /// take it as a [`State<S>`](crate::extract::State) parameter.
    pub fn state<S: Send + Sync + 'static>(&self) -> Option<&S> {
        self.inner.state.get::<S>()
    }

    /// The id of the task this call runs as, when it runs as one (see
    /// [`crate::task`]); `None` for a call answered inline.
    pub fn task_id(&self) -> Option<&str> {
        self.inner.task.as_ref().map(|t| t.lease.task_id.as_str())
    }

    /// Whether the request declared the Tasks extension
    /// (`io.modelcontextprotocol/tasks`) in its `_meta`.
    pub fn allows_tasks(&self) -> bool {
        !crate::protocol::Revision::parse(self.protocol_version()).is_some_and(|r| r.is_legacy())
            && crate::task::declared(self.client_capabilities())
    }

    /// The server's event hub, to announce list changes and resource updates.
    pub fn events(&self) -> &crate::events::EventHub {
        &self.inner.events
    }
}
