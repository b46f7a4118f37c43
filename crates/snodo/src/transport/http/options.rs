//! The limits and policies of the Streamable HTTP transport.

use std::time::Duration;

use super::guard::Allowlist;

/// The default endpoint path.
const DEFAULT_ENDPOINT: &str = "/mcp";
/// The default largest header block, in bytes.
const DEFAULT_MAX_HEADER_BYTES: usize = 16 * 1024;
/// The default time a client has to send a request's headers.
const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time a client has to send a request's body.
const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The default number of connections the listener serves at once.
const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The default number of long-lived streams the listener keeps open at once.
const DEFAULT_MAX_STREAMS: usize = 4096;
/// The default number of connections one peer may hold.
const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 512;
/// The default number of streams one peer may hold open.
const DEFAULT_MAX_STREAMS_PER_PEER: usize = 512;
/// The default length of the listening socket's accept queue.
const DEFAULT_ACCEPT_BACKLOG: u32 = 1024;
/// The default number of bytes of an oversized body read and discarded so
/// that the client reads the 413.
const DEFAULT_MAX_DISCARD_BYTES: usize = 8 * 1024 * 1024;
/// The default time in-flight requests get to finish at shutdown.
const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// Longer timeouts are cut to this (about a year), so that deadlines never
/// overflow: `Duration::MAX` means "no timeout" in practice.
const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// Options of the Streamable HTTP transport, built by chaining (each method
/// takes and returns `self`).
///
/// | Option | Default | Applies to |
/// |---|---|---|
/// | [`endpoint`](Self::endpoint) | `/mcp` | service, listener |
/// | [`allowed_hosts`](Self::allowed_hosts) | `localhost`, `127.0.0.1`, `[::1]` (any port; the bound port behind [`HttpListener`](super::HttpListener)) | service, listener |
/// | [`allowed_origins`](Self::allowed_origins) | `http(s)://` + the same hosts and ports | service, listener |
/// | [`max_body_bytes`](Self::max_body_bytes) | the server's [`Limits::max_bytes`](crate::wire::Limits) (2 MiB) | service, listener |
/// | [`max_discard_bytes`](Self::max_discard_bytes) | 8 MiB | service, listener |
/// | [`body_read_timeout`](Self::body_read_timeout) | 30 s | service, listener |
/// | [`request_timeout`](Self::request_timeout) | the server's [`request_timeout`](crate::Server::request_timeout) (60 s) | service, listener |
/// | [`max_header_bytes`](Self::max_header_bytes) | 16 KiB | listener |
/// | [`header_read_timeout`](Self::header_read_timeout) | 10 s | listener |
/// | [`max_connections`](Self::max_connections) | 1024 (connections without a stream) | listener |
/// | [`max_streams`](Self::max_streams) | 4096 | listener |
/// | [`max_connections_per_peer`](Self::max_connections_per_peer) | 512 (not for loopback peers) | listener |
/// | [`max_streams_per_peer`](Self::max_streams_per_peer) | 512 (not for loopback peers) | listener |
/// | [`peer_limits_on_loopback`](Self::peer_limits_on_loopback) | off | listener |
/// | [`accept_backlog`](Self::accept_backlog) | 1024 | [`HttpListener::bind`](super::HttpListener::bind) |
/// | [`shutdown_grace`](Self::shutdown_grace) | 10 s | listener |
/// | [`sessions`](Self::sessions) | a [`MemorySessions`](super::MemorySessions): 4096 sessions, 256 per principal or address, 30 min idle | service, listener |
/// | [`replay_budget`](Self::replay_budget) | 256 MiB of resumable stream frames, all sessions together | service, listener |
///
/// Timeouts longer than about a year count as a year, so `Duration::MAX`
/// turns one off in practice.
///
/// ```
/// use std::time::Duration;
/// use snodo::transport::http::HttpOptions;
///
/// let options = HttpOptions::new()
///     .endpoint("/api/mcp")
///     .allowed_hosts(["mcp.example.com"])
///     .allowed_origins(["https://app.example.com"])
///     .request_timeout(Duration::from_secs(30));
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct HttpOptions {
    pub(super) endpoint: String,
    pub(super) hosts: Allowlist,
    pub(super) origins: Allowlist,
    pub(super) max_body_bytes: Option<usize>,
    pub(super) max_header_bytes: usize,
    pub(super) header_read_timeout: Duration,
    pub(super) body_read_timeout: Duration,
    pub(super) request_timeout: Option<Duration>,
    pub(super) max_connections: usize,
    pub(super) max_streams: usize,
    pub(super) max_connections_per_peer: usize,
    pub(super) max_streams_per_peer: usize,
    pub(super) peer_limits_on_loopback: bool,
    pub(super) accept_backlog: u32,
    pub(super) max_discard_bytes: usize,
    pub(super) shutdown_grace: Duration,
    pub(super) sessions: Option<std::sync::Arc<dyn super::SessionStore>>,
    pub(super) replay_budget: Option<std::sync::Arc<crate::server::legacy::ReplayBudget>>,
    pub(super) records: Option<crate::server::legacy::SessionRecords>,
    pub(super) caller_rate: Option<crate::server::Rate>,
    pub(super) other_paths: Option<OtherPaths>,
    #[cfg(feature = "auth")]
    pub(super) oauth: Option<crate::transport::http::oauth::ResourceServer>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("endpoint", &self.endpoint)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("request_timeout", &self.request_timeout)
            .field("max_connections", &self.max_connections)
            .field("max_streams", &self.max_streams)
            .field("max_connections_per_peer", &self.max_connections_per_peer)
            .field("max_streams_per_peer", &self.max_streams_per_peer)
            .field("peer_limits_on_loopback", &self.peer_limits_on_loopback)
            .field("accept_backlog", &self.accept_backlog)
            .field("caller_rate", &self.caller_rate)
            .finish_non_exhaustive()
    }
}

/// What answers requests to other paths.
pub(super) type OtherPaths = std::sync::Arc<
    dyn Fn(
            http::Request<bytes::Bytes>,
        ) -> std::pin::Pin<
            Box<dyn std::future::Future<Output = http::Response<super::McpBody>> + Send>,
        > + Send
        + Sync,
>;

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            endpoint: DEFAULT_ENDPOINT.to_string(),
            hosts: Allowlist::local_hosts(),
            origins: Allowlist::local_origins(),
            max_body_bytes: None,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            request_timeout: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_streams: DEFAULT_MAX_STREAMS,
            max_connections_per_peer: DEFAULT_MAX_CONNECTIONS_PER_PEER,
            max_streams_per_peer: DEFAULT_MAX_STREAMS_PER_PEER,
            peer_limits_on_loopback: false,
            accept_backlog: DEFAULT_ACCEPT_BACKLOG,
            max_discard_bytes: DEFAULT_MAX_DISCARD_BYTES,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            sessions: None,
            replay_budget: None,
            records: None,
            caller_rate: None,
            other_paths: None,
            #[cfg(feature = "auth")]
            oauth: None,
        }
    }
}

impl HttpOptions {
    /// The defaults (see the table above).
    pub fn new() -> Self {
        Self::default()
    }

    /// The path of the MCP endpoint (default `/mcp`). A missing leading `/` is
    /// added. Any other path is answered 404.
    pub fn endpoint(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.endpoint = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// Replaces the `Host` allowlist (DNS-rebinding protection).
    ///
    /// An entry is `host` (any port) or `host:port` (that port only); IPv6
    /// addresses are bracketed (`[::1]:8080`). Names are compared
    /// case-insensitively. A request whose `Host` (or HTTP/2 `:authority`) is
    /// missing or not listed is answered 403 before its body is read.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.hosts = Allowlist::hosts(hosts);
        self
    }

    /// Accepts any `Host`: for a server behind a reverse proxy that checks it,
    /// or reached under names not known in advance.
    pub fn allow_any_host(mut self) -> Self {
        self.hosts = Allowlist::Any;
        self
    }

    /// Replaces the `Origin` allowlist.
    ///
    /// An entry is a serialized origin, `scheme://host[:port]`, compared exactly
    /// (case-insensitively); an entry without a port accepts only an `Origin`
    /// without one. A request without `Origin` (any non-browser client) is
    /// accepted; one whose `Origin` is present and not listed (including
    /// `null`) is answered 403 before its body is read.
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.origins = Allowlist::origins(origins);
        self
    }

    /// Accepts any `Origin`. Only for servers that authenticate every request
    /// by other means: this disables the DNS-rebinding protection for
    /// browsers.
    pub fn allow_any_origin(mut self) -> Self {
        self.origins = Allowlist::Any;
        self
    }

    /// The largest request body, in bytes (default: the server's
    /// [`Limits::max_bytes`](crate::wire::Limits), 2 MiB). `Content-Length` is
    /// checked first, then the limit is enforced while reading; over it, the
    /// answer is 413.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = Some(bytes);
        self
    }

    /// The largest request header block, in bytes (default 16 KiB): hyper's
    /// HTTP/1.1 read buffer (never below its 8 KiB minimum; larger heads get
    /// 431) and the HTTP/2 `SETTINGS_MAX_HEADER_LIST_SIZE`. Listener only: a
    /// mounted service inherits the host server's limits.
    pub fn max_header_bytes(mut self, bytes: usize) -> Self {
        self.max_header_bytes = bytes;
        self
    }

    /// How long a client may take to send a request's headers (default 10 s).
    ///
    /// On HTTP/1.1 it also bounds an idle keep-alive connection, and on every
    /// connection the time until the first request arrives (TLS-less protocol
    /// detection included). The listener then closes the connection.
    /// Listener only.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout.min(MAX_TIMEOUT);
        self
    }

    /// How long a client may take to send a request's body once its headers
    /// arrived (default 30 s); past it the answer is 408.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout.min(MAX_TIMEOUT);
        self
    }

    /// How long one request may run once its body is read, over HTTP only
    /// (default: the server's
    /// [`ServerBuilder::request_timeout`](crate::ServerBuilder::request_timeout),
    /// which every transport applies; set this only to tighten HTTP further).
    ///
    /// Past it the request's [`CancelSignal`](crate::CancelSignal) fires, the
    /// handler future is dropped, and the client gets a JSON-RPC `-32603`
    /// "Request timed out" error carrying the request id (HTTP 200, as for
    /// other errors of admitted requests).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout.min(MAX_TIMEOUT));
        self
    }

    /// How many connections without an open stream the listener serves at
    /// once (default 1024, at least 1).
    ///
    /// A connection whose response became a long-lived stream counts against
    /// [`max_streams`](Self::max_streams) instead, so open streams never keep
    /// a call waiting. When the budget is full, the connection idle for
    /// longest (no request in flight, idle for at least 250 ms) is closed to
    /// make room for a new one; only when none is does a new connection wait (in the
    /// [accept backlog](Self::accept_backlog)) until one frees up. Idle
    /// HTTP/1.1 connections also close after the
    /// [header read timeout](Self::header_read_timeout). Listener only.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections.max(1);
        self
    }

    /// How many long-lived streams the listener keeps open at once (default
    /// 4096, at least 1): `subscriptions/listen` streams, initialize-era GET
    /// streams and streamed responses. A stream over the budget is answered
    /// 503 with `Retry-After`. Listener only.
    pub fn max_streams(mut self, streams: usize) -> Self {
        self.max_streams = streams.max(1);
        self
    }

    /// How many connections one peer (by IP address) may hold, streams
    /// included (default 512, at least 1). Further connections from it are
    /// closed at once. Loopback peers are exempt unless
    /// [`peer_limits_on_loopback`](Self::peer_limits_on_loopback) is set.
    /// Listener only.
    pub fn max_connections_per_peer(mut self, connections: usize) -> Self {
        self.max_connections_per_peer = connections.max(1);
        self
    }

    /// How many streams one peer (by IP address) may hold open (default 512,
    /// at least 1); further ones are answered 503. Loopback peers are exempt
    /// unless [`peer_limits_on_loopback`](Self::peer_limits_on_loopback) is
    /// set. Listener only.
    pub fn max_streams_per_peer(mut self, streams: usize) -> Self {
        self.max_streams_per_peer = streams.max(1);
        self
    }

    /// Applies the per-peer caps to loopback peers too (default off: behind a
    /// reverse proxy on the same host every client shares the loopback
    /// address, and a local client is trusted). Listener only.
    pub fn peer_limits_on_loopback(mut self, on: bool) -> Self {
        self.peer_limits_on_loopback = on;
        self
    }

    /// The length of the listening socket's accept queue (default 1024, at
    /// least 1), set by [`HttpListener::bind`](super::HttpListener::bind); the
    /// operating system may cap it (`net.core.somaxconn` on Linux). A
    /// listener passed to [`HttpListener::from_listener`] keeps its own.
    ///
    /// [`HttpListener::from_listener`]: super::HttpListener::from_listener
    pub fn accept_backlog(mut self, backlog: u32) -> Self {
        self.accept_backlog = backlog.max(1);
        self
    }

    /// How many bytes of an oversized request body are read and thrown away
    /// before the 413 is sent (default 8 MiB), so that a client that writes
    /// its whole body before reading still reads the answer. A body declared
    /// or found larger than [`max_body_bytes`](Self::max_body_bytes) plus this
    /// gets the 413 at once, and the connection is closed after every 413.
    pub fn max_discard_bytes(mut self, bytes: usize) -> Self {
        self.max_discard_bytes = bytes;
        self
    }

    /// How long in-flight requests may take to finish after shutdown starts
    /// (default 10 s); connections still open then are closed. Listener only.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace.min(MAX_TIMEOUT);
        self
    }

    /// Where initialize-era sessions live (default: a [`MemorySessions`]
    /// holding at most [`DEFAULT_MAX_SESSIONS`], each expiring after
    /// [`DEFAULT_SESSION_IDLE`] idle).
    ///
    /// [`MemorySessions`]: super::MemorySessions
    /// [`DEFAULT_MAX_SESSIONS`]: super::DEFAULT_MAX_SESSIONS
    /// [`DEFAULT_SESSION_IDLE`]: super::DEFAULT_SESSION_IDLE
    pub fn sessions(mut self, store: impl super::SessionStore) -> Self {
        self.sessions = Some(std::sync::Arc::new(store));
        self
    }

    /// The byte budget that the resumable streams of every initialize-era
    /// session of this endpoint share (default
    /// [`DEFAULT_REPLAY_BUDGET`](crate::server::legacy::DEFAULT_REPLAY_BUDGET),
    /// on top of each session's own
    /// [`MAX_REPLAY_BYTES`](crate::server::legacy::MAX_REPLAY_BYTES)): past
    /// it, a session's oldest kept frames go first, and a frame that still
    /// does not fit is sent but not kept for a resume. Pass the same budget
    /// to several endpoints to bound them together.
    pub fn replay_budget(
        mut self,
        budget: std::sync::Arc<crate::server::legacy::ReplayBudget>,
    ) -> Self {
        self.replay_budget = Some(budget);
        self
    }

    /// Protects the endpoint with OAuth: the listener serves the Protected
    /// Resource Metadata and every MCP request must carry a token the
    /// [`ResourceServer`](crate::transport::http::oauth::ResourceServer) accepts
    /// (see [`oauth`](crate::transport::http::oauth)). Feature `auth`.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn oauth(mut self, rs: crate::transport::http::oauth::ResourceServer) -> Self {
        self.oauth = Some(rs);
        self
    }

    /// Shares initialize-era sessions with the other nodes of a service: a
    /// session opened on any node serves requests on every node that reads
    /// the same records, and a `DELETE` on one ends it on all (see
    /// [`SessionDirectory`](crate::server::legacy::SessionDirectory)). The
    /// records are sealed with the service's keyring and name sessions by a
    /// keyed digest ([`SessionRecords`](crate::server::legacy::SessionRecords));
    /// a session's owner is then kept as a keyed digest of the principal's
    /// subject, and [`Session::owner`](crate::server::legacy::Session::owner)
    /// returns that digest. The nodes' servers must share an event bus
    /// ([`EventHub::with_bus`](crate::events::EventHub::with_bus)) for GET
    /// streams and server-initiated requests to follow a session across
    /// nodes.
    pub fn shared_sessions(mut self, records: crate::server::legacy::SessionRecords) -> Self {
        self.records = Some(records);
        self
    }

    /// Holds each caller to `rate` requests (a token bucket per caller: a
    /// burst of the rate's count, then evenly over its period). A caller
    /// is its [`Principal`](crate::Principal)'s subject when the request
    /// carries one (OAuth, or middleware), and otherwise the peer's IP
    /// address. A request over the rate is answered HTTP 429 with
    /// `Retry-After` (whole seconds) and a JSON-RPC error
    /// [`RATE_LIMITED`](crate::error::code::RATE_LIMITED) whose
    /// `data.retryAfter` gives the wait in seconds; notifications and
    /// responses pass. At most
    /// [`MAX_TRACKED_CALLERS`](crate::server::MAX_TRACKED_CALLERS) callers
    /// are tracked at once. No limit by default.
    pub fn rate_per_caller(mut self, rate: crate::server::Rate) -> Self {
        self.caller_rate = Some(rate);
        self
    }

    /// Answers requests to paths other than the endpoint (and the OAuth
    /// metadata paths) with `handler`, instead of 404: health checks,
    /// metrics or an admin page beside MCP on one listener. The request
    /// passes the same Host and Origin checks first, and its body is read
    /// whole within [`max_body_bytes`](Self::max_body_bytes) and the body
    /// timeout; no OAuth check is made (the handler guards what it
    /// serves).
    pub fn other_paths<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(http::Request<bytes::Bytes>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = http::Response<super::McpBody>> + Send + 'static,
    {
        self.other_paths = Some(std::sync::Arc::new(move |request| {
            Box::pin(handler(request))
        }));
        self
    }

    /// A [`MemorySessions`](super::MemorySessions) store with these limits.
    pub fn session_limits(self, max_sessions: usize, idle: Duration) -> Self {
        self.sessions(super::MemorySessions::new(max_sessions, idle))
    }
}
