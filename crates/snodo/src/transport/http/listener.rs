//! The built-in listener: HTTP/1.1 (keep-alive) and HTTP/2 cleartext (prior
//! knowledge) on one TCP port, serving [`McpService`].

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::StatusCode;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::admission::{Admission, Conn, Refused, StreamSlot, Ticket};
use super::body::McpBody;
use super::options::HttpOptions;
use super::response::reject;
use super::service::{McpService, ResponseFuture};
use crate::Server;

/// hyper refuses an HTTP/1.1 read buffer below this size.
const MIN_HTTP1_BUFFER: usize = 8192;
/// How long to pause accepting after an error such as "too many open files".
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(50);
/// How long a connection asked to close (to make room) may take to finish
/// what it is doing.
const CLOSE_GRACE: Duration = Duration::from_secs(1);
/// What a client refused a stream is told to wait, in seconds.
const STREAM_RETRY_AFTER: &str = "1";
/// How often an HTTP/2 connection is pinged, to find peers that vanished.
const HTTP2_PING_INTERVAL: Duration = Duration::from_secs(30);
/// How long a ping may go unanswered before the connection is closed.
const HTTP2_PING_TIMEOUT: Duration = Duration::from_secs(20);

impl Server {
    /// Serves Streamable HTTP on `addr` (endpoint `/mcp`, default
    /// [`HttpOptions`]) until the process ends.
    ///
    /// ```no_run
    /// # async fn demo(server: snodo::Server) -> std::io::Result<()> {
    /// server.serve_http("127.0.0.1:4000".parse().unwrap()).await
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// When the address cannot be bound.
    pub async fn serve_http(&self, addr: SocketAddr) -> io::Result<()> {
        HttpListener::bind(self, addr, HttpOptions::default())
            .await?
            .run(std::future::pending())
            .await
    }

    /// Serves Streamable HTTP on an already bound `listener` until `shutdown`
    /// completes, then drains in-flight requests (see [`HttpListener::run`]).
    ///
    /// # Errors
    ///
    /// When the listener's local address cannot be read.
    pub async fn serve_http_with(
        &self,
        listener: TcpListener,
        options: HttpOptions,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        HttpListener::from_listener(self, listener, options)?
            .run(shutdown)
            .await
    }
}

/// A bound Streamable HTTP listener that has not started serving yet, so the
/// caller can learn (and print) its address first.
///
/// ```no_run
/// # async fn demo(server: snodo::Server) -> std::io::Result<()> {
/// use snodo::transport::http::{HttpListener, HttpOptions};
/// let listener = HttpListener::bind(&server, "127.0.0.1:0".parse().unwrap(), HttpOptions::new()).await?;
/// println!("{}", listener.url());
/// listener.run(std::future::pending()).await
/// # }
/// ```
///
/// Connections share [`HttpOptions::max_connections`] and long-lived streams
/// [`HttpOptions::max_streams`], with caps per peer; see
/// [`HttpOptions::max_connections`] for how room is made. With the default
/// allowlists, only `localhost`, `127.0.0.1` and
/// `[::1]` on the bound port are accepted as `Host`/`Origin`: a listener bound
/// to another interface needs [`HttpOptions::allowed_hosts`].
#[derive(Debug)]
pub struct HttpListener {
    listener: TcpListener,
    local_addr: SocketAddr,
    service: McpService,
    options: HttpOptions,
}

impl HttpListener {
    /// Binds `addr` (port 0 picks a free port) with an accept queue of
    /// [`HttpOptions::accept_backlog`].
    ///
    /// # Errors
    ///
    /// When the address cannot be bound.
    pub async fn bind(server: &Server, addr: SocketAddr, options: HttpOptions) -> io::Result<Self> {
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        #[cfg(unix)]
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        let listener = socket.listen(options.accept_backlog)?;
        Self::from_listener(server, listener, options)
    }

    /// Wraps an already bound listener.
    ///
    /// # Errors
    ///
    /// When its local address cannot be read.
    pub fn from_listener(
        server: &Server,
        listener: TcpListener,
        options: HttpOptions,
    ) -> io::Result<Self> {
        let local_addr = listener.local_addr()?;
        let service = server
            .http_service_with(options.clone())
            .with_bound_port(local_addr.port());
        Ok(Self {
            listener,
            local_addr,
            service,
            options,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL, e.g. `http://127.0.0.1:4000/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.service.endpoint())
    }

    /// Serves until `shutdown` completes, then shuts down gracefully: it stops
    /// accepting (closing the socket), lets in-flight requests finish within
    /// [`HttpOptions::shutdown_grace`] (idle connections close at once), closes
    /// whatever is left (open `subscriptions/listen` streams included), and
    /// returns.
    ///
    /// Each connection is one task; its requests run inside it (HTTP/2 streams
    /// run on tasks of their own, as hyper spawns them). A connection that sends
    /// no complete request head within [`HttpOptions::header_read_timeout`] is
    /// closed.
    ///
    /// # Errors
    ///
    /// None today: accept errors are survived (a short pause after errors
    /// such as "too many open files"). The `Result` leaves room for them.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> io::Result<()> {
        let Self {
            listener,
            service,
            options,
            ..
        } = self;
        let builder = Arc::new(connection_builder(&options));
        let admission = Arc::new(Admission::new(&options));
        let (stop, stopped) = watch::channel(());
        let mut connections = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                biased;
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        if !is_per_connection(&e) {
                            tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                        }
                        continue;
                    }
                },
            };
            let ticket = tokio::select! {
                biased;
                () = &mut shutdown => break,
                admitted = admission.admit(peer.ip()) => match admitted {
                    Ok(ticket) => ticket,
                    // Over its peer's cap: closed at once.
                    Err(_) => {
                        tracing::warn!(
                            target: "snodo::transport",
                            %peer,
                            "connection refused: the peer is over its connection cap"
                        );
                        continue;
                    }
                },
            };
            while connections.try_join_next().is_some() {}
            let local = stream.local_addr().unwrap_or(peer);
            connections.spawn(serve_connection(
                stream,
                Arc::clone(&builder),
                HyperService {
                    inner: service.clone(),
                    peer,
                    local,
                    seen: Arc::new(AtomicBool::new(false)),
                    admission: Arc::clone(&admission),
                    conn: Arc::clone(ticket.conn()),
                },
                options.header_read_timeout,
                stopped.clone(),
                ticket,
            ));
        }
        drop(listener);
        drop(stop);
        let drain = async { while connections.join_next().await.is_some() {} };
        if tokio::time::timeout(options.shutdown_grace, drain)
            .await
            .is_err()
        {
            connections.shutdown().await;
        }
        Ok(())
    }
}

/// The hyper connection builder for `options`.
fn connection_builder(options: &HttpOptions) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .keep_alive(true)
        .header_read_timeout(options.header_read_timeout)
        .max_buf_size(options.max_header_bytes.max(MIN_HTTP1_BUFFER));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(u32::try_from(options.max_header_bytes).unwrap_or(u32::MAX))
        .keep_alive_interval(HTTP2_PING_INTERVAL)
        .keep_alive_timeout(HTTP2_PING_TIMEOUT);
    builder
}

/// Accept errors that concern one connection only: go on at once.
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Drives one connection until it ends, its first request is overdue,
/// admission asks it to make room, or shutdown (then gracefully). Holds its
/// admission ticket throughout.
async fn serve_connection(
    stream: TcpStream,
    builder: Arc<auto::Builder<TokioExecutor>>,
    hyper_service: HyperService,
    first_request_timeout: Duration,
    mut stopped: watch::Receiver<()>,
    ticket: Ticket,
) {
    let _ = stream.set_nodelay(true);
    let seen = Arc::clone(&hyper_service.seen);
    let connection = builder.serve_connection(TokioIo::new(stream), hyper_service);
    tokio::pin!(connection);
    // hyper's header timeout starts once it knows the protocol; this bounds the
    // time before that, for clients that send nothing at all.
    let first_request = tokio::time::sleep(first_request_timeout);
    tokio::pin!(first_request);
    let mut waiting = true;
    loop {
        tokio::select! {
            _ = connection.as_mut() => return,
            () = &mut first_request, if waiting => {
                if !seen.load(Ordering::Relaxed) {
                    return;
                }
                waiting = false;
            }
            _ = stopped.changed() => {
                connection.as_mut().graceful_shutdown();
                let _ = connection.await;
                return;
            }
            () = ticket.closing() => {
                // Idle when chosen: an idle HTTP/1.1 connection closes at
                // once; one caught starting a request gets a moment to finish.
                connection.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(CLOSE_GRACE, connection).await;
                return;
            }
        }
    }
}

/// Adapts [`McpService`] to hyper's `&self` service trait, notes that a
/// request arrived, and keeps admission informed: a request in flight keeps
/// its connection busy, and a streamed response takes a stream slot (or is
/// answered 503).
struct HyperService {
    inner: McpService,
    peer: SocketAddr,
    local: SocketAddr,
    seen: Arc<AtomicBool>,
    admission: Arc<Admission>,
    conn: Arc<Conn>,
}

impl hyper::service::Service<Request<Incoming>> for HyperService {
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, mut request: Request<Incoming>) -> ResponseFuture {
        self.seen.store(true, Ordering::Relaxed);
        let version = request.version();
        request
            .extensions_mut()
            .insert(crate::context::ConnectionInfo {
                peer: self.peer,
                local: self.local,
                http_version: version,
            });
        let busy = self.conn.busy(&self.admission);
        let admission = Arc::clone(&self.admission);
        let conn = Arc::clone(&self.conn);
        self.inner.respond_to_then(request, move |response| {
            let response = if response.body().is_stream() {
                match admission.open_stream(&conn) {
                    Ok(slot) => response.map(|body| McpBody::new(Slotted { body, _slot: slot })),
                    Err(refused) => too_many_streams(refused),
                }
            } else {
                response
            };
            drop(busy);
            response
        })
    }
}

/// The 503 for a stream over the stream budget or its peer's cap.
fn too_many_streams(refused: Refused) -> Response<McpBody> {
    let message = match refused {
        Refused::PeerStreams => "Too many open streams from this client",
        Refused::Streams | Refused::PeerConnections => "Too many open streams",
    };
    crate::telemetry::refusals::note("streams", &format_args!("{message} (503)"));
    let mut response = reject(StatusCode::SERVICE_UNAVAILABLE, message);
    response.headers_mut().insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static(STREAM_RETRY_AFTER),
    );
    response
}

/// A streamed body holding its stream slot until it ends or is dropped.
struct Slotted {
    body: McpBody,
    _slot: StreamSlot,
}

impl hyper::body::Body for Slotted {
    type Data = bytes::Bytes;
    type Error = crate::BoxError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}
