//! Streamable HTTP end to end: real loopback sockets, a hyper client (HTTP/1.1
//! keep-alive and HTTP/2 prior knowledge), raw TCP for hostile clients, and
//! literal 2026-07-28 JSON bodies.
#![cfg(feature = "http")]

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use snodo::transport::http::{HttpListener, HttpOptions};
use snodo::{Arguments, CallResult, Context, Server, Tool, ToolResult};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Generous bound for anything that should happen "soon".
const SOON: Duration = Duration::from_secs(10);

// ----- the server under test -----

/// A tool whose `region` argument is mirrored into `Mcp-Param-Region`.
struct Forecast;

impl Tool for Forecast {
    fn name(&self) -> &str {
        "forecast"
    }
    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"]
        })
    }
    async fn call(&self, args: Arguments, _cx: Context) -> CallResult {
        Ok(ToolResult::text(format!(
            "Sunny in {}",
            args.str("region")?
        )))
    }
}

/// Counts how many calls run at once, and which were cancelled.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    max: AtomicUsize,
    cancelled: AtomicBool,
}

/// Sleeps `ms` milliseconds (default 20) while counted by the gauge.
struct Slow(Arc<Gauge>);

impl Tool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"ms": {"type": "integer"}}})
    }
    async fn call(&self, args: Arguments, _cx: Context) -> CallResult {
        let ms = args.i64("ms").unwrap_or(20) as u64;
        let n = self.0.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.0.max.fetch_max(n, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        self.0.now.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolResult::text("done"))
    }
}

/// Never finishes; notes when its request's signal fires.
struct Hang(Arc<Gauge>);

impl Tool for Hang {
    fn name(&self) -> &str {
        "hang"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _args: Arguments, cx: Context) -> CallResult {
        let gauge = Arc::clone(&self.0);
        let signal = cx.cancellation().clone();
        tokio::spawn(async move {
            signal.cancelled().await;
            gauge.cancelled.store(true, Ordering::SeqCst);
        });
        std::future::pending::<()>().await;
        Ok(ToolResult::text("unreachable"))
    }
}

fn server(gauge: &Arc<Gauge>) -> Server {
    Server::builder("t", "1")
        .tool(Forecast)
        .tool(Slow(Arc::clone(gauge)))
        .tool(Hang(Arc::clone(gauge)))
        .build()
        .expect("the test server builds")
}

/// A listener on 127.0.0.1:0 that stops when dropped or stopped.
struct Running {
    addr: SocketAddr,
    url: String,
    gauge: Arc<Gauge>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl Running {
    async fn start(options: HttpOptions) -> Running {
        let gauge = Arc::new(Gauge::default());
        let listener = HttpListener::bind(&server(&gauge), "127.0.0.1:0".parse().unwrap(), options)
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr();
        let url = listener.url();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(listener.run(async {
            let _ = stopped.await;
        }));
        Running {
            addr,
            url,
            gauge,
            stop: Some(stop),
            task: Some(task),
        }
    }

    async fn default() -> Running {
        Running::start(HttpOptions::new()).await
    }

    /// Stops the listener and waits for `run` to return.
    async fn stop(mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        let task = self.task.take().unwrap();
        let out = tokio::time::timeout(SOON, task)
            .await
            .expect("run returns after shutdown");
        out.expect("run did not panic").expect("run returns Ok");
    }

    /// One well-formed `tools/call` over a fresh HTTP/1.1 client.
    async fn assert_still_answers(&self) {
        let reply = post(
            &h1_client(),
            &self.url,
            &call_headers("forecast", Some("us-west1")),
            CALL_OK,
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_eq!(
            reply.json()["result"]["content"][0]["text"],
            "Sunny in us-west1"
        );
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
    }
}

// ----- clients -----

type HttpClient = Client<HttpConnector, Full<Bytes>>;

fn h1_client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

fn h2_client() -> HttpClient {
    Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http()
}

struct Answer {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|_| panic!("not JSON: {:?}", self.body))
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

async fn send(client: &HttpClient, request: Request<Full<Bytes>>) -> Answer {
    let response = tokio::time::timeout(SOON, client.request(request))
        .await
        .expect("answered in time")
        .expect("request succeeds");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.expect("body").to_bytes();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body,
    }
}

async fn post(
    client: &HttpClient,
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Answer {
    let mut request = Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    send(client, request.body(Full::new(body.into())).unwrap()).await
}

fn call_headers<'a>(name: &'a str, region: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    if let Some(region) = region {
        headers.push(("Mcp-Param-Region", region));
    }
    headers
}

fn list_headers() -> Vec<(&'static str, &'static str)> {
    vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ]
}

const CALL_OK: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forecast","arguments":{"region":"us-west1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

const LIST_OK: &str = r#"{"jsonrpc":"2.0","id":"list-1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// Writes raw bytes and reads until the server closes the connection (or
/// resets it), within [`SOON`].
async fn raw_exchange(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    read_until_closed(&mut stream).await
}

async fn read_until_closed(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let deadline = Instant::now() + SOON;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => panic!(
                "the server kept the connection open; read so far: {}",
                String::from_utf8_lossy(&out)
            ),
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

// ----- behaviour -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_call_answers_200_application_json() {
    let running = Running::default().await;
    let client = h1_client();
    for _ in 0..3 {
        // Three requests over one keep-alive connection.
        let reply = post(
            &client,
            &running.url,
            &call_headers("forecast", Some("us-west1")),
            CALL_OK,
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_eq!(reply.headers["content-type"], "application/json");
        assert!(
            reply.headers.get("mcp-session-id").is_none(),
            "never mints a session"
        );
        let body = reply.json();
        assert_eq!(body["jsonrpc"], "2.0");
        assert_eq!(body["id"], 1);
        assert_eq!(body["result"]["content"][0]["text"], "Sunny in us-west1");
    }
    let list = post(&client, &running.url, &list_headers(), LIST_OK).await;
    assert_eq!(list.status, StatusCode::OK);
    assert_eq!(list.json()["id"], "list-1");
    assert_eq!(
        list.json()["result"]["tools"].as_array().map(Vec::len),
        Some(3)
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statuses_follow_the_spec_and_errors_echo_the_id() {
    struct Case {
        what: &'static str,
        headers: Vec<(&'static str, &'static str)>,
        body: &'static str,
        status: u16,
        code: i64,
        id: Value,
    }
    let cases = [
        Case {
            what: "missing _meta",
            headers: list_headers(),
            body: r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
            status: 400,
            code: -32602,
            id: json!(2),
        },
        Case {
            what: "Mcp-Method does not match the body",
            headers: vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
            ],
            body: r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!(3),
        },
        Case {
            what: "missing MCP-Protocol-Version",
            headers: vec![("Mcp-Method", "tools/list")],
            body: r#"{"jsonrpc":"2.0","id":"v","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!("v"),
        },
        Case {
            what: "bad base64 inside the Mcp-Name sentinel",
            headers: call_headers("=?base64?not base64!?=", Some("us-west1")),
            body: r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"forecast","arguments":{"region":"us-west1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!(4),
        },
        Case {
            what: "Mcp-Param-Region missing",
            headers: call_headers("forecast", None),
            body: r#"{"jsonrpc":"2.0","id":"five","method":"tools/call","params":{"name":"forecast","arguments":{"region":"us-west1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!("five"),
        },
        Case {
            what: "Mcp-Param-Region does not match",
            headers: call_headers("forecast", Some("eu-west1")),
            body: r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"forecast","arguments":{"region":"us-west1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32020,
            id: json!(6),
        },
        Case {
            what: "unsupported protocol version",
            headers: vec![
                ("MCP-Protocol-Version", "2099-01-01"),
                ("Mcp-Method", "tools/list"),
            ],
            body: r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 400,
            code: -32022,
            id: json!(7),
        },
        Case {
            what: "unknown method",
            headers: vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/frobnicate"),
            ],
            body: r#"{"jsonrpc":"2.0","id":8,"method":"tools/frobnicate","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 404,
            code: -32601,
            id: json!(8),
        },
        Case {
            what: "removed method",
            headers: vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "ping"),
            ],
            body: r#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 404,
            code: -32601,
            id: json!(9),
        },
        Case {
            what: "parse error",
            headers: list_headers(),
            body: r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"#,
            status: 400,
            code: -32700,
            id: Value::Null,
        },
        Case {
            what: "batch",
            headers: list_headers(),
            body: r#"[{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}]"#,
            status: 400,
            code: -32600,
            id: Value::Null,
        },
        Case {
            what: "unknown tool",
            headers: call_headers("nope", None),
            body: r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"nope","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            status: 200,
            code: -32602,
            id: json!(12),
        },
    ];
    let running = Running::default().await;
    let client = h1_client();
    for case in &cases {
        let reply = post(&client, &running.url, &case.headers, case.body).await;
        assert_eq!(
            reply.status.as_u16(),
            case.status,
            "{}: {}",
            case.what,
            reply.text()
        );
        assert_eq!(
            reply.headers["content-type"], "application/json",
            "{}",
            case.what
        );
        let body = reply.json();
        assert_eq!(body["error"]["code"], case.code, "{}: {body}", case.what);
        assert_eq!(
            body.get("id").cloned().unwrap_or(Value::Null),
            case.id,
            "{}: {body}",
            case.what
        );
        assert!(body.get("result").is_none(), "{}", case.what);
    }
    let unsupported = post(&client, &running.url, &cases[6].headers, cases[6].body)
        .await
        .json();
    assert_eq!(unsupported["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(
        unsupported["error"]["data"]["supported"],
        json!(["2026-07-28"])
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_encoded_param_header_matches_the_decoded_body() {
    let running = Running::default().await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forecast","arguments":{"region":"Hello, 世界"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let headers = call_headers("forecast", Some("=?base64?SGVsbG8sIOS4lueVjA==?="));
    let reply = post(&h1_client(), &running.url, &headers, body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "Sunny in Hello, 世界"
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_get_202_and_an_empty_body() {
    let running = Running::default().await;
    let client = h1_client();
    let bodies = [
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ];
    for body in bodies {
        let headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "notifications/cancelled"),
        ];
        let reply = post(&client, &running.url, &headers, body).await;
        assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text());
        assert!(reply.body.is_empty());
        assert!(reply.headers.get("mcp-session-id").is_none());
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbs_other_than_post_get_and_delete_get_405() {
    let running = Running::default().await;
    let client = h1_client();
    // GET and DELETE belong to initialize-era sessions: an unknown one is 404.
    for method in [Method::GET, Method::DELETE] {
        let request = Request::builder()
            .method(method.clone())
            .uri(&running.url)
            .header("Mcp-Session-Id", "abc")
            .header("Last-Event-ID", "7")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let reply = send(&client, request).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{method}");
    }
    for method in [Method::PUT, Method::PATCH] {
        let request = Request::builder()
            .method(method.clone())
            .uri(&running.url)
            .body(Full::new(Bytes::new()))
            .unwrap();
        let reply = send(&client, request).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(reply.headers["allow"], "GET, POST, DELETE", "{method}");
    }
    running.assert_still_answers().await;
    running.stop().await;

    // A server of 2026-07-28 alone has no sessions: only POST.
    let modern = Server::builder("t", "1")
        .revisions([snodo::protocol::Revision::V2026_07_28])
        .build()
        .unwrap();
    let listener = HttpListener::bind(
        &modern,
        "127.0.0.1:0".parse().unwrap(),
        HttpOptions::default(),
    )
    .await
    .unwrap();
    let url = listener.url();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(listener.run(async {
        let _ = stopped.await;
    }));
    for method in [Method::GET, Method::DELETE, Method::PUT] {
        let request = Request::builder()
            .method(method.clone())
            .uri(&url)
            .header("Mcp-Session-Id", "abc")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let reply = send(&client, request).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(reply.headers["allow"], "POST", "{method}");
    }
    let _ = stop.send(());
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_path_gets_404() {
    let running = Running::default().await;
    let client = h1_client();
    for path in ["/", "/mcp/", "/mcpx", "/other/mcp"] {
        let url = format!("http://{}{path}", running.addr);
        let reply = post(&client, &url, &list_headers(), LIST_OK).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}");
        assert!(reply.body.is_empty(), "{path}: {}", reply.text());
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origin_and_host_get_403_and_local_ones_pass() {
    let running = Running::default().await;
    let client = h1_client();
    let port = running.addr.port();
    let local_origin = format!("http://localhost:{port}");
    let local_host = format!("localhost:{port}");
    let other_port_host = format!("127.0.0.1:{}", port.wrapping_add(1).max(1));
    let refused: Vec<Vec<(&str, &str)>> = vec![
        vec![("Origin", "http://evil.example.com")],
        vec![("Origin", "null")],
        vec![
            ("Host", "evil.example.com"),
            ("Origin", "http://evil.example.com"),
        ],
        vec![("Host", "evil.example.com")],
        vec![("Host", "localhost.evil.example.com")],
        vec![("Host", other_port_host.as_str())],
    ];
    for extra in &refused {
        let mut headers = list_headers();
        headers.extend(extra.iter().copied());
        let reply = post(&client, &running.url, &headers, LIST_OK).await;
        assert_eq!(
            reply.status,
            StatusCode::FORBIDDEN,
            "{extra:?}: {}",
            reply.text()
        );
        assert!(
            reply.json().get("id").is_none(),
            "no id before the body is read"
        );
    }
    let accepted: Vec<Vec<(&str, &str)>> = vec![
        vec![("Origin", local_origin.as_str())],
        vec![
            ("Host", local_host.as_str()),
            ("Origin", local_origin.as_str()),
        ],
        vec![("Host", "localhost")],
    ];
    for extra in &accepted {
        let mut headers = list_headers();
        headers.extend(extra.iter().copied());
        let reply = post(&client, &running.url, &headers, LIST_OK).await;
        assert_eq!(reply.status, StatusCode::OK, "{extra:?}: {}", reply.text());
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_allowlists_replace_the_local_defaults() {
    let options = HttpOptions::new()
        .endpoint("api/mcp")
        .allowed_hosts(["mcp.example.com"])
        .allowed_origins(["https://app.example.com"]);
    let running = Running::start(options).await;
    assert!(running.url.ends_with("/api/mcp"), "{}", running.url);
    let client = h1_client();
    let ok = [
        ("Host", "mcp.example.com"),
        ("Origin", "https://app.example.com"),
    ];
    let mut headers = list_headers();
    headers.extend(ok);
    assert_eq!(
        post(&client, &running.url, &headers, LIST_OK).await.status,
        StatusCode::OK
    );
    // The local defaults are gone.
    assert_eq!(
        post(&client, &running.url, &list_headers(), LIST_OK)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_truncated_non_utf8_and_deep_json_get_400_parse_error() {
    let running = Running::default().await;
    let client = h1_client();
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let bodies: Vec<(&str, Bytes)> = vec![
        (
            "malformed",
            Bytes::from_static(br#"{"jsonrpc":"2.0",,"id":1}"#),
        ),
        (
            "truncated",
            Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"method":"tools/li"#),
        ),
        ("not UTF-8", Bytes::from_static(b"\xff\xfe{\x80}")),
        (
            "invalid UTF-8 in a string",
            Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/\xc3\x28\"}"),
        ),
        ("empty", Bytes::new()),
        ("10 000 nested arrays", Bytes::from(deep)),
    ];
    for (what, body) in bodies {
        let reply = post(&client, &running.url, &list_headers(), body).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{what}: {}",
            reply.text()
        );
        assert_eq!(reply.json()["error"]["code"], -32700, "{what}");
    }
    running.assert_still_answers().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_megabyte_bodies_get_413() {
    let running = Running::default().await;
    let ten_mb = 10 * 1024 * 1024;
    // Declared past the body limit plus the discard bound (2 + 8 MiB):
    // refused from Content-Length alone, before the body is read.
    let declared = 16 * 1024 * 1024;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    );
    let answer = raw_exchange(running.addr, head.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");

    // Chunked: refused once it grows past the limit while read.
    let mut stream = TcpStream::connect(running.addr).await.unwrap();
    let head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let writer = tokio::spawn(async move {
        let chunk = vec![b' '; 64 * 1024];
        let frame = [
            format!("{:x}\r\n", chunk.len()).into_bytes(),
            chunk,
            b"\r\n".to_vec(),
        ]
        .concat();
        for _ in 0..(ten_mb / (64 * 1024)) {
            if writer.write_all(&frame).await.is_err() {
                return None; // the server stopped reading
            }
        }
        let _ = writer.write_all(b"0\r\n\r\n").await;
        // Kept open: dropping it would half-close the connection, and the
        // server takes an end of input as the client gone.
        Some(writer)
    });
    let mut out = Vec::new();
    let read = tokio::time::timeout(SOON, reader.read_to_end(&mut out))
        .await
        .expect("closed in time");
    let answer = String::from_utf8_lossy(&out);
    assert!(answer.starts_with("HTTP/1.1 413"), "{read:?} {answer}");
    writer.abort();

    // Through the client too: the status is 413 whatever the transfer coding.
    let body = Bytes::from(vec![b' '; ten_mb]);
    let request = Request::post(&running.url).body(Full::new(body)).unwrap();
    if let Ok(Ok(response)) = tokio::time::timeout(SOON, h1_client().request(request)).await {
        assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    } // else: the connection was closed while the client still wrote (also fine).
    running.assert_still_answers().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_headers_get_431() {
    let running = Running::default().await;
    let big = "x".repeat(32 * 1024);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {big}\r\nContent-Length: 0\r\n\r\n"
    );
    let answer = raw_exchange(running.addr, head.as_bytes()).await;
    assert!(
        answer.starts_with("HTTP/1.1 431"),
        "{}",
        &answer[..answer.len().min(200)]
    );
    running.assert_still_answers().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_closed_after_the_header_timeout_while_others_are_served() {
    let options = HttpOptions::new().header_read_timeout(Duration::from_millis(300));
    let running = Running::start(options).await;
    let started = Instant::now();
    // One never finishes its headers; one sends nothing at all; one stops
    // after a byte that could start either protocol.
    let mut partial = TcpStream::connect(running.addr).await.unwrap();
    partial
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        .await
        .unwrap();
    let mut silent = TcpStream::connect(running.addr).await.unwrap();
    let mut ambiguous = TcpStream::connect(running.addr).await.unwrap();
    ambiguous.write_all(b"P").await.unwrap();
    // Others are served meanwhile.
    running.assert_still_answers().await;
    for stream in [&mut partial, &mut silent, &mut ambiguous] {
        let _ = read_until_closed(stream).await;
    }
    assert!(started.elapsed() < SOON);
    // A client that finished its headers in time but sends its body slowly
    // gets 408 once the body timeout passes.
    let options = HttpOptions::new().body_read_timeout(Duration::from_millis(300));
    let slow_body = Running::start(options).await;
    let mut stream = TcpStream::connect(slow_body.addr).await.unwrap();
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
        )
        .await
        .unwrap();
    let answer = read_until_closed(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    slow_body.assert_still_answers().await;
    running.assert_still_answers().await;
    slow_body.stop().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_concurrent_requests_are_bounded_and_all_answered() {
    const LIMIT: usize = 16;
    let running = Running::start(HttpOptions::new().max_connections(LIMIT)).await;
    // No pooling: each request is its own connection, so at most LIMIT are
    // served at once and the rest wait to be accepted.
    let client: HttpClient = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build_http();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":20},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut tasks = Vec::new();
    for _ in 0..500 {
        let client = client.clone();
        let url = running.url.clone();
        tasks.push(tokio::spawn(async move {
            post(&client, &url, &call_headers("slow", None), body)
                .await
                .status
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap(), StatusCode::OK);
    }
    let max = running.gauge.max.load(Ordering::SeqCst);
    assert!(
        (1..=LIMIT).contains(&max),
        "at most {LIMIT} at once, saw {max}"
    );
    running.assert_still_answers().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_prior_knowledge_is_served() {
    let running = Running::default().await;
    let client = h2_client();
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let client = client.clone();
        let url = running.url.clone();
        tasks.push(tokio::spawn(async move {
            post(
                &client,
                &url,
                &call_headers("forecast", Some("us-west1")),
                CALL_OK,
            )
            .await
        }));
    }
    for task in tasks {
        let reply = task.await.unwrap();
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        assert_eq!(reply.headers["content-type"], "application/json");
        assert_eq!(
            reply.json()["result"]["content"][0]["text"],
            "Sunny in us-west1"
        );
    }
    let notification =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let reply = post(
        &client,
        &running.url,
        &[("MCP-Protocol-Version", "2026-07-28")],
        notification,
    )
    .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    // `:authority` is checked like `Host`.
    let stream = TcpStream::connect(running.addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    for (authority, status) in [
        ("evil.example.com", StatusCode::FORBIDDEN),
        ("localhost", StatusCode::OK),
    ] {
        let mut request = Request::post(format!("http://{authority}/mcp"));
        for (name, value) in list_headers() {
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(Bytes::from_static(LIST_OK.as_bytes())))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), status, "{authority}");
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_timeout_cancels_the_handler_and_answers_32603_with_the_id() {
    let running =
        Running::start(HttpOptions::new().request_timeout(Duration::from_millis(200))).await;
    let body = r#"{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"hang","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = post(
        &h1_client(),
        &running.url,
        &call_headers("hang", None),
        body,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    let json = reply.json();
    assert_eq!(json["id"], "slow-1");
    assert_eq!(json["error"]["code"], -32603);
    assert_eq!(json["error"]["message"], "Request timed out");
    let deadline = Instant::now() + SOON;
    while !running.gauge.cancelled.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the cancel signal fired");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    running.assert_still_answers().await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_requests_get_server_sent_events_bounded_by_the_request_timeout() {
    let running =
        Running::start(HttpOptions::new().request_timeout(Duration::from_millis(300))).await;
    let client = h1_client();
    let body = r#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"forecast","arguments":{"region":"us-west1"},"_meta":{"progressToken":"p-21","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = post(
        &client,
        &running.url,
        &call_headers("forecast", Some("us-west1")),
        body,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.headers["content-type"], "text/event-stream");
    assert_eq!(reply.headers["x-accel-buffering"], "no");
    let text = reply.text();
    let last = text.trim_end().rsplit("\n\n").next().unwrap();
    let last: Value =
        serde_json::from_str(last.strip_prefix("data: ").expect("a data event")).unwrap();
    assert_eq!(last["id"], 21);
    assert_eq!(last["result"]["content"][0]["text"], "Sunny in us-west1");

    // A stream that outlives the request timeout ends with -32603 and the id.
    let body = r#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"hang","arguments":{},"_meta":{"progressToken":"p-22","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = post(&client, &running.url, &call_headers("hang", None), body).await;
    assert_eq!(reply.headers["content-type"], "text/event-stream");
    let text = reply.text();
    let last = text.trim_end().rsplit("\n\n").next().unwrap();
    let last: Value =
        serde_json::from_str(last.strip_prefix("data: ").expect("a data event")).unwrap();
    assert_eq!(last["id"], 22);
    assert_eq!(last["error"]["code"], -32603);
    let deadline = Instant::now() + SOON;
    while !running.gauge.cancelled.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the cancel signal fired");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_in_flight_requests_then_stops_accepting() {
    let running = Running::default().await;
    let client = h1_client();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":500},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let url = running.url.clone();
    let in_flight =
        tokio::spawn(async move { post(&client, &url, &call_headers("slow", None), body).await });
    let deadline = Instant::now() + SOON;
    while running.gauge.now.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the slow call started");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let addr = running.addr;
    running.stop().await;
    let reply = in_flight.await.unwrap();
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no longer accepting"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_http_with_serves_a_bound_listener_until_shutdown() {
    let gauge = Arc::new(Gauge::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let server = server(&gauge);
    let task = tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        server
            .serve_http_with(listener, HttpOptions::new(), shutdown)
            .await
    });
    let url = format!("http://{addr}/mcp");
    let reply = post(&h2_client(), &url, &list_headers(), LIST_OK).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    stop.send(()).unwrap();
    tokio::time::timeout(SOON, task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_answers_without_a_listener() {
    use tower_service::Service;
    let gauge = Arc::new(Gauge::default());
    let mut service = server(&gauge).http_service();
    let mut request = Request::post("/mcp").header("host", "localhost");
    for (name, value) in call_headers("forecast", Some("us-west1")) {
        request = request.header(name, value);
    }
    let request = request
        .body(Full::new(Bytes::from_static(CALL_OK.as_bytes())))
        .unwrap();
    let Ok::<_, Infallible>(response) = service.call(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let json: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(json["result"]["content"][0]["text"], "Sunny in us-west1");
}
