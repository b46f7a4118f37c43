//! Streaming over real loopback sockets: SSE framing, closing the stream
//! cancels the handler, and `subscriptions/listen` over HTTP.
#![cfg(feature = "http")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
use snodo::tool::from_fn;
use snodo::transport::http::{HttpListener, HttpOptions};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::time::timeout;

const SOON: Duration = Duration::from_secs(10);

async fn start(server: &Server) -> (std::net::SocketAddr, oneshot::Sender<()>) {
    let listener = HttpListener::bind(server, "127.0.0.1:0".parse().unwrap(), HttpOptions::new())
        .await
        .unwrap();
    let addr = listener.local_addr();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listener.run(async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// Sends one raw HTTP/1.1 POST and returns a line reader over the response.
async fn post(
    addr: std::net::SocketAddr,
    method: &str,
    name: Option<&str>,
    body: &Value,
) -> BufReader<TcpStream> {
    let body = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\nContent-Length: {}\r\n",
        addr.port(),
        body.len()
    );
    if let Some(name) = name {
        head.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    BufReader::new(stream)
}

/// Reads the response head; returns (status line, lowercase headers).
async fn head(reader: &mut BufReader<TcpStream>) -> (String, String) {
    let mut status = String::new();
    timeout(SOON, reader.read_line(&mut status))
        .await
        .unwrap()
        .unwrap();
    let mut headers = String::new();
    loop {
        let mut line = String::new();
        timeout(SOON, reader.read_line(&mut line))
            .await
            .unwrap()
            .unwrap();
        if line == "\r\n" {
            break;
        }
        headers.push_str(&line.to_ascii_lowercase());
    }
    (status, headers)
}

/// The next `data:` frame of an SSE body (chunked transfer framing skipped).
async fn frame(reader: &mut BufReader<TcpStream>) -> Value {
    loop {
        let mut line = String::new();
        let n = timeout(SOON, reader.read_line(&mut line))
            .await
            .expect("a frame in time")
            .unwrap();
        assert!(n > 0, "the stream ended early");
        if let Some(data) = line.strip_prefix("data: ") {
            return serde_json::from_str(data.trim_end()).unwrap();
        }
    }
}

fn meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    for (k, v) in extra.as_object().unwrap() {
        meta[k] = v.clone();
    }
    meta
}

#[tokio::test]
async fn closing_the_sse_stream_cancels_the_handler() {
    let seen = Arc::new(AtomicBool::new(false));
    let (tx, rx) = oneshot::channel::<()>();
    let tx = Arc::new(std::sync::Mutex::new(Some(tx)));
    let flag = seen.clone();
    let server = Server::builder("s", "1")
        .tool(from_fn("wait", move |_, cx| {
            let flag = flag.clone();
            let tx = tx.clone();
            async move {
                let _ = cx.progress(1.0, None, Some("started")).await;
                cx.cancellation().cancelled().await;
                flag.store(true, Ordering::SeqCst);
                if let Some(tx) = tx.lock().unwrap().take() {
                    let _ = tx.send(());
                }
                Ok(ToolResult::text("unreachable"))
            }
        }))
        .build()
        .unwrap();
    let (addr, _stop) = start(&server).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"_meta": meta(json!({"progressToken": 7})), "name": "wait", "arguments": {}}});
    let mut reader = post(addr, "tools/call", Some("wait"), &body).await;
    let (status, headers) = head(&mut reader).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(
        headers.contains("content-type: text/event-stream"),
        "{headers}"
    );
    assert!(headers.contains("x-accel-buffering: no"), "{headers}");
    let progress = frame(&mut reader).await;
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], 7);
    drop(reader);
    timeout(SOON, rx)
        .await
        .expect("the handler saw the cancellation")
        .unwrap();
    assert!(seen.load(Ordering::SeqCst));
}

#[tokio::test]
async fn listen_over_http_acknowledges_then_streams_changes() {
    let server = Server::builder("s", "1")
        .tool(from_fn("first", |_, _| async { Ok(ToolResult::text("1")) }))
        .build()
        .unwrap();
    let (addr, _stop) = start(&server).await;
    let body = json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {"toolsListChanged": true, "promptsListChanged": true}}});
    let mut reader = post(addr, "subscriptions/listen", None, &body).await;
    let (status, headers) = head(&mut reader).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(
        headers.contains("content-type: text/event-stream"),
        "{headers}"
    );
    let ack = frame(&mut reader).await;
    assert_eq!(
        ack,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"notifications": {"toolsListChanged": true},
                          "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}}})
    );
    server
        .add_tool(from_fn("second", |_, _| async {
            Ok(ToolResult::text("2"))
        }))
        .unwrap();
    let change = frame(&mut reader).await;
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert_eq!(
        change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    server.events().shutdown();
    let cancelled = frame(&mut reader).await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    let last = frame(&mut reader).await;
    assert_eq!(last["id"], "listen-1");
    assert_eq!(last["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_full_server_refuses_new_subscriptions_with_503() {
    let server = Server::builder("s", "1")
        .events(snodo::server::EventHub::new(1))
        .tool(from_fn("t", |_, _| async { Ok(ToolResult::text("t")) }))
        .build()
        .unwrap();
    let (addr, _stop) = start(&server).await;
    let listen = |id: u32| {
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {"toolsListChanged": true}}})
    };
    let mut first = post(addr, "subscriptions/listen", None, &listen(1)).await;
    let _ = head(&mut first).await;
    let _ack = frame(&mut first).await;
    let mut second = post(addr, "subscriptions/listen", None, &listen(2)).await;
    let (status, _) = head(&mut second).await;
    assert!(status.starts_with("HTTP/1.1 503"), "{status}");
    drop(first);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut third = post(addr, "subscriptions/listen", None, &listen(3)).await;
    let (status, _) = head(&mut third).await;
    assert!(
        status.starts_with("HTTP/1.1 200"),
        "a closed stream frees its slot: {status}"
    );
}

/// A resource, so that the server declares `resources` and a listener may
/// subscribe to URIs.
struct Feed;

impl Resource for Feed {
    fn uri_template(&self) -> Option<&str> {
        Some("test://feed/{item}")
    }
    fn name(&self) -> &str {
        "feed"
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        Ok(ResourceContents::text(req.uri, "item").into())
    }
}

fn listening_server() -> Server {
    Server::builder("s", "1")
        .tool(from_fn("t", |_, _| async { Ok(ToolResult::text("t")) }))
        .resource(Feed)
        .build()
        .unwrap()
}

/// Reads the rest of a response with a `Content-Length` as JSON.
async fn json_body(reader: &mut BufReader<TcpStream>, headers: &str) -> Value {
    use tokio::io::AsyncReadExt;
    let length: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .expect("a Content-Length")
        .trim()
        .parse()
        .unwrap();
    let mut body = vec![0; length];
    timeout(SOON, reader.read_exact(&mut body))
        .await
        .unwrap()
        .unwrap();
    serde_json::from_slice(&body).unwrap()
}

#[tokio::test]
async fn a_listen_stream_that_falls_behind_gets_one_notification_of_each_subscribed_type() {
    assert_eq!(
        snodo::server::LISTENER_QUEUE,
        256,
        "README's listener queue"
    );
    let server = listening_server();
    let (addr, _stop) = start(&server).await;
    let body = json!({"jsonrpc": "2.0", "id": "behind", "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {
            "toolsListChanged": true, "resourcesListChanged": true,
            "resourceSubscriptions": ["test://feed"]}}});
    let mut reader = post(addr, "subscriptions/listen", None, &body).await;
    let (status, _) = head(&mut reader).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let ack = frame(&mut reader).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let tagged = |method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": "behind"});
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    };
    let updated = |item: usize| {
        tagged(
            "notifications/resources/updated",
            json!({"uri": format!("test://feed/{item}")}),
        )
    };
    // The test and the server share one thread: nothing reads the
    // listener's queue while a burst is published, as if its client had
    // stopped reading. A burst the size of the queue is delivered whole.
    for item in 0..256 {
        server
            .events()
            .resource_updated(&format!("test://feed/{item}"));
    }
    for item in 0..256 {
        assert_eq!(frame(&mut reader).await, updated(item));
    }
    // One more than the queue holds: the oldest is lost, and instead the
    // listener hears once of every type it subscribed to.
    for item in 0..257 {
        server
            .events()
            .resource_updated(&format!("test://feed/{item}"));
    }
    assert_eq!(
        frame(&mut reader).await,
        tagged("notifications/tools/list_changed", json!({}))
    );
    assert_eq!(
        frame(&mut reader).await,
        tagged("notifications/resources/list_changed", json!({}))
    );
    assert_eq!(
        frame(&mut reader).await,
        tagged(
            "notifications/resources/updated",
            json!({"uri": "test://feed"})
        )
    );
    for item in 1..257 {
        assert_eq!(frame(&mut reader).await, updated(item));
    }
    // Nothing else was pending: the next event is the next frame.
    server.events().prompts_changed();
    server.events().tools_changed();
    assert_eq!(
        frame(&mut reader).await,
        tagged("notifications/tools/list_changed", json!({}))
    );
}

#[tokio::test]
async fn a_subscription_watches_at_most_one_thousand_uris() {
    let server = listening_server();
    let (addr, _stop) = start(&server).await;
    let listen = |id: &str, uris: usize| {
        let uris: Vec<String> = (0..uris).map(|i| format!("test://feed/{i}")).collect();
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"_meta": meta(json!({})), "notifications": {"resourceSubscriptions": uris}}})
    };
    let mut accepted = post(addr, "subscriptions/listen", None, &listen("a", 1000)).await;
    let (status, headers) = head(&mut accepted).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(
        headers.contains("content-type: text/event-stream"),
        "{headers}"
    );
    let ack = frame(&mut accepted).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let watched = ack["params"]["notifications"]["resourceSubscriptions"]
        .as_array()
        .expect("the URIs watched");
    assert_eq!(watched.len(), 1000);
    assert_eq!(watched[999], "test://feed/999");
    server.events().resource_updated("test://feed/999");
    assert_eq!(
        frame(&mut accepted).await["params"]["uri"],
        "test://feed/999"
    );

    let mut refused = post(addr, "subscriptions/listen", None, &listen("b", 1001)).await;
    let (status, headers) = head(&mut refused).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert_eq!(
        json_body(&mut refused, &headers).await,
        json!({"jsonrpc": "2.0", "id": "b", "error": {"code": -32602,
            "message": "resourceSubscriptions must be an array of at most 1000 URIs"}})
    );
}

#[tokio::test]
async fn a_request_sends_at_most_one_thousand_progress_updates_of_at_most_4_kib() {
    use snodo::handler::{MAX_PROGRESS_MESSAGE, MAX_PROGRESS_UPDATES, ProgressError};
    assert_eq!(
        (MAX_PROGRESS_UPDATES, MAX_PROGRESS_MESSAGE),
        (1000, 4096),
        "README's limits"
    );
    let server = Server::builder("s", "1")
        .tool(from_fn("chatty", |_, cx| async move {
            let five_kib = cx.progress(0.1, None, Some(&"x".repeat(5 * 1024))).await;
            let just_over = cx.progress(0.2, None, Some(&"x".repeat(4097))).await;
            let at_limit = cx.progress(1.0, None, Some(&"y".repeat(4096))).await;
            let (mut sent, mut refused) = (0, 0);
            for step in 2..=1500 {
                match cx.progress(step as f64, Some(1500.0), None).await {
                    Ok(()) => sent += 1,
                    Err(ProgressError::LimitReached) => refused += 1,
                    Err(other) => return Err(format!("step {step}: {other}").into()),
                }
            }
            Ok(ToolResult::structured(json!({
                "fiveKib": format!("{five_kib:?}"),
                "justOver": format!("{just_over:?}"),
                "atLimit": format!("{at_limit:?}"),
                "sent": sent,
                "refused": refused,
            })))
        }))
        .build()
        .unwrap();
    let (addr, _stop) = start(&server).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"_meta": meta(json!({"progressToken": "p"})), "name": "chatty", "arguments": {}}});
    let mut reader = post(addr, "tools/call", Some("chatty"), &body).await;
    let (status, headers) = head(&mut reader).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(
        headers.contains("content-type: text/event-stream"),
        "{headers}"
    );
    let mut progress = Vec::new();
    let response = loop {
        let next = frame(&mut reader).await;
        if next.get("id").is_some() {
            break next;
        }
        assert_eq!(next["method"], "notifications/progress", "{next}");
        progress.push(next["params"].clone());
    };
    assert_eq!(progress.len(), 1000, "at most 1 000 updates on the wire");
    assert_eq!(
        progress[0],
        json!({"progressToken": "p", "progress": 1, "message": "y".repeat(4096)})
    );
    assert_eq!(
        progress[999],
        json!({"progressToken": "p", "progress": 1000, "total": 1500})
    );
    assert_eq!(
        response["result"]["structuredContent"],
        json!({"fiveKib": "Err(MessageTooLong)", "justOver": "Err(MessageTooLong)",
            "atLimit": "Ok(())", "sent": 999, "refused": 500})
    );
}
