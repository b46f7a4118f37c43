//! The tower `Service` that answers Streamable HTTP requests: the one code
//! path behind both [`Server::http_service`] and the built-in listener.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Buf as _;
use bytes::Bytes;
use http::header::{ALLOW, CONNECTION, CONTENT_LENGTH, HOST, ORIGIN};
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Body;

use super::body::McpBody;
use super::guard::Allowlist;
use super::legacy::{self, Side};
use super::modern::{self, respond};
use super::options::HttpOptions;
use super::response::{json, reject, status};
use super::session::{MemorySessions, SessionStore};
use super::shared::{Shared, named_session};
use super::sse::Deadline;
use crate::server::connection::Speaks;
use crate::server::legacy::{DEFAULT_REPLAY_BUDGET, ReplayBudget};
use crate::server::{Buckets, Dispatched, Reply};
use crate::wire::{self, Message};
use crate::{BoxError, Error, Principal, Server, TransportInfo, TransportKind};

impl Server {
    /// The Streamable HTTP endpoint as a tower [`Service`](tower_service::Service),
    /// with the default [`HttpOptions`]: mount it in axum, hyper or any tower
    /// stack.
    ///
    /// The service answers only its endpoint path (`/mcp` by default) and 404
    /// elsewhere: mount it at that path, or set
    /// [`HttpOptions::endpoint`] to where it is mounted (with axum's
    /// `nest_service`, the path the service sees has the prefix removed).
    ///
    /// ```
    /// # fn demo(server: snodo::Server) {
    /// let app: axum::Router = axum::Router::new().route_service("/mcp", server.http_service());
    /// # let _ = app;
    /// # }
    /// ```
    pub fn http_service(&self) -> McpService {
        self.http_service_with(HttpOptions::default())
    }

    /// The Streamable HTTP endpoint as a tower service, with `options`. Only
    /// the options the service applies matter here (endpoint, allowlists, body
    /// limit and timeouts, request timeout); connection-level options are the
    /// host server's business.
    pub fn http_service_with(&self, options: HttpOptions) -> McpService {
        McpService::new(self.clone(), &options)
    }
}

/// The MCP endpoint as a tower service: one POST carries one JSON-RPC
/// message, answered with `application/json`, with server-sent events when
/// the request streams notifications (`subscriptions/listen`, requests to an
/// initialize-era client, and a 2026-07-28 request with a `progressToken` or
/// a `logLevel` whose handler sends a notification before its response: one
/// that sends none is answered as JSON), or with 202 for a notification.
///
/// For each request, in order:
///
/// 1. a path other than the endpoint gets 404 (empty body);
/// 2. a method other than POST, GET and DELETE gets 405 with `Allow: GET,
///    POST, DELETE` (`Allow: POST`, and 405 for GET and DELETE too, when the
///    server serves 2026-07-28 alone);
/// 3. an `Origin` that is present and not allowed gets 403, and so does a
///    `Host` (or HTTP/2 `:authority`) that is missing or not allowed; the body
///    is not read;
/// 4. GET and DELETE go to the initialize-era session they name (see
///    below);
/// 5. a `Content-Length` over the body limit gets 413, and so does a body that
///    grows past it while read (read and thrown away up to
///    [`HttpOptions::max_discard_bytes`] first, so that a client writing its
///    whole body before reading gets the answer; the connection then closes);
///    a body not read in time gets 408;
/// 6. the message is classified: a request carrying the 2026-07-28 `_meta`
///    goes to [`Server::handle`] with the request headers (the core checks
///    `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` and
///    picks 200, 400 or 404); an `initialize`, or anything with an
///    `Mcp-Session-Id`, takes the initialize-era path; a notification or a
///    response gets 202 with an empty body, a streamed request
///    `text/event-stream` (one `data:` event per frame) once a notification
///    comes before its response. Undecodable bytes go
///    to [`Server::dispatch`], which answers -32700/-32600 with 400.
///
/// **Initialize-era sessions.** `initialize` opens a session in the
/// [`SessionStore`](super::SessionStore) of [`HttpOptions`] and answers with
/// its `Mcp-Session-Id` (503 when the store is full); later requests must
/// carry it (400 without, 404 when unknown, expired or ended). JSON-RPC
/// errors of a session travel on 200. `GET` opens the session's standalone
/// stream (409 for a second one) or, with `Last-Event-ID`, resumes a broken
/// request stream; `DELETE` ends the session. A session's streamed requests
/// run on tasks of their own, so a broken connection neither cancels them
/// nor loses their response; `notifications/cancelled` does cancel.
///
/// Errors of steps 3 and 5 carry a JSON-RPC error without an id. The
/// request's extensions are handed to the handler's
/// [`Context`](crate::Context); a [`Principal`] that middleware put there
/// becomes the context's principal, and a session belongs to the principal
/// that opened it.
///
/// A 2026-07-28 handler future runs inside the response future: no task is
/// spawned and no channel is crossed (a streamed request runs inside its
/// response body). If that future or body is dropped (the client went away)
/// or the request timeout passes, the request's [`CancelSignal`](crate::CancelSignal) fires; a
/// timed-out request is answered `-32603` "Request timed out" with its id.
///
/// It needs a Tokio runtime with the time driver enabled.
#[derive(Clone)]
pub struct McpService {
    server: Server,
    config: Arc<Config>,
}

/// What the service needs from [`HttpOptions`], resolved once.
#[derive(Clone)]
struct Config {
    endpoint: Box<str>,
    hosts: Allowlist,
    origins: Allowlist,
    /// The listener's port, which the local allowlists pin to.
    bound_port: Option<u16>,
    max_body_bytes: usize,
    max_discard_bytes: usize,
    body_read_timeout: Duration,
    request_timeout: Duration,
    /// Initialize-era sessions.
    sessions: Arc<dyn SessionStore>,
    /// Their shared side, when several nodes serve them.
    shared: Option<Arc<Shared>>,
    /// What their resumable streams keep, together.
    replay_budget: Arc<ReplayBudget>,
    /// The OAuth resource server the service applies itself.
    #[cfg(feature = "auth")]
    oauth: Option<crate::transport::http::oauth::ResourceServer>,
    /// Each caller's requests, when they are held to a rate.
    callers: Option<Arc<std::sync::Mutex<Buckets>>>,
    /// What answers other paths than the endpoint.
    other_paths: Option<super::options::OtherPaths>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("endpoint", &self.endpoint)
            .field("sessions", &self.sessions.len())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("endpoint", &self.config.endpoint)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl McpService {
    fn new(server: Server, options: &HttpOptions) -> Self {
        server.start_background();
        let sessions: Arc<dyn SessionStore> = options
            .sessions
            .clone()
            .unwrap_or_else(|| Arc::new(MemorySessions::default()));
        let shared = options
            .records
            .clone()
            .map(|records| Arc::new(Shared::new(&server, sessions.clone(), records)));
        let config = Config {
            endpoint: options.endpoint.as_str().into(),
            hosts: options.hosts.clone(),
            origins: options.origins.clone(),
            bound_port: None,
            max_body_bytes: options.max_body_bytes.unwrap_or(server.limits().max_bytes),
            max_discard_bytes: options.max_discard_bytes,
            body_read_timeout: options.body_read_timeout,
            request_timeout: options
                .request_timeout
                .unwrap_or_else(|| server.request_timeout()),
            sessions,
            shared,
            replay_budget: options
                .replay_budget
                .clone()
                .unwrap_or_else(|| ReplayBudget::new(DEFAULT_REPLAY_BUDGET)),
            #[cfg(feature = "auth")]
            oauth: options.oauth.clone(),
            callers: options
                .caller_rate
                .map(|rate| Arc::new(std::sync::Mutex::new(Buckets::new(rate)))),
            other_paths: options.other_paths.clone(),
        };
        Self {
            server,
            config: Arc::new(config),
        }
    }

    /// Pins the local allowlists to the port a listener is bound to.
    pub(super) fn with_bound_port(mut self, port: u16) -> Self {
        Arc::make_mut(&mut self.config).bound_port = Some(port);
        self
    }

    /// The endpoint path.
    pub(super) fn endpoint(&self) -> &str {
        &self.config.endpoint
    }

    /// Answers one request (shared by the tower and hyper entry points).
    pub(super) fn respond_to<B>(&self, request: Request<B>) -> ResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
    {
        self.respond_to_then(request, |response| response)
    }

    /// Answers one request and passes the response through `then` (the
    /// listener's admission bookkeeping) in the same future.
    ///
    /// The future is boxed (its type is named): a host that held it in
    /// place would hold its few kilobytes for as long as the connection
    /// lives, a long-lived stream's included, where the box is freed once
    /// the response starts.
    pub(super) fn respond_to_then<B, F>(&self, request: Request<B>, then: F) -> ResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<BoxError>,
        F: FnOnce(Response<McpBody>) -> Response<McpBody> + Send + 'static,
    {
        let server = self.server.clone();
        let config = Arc::clone(&self.config);
        let (parts, body) = request.into_parts();
        ResponseFuture {
            stage: Stage::First(Box::pin(serve(server, config, parts, body, then))),
        }
    }
}

impl<B> tower_service::Service<Request<B>> for McpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> ResponseFuture {
        self.respond_to(request)
    }
}

/// The response future of [`McpService`].
///
/// It runs in two boxed stages, each small enough for the allocator's
/// cache of small blocks: the request's checks and body, then, for a
/// 2026-07-28 request, its handling.
pub struct ResponseFuture {
    stage: Stage,
}

/// Where a [`ResponseFuture`] is.
enum Stage {
    First(Pin<Box<dyn Future<Output = Step> + Send>>),
    Then(Pin<Box<dyn Future<Output = Response<McpBody>> + Send>>),
    Done,
}

/// How the first stage of an answer ends.
enum Step {
    /// The response.
    Answer(Response<McpBody>),
    /// The rest of the answer, a future of its own.
    Then(Pin<Box<dyn Future<Output = Response<McpBody>> + Send>>),
}

impl Future for ResponseFuture {
    type Output = Result<Response<McpBody>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        loop {
            let response = match &mut self.stage {
                Stage::First(first) => match std::task::ready!(first.as_mut().poll(cx)) {
                    Step::Answer(response) => response,
                    Step::Then(rest) => {
                        // The first stage is freed before the second runs.
                        self.stage = Stage::Then(rest);
                        continue;
                    }
                },
                Stage::Then(rest) => std::task::ready!(rest.as_mut().poll(cx)),
                Stage::Done => panic!("a response future polled after it finished"),
            };
            self.stage = Stage::Done;
            return Poll::Ready(Ok(response));
        }
    }
}

impl std::fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

/// Who a request's caller is, for its rate: the principal's subject, else
/// the peer's address (an IPv6 peer by its /64: one holder has them all).
fn caller_key(principal: Option<&Principal>, peer: Option<std::net::IpAddr>) -> String {
    match (principal, peer) {
        (Some(p), _) => format!("sub:{}", p.subject),
        (None, Some(std::net::IpAddr::V4(ip))) => format!("ip:{ip}"),
        (None, Some(std::net::IpAddr::V6(ip))) => {
            let [a, b, c, d, ..] = ip.segments();
            format!("ip:{a:x}:{b:x}:{c:x}:{d:x}::/64")
        }
        (None, None) => "anonymous".to_owned(),
    }
}

/// Takes a token from the caller's bucket, or makes the 429 that answers
/// a caller over the rate: the caller is the principal's subject, else the
/// peer's address.
fn over_rate(
    callers: &std::sync::Mutex<Buckets>,
    transport: &TransportInfo,
    request: &wire::Request,
) -> Option<Response<McpBody>> {
    let peer = transport
        .extensions
        .get::<crate::context::ConnectionInfo>()
        .map(|c| c.peer.ip());
    let caller = caller_key(transport.principal.as_ref(), peer);
    let mut callers = callers.lock().unwrap_or_else(|e| e.into_inner());
    let wait = callers.take(&caller, tokio::time::Instant::now()).err()?;
    let rate = callers.rate().to_string();
    drop(callers);
    let after = (wait.as_secs_f64() * 1000.0).ceil() / 1000.0;
    let error = Error::new(
        crate::error::code::RATE_LIMITED,
        format!("over the rate of {rate} requests for each caller: try again in {after} s"),
    )
    .with_data(serde_json::json!({"rate": rate, "retryAfter": after}));
    let mut response = json(
        StatusCode::TOO_MANY_REQUESTS,
        wire::encode_error(Some(&request.id), &error).into(),
    );
    response
        .headers_mut()
        .insert(http::header::RETRY_AFTER, legacy::retry_after(wait));
    Some(response)
}

/// One request, start to finish.
///
/// A 2026-07-28 request ends this stage once its body is read: the rest of
/// its answer is a future of its own (see [`ResponseFuture`]).
async fn serve<B, F>(server: Server, config: Arc<Config>, parts: Parts, body: B, then: F) -> Step
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
    F: FnOnce(Response<McpBody>) -> Response<McpBody> + Send + 'static,
{
    // Every answer leaves this block, then passes through `then`.
    let response = 'answer: {
        #[cfg(feature = "auth")]
        let mut parts = parts;
        #[cfg(feature = "auth")]
        if let Some(rs) = &config.oauth
            && (parts.uri.path() == &*config.endpoint || rs.is_metadata_path(parts.uri.path()))
            && let Err(response) = Box::pin(rs.admit(&mut parts)).await
        {
            break 'answer *response;
        }
        if parts.uri.path() != &*config.endpoint {
            let Some(other) = &config.other_paths else {
                break 'answer status(StatusCode::NOT_FOUND);
            };
            if let Err(message) = config.admit(&parts) {
                break 'answer reject(StatusCode::FORBIDDEN, message);
            }
            let bytes = match read_body(body, &parts.headers, &config).await {
                Ok(bytes) => bytes,
                Err(response) => break 'answer response,
            };
            break 'answer Box::pin(other(Request::from_parts(parts, bytes))).await;
        }
        let sessions = server.serves_legacy();
        let verb_ok = parts.method == Method::POST
            || (sessions && (parts.method == Method::GET || parts.method == Method::DELETE));
        if !verb_ok {
            let mut response = status(StatusCode::METHOD_NOT_ALLOWED);
            let allow = if sessions {
                "GET, POST, DELETE"
            } else {
                "POST"
            };
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static(allow));
            break 'answer response;
        }
        if let Err(message) = config.admit(&parts) {
            break 'answer reject(StatusCode::FORBIDDEN, message);
        }
        if parts.method != Method::POST {
            let principal = parts.extensions.get::<Principal>();
            let store = config.sessions.as_ref();
            let delete = parts.method == Method::DELETE;
            if let Some(shared) = &config.shared
                && let Some(id) = named_session(&parts.headers)
            {
                if let Err(response) = Box::pin(shared.refresh(store, id)).await {
                    break 'answer response;
                }
                let owner = shared.owner_of(id, principal);
                if delete
                    && let Some(session) = store.get(id).filter(|s| s.owner() == owner.as_deref())
                    && let Err(response) = Box::pin(shared.ended(&server, &session)).await
                {
                    break 'answer response;
                }
            }
            break 'answer legacy::session_verb(
                &server,
                store,
                config.shared.as_ref(),
                &parts.headers,
                principal,
                delete,
            );
        }
        let bytes = match read_body(body, &parts.headers, &config).await {
            Ok(bytes) => bytes,
            Err(response) => break 'answer response,
        };
        // Nothing of the decision is kept while the rest is awaited.
        let rest = match after_body(&server, &config, parts, &bytes) {
            After::Answer(response) => break 'answer response,
            After::Modern(answer) => {
                use futures_util::FutureExt as _;
                return Step::Then(Box::pin(answer.map(then)));
            }
            After::Sided(rest) => rest,
        };
        rest.await
    };
    Step::Answer(then(response))
}

/// What a POST asks for once its body is read, decided without waiting.
enum After<M> {
    /// The response.
    Answer(Response<McpBody>),
    /// A 2026-07-28 request, started: the future of its answer.
    Modern(M),
    /// A request of the initialize era (or one naming a session another
    /// replica may hold): the rest of its answer, boxed.
    Sided(Pin<Box<dyn Future<Output = Response<McpBody>> + Send>>),
}

/// Decodes a POST's body and starts what it asks for.
fn after_body(
    server: &Server,
    config: &Arc<Config>,
    mut parts: Parts,
    bytes: &[u8],
) -> After<impl Future<Output = Response<McpBody>> + Send + use<>> {
    let principal = parts.extensions.remove::<Principal>();
    let transport = TransportInfo {
        kind: TransportKind::Http,
        headers: Some(parts.headers),
        principal,
        extensions: parts.extensions,
    };
    let message = match wire::decode(bytes, server.limits()) {
        Ok(message) => message,
        // Worded (and given its status) where every transport's are.
        Err(e) => {
            let deadline = Deadline {
                at: tokio::time::Instant::now() + config.request_timeout,
                id: None,
            };
            return After::Answer(respond(Dispatched::Reply(Reply::undecodable(&e)), deadline));
        }
    };
    if let (Some(callers), Message::Request(request)) = (&config.callers, &message)
        && let Some(response) = over_rate(callers, &transport, request)
    {
        return After::Answer(response);
    }
    let empty = HeaderMap::new();
    let headers = transport.headers.as_ref().unwrap_or(&empty);
    match legacy::speaks(server, headers, &message) {
        // A streamed response carries the rest of the time into its body.
        Speaks::Modern => After::Modern(modern::answer(
            server,
            config.request_timeout,
            message,
            transport,
        )),
        speaks => After::Sided(Box::pin(sided(
            server.clone(),
            Arc::clone(config),
            speaks,
            message,
            transport,
        ))),
    }
}

/// The answer to a request of the initialize era, or to one naming a
/// session (refreshed first from the shared record, when replicas share
/// sessions).
async fn sided(
    server: Server,
    config: Arc<Config>,
    speaks: Speaks,
    message: Message,
    transport: TransportInfo,
) -> Response<McpBody> {
    let store = config.sessions.as_ref();
    let empty = HeaderMap::new();
    let headers = transport.headers.as_ref().unwrap_or(&empty);
    if let Speaks::Named = speaks
        && let Some(shared) = &config.shared
        && let Some(id) = named_session(headers)
        && let Err(response) = shared.refresh(store, id).await
    {
        return response;
    }
    let side = legacy::side(
        speaks,
        store,
        config.shared.as_deref(),
        headers,
        transport.principal.as_ref(),
    );
    match side {
        Side::Modern => modern::answer(&server, config.request_timeout, message, transport).await,
        Side::Session(session) => match &config.shared {
            None => {
                legacy::post(
                    &server,
                    session,
                    message,
                    transport,
                    config.request_timeout,
                    &config.replay_budget,
                )
                .await
            }
            Some(shared) => {
                if shared.forward(&server, &session, &message) {
                    return status(StatusCode::ACCEPTED);
                }
                let before = session.state();
                let request = message.request_id().cloned();
                let response = Box::pin(legacy::post(
                    &server,
                    session.clone(),
                    message,
                    transport,
                    config.request_timeout,
                    &config.replay_budget,
                ))
                .await;
                match (shared.changed(&server, &session, &before).await, request) {
                    // The session's record refused the change: the request
                    // fails, as it would have locally.
                    (Err(error), Some(id)) => {
                        json(StatusCode::OK, wire::encode_error(Some(&id), &error).into())
                    }
                    _ => response,
                }
            }
        },
        Side::Initialize => {
            let response = legacy::initialize(
                &server,
                store,
                config.shared.as_deref(),
                message,
                &transport,
            );
            if let Some(shared) = &config.shared
                && let Some(id) = named_session(response.headers())
                && let Some(session) = store.get(id)
                && let Err(refused) = shared.opened(&session).await
            {
                store.remove(id);
                session.end();
                return refused;
            }
            response
        }
        Side::Refused(response) => response,
    }
}

impl Config {
    /// The DNS-rebinding checks, `Origin` then `Host`; `Err` words the 403.
    fn admit(&self, parts: &Parts) -> Result<(), &'static str> {
        let bound = self.bound_port;
        match single(&parts.headers, ORIGIN) {
            Ok(None) => {}
            Ok(Some(origin)) if self.origins.allows_origin(origin, bound) => {}
            _ => return Err("Forbidden: Origin not allowed"),
        }
        let host = match parts.uri.authority() {
            Some(authority) => Some(authority.as_str()),
            None => single(&parts.headers, HOST).ok().flatten(),
        };
        match host {
            Some(host) if self.hosts.allows_host(host, bound) => Ok(()),
            _ => Err("Forbidden: Host not allowed"),
        }
    }
}

/// The one value of a header; `Err` when it is repeated or not text.
fn single(headers: &HeaderMap, name: http::header::HeaderName) -> Result<Option<&str>, ()> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(());
    }
    first.to_str().map(Some).map_err(drop)
}

/// Reads the whole body within the size limit and the body timeout.
///
/// Over the limit, up to [`HttpOptions::max_discard_bytes`] more are read and
/// thrown away before the 413, so that a client writing its whole body before
/// reading still gets the answer; a body declared larger than both is
/// refused without reading. Every 413 closes the connection.
async fn read_body<B>(
    body: B,
    headers: &HeaderMap,
    config: &Config,
) -> Result<Bytes, Response<McpBody>>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let limit = config.max_body_bytes as u64;
    let ceiling = limit.saturating_add(config.max_discard_bytes as u64);
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0)
        .max(body.size_hint().lower());
    if declared > ceiling {
        return Err(too_large());
    }
    match tokio::time::timeout(config.body_read_timeout, collect(body, limit, ceiling)).await {
        Ok(Ok(Collected::Within(bytes))) => Ok(bytes),
        Ok(Ok(Collected::TooLarge)) => Err(too_large()),
        Ok(Err(_)) => Err(reject(
            StatusCode::BAD_REQUEST,
            "Could not read the request body",
        )),
        Err(_) => Err(reject(
            StatusCode::REQUEST_TIMEOUT,
            "Request body timed out",
        )),
    }
}

/// A body read to its end, or found over the limit.
enum Collected {
    Within(Bytes),
    /// Over the limit; read (and dropped) to its end or to the ceiling.
    TooLarge,
}

/// Collects `body` up to `limit` bytes; past it keeps reading, dropping the
/// data, until the end or `ceiling` bytes in all.
async fn collect<B>(body: B, limit: u64, ceiling: u64) -> Result<Collected, BoxError>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut body = std::pin::pin!(body);
    // A body of one frame (the usual request) is kept as it came, without a
    // copy; a second frame starts the buffer.
    let mut first: Option<Bytes> = None;
    let mut kept = bytes::BytesMut::new();
    let mut seen: u64 = 0;
    while let Some(frame) = body.frame().await {
        let Ok(mut data) = frame.map_err(Into::into)?.into_data() else {
            continue;
        };
        let len = data.remaining();
        seen = seen.saturating_add(len as u64);
        if seen > ceiling {
            return Ok(Collected::TooLarge);
        }
        if seen <= limit {
            let data = data.copy_to_bytes(len);
            if first.is_none() && kept.is_empty() {
                first = Some(data);
            } else {
                if let Some(held) = first.take() {
                    kept.extend_from_slice(&held);
                }
                kept.extend_from_slice(&data);
            }
        } else {
            first = None;
            kept = bytes::BytesMut::new();
            data.advance(len);
        }
    }
    Ok(if seen > limit {
        Collected::TooLarge
    } else {
        Collected::Within(first.unwrap_or_else(|| kept.freeze()))
    })
}

/// The 413, closing the connection after it.
fn too_large() -> Response<McpBody> {
    crate::telemetry::refusals::note(
        "body",
        &"a request body over the limit (413, connection closed)",
    );
    let mut response = reject(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large");
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests {
    use http_body_util::{BodyExt as _, Full, StreamBody};

    use super::*;

    #[test]
    fn callers_are_subjects_or_addresses_and_ipv6_counts_by_its_64() {
        let ip = |s: &str| Some(s.parse::<std::net::IpAddr>().unwrap());
        let ada = Principal::new("ada");
        assert_eq!(caller_key(Some(&ada), ip("10.0.0.1")), "sub:ada");
        assert_eq!(caller_key(None, ip("10.0.0.1")), "ip:10.0.0.1");
        let one = caller_key(None, ip("2001:db8:1:2:aaaa::1"));
        let two = caller_key(None, ip("2001:db8:1:2:ffff:1:2:3"));
        assert_eq!(
            (one.as_str(), two.as_str()),
            ("ip:2001:db8:1:2::/64", "ip:2001:db8:1:2::/64")
        );
        assert_ne!(one, caller_key(None, ip("2001:db8:1:3::1")));
        assert_eq!(caller_key(None, None), "anonymous");
    }

    fn frames(parts: &[&'static str]) -> impl Body<Data = Bytes, Error = BoxError> {
        let frames = parts
            .iter()
            .map(|p| Ok::<_, BoxError>(hyper::body::Frame::data(Bytes::from_static(p.as_bytes()))));
        StreamBody::new(futures_util::stream::iter(frames.collect::<Vec<_>>()))
    }

    async fn within(collected: Collected) -> Bytes {
        match collected {
            Collected::Within(bytes) => bytes,
            Collected::TooLarge => panic!("over the limit"),
        }
    }

    #[tokio::test]
    async fn a_body_is_collected_whole_in_one_frame_or_several() {
        let one = Full::new(Bytes::from_static(b"{\"a\":1}")).map_err(|e| match e {});
        assert_eq!(
            within(collect(one, 64, 128).await.unwrap()).await,
            "{\"a\":1}"
        );
        let several = frames(&["{\"a\"", "", ":1", "}"]);
        assert_eq!(
            within(collect(several, 64, 128).await.unwrap()).await,
            "{\"a\":1}"
        );
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_in_one_frame_or_several() {
        for body in [frames(&["0123456789"]), frames(&["01234", "56789"])] {
            assert!(matches!(
                collect(body, 8, 64).await.unwrap(),
                Collected::TooLarge
            ));
        }
        // Past the ceiling, reading stops.
        let body = frames(&["0123456789", "0123456789"]);
        assert!(matches!(
            collect(body, 4, 12).await.unwrap(),
            Collected::TooLarge
        ));
    }
}
