//! Client configuration, per-request options and the application's handlers.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use crate::BoxError;
use crate::context::{ElicitAction, ElicitResponse};
use crate::protocol::LogLevel;

pub use crate::future::BoxFuture;

pub(crate) use crate::protocol::legacy::TOLERATED_LEGACY;
pub use crate::protocol::legacy::{LEGACY_VERSIONS, MODERN_VERSIONS};

/// The most items one whole listing may hold, all its pages together,
/// unless [`ClientBuilder::max_listing_items`] says otherwise: a hundred
/// times the tools a host can usefully show a model, and a bound on what a
/// server can make the client (and a proxy in front of it) hold.
pub const DEFAULT_MAX_LISTING_ITEMS: usize = 10_000;

/// The most bytes the items of one whole listing may take as compact JSON,
/// all its pages together, unless [`ClientBuilder::max_listing_bytes`] says
/// otherwise: one message at the default message limit, so that any one
/// page the client accepts fits, and a bound on memory (a listing parsed
/// takes about ten times its JSON size).
pub const DEFAULT_MAX_LISTING_BYTES: usize = 16 * 1024 * 1024;

/// Which protocol revision the client speaks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum VersionPolicy {
    /// Probe with `server/discover` at 2026-07-28 and fall back to the
    /// `initialize` handshake (2025-11-25, then 2025-06-18) when the server
    /// gives no sign of speaking a modern revision.
    #[default]
    Auto,
    /// Speak exactly this revision (`"2026-07-28"`, `"2025-11-25"` or
    /// `"2025-06-18"`).
    Pin(String),
}

/// A `notifications/progress` update for one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far (increases with every update).
    pub progress: f64,
    /// The total, if the server knows it.
    pub total: Option<f64>,
    /// A human-readable message, if any.
    pub message: Option<String>,
}

impl Progress {
    pub(crate) fn from_params(params: &Map<String, Value>) -> Option<Self> {
        Some(Self {
            progress: params.get("progress")?.as_f64()?,
            total: params.get("total").and_then(Value::as_f64),
            message: params
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string),
        })
    }
}

/// A `notifications/message` log entry from the server.
#[derive(Debug, Clone, PartialEq)]
pub struct LogMessage {
    /// The syslog level name (`"info"`, `"error"`, ...).
    pub level: String,
    /// The logger name, if any.
    pub logger: Option<String>,
    /// The logged data.
    pub data: Value,
}

impl LogMessage {
    pub(crate) fn from_params(params: &Map<String, Value>) -> Self {
        Self {
            level: params
                .get("level")
                .and_then(Value::as_str)
                .unwrap_or("info")
                .to_string(),
            logger: params
                .get("logger")
                .and_then(Value::as_str)
                .map(str::to_string),
            data: params.get("data").cloned().unwrap_or(Value::Null),
        }
    }
}

/// How the server wants the user to answer an elicitation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitMode {
    /// Fill a form described by a flat JSON Schema object.
    Form {
        /// The `requestedSchema`.
        schema: Value,
    },
    /// Visit a URL (`accept` means consent to open it).
    Url {
        /// The URL to open.
        url: String,
    },
}

/// An `elicitation/create` request from the server (an MRTR input request,
/// or a server-initiated request on the legacy wire).
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitRequest {
    /// The question to show the user.
    pub message: String,
    /// Form or URL mode.
    pub mode: ElicitMode,
    /// The request's raw params.
    pub params: Value,
}

impl ElicitRequest {
    /// Reads the params of `elicitation/create`; `None` if malformed.
    pub fn from_params(params: &Value) -> Option<Self> {
        let message = params.get("message")?.as_str()?.to_string();
        let mode = match params.get("mode").and_then(Value::as_str).unwrap_or("form") {
            "url" => ElicitMode::Url {
                url: params.get("url")?.as_str()?.to_string(),
            },
            "form" => ElicitMode::Form {
                schema: params
                    .get("requestedSchema")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object"})),
            },
            _ => return None,
        };
        Some(Self {
            message,
            mode,
            params: params.clone(),
        })
    }

    /// The `default` of every form property that declares one.
    ///
    /// ```
    /// use snodo::client::ElicitRequest;
    /// let req = ElicitRequest::from_params(&serde_json::json!({
    ///     "message": "Who?",
    ///     "requestedSchema": {"type": "object", "properties": {
    ///         "name": {"type": "string", "default": "Ada"},
    ///         "age": {"type": "integer"}
    ///     }}
    /// })).unwrap();
    /// assert_eq!(req.defaults()["name"], "Ada");
    /// assert!(!req.defaults().contains_key("age"));
    /// ```
    pub fn defaults(&self) -> Map<String, Value> {
        let mut out = Map::new();
        if let ElicitMode::Form { schema } = &self.mode
            && let Some(props) = schema.get("properties").and_then(Value::as_object)
        {
            for (name, prop) in props {
                if let Some(default) = prop.get("default") {
                    out.insert(name.clone(), default.clone());
                }
            }
        }
        out
    }

    /// An `accept` answer carrying every property's default.
    pub fn accept_defaults(&self) -> ElicitResponse {
        ElicitResponse {
            action: ElicitAction::Accept,
            content: self.defaults(),
        }
    }
}

/// The JSON form of an elicitation answer (`ElicitResult`).
///
/// ```
/// use snodo::handler::{ElicitAction, ElicitResponse};
/// let answer = ElicitResponse { action: ElicitAction::Decline, content: Default::default() };
/// assert_eq!(snodo::client::elicit_result(&answer), serde_json::json!({"action": "decline"}));
/// ```
pub fn elicit_result(response: &ElicitResponse) -> Value {
    let action = match response.action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    };
    let mut out = Map::new();
    out.insert("action".into(), action.into());
    if response.action == ElicitAction::Accept && !response.content.is_empty() {
        out.insert("content".into(), Value::Object(response.content.clone()));
    }
    Value::Object(out)
}

/// A client root (a `file://` URI the server may work in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The `file://` URI.
    pub uri: String,
    /// A display name.
    pub name: Option<String>,
}

impl Root {
    /// A root with a name.
    pub fn new(uri: impl Into<String>, name: Option<&str>) -> Self {
        Self {
            uri: uri.into(),
            name: name.map(str::to_string),
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("uri".into(), self.uri.clone().into());
        if let Some(name) = &self.name {
            out.insert("name".into(), name.clone().into());
        }
        Value::Object(out)
    }
}

pub(crate) type ElicitFn = Arc<
    dyn Fn(ElicitRequest) -> BoxFuture<'static, Result<ElicitResponse, BoxError>> + Send + Sync,
>;
pub(crate) type SamplingFn =
    Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, BoxError>> + Send + Sync>;
pub(crate) type RootsFn =
    Arc<dyn Fn() -> BoxFuture<'static, Result<Vec<Root>, BoxError>> + Send + Sync>;
pub(crate) type LogFn = Arc<dyn Fn(LogMessage) + Send + Sync>;
pub(crate) type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;
pub(crate) type NotificationFn = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// The application's answers to what a server may ask of the client.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) form: Option<ElicitFn>,
    pub(crate) url: Option<ElicitFn>,
    pub(crate) sampling: Option<SamplingFn>,
    pub(crate) roots: Option<RootsFn>,
    pub(crate) log: Option<LogFn>,
    pub(crate) notification: Option<NotificationFn>,
}

/// Everything a connected client keeps from its builder.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) client_info: Value,
    pub(crate) extra_capabilities: Map<String, Value>,
    pub(crate) version: VersionPolicy,
    pub(crate) timeout: Duration,
    pub(crate) reset_on_progress: bool,
    pub(crate) max_total: Duration,
    pub(crate) probe_timeout: Duration,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) handlers: Handlers,
    pub(crate) max_input_rounds: usize,
    pub(crate) max_pages: usize,
    pub(crate) max_listing_items: usize,
    pub(crate) max_listing_bytes: usize,
    pub(crate) listen_buffer: usize,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) max_message_bytes: usize,
    pub(crate) oauth: Option<crate::client::oauth::OAuth>,
    pub(crate) capture: crate::telemetry::Capture,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            client_info: json!({"name": "snodo", "version": env!("CARGO_PKG_VERSION")}),
            extra_capabilities: Map::new(),
            version: VersionPolicy::Auto,
            timeout: Duration::from_secs(60),
            reset_on_progress: false,
            max_total: Duration::from_secs(600),
            probe_timeout: Duration::from_secs(10),
            headers: Vec::new(),
            handlers: Handlers::default(),
            max_input_rounds: 10,
            max_pages: 1000,
            max_listing_items: DEFAULT_MAX_LISTING_ITEMS,
            max_listing_bytes: DEFAULT_MAX_LISTING_BYTES,
            listen_buffer: 100,
            log_level: None,
            max_message_bytes: 16 * 1024 * 1024,
            oauth: None,
            capture: crate::telemetry::Capture::new(),
        }
    }
}

impl Config {
    /// The `ClientCapabilities` declared on every modern request (and, shaped
    /// for the revision, in `initialize`).
    pub(crate) fn capabilities(&self, version: &str) -> Value {
        let mut caps = self.extra_capabilities.clone();
        let h = &self.handlers;
        if h.form.is_some() || h.url.is_some() {
            let mut modes = Map::new();
            if crate::protocol::legacy::has_elicitation_modes(version) {
                if h.form.is_some() {
                    modes.insert("form".into(), json!({}));
                }
                if h.url.is_some() {
                    modes.insert("url".into(), json!({}));
                }
            }
            caps.insert("elicitation".into(), Value::Object(modes));
        }
        if h.sampling.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if h.roots.is_some() {
            caps.insert("roots".into(), json!({}));
        }
        Value::Object(caps)
    }
}

/// Builds a [`Client`](super::Client): identity, revision, timeouts, headers and handlers.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use snodo::client::Client;
/// use snodo::Server;
///
/// let server = Server::builder("demo", "1.0.0").build().unwrap();
/// let client = Client::builder()
///     .client_info("my-app", "0.1.0")
///     .timeout(std::time::Duration::from_secs(5))
///     .on_elicit_form(|req| async move { Ok(req.accept_defaults()) })
///     .connect(server)
///     .await
///     .unwrap();
/// assert_eq!(client.protocol_version(), "2026-07-28");
/// # });
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct ClientBuilder {
    pub(crate) config: Config,
    pub(crate) error: Option<String>,
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("client_info", &self.config.client_info)
            .field("version", &self.config.version)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// A builder with the defaults: automatic negotiation, 60 s per request,
    /// 10 minutes at most in total, 10 input rounds, listings of at most
    /// 1 000 pages, 10 000 items and 16 MiB.
    pub fn new() -> Self {
        Self::default()
    }

    /// The `clientInfo` sent to servers (default `snodo` and this library's version).
    pub fn client_info(mut self, name: &str, version: &str) -> Self {
        self.config.client_info = json!({"name": name, "version": version});
        self
    }

    /// Pins a protocol revision instead of negotiating.
    pub fn protocol_version(mut self, version: &str) -> Self {
        self.config.version = VersionPolicy::Pin(version.to_string());
        self
    }

    /// Sets the version policy.
    pub fn version_policy(mut self, policy: VersionPolicy) -> Self {
        self.config.version = policy;
        self
    }

    /// Adds a client capability (merged with those the handlers imply).
    pub fn capability(mut self, name: &str, value: Value) -> Self {
        self.config
            .extra_capabilities
            .insert(name.to_string(), value);
        self
    }

    /// Declares the extension `name` with its client `settings` (in
    /// `capabilities.extensions`).
    pub fn extension(mut self, name: &str, settings: Value) -> Self {
        let extensions = self
            .config
            .extra_capabilities
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = extensions {
            m.insert(name.to_string(), settings);
        }
        self
    }

    /// Declares MCP Apps ([`crate::apps`]) with the app MIME type: a server
    /// that has apps then lists its tools' `_meta.ui` and its `ui://`
    /// resources, which [`ToolDefinition::app`](crate::tool::ToolDefinition::app)
    /// and [`read_resource`](super::Client::read_resource) read.
    pub fn apps(self) -> Self {
        self.extension(crate::apps::EXTENSION, crate::apps::client_settings())
    }

    /// The default per-request timeout (60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// Whether a progress notification restarts the request timeout (default off).
    pub fn reset_timeout_on_progress(mut self, reset: bool) -> Self {
        self.config.reset_on_progress = reset;
        self
    }

    /// The most a request may take, progress or not (10 minutes).
    pub fn max_total_timeout(mut self, max: Duration) -> Self {
        self.config.max_total = max;
        self
    }

    /// How long the `server/discover` probe may take before the client falls
    /// back to `initialize` (10 s).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.config.probe_timeout = timeout;
        self
    }

    /// Adds an HTTP header sent on every request (for example `Authorization`).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(n), Ok(v)) => self.config.headers.push((n, v)),
            _ => self.error = Some(format!("invalid HTTP header {name:?}")),
        }
        self
    }

    /// Answers `401` and `403 insufficient_scope` over Streamable HTTP with
    /// OAuth: discovery, registration, the authorization-code or
    /// client-credentials grant, refresh and step-up
    /// ([`oauth`](crate::client::oauth)). Tokens go in the
    /// `Authorization` header of every request.
    pub fn oauth(mut self, oauth: crate::client::oauth::OAuth) -> Self {
        self.config.oauth = Some(oauth);
        self
    }

    /// Most input rounds one request may take before the client gives up (10).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.config.max_input_rounds = rounds;
        self
    }

    /// Most pages a list helper follows (1 000).
    pub fn max_pages(mut self, pages: usize) -> Self {
        self.config.max_pages = pages.max(1);
        self
    }

    /// Most items one whole listing may hold, all its pages together
    /// ([`DEFAULT_MAX_LISTING_ITEMS`], 10 000): the list helpers
    /// ([`Client::list_tools`](super::Client::list_tools) and the others)
    /// fail with a [`ClientErrorKind::LimitExceeded`](super::ClientErrorKind::LimitExceeded) error
    /// at the page that goes past it, and ask for no further page.
    pub fn max_listing_items(mut self, items: usize) -> Self {
        self.config.max_listing_items = items;
        self
    }

    /// Most bytes the items of one whole listing may take as compact JSON,
    /// all its pages together ([`DEFAULT_MAX_LISTING_BYTES`], 16 MiB); past
    /// it the list helpers fail as they do past
    /// [`max_listing_items`](Self::max_listing_items).
    pub fn max_listing_bytes(mut self, bytes: usize) -> Self {
        self.config.max_listing_bytes = bytes;
        self
    }

    /// How many undelivered notifications a subscription buffers (100).
    pub fn listen_buffer(mut self, size: usize) -> Self {
        self.config.listen_buffer = size.max(1);
        self
    }

    /// Asks servers for log messages at or above `level` on every request.
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.config.log_level = Some(level);
        self
    }

    /// What the request spans may record beyond the defaults (see
    /// [`telemetry`](crate::telemetry)).
    pub fn telemetry(mut self, capture: crate::telemetry::Capture) -> Self {
        self.config.capture = capture;
        self
    }

    /// The largest message accepted from a server (16 MiB). A larger answer
    /// fails the call it answers at once with
    /// a [`ClientErrorKind::LimitExceeded`](super::ClientErrorKind::LimitExceeded) error
    /// (over stdio, when the answer's `id` comes in its first 4 KiB, as
    /// every common encoder writes it).
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.config.max_message_bytes = bytes;
        self
    }

    /// Answers form-mode elicitations (declares `elicitation.form`).
    pub fn on_elicit_form<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResponse, BoxError>> + Send + 'static,
    {
        self.config.handlers.form = Some(Arc::new(move |req| Box::pin(handler(req))));
        self
    }

    /// Answers URL-mode elicitations (declares `elicitation.url`).
    pub fn on_elicit_url<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResponse, BoxError>> + Send + 'static,
    {
        self.config.handlers.url = Some(Arc::new(move |req| Box::pin(handler(req))));
        self
    }

    /// Answers `sampling/createMessage` with a `CreateMessageResult` (declares `sampling`).
    pub fn on_sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, BoxError>> + Send + 'static,
    {
        self.config.handlers.sampling = Some(Arc::new(move |params| Box::pin(handler(params))));
        self
    }

    /// Answers `roots/list` (declares `roots`).
    pub fn on_roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, BoxError>> + Send + 'static,
    {
        self.config.handlers.roots = Some(Arc::new(move || Box::pin(handler())));
        self
    }

    /// Answers `roots/list` with a fixed list (declares `roots`).
    pub fn roots(self, roots: Vec<Root>) -> Self {
        self.on_roots(move || {
            let roots = roots.clone();
            async move { Ok(roots) }
        })
    }

    /// Receives `notifications/message` log entries of every request.
    pub fn on_log(mut self, handler: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        self.config.handlers.log = Some(Arc::new(handler));
        self
    }

    /// Receives every other notification that belongs to no request or
    /// subscription (method and params).
    pub fn on_notification(
        mut self,
        handler: impl Fn(&str, &Value) + Send + Sync + 'static,
    ) -> Self {
        self.config.handlers.notification = Some(Arc::new(handler));
        self
    }
}

/// Options of one request: timeouts, progress, log level, extra `_meta`,
/// and how `input_required` results are handled.
///
/// ```
/// use snodo::client::RequestOptions;
/// use std::time::Duration;
/// let opts = RequestOptions::new()
///     .timeout(Duration::from_secs(5))
///     .reset_timeout_on_progress(true)
///     .on_progress(|p| eprintln!("{} / {:?}", p.progress, p.total));
/// # let _ = opts;
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct RequestOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) reset_on_progress: Option<bool>,
    pub(crate) max_total: Option<Duration>,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) meta: Map<String, Value>,
    pub(crate) answer_input: Option<bool>,
    pub(crate) max_input_rounds: Option<usize>,
    pub(crate) input_responses: Option<Map<String, Value>>,
    pub(crate) request_state: Option<String>,
    /// Do not tell the server when this request times out (the version
    /// probe: an initialize-era server never knew the request).
    pub(crate) silent_timeout: bool,
    /// Declare the Tasks extension in this request's capabilities.
    pub(crate) allow_tasks: bool,
    /// HTTP headers of this request alone.
    pub(crate) headers: Vec<(http::HeaderName, http::HeaderValue)>,
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("meta", &self.meta)
            .finish_non_exhaustive()
    }
}

impl RequestOptions {
    /// Sends `name: value` with this request (over HTTP; other transports
    /// carry no headers), beside the client's own headers.
    pub fn header(mut self, name: http::HeaderName, value: http::HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// The client's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The timeout of this request.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Whether progress restarts this request's timeout.
    pub fn reset_timeout_on_progress(mut self, reset: bool) -> Self {
        self.reset_on_progress = Some(reset);
        self
    }

    /// The most this request may take in total.
    pub fn max_total_timeout(mut self, max: Duration) -> Self {
        self.max_total = Some(max);
        self
    }

    /// Asks for progress notifications (a `progressToken`) and receives them.
    pub fn on_progress(mut self, callback: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(callback));
        self
    }

    /// Asks for log messages at or above `level` for this request.
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Adds a `_meta` entry (the reserved protocol keys are set by the client).
    pub fn meta(mut self, key: &str, value: Value) -> Self {
        self.meta.insert(key.to_string(), value);
        self
    }

    /// Whether `input_required` results are answered through the client's
    /// handlers (default on); when off they are returned to the caller.
    pub fn answer_input(mut self, answer: bool) -> Self {
        self.answer_input = Some(answer);
        self
    }

    /// Most input rounds for this request.
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = Some(rounds);
        self
    }

    /// Declares the Tasks extension (`io.modelcontextprotocol/tasks`) in this
    /// request's capabilities: the server may then answer a `tools/call`
    /// with a task (see [`Client::call_tool_as_task`](crate::Client::call_tool_as_task)).
    pub fn allow_tasks(mut self, allow: bool) -> Self {
        self.allow_tasks = allow;
        self
    }

    /// Sends `inputResponses` (and `requestState`) by hand: a retry of an
    /// `input_required` result the caller answered itself.
    pub fn input_responses(mut self, responses: Map<String, Value>, state: Option<String>) -> Self {
        self.input_responses = Some(responses);
        self.request_state = state;
        self
    }
}
