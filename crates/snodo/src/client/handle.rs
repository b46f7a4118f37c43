//! The client handle: connecting, negotiating and every request it sends.

use super::error::Repr;
use std::collections::HashMap;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex, RwLock, Weak};

use ::http::{HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use crate::prompt::{PromptDefinition, PromptResult};
use crate::resource::{ReadResult, ResourceDefinition, TemplateDefinition};
use crate::tool::{ToolDefinition, ToolResult};
use tokio::sync::{broadcast, mpsc};

use super::ProtocolErrorKind;
use super::answer::{FromResult, RawResult};
use super::completion::{self, Completion, CompletionRef};
use super::options::{Config, Handlers};
use super::transport::{Incoming, Outgoing, Transport};
use super::version::Negotiated;
use super::{
    ClientBuilder, ClientError, ListenFilter, Pending, RequestOptions, Shared, StdioCommand,
    Subscription, Target, TransportKind, legacy, listen, listing, mrtr, negotiate, request,
    transport,
};

/// A connected MCP client. Cheap to clone; every clone shares the
/// connection.
#[derive(Clone)]
pub struct Client {
    pub(super) shared: Arc<Shared>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.shared.state();
        f.debug_struct("Client")
            .field("transport", &self.shared.transport.kind())
            .field("protocol_version", &state.version)
            .field("server_info", &state.server_info)
            .finish()
    }
}

/// Handles what arrives outside any request: initialize-era server requests,
/// log messages and change notifications.
async fn background(
    mut rx: mpsc::Receiver<Incoming>,
    transport: Weak<dyn Transport>,
    handlers: Handlers,
    events: broadcast::Sender<crate::wire::Notification>,
    version: Arc<Mutex<String>>,
) {
    while let Some(msg) = rx.recv().await {
        match msg {
            Incoming::Notification(n) => request::dispatch_notification(&handlers, &events, n),
            Incoming::Request(r) => {
                let Some(transport) = transport.upgrade() else {
                    return;
                };
                let handlers = handlers.clone();
                let version = version.lock().unwrap_or_else(|e| e.into_inner()).clone();
                tokio::spawn(async move {
                    let body = legacy::answer(&handlers, &version, r).await;
                    let out = Outgoing {
                        id: None,
                        body,
                        headers: Vec::new(),
                        long_lived: false,
                    };
                    let _ = transport.send(out).await;
                });
            }
            Incoming::Response { .. } | Incoming::Oversized { .. } => {}
        }
    }
}

impl Client {
    /// Connects with the default options (automatic negotiation, no handlers).
    ///
    /// `target` is an `http(s)://` URL (any string is taken for one, and
    /// one that is not such a URL is refused without running anything), a
    /// command line named with [`Target::command`] (refused when its program
    /// looks like a mistyped URL: `"htp://..."`, `"localhost:3000/mcp"`), a
    /// [`StdioCommand`], or a [`Server`](crate::Server).
    pub async fn connect(target: impl Into<Target>) -> Result<Client, ClientError> {
        ClientBuilder::new().connect(target).await
    }

    /// A builder for handlers, timeouts, headers and the revision.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// Connects to a Streamable HTTP endpoint (default options); never runs
    /// a program, whatever `url` holds.
    pub async fn http(url: &str) -> Result<Client, ClientError> {
        Client::connect(Target::from(url)).await
    }

    /// Starts `command` (split like a shell would) and speaks to it over
    /// stdio (default options).
    pub async fn spawn(command: &str) -> Result<Client, ClientError> {
        Client::connect(Target::Stdio(Self::command(command)?)).await
    }

    /// Parses a command line, refusing one whose program looks like a
    /// mistyped URL.
    fn command(line: &str) -> Result<StdioCommand, ClientError> {
        if let Some(reason) = Target::mistyped_url(line) {
            return Err(ClientError::transport(reason));
        }
        StdioCommand::parse(line)
    }

    pub(crate) async fn open(config: Config, target: Target) -> Result<Client, ClientError> {
        let (utx, urx) = mpsc::channel(256);
        let max = config.max_message_bytes;
        let peer = super::target::peer_of(&target);
        let transport: Arc<dyn Transport> = match target {
            Target::Http(url) if !Target::is_url(&url) => {
                // An address without its scheme is told how to write it.
                let hint = if !url.contains("://") && Target::mistyped_url(&url).is_some() {
                    format!(": write http://{url}")
                } else {
                    String::new()
                };
                return Err(ClientError::transport(format!(
                    "`{url}` is not an http:// or https:// URL{hint}"
                )));
            }
            Target::Http(url) => Arc::new(transport::http::HttpTransport::new(
                &url,
                config.headers.clone(),
                utx,
                max,
                config.oauth.clone(),
            )?),
            Target::Sse(url) => Arc::new(
                transport::legacy_sse::LegacySseTransport::connect(
                    &url,
                    config.headers.clone(),
                    utx,
                    max,
                    config.probe_timeout,
                )
                .await?,
            ),
            Target::Command(line) => Arc::new(transport::stdio::StdioTransport::spawn(
                &Self::command(&line)?,
                utx,
                max,
            )?),
            Target::Stdio(cmd) => {
                Arc::new(transport::stdio::StdioTransport::spawn(&cmd, utx, max)?)
            }
            Target::Direct(server) => {
                Arc::new(transport::direct::DirectTransport::new(server, max))
            }
        };
        let (events, _) = broadcast::channel(config.listen_buffer.max(16));
        let version = Arc::new(Mutex::new(String::new()));
        tokio::spawn(background(
            urx,
            Arc::downgrade(&transport),
            config.handlers.clone(),
            events.clone(),
            version.clone(),
        ));
        let shared = Arc::new(Shared {
            transport,
            config,
            state: RwLock::new(Negotiated::default()),
            next_id: AtomicI64::new(1),
            tool_headers: Mutex::new(HashMap::new()),
            events,
            peer,
            tails: Default::default(),
        });
        match negotiate::negotiate(&shared).await {
            Ok(n) => {
                *version.lock().unwrap_or_else(|e| e.into_inner()) = n.version.clone();
                *shared.state.write().unwrap_or_else(|e| e.into_inner()) = n;
                Ok(Client { shared })
            }
            Err(e) => {
                shared.transport.close().await;
                Err(e)
            }
        }
    }

    /// The negotiated protocol revision (e.g. `"2026-07-28"`).
    pub fn protocol_version(&self) -> String {
        self.shared.state().version.clone()
    }

    /// Whether the initialize-era wire is in use.
    pub fn is_legacy(&self) -> bool {
        self.shared.state().legacy
    }

    /// The server's `Implementation` (`name`, `version`, ...), if it sent one.
    pub fn server_info(&self) -> Option<Value> {
        self.shared.state().server_info.clone()
    }

    /// The server's capabilities (from `server/discover` or `initialize`).
    pub fn server_capabilities(&self) -> Value {
        self.shared.state().capabilities.clone()
    }

    /// The server's instructions, if any.
    pub fn instructions(&self) -> Option<String> {
        self.shared.state().instructions.clone()
    }

    /// The revisions the server says it supports.
    pub fn supported_versions(&self) -> Vec<String> {
        self.shared.state().supported_versions.clone()
    }

    /// The `Mcp-Session-Id` of an initialize-era HTTP session.
    pub fn session_id(&self) -> Option<String> {
        self.shared.transport.session_id()
    }

    /// The transport in use.
    pub fn transport_kind(&self) -> TransportKind {
        self.shared.transport.kind()
    }

    /// The client capabilities declared on requests.
    pub fn capabilities(&self) -> Value {
        self.shared.config.capabilities(&self.protocol_version())
    }

    /// The captured standard error of a stdio server started with
    /// [`StderrMode::Capture`](super::StderrMode::Capture).
    pub fn stderr(&self) -> Option<String> {
        self.shared.transport.stderr()
    }

    /// `server/discover`, fresh from the server (modern wire); on the
    /// initialize-era wire, the `initialize` result.
    pub async fn discover(&self) -> Result<Value, ClientError> {
        if self.is_legacy() {
            return Ok(self
                .shared
                .state()
                .discover
                .clone()
                .unwrap_or_else(|| json!({})));
        }
        let result = self
            .shared
            .call(
                "server/discover",
                &Map::new(),
                &RequestOptions::new(),
                Vec::new(),
            )
            .await?;
        let version = self.protocol_version();
        if let Some(n) = Negotiated::from_discover(&version, &result) {
            *self.shared.state.write().unwrap_or_else(|e| e.into_inner()) = n;
        }
        Ok(result)
    }

    /// Every item of list method `method`, all pages, within the client's
    /// bounds on pages, items and bytes.
    pub(super) async fn list_all(&self, method: &str) -> Result<Vec<Value>, ClientError> {
        let config = &self.shared.config;
        let bounds = listing::Bounds {
            max_pages: config.max_pages,
            max_items: config.max_listing_items,
            max_bytes: config.max_listing_bytes,
        };
        listing::all(method, bounds, |cursor| async move {
            self.list_page(method, cursor.as_deref()).await
        })
        .await
    }

    /// One page of a list method (`tools/list`, `resources/list`,
    /// `resources/templates/list`, `prompts/list`).
    pub async fn list_page(
        &self,
        method: &str,
        cursor: Option<&str>,
    ) -> Result<Value, ClientError> {
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), cursor.into());
        }
        let result: Value = self
            .shared
            .call(method, &params, &RequestOptions::new(), Vec::new())
            .await?;
        if !result.is_object() {
            return Err(ClientError::protocol(
                ProtocolErrorKind::MalformedResult,
                format!("{method} answered with a non-object result"),
            ));
        }
        Ok(result)
    }

    /// Every tool. Over HTTP (2026-07-28) tools whose `x-mcp-header`
    /// annotations are invalid are dropped, with a warning logged.
    pub async fn list_tools(&self) -> Result<Vec<ToolDefinition>, ClientError> {
        let tools = self.list_all("tools/list").await?;
        let enforce = self.mirrors_headers();
        let mut kept = Vec::with_capacity(tools.len());
        let mut cache = HashMap::new();
        for tool in tools {
            let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
            let Some(tool) = typed::<ToolDefinition>("tool", tool) else {
                continue;
            };
            match snodo_rules::check_header_annotations(&schema) {
                Ok(params) => {
                    cache.insert(tool.name.clone(), params);
                    kept.push(tool);
                }
                Err(e) if enforce => {
                    tracing::warn!(
                        "snodo client: dropping tool {:?}: invalid x-mcp-header annotation: {e}",
                        tool.name
                    );
                }
                Err(_) => kept.push(tool),
            }
        }
        *self
            .shared
            .tool_headers
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = cache;
        Ok(kept)
    }

    /// Every resource (an item that does not decode is dropped, with a
    /// warning logged).
    pub async fn list_resources(&self) -> Result<Vec<ResourceDefinition>, ClientError> {
        self.list_typed("resources/list", "resource").await
    }

    /// Every resource template (an item that does not decode is dropped,
    /// with a warning logged).
    pub async fn list_resource_templates(&self) -> Result<Vec<TemplateDefinition>, ClientError> {
        self.list_typed("resources/templates/list", "resource template")
            .await
    }

    /// Every prompt (an item that does not decode is dropped, with a
    /// warning logged).
    pub async fn list_prompts(&self) -> Result<Vec<PromptDefinition>, ClientError> {
        self.list_typed("prompts/list", "prompt").await
    }

    /// Every item of list method `method`, each read as `T` (a `kind`, in
    /// the warning for one that does not decode).
    async fn list_typed<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        kind: &str,
    ) -> Result<Vec<T>, ClientError> {
        let items = self.list_all(method).await?;
        Ok(items.into_iter().filter_map(|i| typed(kind, i)).collect())
    }

    /// Whether `Mcp-Param-*` headers are sent (modern Streamable HTTP).
    fn mirrors_headers(&self) -> bool {
        self.transport_kind() == TransportKind::Http && !self.is_legacy()
    }

    /// The `Mcp-Param-*` headers of a call, from the cached tool schema.
    fn param_headers(
        &self,
        name: &str,
        args: Option<&Map<String, Value>>,
    ) -> Vec<(HeaderName, HeaderValue)> {
        let (true, Some(args)) = (self.mirrors_headers(), args) else {
            return Vec::new();
        };
        let cache = self
            .shared
            .tool_headers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let Some(params) = cache.get(name) else {
            return Vec::new();
        };
        params
            .iter()
            .filter_map(|p| {
                let value = crate::protocol::headers::value_at(args, &p.path)?;
                let text = crate::protocol::headers::stringify(value)?;
                let name =
                    HeaderName::try_from(format!("mcp-param-{}", p.header.to_ascii_lowercase()))
                        .ok()?;
                Some((name, request::header_value(&text)))
            })
            .collect()
    }

    /// Calls a tool. `arguments` is a JSON object (or `null` for none).
    /// `input_required` results are answered through the client's handlers;
    /// a `-32020` header mismatch re-lists the tools and retries once.
    /// Options are set on the [`Pending`] request before awaiting it.
    pub fn call_tool(&self, name: &str, arguments: Value) -> Pending<'_, ToolResult> {
        let name = name.to_owned();
        Pending::new(move |opts| async move { self.send_call_tool(&name, arguments, opts).await })
    }

    /// Calls a tool and decodes its `structuredContent` into `T`. A result with
    /// `isError: true` is a [`ClientErrorKind::ToolFailed`](super::ClientErrorKind::ToolFailed) error; a result without
    /// structured content, or one that does not fit `T`, is
    /// a [`ClientErrorKind::Decode`](super::ClientErrorKind::Decode) error.
    ///
    /// ```no_run
    /// # async fn run(client: snodo::Client) -> Result<(), snodo::client::ClientError> {
    /// #[derive(serde::Deserialize)]
    /// struct Sum { sum: i64 }
    /// let Sum { sum } = client.call_tool_as::<Sum>("add", serde_json::json!({"a": 2, "b": 3})).await?;
    /// assert_eq!(sum, 5);
    /// # Ok(()) }
    /// ```
    pub fn call_tool_as<T: serde::de::DeserializeOwned + 'static>(
        &self,
        name: &str,
        arguments: Value,
    ) -> Pending<'_, T> {
        let name = name.to_owned();
        Pending::new(move |opts| async move {
            let result = self.send_call_tool(&name, arguments, opts).await?;
            if result.is_error() {
                return Err(Repr::ToolFailed {
                    message: result.text_content(),
                }
                .into());
            }
            let what = format!("structuredContent of tool {name:?}");
            let Some(structured) = result.structured_content() else {
                return Err(ClientError::decode(
                    what,
                    serde::de::Error::custom("the result has no structuredContent"),
                ));
            };
            T::deserialize(structured).map_err(|source| ClientError::decode(what, source))
        })
    }

    /// `tools/call` with `opts`.
    async fn send_call_tool(
        &self,
        name: &str,
        arguments: Value,
        opts: RequestOptions,
    ) -> Result<ToolResult, ClientError> {
        let result = self.send_call_tool_as(name, arguments, opts).await?;
        tool_result(name, result)
    }

    /// `tools/call` for a proxy: the result kept as the server sent it.
    pub(crate) fn forward_call(&self, name: &str, arguments: Value) -> Pending<'_, RawResult> {
        let name = name.to_owned();
        Pending::new(
            move |opts| async move { self.send_call_tool_as(&name, arguments, opts).await },
        )
    }

    /// `tools/call` with `opts`, its result read as `A`.
    async fn send_call_tool_as<A: FromResult>(
        &self,
        name: &str,
        arguments: Value,
        opts: RequestOptions,
    ) -> Result<A, ClientError> {
        let args = object_or_null(arguments, "tool arguments")?;
        let mut params = Map::new();
        params.insert("name".into(), name.into());
        if let Some(args) = args {
            params.insert("arguments".into(), Value::Object(args));
        }
        let args = || params.get("arguments").and_then(Value::as_object);
        let headers = self.param_headers(name, args());
        let result = match mrtr::run(&self.shared, "tools/call", &params, &opts, headers).await {
            Err(e)
                if e.code() == Some(crate::error::code::HEADER_MISMATCH)
                    && self.mirrors_headers() =>
            {
                self.list_tools().await?;
                let headers = self.param_headers(name, args());
                mrtr::run(&self.shared, "tools/call", &params, &opts, headers).await
            }
            other => other,
        }?;
        Ok(result)
    }

    /// Reads a resource: its contents, every member of the result kept
    /// ([`ReadResult::items`], and `serde` gives the result back as received).
    pub fn read_resource(&self, uri: &str) -> Pending<'_, ReadResult> {
        let uri = uri.to_owned();
        Pending::new(move |opts| async move {
            let mut params = Map::new();
            params.insert("uri".into(), uri.as_str().into());
            let result =
                mrtr::run(&self.shared, "resources/read", &params, &opts, Vec::new()).await?;
            serde_json::from_value(result).map_err(|source| {
                ClientError::decode(format!("result of resource {uri:?}"), source)
            })
        })
    }

    /// Gets a prompt. `arguments` is an object of strings (or `null`). The
    /// result's members are all kept ([`PromptResult::messages`], and `serde`
    /// gives the result back as received).
    pub fn get_prompt(&self, name: &str, arguments: Value) -> Pending<'_, PromptResult> {
        let name = name.to_owned();
        Pending::new(move |opts| async move {
            let mut params = Map::new();
            params.insert("name".into(), name.as_str().into());
            if let Some(map) = object_or_null(arguments, "prompt arguments")? {
                params.insert("arguments".into(), Value::Object(map));
            }
            let result = mrtr::run(&self.shared, "prompts/get", &params, &opts, Vec::new()).await?;
            serde_json::from_value(result)
                .map_err(|source| ClientError::decode(format!("result of prompt {name:?}"), source))
        })
    }

    /// Asks for completions of one argument (`completion/complete`).
    /// `context` holds arguments already resolved. A result without a
    /// well-formed `completion` member is a decode error.
    pub fn complete(
        &self,
        reference: CompletionRef,
        argument: &str,
        value: &str,
        context: Option<Map<String, Value>>,
    ) -> Pending<'_, Completion> {
        let mut params = Map::new();
        params.insert("ref".into(), reference.to_json());
        params.insert("argument".into(), json!({"name": argument, "value": value}));
        if let Some(context) = context {
            params.insert("context".into(), json!({"arguments": context}));
        }
        let argument = argument.to_owned();
        Pending::new(move |opts| async move {
            let result = self
                .shared
                .call("completion/complete", &params, &opts, Vec::new())
                .await?;
            completion::from_result(result).map_err(|source| {
                ClientError::decode(format!("completion of argument {argument:?}"), source)
            })
        })
    }

    /// Sends any request and returns its result. `params` is an object (or
    /// `null`); the client adds the protocol `_meta`.
    pub fn request(&self, method: &str, params: Value) -> Pending<'_, Value> {
        self.request_as(method, params)
    }

    /// A request for a proxy, its result kept as the server sent it.
    pub(crate) fn forward(&self, method: &str, params: Value) -> Pending<'_, RawResult> {
        self.request_as(method, params)
    }

    /// [`Client::request`], its result read as `A`.
    fn request_as<A: FromResult>(&self, method: &str, params: Value) -> Pending<'_, A> {
        let method = method.to_owned();
        Pending::new(move |opts| async move {
            let params = object_or_null(params, "request params")?.unwrap_or_default();
            match method.as_str() {
                "tools/call" | "resources/read" | "prompts/get" => {
                    mrtr::run(&self.shared, &method, &params, &opts, Vec::new()).await
                }
                _ => self.shared.call(&method, &params, &opts, Vec::new()).await,
            }
        })
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), ClientError> {
        let params = object_or_null(params, "notification params")?.unwrap_or_default();
        let wire = self.shared.wire();
        self.shared.notify_on(&wire, method, params).await
    }

    /// Opens a subscription to change notifications. On 2026-07-28 this is a
    /// `subscriptions/listen` request (acknowledged before this returns); on
    /// the initialize-era wire, the notifications the server pushes, filtered.
    pub async fn listen(&self, filter: ListenFilter) -> Result<Subscription, ClientError> {
        listen::listen(&self.shared, filter).await
    }

    /// Closes the connection: `DELETE`s an initialize-era HTTP session, or
    /// closes a stdio server's stdin, waits, then terminates it.
    pub async fn close(&self) {
        self.shared.transport.close().await;
    }
}

// `ClientBuilder` lives with the options; connecting is the handle's work.
impl ClientBuilder {
    /// Connects, negotiates the protocol revision and returns the client.
    pub async fn connect(self, target: impl Into<Target>) -> Result<Client, ClientError> {
        if let Some(error) = self.error {
            return Err(ClientError::transport(error));
        }
        Client::open(self.config, target.into()).await
    }
}

/// Tool `name`'s result, read from its wire value without a copy.
pub(super) fn tool_result(name: &str, result: Value) -> Result<ToolResult, ClientError> {
    let read = match result {
        Value::Object(map) => ToolResult::from_wire(map),
        _ => Err("a tool result must be an object"),
    };
    read.map_err(|why| {
        ClientError::decode(
            format!("result of tool {name:?}"),
            <serde_json::Error as serde::de::Error>::custom(why),
        )
    })
}

/// `value` as the JSON object a request member must be (`null` for none),
/// else the error naming `what`.
pub(super) fn object_or_null(
    value: Value,
    what: &str,
) -> Result<Option<Map<String, Value>>, ClientError> {
    match value {
        Value::Null => Ok(None),
        Value::Object(map) => Ok(Some(map)),
        _ => Err(ClientError::invalid_argument(format!(
            "{what} must be a JSON object"
        ))),
    }
}

/// A listed item read as its type; `None`, with a warning naming the item,
/// when it does not decode.
pub(super) fn typed<T: serde::de::DeserializeOwned>(kind: &str, item: Value) -> Option<T> {
    let name = item
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    match serde_json::from_value(item) {
        Ok(item) => Some(item),
        Err(e) => {
            tracing::warn!("snodo client: dropping {kind} {name:?}: malformed definition: {e}");
            None
        }
    }
}
