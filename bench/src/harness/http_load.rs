//! The HTTP load generator: hyper 1 client connections (HTTP/1.1,
//! keep-alive, `TCP_NODELAY`), one request in flight per connection (closed
//! loop), every response checked, latency recorded in a histogram.

use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{HeaderValue, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use super::histogram::Histogram;
use super::wire::{self, Expect, Verdict, Work};

/// Where an HTTP server listens.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The socket address.
    pub(crate) addr: SocketAddr,
    /// The `Host` header value.
    pub(crate) host: HeaderValue,
    /// The endpoint path.
    pub(crate) path: String,
    /// An `Authorization` value sent with every request.
    pub(crate) authorization: Option<HeaderValue>,
}

impl Target {
    /// Parses `http://127.0.0.1:PORT/path`. Only loopback targets are accepted.
    pub(crate) fn from_url(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("not an http URL: {url}"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let addr: SocketAddr = authority
            .parse()
            .map_err(|e| format!("bad address {authority}: {e}"))?;
        if !addr.ip().is_loopback() {
            return Err(format!("refusing non-loopback target {addr}"));
        }
        Ok(Self {
            addr,
            host: HeaderValue::from_str(authority).map_err(|e| e.to_string())?,
            path: path.to_string(),
            authorization: None,
        })
    }
}

/// What one load run measured.
#[derive(Debug, Default, Clone)]
pub(crate) struct Outcome {
    /// Correct responses completed inside the measurement window.
    pub(crate) completed: u64,
    /// Wrong answers and transport failures (warm-up included).
    pub(crate) errors: u64,
    /// The first error seen, for the log.
    pub(crate) first_error: Option<String>,
    /// Latency of the counted responses, in nanoseconds.
    pub(crate) hist: Histogram,
    /// The measurement window.
    pub(crate) window: Duration,
    /// Response body bytes of the counted responses.
    pub(crate) bytes: u64,
    /// Open-loop runs: the requests scheduled inside the window.
    pub(crate) scheduled: Option<u64>,
    /// Open-loop runs: the 99th percentile of how late the load generator
    /// itself queued a request after its scheduled time (its own stalls,
    /// which the latency figures charge to the server), in ns.
    pub(crate) scheduler_late_p99_ns: Option<u64>,
}

impl Outcome {
    /// Requests per second.
    pub(crate) fn rps(&self) -> f64 {
        self.completed as f64 / self.window.as_secs_f64()
    }

    /// Counts one error, keeping the first message.
    pub(crate) fn error(&mut self, message: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(message);
        }
    }

    /// Adds `other` (another connection's share).
    pub(crate) fn merge(&mut self, other: Outcome) {
        self.completed += other.completed;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.hist.merge(&other.hist);
        self.bytes += other.bytes;
    }
}

/// The sending half of one client connection.
pub(crate) type Sender = SendRequest<Full<Bytes>>;

/// Opens one HTTP/1.1 connection.
pub(crate) async fn connect(target: &Target) -> Result<(Sender, JoinHandle<()>), String> {
    let stream = TcpStream::connect(target.addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    handshake(stream).await
}

/// [`connect`] from the loopback address `from` (servers that share their
/// tables fairly count each remote address apart).
pub(crate) async fn connect_from(
    target: &Target,
    from: std::net::Ipv4Addr,
) -> Result<(Sender, JoinHandle<()>), String> {
    let socket = tokio::net::TcpSocket::new_v4().map_err(|e| format!("socket: {e}"))?;
    socket
        .bind((from, 0).into())
        .map_err(|e| format!("bind {from}: {e}"))?;
    let stream = socket
        .connect(target.addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    handshake(stream).await
}

async fn handshake(stream: TcpStream) -> Result<(Sender, JoinHandle<()>), String> {
    let _ = stream.set_nodelay(true);
    let (sender, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let driver = tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok((sender, driver))
}

/// A POST carrying the standard MCP 2026-07-28 headers.
pub(crate) fn request(
    target: &Target,
    method: &'static str,
    name: Option<&str>,
    body: String,
) -> Request<Full<Bytes>> {
    let mut builder = Request::post(target.path.as_str())
        .header(HOST, target.host.clone())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("MCP-Protocol-Version", wire::protocol_version())
        .header("Mcp-Method", method);
    if let Some(name) = name {
        builder = builder.header("Mcp-Name", name);
    }
    if let Some(auth) = &target.authorization {
        builder = builder.header(http::header::AUTHORIZATION, auth.clone());
    }
    builder
        .body(Full::new(Bytes::from(body)))
        .expect("a valid request")
}

/// Sends one request and checks its answer: `Err` when the connection
/// broke, `Ok(Err)` for a wrong answer, else the body's size.
pub(crate) async fn exchange(
    sender: &mut SendRequest<Full<Bytes>>,
    req: Request<Full<Bytes>>,
    expect: Expect,
    id: u64,
) -> Result<Result<u64, String>, String> {
    let (parts, body) = send(sender, req).await?;
    if parts.status != StatusCode::OK {
        return Ok(Err(format!(
            "HTTP {}: {}",
            parts.status,
            String::from_utf8_lossy(&body[..body.len().min(300)])
        )));
    }
    // 2026-07-28 is stateless: a session id on its answers is a wrong answer.
    if expect != Expect::SessionEcho && parts.headers.contains_key("mcp-session-id") {
        return Ok(Err(
            "an Mcp-Session-Id header on a 2026-07-28 response".into()
        ));
    }
    let ct = parts.headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes);
    let payload = match wire::http_payload(ct, &body) {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    Ok(match wire::check(expect, Some(id), &payload) {
        Ok(Verdict::Response(_)) => Ok(body.len() as u64),
        Ok(Verdict::Notification) => Err("a notification instead of a response".into()),
        Err(e) => Err(format!(
            "{e}; body: {}",
            String::from_utf8_lossy(&payload[..payload.len().min(300)])
        )),
    })
}

/// Sends one request and reads its whole answer (`Err` when the connection
/// broke).
async fn send(
    sender: &mut Sender,
    req: Request<Full<Bytes>>,
) -> Result<(http::response::Parts, Bytes), String> {
    sender
        .ready()
        .await
        .map_err(|e| format!("connection: {e}"))?;
    let response = sender
        .send_request(req)
        .await
        .map_err(|e| format!("request: {e}"))?;
    let (parts, body) = response.into_parts();
    let body = body
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    Ok((parts, body))
}

/// What a connection sends.
#[derive(Debug, Clone, Copy)]
enum Flavor {
    /// 2026-07-28 requests (`work`), judged by `expect`.
    Stateless(Work, Expect),
    /// `tools/call` of this echo tool (`echo`, or its name behind a
    /// gateway) inside an initialize-era session the connection opens
    /// first.
    Session(&'static str),
}

/// One closed-loop connection: request, check, record, repeat until `end`.
async fn connection(
    target: Rc<Target>,
    flavor: Flavor,
    index: u64,
    measure_from: Instant,
    end: Instant,
) -> Outcome {
    let mut out = Outcome::default();
    let mut seq = 0u64;
    'reconnect: while Instant::now() < end {
        let (mut sender, driver) = match connect(&target).await {
            Ok(c) => c,
            Err(e) => {
                out.error(e);
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let session = match flavor {
            Flavor::Stateless(..) => None,
            Flavor::Session(_) => match open_session(&mut sender, &target, index << 32).await {
                Ok(s) => Some(s),
                Err(e) => {
                    out.error(e);
                    driver.abort();
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        while Instant::now() < end {
            seq += 1;
            let id = (index << 32) | seq;
            let (req, expect) = match flavor {
                Flavor::Stateless(work, expect) => (
                    request(&target, work.method(), work.name(), work.body(id)),
                    expect,
                ),
                Flavor::Session(tool) => (
                    session_request(&target, session.as_ref(), wire::session_echo_body(id, tool)),
                    Expect::SessionEcho,
                ),
            };
            let start = Instant::now();
            let result = exchange(&mut sender, req, expect, id).await;
            let done = Instant::now();
            match result {
                Ok(Ok(bytes)) => {
                    if done >= measure_from && done < end {
                        out.completed += 1;
                        out.bytes += bytes;
                        out.hist.record((done - start).as_nanos() as u64);
                    }
                }
                Ok(Err(wrong)) => out.error(wrong),
                Err(broken) => {
                    out.error(broken);
                    driver.abort();
                    continue 'reconnect;
                }
            }
        }
        drop(sender);
        let _ = driver.await;
    }
    out
}

/// Runs `concurrency` closed-loop connections for `warmup` + `measure`;
/// counts only responses completed during `measure`.
pub(crate) async fn run(
    target: &Target,
    work: Work,
    expect: Expect,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
) -> Outcome {
    load(
        target,
        Flavor::Stateless(work, expect),
        concurrency,
        warmup,
        measure,
    )
    .await
}

/// Runs `concurrency` closed-loop connections, each in an initialize-era
/// session of its own (opened during the warm-up), for `warmup` +
/// `measure`; counts only responses completed during `measure`.
pub(crate) async fn run_sessions(
    target: &Target,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
) -> Outcome {
    run_sessions_of(target, "echo", concurrency, warmup, measure).await
}

/// [`run_sessions`] calling the echo tool by the name `tool` (as a gateway
/// in front of the server serves it).
pub(crate) async fn run_sessions_of(
    target: &Target,
    tool: &'static str,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
) -> Outcome {
    load(target, Flavor::Session(tool), concurrency, warmup, measure).await
}

async fn load(
    target: &Target,
    flavor: Flavor,
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
) -> Outcome {
    let target = Rc::new(target.clone());
    spread(concurrency, warmup, measure, |index, measure_from, end| {
        connection(Rc::clone(&target), flavor, index, measure_from, end)
    })
    .await
}

/// Runs `concurrency` connections (numbered from 1) on this thread, each
/// measuring from `warmup` on until `warmup + measure`, and adds up what
/// they measured.
pub(crate) async fn spread<F, Fut>(
    concurrency: usize,
    warmup: Duration,
    measure: Duration,
    connection: F,
) -> Outcome
where
    F: Fn(u64, Instant, Instant) -> Fut,
    Fut: std::future::Future<Output = Outcome> + 'static,
{
    let start = Instant::now();
    let measure_from = start + warmup;
    let end = measure_from + measure;
    let local = tokio::task::LocalSet::new();
    let handles: Vec<_> = (0..concurrency)
        .map(|i| local.spawn_local(connection(i as u64 + 1, measure_from, end)))
        .collect();
    let mut total = Outcome {
        window: measure,
        ..Outcome::default()
    };
    local
        .run_until(async {
            for h in handles {
                if let Ok(part) = h.await {
                    total.merge(part);
                }
            }
        })
        .await;
    total
}

/// Sends a single request and checks the answer (start-up probes).
pub(crate) async fn one(
    target: &Target,
    work: Work,
    expect: Expect,
    id: u64,
) -> Result<(), String> {
    let (mut sender, driver) = connect(target).await?;
    let req = request(target, work.method(), work.name(), work.body(id));
    let result = exchange(&mut sender, req, expect, id).await;
    drop(sender);
    driver.abort();
    result?.map(|_| ())
}

/// Whether the server refuses arguments that break a tool's `inputSchema`
/// but that its handler would accept: `inert_00` with `limit` 1000 (the
/// schema's maximum is 100; the handler ignores its arguments). A JSON-RPC
/// error or an `isError` result is a refusal; `Ok(false)` means the call ran.
pub(crate) async fn refuses_invalid(target: &Target) -> Result<bool, String> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"inert_00","arguments":{{"query":"x","limit":1000}},{}}}}}"#,
        wire::META
    );
    let (mut sender, driver) = connect(target).await?;
    let req = request(target, "tools/call", Some("inert_00"), body);
    let answer = send(&mut sender, req).await;
    driver.abort();
    let (parts, body) = answer?;
    let ct = parts.headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes);
    let payload = wire::http_payload(ct, &body)?;
    let v: serde_json::Value =
        serde_json::from_slice(&payload).map_err(|e| format!("bad JSON: {e}"))?;
    Ok(v.get("error").is_some() || v["result"]["isError"] == serde_json::Value::Bool(true))
}

/// An open `subscriptions/listen` stream, held open by keeping its parts.
pub(crate) struct Listening {
    _sender: SendRequest<Full<Bytes>>,
    _body: Incoming,
    driver: JoinHandle<()>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Opens one listen stream and waits for its acknowledgment.
async fn listen_one(target: &Target, id: u64) -> Result<Listening, String> {
    let (mut sender, driver) = connect(target).await?;
    let req = request(target, "subscriptions/listen", None, wire::listen_body(id));
    sender
        .ready()
        .await
        .map_err(|e| format!("connection: {e}"))?;
    let response = sender
        .send_request(req)
        .await
        .map_err(|e| format!("request: {e}"))?;
    let status = response.status();
    let ct = response
        .headers()
        .get(CONTENT_TYPE)
        .map(|v| v.as_bytes().to_vec())
        .unwrap_or_default();
    let mut body = response.into_body();
    if status != StatusCode::OK || !ct.starts_with(b"text/event-stream") {
        let text = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        return Err(format!(
            "listen answered HTTP {status} {:?}: {}",
            String::from_utf8_lossy(&ct),
            String::from_utf8_lossy(&text[..text.len().min(300)])
        ));
    }
    let mut seen = Vec::new();
    loop {
        let frame = body
            .frame()
            .await
            .ok_or("the listen stream ended before its acknowledgment")?
            .map_err(|e| format!("listen body: {e}"))?;
        if let Ok(data) = frame.into_data() {
            seen.extend_from_slice(&data);
        }
        let events = wire::sse_events(&seen);
        if let Some(first) = events.iter().find(|d| !d.is_empty()) {
            if wire::is_listen_ack(first) {
                return Ok(Listening {
                    _sender: sender,
                    _body: body,
                    driver,
                });
            }
            return Err(format!(
                "first listen event is not the acknowledgment: {}",
                String::from_utf8_lossy(first)
            ));
        }
    }
}

/// Opens `n` listen streams (one connection each, 50 at a time), each
/// acknowledged, and returns them open.
pub(crate) async fn open_listen_streams(
    target: &Target,
    n: usize,
) -> Result<Vec<Listening>, String> {
    let local = tokio::task::LocalSet::new();
    let target = Rc::new(target.clone());
    local
        .run_until(async {
            let mut open = Vec::with_capacity(n);
            let mut next = 0usize;
            while next < n {
                let batch: Vec<_> = (next..(next + 50).min(n))
                    .map(|i| {
                        let target = Rc::clone(&target);
                        tokio::task::spawn_local(async move {
                            tokio::time::timeout(
                                Duration::from_secs(10),
                                listen_one(&target, 1_000_000 + i as u64),
                            )
                            .await
                            .map_err(|_| "no acknowledgment within 10 s".to_string())?
                        })
                    })
                    .collect();
                next += batch.len();
                for h in batch {
                    open.push(h.await.map_err(|e| e.to_string())??);
                }
            }
            Ok(open)
        })
        .await
}

/// A POST inside an initialize-era session (`session` absent for the
/// handshake itself).
fn session_request(
    target: &Target,
    session: Option<&HeaderValue>,
    body: String,
) -> Request<Full<Bytes>> {
    let mut builder = Request::post(target.path.as_str())
        .header(HOST, target.host.clone())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream");
    if let Some(id) = session {
        builder = builder
            .header("Mcp-Session-Id", id.clone())
            .header("MCP-Protocol-Version", wire::LEGACY_VERSION);
    }
    builder
        .body(Full::new(Bytes::from(body)))
        .expect("a valid request")
}

/// Opens an initialize-era session on this connection: `initialize`, then
/// `notifications/initialized`; returns the session id.
async fn open_session(
    sender: &mut SendRequest<Full<Bytes>>,
    target: &Target,
    id: u64,
) -> Result<HeaderValue, String> {
    sender
        .ready()
        .await
        .map_err(|e| format!("connection: {e}"))?;
    let response = sender
        .send_request(session_request(target, None, wire::initialize_body(id)))
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    let (parts, body) = response.into_parts();
    let body = body
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    if parts.status != StatusCode::OK {
        return Err(format!("initialize: HTTP {}", parts.status));
    }
    let session = parts
        .headers
        .get("mcp-session-id")
        .cloned()
        .ok_or("initialize: no Mcp-Session-Id")?;
    let ct = parts.headers.get(CONTENT_TYPE).map(HeaderValue::as_bytes);
    let payload = wire::http_payload(ct, &body)?;
    let version = serde_json::from_slice::<serde_json::Value>(&payload)
        .ok()
        .and_then(|v| v["result"]["protocolVersion"].as_str().map(str::to_string));
    if version.as_deref() != Some(wire::LEGACY_VERSION) {
        return Err(format!("initialize negotiated {version:?}"));
    }
    sender
        .ready()
        .await
        .map_err(|e| format!("connection: {e}"))?;
    let response = sender
        .send_request(session_request(
            target,
            Some(&session),
            wire::INITIALIZED_BODY.to_string(),
        ))
        .await
        .map_err(|e| format!("initialized: {e}"))?;
    let status = response.status();
    let _ = response.into_body().collect().await;
    if !status.is_success() {
        return Err(format!("notifications/initialized: HTTP {status}"));
    }
    Ok(session)
}

/// Opens `count` initialize-era sessions (handshake complete) over a few
/// keep-alive connections, each from a loopback address of its own (eight
/// clients, as a server that caps sessions per address sees them), and
/// leaves them idle.
pub(crate) async fn open_sessions(target: &Target, count: usize) -> Result<(), String> {
    const CONNECTIONS: usize = 8;
    let local = tokio::task::LocalSet::new();
    let target = Rc::new(target.clone());
    let handles: Vec<_> = (0..CONNECTIONS)
        .map(|c| {
            let target = Rc::clone(&target);
            let share = count / CONNECTIONS + usize::from(c < count % CONNECTIONS);
            local.spawn_local(async move {
                let from = std::net::Ipv4Addr::new(127, 0, 0, 10 + c as u8);
                let (mut sender, driver) = connect_from(&target, from).await?;
                for i in 0..share {
                    open_session(&mut sender, &target, ((c as u64) << 32) | i as u64).await?;
                }
                drop(sender);
                let _ = driver.await;
                Ok::<_, String>(())
            })
        })
        .collect();
    local
        .run_until(async {
            for h in handles {
                h.await.map_err(|e| e.to_string())??;
            }
            Ok(())
        })
        .await
}
