//! The 2024-11-05 HTTP+SSE transport (`Target::Sse`) against a scripted
//! loopback server: the GET stream's `endpoint` event, POSTs acknowledged
//! with 202 and answered on the stream with literal JSON, a progress
//! notification and a server request routed by id, and the bad cases (an
//! endpoint on another origin, no endpoint event, a stream that ends, a GET
//! that is not an event stream).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use snodo::client::{Client, RequestOptions, Target};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// What the server does with one POSTed message: the events to push on the
/// stream (raw JSON texts), or `None` to end the stream.
type Script = dyn Fn(&Value) -> Option<Vec<String>> + Send + Sync;

struct SseServer {
    url: String,
    posts: Arc<Mutex<Vec<(String, Value)>>>,
}

impl SseServer {
    /// Serves GET /sse (opening with `endpoint`, as given) and POST
    /// /messages?session=1 (202, then the script's events on the stream).
    async fn start(
        endpoint: &str,
        script: impl Fn(&Value) -> Option<Vec<String>> + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let posts = Arc::new(Mutex::new(Vec::new()));
        let stream: Arc<Mutex<Option<mpsc::UnboundedSender<Option<String>>>>> =
            Arc::new(Mutex::new(None));
        let script: Arc<Script> = Arc::new(script);
        let endpoint = endpoint.replace("{addr}", &addr.to_string());
        let p = posts.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(
                    socket,
                    endpoint.clone(),
                    p.clone(),
                    stream.clone(),
                    script.clone(),
                ));
            }
        });
        Self {
            url: format!("http://{addr}/sse"),
            posts,
        }
    }

    fn posted(&self) -> Vec<(String, Value)> {
        self.posts.lock().unwrap().clone()
    }
}

async fn serve(
    socket: TcpStream,
    endpoint: String,
    posts: Arc<Mutex<Vec<(String, Value)>>>,
    stream: Arc<Mutex<Option<mpsc::UnboundedSender<Option<String>>>>>,
    script: Arc<Script>,
) {
    let (read, mut write) = socket.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("").to_string();
        let mut length = 0;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).await.unwrap_or(0) == 0 {
                return;
            }
            if h.trim_end().is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        if method == "GET" && target == "/sse" {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            if write.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let (tx, mut rx) = mpsc::unbounded_channel();
            if !endpoint.is_empty() {
                let _ = tx.send(Some(format!("event: endpoint\ndata: {endpoint}\n\n")));
            }
            *stream.lock().unwrap() = Some(tx);
            while let Some(Some(text)) = rx.recv().await {
                let chunk = format!("{:x}\r\n{text}\r\n", text.len());
                if write.write_all(chunk.as_bytes()).await.is_err() {
                    return;
                }
            }
            let _ = write.write_all(b"0\r\n\r\n").await;
            return;
        }
        if method == "GET" {
            let head = "HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\n\r\nnot found";
            let _ = write.write_all(head.as_bytes()).await;
            continue;
        }
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        posts.lock().unwrap().push((target, message.clone()));
        let accepted = "HTTP/1.1 202 Accepted\r\ncontent-length: 8\r\n\r\nAccepted";
        if write.write_all(accepted.as_bytes()).await.is_err() {
            return;
        }
        let tx = stream.lock().unwrap().clone();
        if let Some(tx) = tx {
            match script(&message) {
                Some(events) => {
                    for data in events {
                        let _ = tx.send(Some(format!("event: message\ndata: {data}\n\n")));
                    }
                }
                None => {
                    let _ = tx.send(None);
                }
            }
        }
    }
}

/// A 2024-11-05 server: `initialize`, `tools/list`, and `tools/call` of
/// `count` (a progress notification, a `roots/list` request, then the
/// result once the roots arrive) and of `stop` (the stream ends).
fn legacy_server(message: &Value) -> Option<Vec<String>> {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let method = message.get("method").and_then(Value::as_str);
    let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    Some(match method {
        Some("initialize") => vec![answer(json!({"protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "old-sse", "version": "0.1.0"}}))],
        Some("tools/list") => vec![answer(json!({"tools": [{"name": "count",
            "description": "Counts", "inputSchema": {"type": "object"}}]}))],
        Some("tools/call") if message["params"]["name"] == "stop" => return None,
        Some("tools/call") => {
            let token = message["params"]["_meta"]["progressToken"].clone();
            vec![
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 2}})
                .to_string(),
                json!({"jsonrpc": "2.0", "id": "s-1", "method": "roots/list"}).to_string(),
            ]
        }
        // The client's answer to roots/list completes the call, the third
        // request after initialize and tools/list.
        None if message.get("result").is_some() => vec![
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text",
                "text": format!("roots: {}", message["result"]["roots"].as_array().map_or(0, Vec::len))}]}})
            .to_string(),
        ],
        _ => vec![],
    })
}

#[tokio::test]
async fn a_2024_11_05_server_is_spoken_to_over_its_event_stream() {
    let server = SseServer::start("/messages?session=1", legacy_server).await;
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let client = Client::builder()
        .roots(vec![snodo::client::Root::new("file:///work", Some("work"))])
        .connect(Target::Sse(server.url.clone()))
        .await
        .unwrap();
    assert!(client.is_legacy());
    assert_eq!(client.protocol_version(), "2024-11-05");
    assert_eq!(client.server_info().unwrap()["name"], "old-sse");
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    let result = client
        .call_tool("count", json!({}))
        .options(RequestOptions::new().on_progress(move |p| seen.lock().unwrap().push(p.progress)))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "roots: 1");
    assert_eq!(*progress.lock().unwrap(), vec![1.0]);

    let posted = server.posted();
    assert!(
        posted
            .iter()
            .all(|(target, _)| target == "/messages?session=1")
    );
    let methods: Vec<_> = posted
        .iter()
        .map(|(_, m)| {
            m.get("method")
                .and_then(Value::as_str)
                .unwrap_or("(answer)")
        })
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            "(answer)"
        ]
    );
    assert_eq!(posted[0].1["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(posted[3].1["id"], 3, "the script answers id 3");
    assert_eq!(posted[4].1["id"], "s-1");
    client.close().await;
}

#[tokio::test]
async fn a_stream_that_ends_fails_the_calls_waiting() {
    let server = SseServer::start("/messages?session=1", legacy_server).await;
    let client = Client::connect(Target::Sse(server.url.clone()))
        .await
        .unwrap();
    let e = client
        .call_tool("stop", json!({}))
        .timeout(Duration::from_secs(10))
        .await
        .unwrap_err();
    assert!(e.is_transport(), "{e}");
    let e = client.list_tools().await.unwrap_err();
    assert!(e.to_string().contains("event stream has ended"), "{e}");
}

#[tokio::test]
async fn an_endpoint_on_another_origin_is_refused() {
    for endpoint in ["http://127.0.0.2:9/messages", "//other.example/messages"] {
        let server = SseServer::start(endpoint, legacy_server).await;
        let e = Client::connect(Target::Sse(server.url.clone()))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("endpoint event"), "{endpoint}: {e}");
        assert!(server.posted().is_empty(), "nothing was sent to {endpoint}");
    }
    // The stream's own origin, written in full, is fine.
    let server = SseServer::start("http://{addr}/messages?session=1", legacy_server).await;
    let client = Client::connect(Target::Sse(server.url.clone()))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2024-11-05");
}

#[tokio::test]
async fn no_endpoint_event_or_no_event_stream_is_a_clear_error() {
    let server = SseServer::start("", legacy_server).await;
    let e = Client::builder()
        .probe_timeout(Duration::from_millis(300))
        .connect(Target::Sse(server.url.clone()))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no endpoint event"), "{e}");

    let wrong = server.url.replace("/sse", "/elsewhere");
    let e = Client::connect(Target::Sse(wrong)).await.unwrap_err();
    assert_eq!(e.status(), Some(404), "{e}");
}

#[tokio::test]
async fn a_modern_revision_cannot_be_pinned_on_it() {
    let server = SseServer::start("/messages?session=1", legacy_server).await;
    let e = Client::builder()
        .protocol_version("2026-07-28")
        .connect(Target::Sse(server.url.clone()))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("cannot speak 2026-07-28"), "{e}");
}
