//! No client locks the others out of the built-in listener: open listen
//! streams and idle connections never keep a new client's call waiting, the
//! stream budget and the per-peer caps answer 503 (or close), an oversized
//! body that the client writes before reading still gets its 413, and a
//! byte-order mark is accepted over HTTP as over stdio. Real sockets on
//! 127.0.0.1, raw HTTP/1.1.
#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::tool::from_fn;
use snodo::transport::http::{HttpListener, HttpOptions};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::time::timeout;

const SOON: Duration = Duration::from_secs(10);
/// How fast a new client's call must be answered, whatever else is open.
/// Far above a call's cost (a few milliseconds) so that a loaded machine
/// does not fail it, and far below what a client locked out would wait (the
/// 10 s header timeout that frees a slot held by an idle connection).
const PROMPT: Duration = Duration::from_secs(2);

fn server() -> Server {
    Server::builder("fair", "1")
        .tool(from_fn("echo", |args, _| async move {
            Ok(ToolResult::text(args.str("text").unwrap_or_default()))
        }))
        // One client opens a thousand streams here: what is tested is the
        // listener under that load, not the share of one client (see
        // tests/shared_tables.rs).
        .subscriptions_per_share(4096)
        .build()
        .unwrap()
}

struct Running {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

async fn start(options: HttpOptions) -> Running {
    let listener = HttpListener::bind(&server(), "127.0.0.1:0".parse().unwrap(), options)
        .await
        .unwrap();
    let addr = listener.local_addr();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listener.run(async move {
        let _ = stopped.await;
    }));
    Running { addr, _stop: stop }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// The head and body of one raw HTTP/1.1 POST of `body`.
fn request(port: u16, method: &str, name: Option<&str>, body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(name) = name {
        head.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    head.push_str("\r\n");
    [head.into_bytes(), body.to_vec()].concat()
}

fn call_body(text: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"_meta": meta(), "name": "echo", "arguments": {"text": text}}})
    .to_string()
    .into_bytes()
}

/// Reads a response head: (status line, lowercase headers).
async fn head(reader: &mut BufReader<TcpStream>) -> (String, String) {
    let mut status = String::new();
    timeout(SOON, reader.read_line(&mut status))
        .await
        .expect("a status line in time")
        .unwrap();
    let mut headers = String::new();
    loop {
        let mut line = String::new();
        let n = timeout(SOON, reader.read_line(&mut line))
            .await
            .expect("headers in time")
            .unwrap();
        if n == 0 || line == "\r\n" {
            break;
        }
        headers.push_str(&line.to_ascii_lowercase());
    }
    (status, headers)
}

/// A new client connects, calls `echo` with `text`, and reads the whole
/// answer; returns how long that took and the body.
async fn timed_call(addr: SocketAddr) -> (Duration, String) {
    call_with_body(addr, &call_body("hi")).await
}

/// A new client connects, posts `body` as a `tools/call` of `echo`, and reads
/// the whole answer; returns how long that took and the body.
async fn call_with_body(addr: SocketAddr, body: &[u8]) -> (Duration, String) {
    let started = Instant::now();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let bytes = request(addr.port(), "tools/call", Some("echo"), body);
    stream.write_all(&bytes).await.unwrap();
    let mut reader = BufReader::new(stream);
    let (status, headers) = head(&mut reader).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let length: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .expect("a JSON answer has a length")
        .trim()
        .parse()
        .unwrap();
    let mut body = vec![0; length];
    timeout(SOON, reader.read_exact(&mut body))
        .await
        .expect("the body in time")
        .unwrap();
    (started.elapsed(), String::from_utf8(body).unwrap())
}

/// The median of three new clients' calls is under [`PROMPT`].
async fn assert_new_clients_are_answered_promptly(addr: SocketAddr) {
    let mut took = Vec::new();
    for _ in 0..3 {
        let (elapsed, body) = timeout(SOON, timed_call(addr))
            .await
            .expect("a new client's call is answered");
        assert!(body.contains(r#""text":"hi""#), "{body}");
        took.push(elapsed);
    }
    took.sort();
    assert!(took[1] < PROMPT, "answered in {took:?}");
}

/// Sends a `subscriptions/listen` request on a connection of its own; the
/// answer is left unread.
async fn send_listen(addr: SocketAddr, id: usize) -> BufReader<TcpStream> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"toolsListChanged": true}}})
    .to_string();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(&request(
            addr.port(),
            "subscriptions/listen",
            None,
            body.as_bytes(),
        ))
        .await
        .unwrap();
    BufReader::new(stream)
}

/// Opens a `subscriptions/listen` stream on its own connection and waits for
/// its acknowledgement.
async fn open_listen(addr: SocketAddr, id: usize) -> BufReader<TcpStream> {
    let mut reader = send_listen(addr, id).await;
    let (status, _) = head(&mut reader).await;
    assert!(status.starts_with("HTTP/1.1 200"), "listen {id}: {status}");
    loop {
        let mut line = String::new();
        let n = timeout(SOON, reader.read_line(&mut line))
            .await
            .expect("the acknowledgement in time")
            .unwrap();
        assert!(n > 0, "listen {id} ended early");
        if line.starts_with("data: ") {
            assert!(line.contains("acknowledged"), "{line}");
            return reader;
        }
    }
}

/// Opens `n` listen streams, 64 at a time.
async fn open_listens(addr: SocketAddr, n: usize) -> Vec<BufReader<TcpStream>> {
    let mut open = Vec::with_capacity(n);
    for batch in (0..n).collect::<Vec<_>>().chunks(64) {
        let mut set = tokio::task::JoinSet::new();
        for &id in batch {
            set.spawn(open_listen(addr, id));
        }
        while let Some(reader) = set.join_next().await {
            open.push(reader.unwrap());
        }
    }
    open
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_listen_streams_from_one_client_do_not_delay_a_call() {
    let running = start(HttpOptions::new()).await;
    let streams = timeout(Duration::from_secs(60), open_listens(running.addr, 1024))
        .await
        .expect("1 024 streams open in time");
    assert_eq!(streams.len(), 1024);
    assert_new_clients_are_answered_promptly(running.addr).await;
    drop(streams);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifteen_hundred_idle_connections_do_not_delay_a_call() {
    let running = start(HttpOptions::new()).await;
    let mut idle = Vec::with_capacity(1500);
    for _ in 0..1500 {
        idle.push(TcpStream::connect(running.addr).await.unwrap());
    }
    // Idle connections: let them sit (the listener spares connections idle
    // for less than 250 ms, whose first request may be on its way).
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_new_clients_are_answered_promptly(running.addr).await;
    drop(idle);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_connection_budget_closes_the_longest_idle_connection() {
    let running = start(HttpOptions::new().max_connections(4)).await;
    let mut oldest = TcpStream::connect(running.addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut others = Vec::new();
    for _ in 0..4 {
        others.push(TcpStream::connect(running.addr).await.unwrap());
    }
    // Idle long enough to give way (250 ms).
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_new_clients_are_answered_promptly(running.addr).await;
    // The oldest idle connection was closed to make room.
    let mut buf = [0u8; 1];
    let read = timeout(SOON, oldest.read(&mut buf))
        .await
        .expect("closed in time");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_over_the_stream_budget_get_503_with_retry_after() {
    let running = start(HttpOptions::new().max_streams(2)).await;
    let open = open_listens(running.addr, 2).await;
    let mut reader = send_listen(running.addr, 3).await;
    let (status, headers) = head(&mut reader).await;
    assert!(status.starts_with("HTTP/1.1 503"), "{status}");
    assert!(headers.contains("retry-after: 1"), "{headers}");
    // Calls go on, and a closed stream frees its slot.
    assert_new_clients_are_answered_promptly(running.addr).await;
    drop(open);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let _again = open_listens(running.addr, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_peer_caps_close_extra_connections_and_refuse_extra_streams() {
    let running = start(
        HttpOptions::new()
            .max_connections_per_peer(3)
            .max_streams_per_peer(1)
            .peer_limits_on_loopback(true),
    )
    .await;
    let _listen = open_listens(running.addr, 1).await;
    // A second stream from the same peer: 503.
    let mut second = send_listen(running.addr, 2).await;
    let (status, _) = head(&mut second).await;
    assert!(status.starts_with("HTTP/1.1 503"), "{status}");
    // The listen stream and `second` hold two of three connections; a
    // third is served.
    let (_, body) = timed_call(running.addr).await;
    assert!(body.contains(r#""text":"hi""#), "{body}");
    // Hold idle connections until the peer has three open (the listen
    // stream and two idle ones). Connections the server is still releasing
    // (the call's, `second`'s) may make it close one of ours at first:
    // those are replaced, so the count only depends on what is held.
    drop(second);
    let mut held: Vec<TcpStream> = Vec::new();
    for _ in 0..50 {
        held.retain(still_open);
        if held.len() == 2 {
            break;
        }
        held.push(TcpStream::connect(running.addr).await.unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    held.retain(still_open);
    assert_eq!(held.len(), 2, "two idle connections stay open");
    // A fourth is closed unanswered.
    let mut fourth = TcpStream::connect(running.addr).await.unwrap();
    let _ = fourth
        .write_all(&request(
            running.addr.port(),
            "tools/call",
            Some("echo"),
            &call_body("x"),
        ))
        .await;
    let mut out = Vec::new();
    let _ = timeout(SOON, fourth.read_to_end(&mut out))
        .await
        .expect("closed in time");
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
}

/// Whether the server has not closed `stream` (nothing to read yet).
fn still_open(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.try_read(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// Writes `body_len` bytes of body (framed by `chunked` or `Content-Length`)
/// before reading anything, then reads the answer.
async fn write_then_read(addr: SocketAddr, body_len: usize, chunked: bool) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let framing = if chunked {
        "Transfer-Encoding: chunked".to_string()
    } else {
        format!("Content-Length: {body_len}")
    };
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n{framing}\r\n\r\n",
        addr.port()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 64 * 1024];
    let mut left = body_len;
    while left > 0 {
        let n = left.min(chunk.len());
        if chunked {
            stream
                .write_all(format!("{n:x}\r\n").as_bytes())
                .await
                .unwrap();
        }
        stream
            .write_all(&chunk[..n])
            .await
            .expect("the server reads the whole body");
        if chunked {
            stream.write_all(b"\r\n").await.unwrap();
        }
        left -= n;
    }
    if chunked {
        stream.write_all(b"0\r\n\r\n").await.unwrap();
    }
    let mut out = Vec::new();
    timeout(SOON, stream.read_to_end(&mut out))
        .await
        .expect("answered and closed in time")
        .expect("no reset: the client reads the answer");
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_writes_three_megabytes_before_reading_gets_the_413() {
    let running = start(HttpOptions::new()).await;
    for chunked in [false, true] {
        let answer = write_then_read(running.addr, 3_000_000, chunked).await;
        assert!(
            answer.starts_with("HTTP/1.1 413"),
            "chunked {chunked}: {answer}"
        );
        assert!(answer.contains("Request body too large"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
    }
    assert_new_clients_are_answered_promptly(running.addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_past_the_discard_bound_is_refused_without_reading_it() {
    let running = start(
        HttpOptions::new()
            .max_body_bytes(1024)
            .max_discard_bytes(1024),
    )
    .await;
    // Declared larger than limit + discard bound: answered at once.
    let mut stream = TcpStream::connect(running.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n",
        running.addr.port()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = timeout(SOON, stream.read_to_end(&mut out))
        .await
        .expect("answered without the body");
    assert!(String::from_utf8_lossy(&out).starts_with("HTTP/1.1 413"));
    // Within the bound: read, then refused.
    let answer = write_then_read(running.addr, 1500, false).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_order_mark_is_accepted_over_http() {
    let running = start(HttpOptions::new()).await;
    let body = [b"\xEF\xBB\xBF".as_slice(), &call_body("bom")].concat();
    let (_, answer) = call_with_body(running.addr, &body).await;
    assert!(answer.contains(r#""text":"bom""#), "{answer}");
}

#[tokio::test]
async fn the_accept_backlog_is_set_on_the_socket() {
    let listener = HttpListener::bind(
        &server(),
        "127.0.0.1:0".parse().unwrap(),
        HttpOptions::new().accept_backlog(77),
    )
    .await
    .unwrap();
    let port = listener.local_addr().port();
    // `ss` shows a listening socket's backlog in its Send-Q column.
    let out = std::process::Command::new("ss")
        .args(["-ltnH", &format!("sport = :{port}")])
        .output()
        .expect("`ss` (iproute2) is installed");
    let text = String::from_utf8_lossy(&out.stdout);
    let send_q: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(send_q.get(2), Some(&"77"), "{text}");
}
