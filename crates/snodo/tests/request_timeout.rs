//! One request timeout, set on the server builder, applies on every transport:
//! in process, over stdio (`serve_lines` on a pipe) and over Streamable HTTP (a
//! real socket on 127.0.0.1). Past it the handler's cancellation signal fires
//! and the request fails with `-32603 Request timed out`, carrying its id.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use snodo::prelude::*;
use snodo::transport::http::{HttpListener, HttpOptions};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// Counts the handlers that saw their cancellation signal.
#[derive(Clone, Default)]
struct Cancelled(Arc<AtomicUsize>);

/// Never answers; work it started watches the request's cancellation signal
/// (the handler's own future is dropped at the deadline).
#[snodo::tool]
async fn stall(cx: Context, snodo::State(seen): snodo::State<Cancelled>) -> CallResult {
    let signal = cx.cancellation().clone();
    tokio::spawn(async move {
        signal.cancelled().await;
        seen.0.fetch_add(1, Ordering::SeqCst);
    });
    std::future::pending::<CallResult>().await
}

/// Answers at once.
#[snodo::tool]
async fn quick() -> &'static str {
    "quick"
}

const TIMEOUT: Duration = Duration::from_millis(150);
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn server(seen: &Cancelled) -> Server {
    Server::builder("timeouts", "0.1.0")
        .request_timeout(TIMEOUT)
        .state(seen.clone())
        .tool(stall)
        .tool(quick)
        .build()
        .unwrap()
}

fn call(id: u32, tool: &str, progress: bool) -> String {
    let meta = if progress {
        META.replace(r#""_meta":{"#, r#""_meta":{"progressToken":"p","#)
    } else {
        META.to_string()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}},{meta}}}}}"#
    )
}

fn assert_timed_out(reply: &Value, id: u32) {
    assert_eq!(reply["id"], id, "{reply}");
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    assert_eq!(reply["error"]["message"], "Request timed out", "{reply}");
}

async fn wait_for(seen: &Cancelled, count: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while seen.0.load(Ordering::SeqCst) < count {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the handler was never cancelled"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn in_process_calls_time_out() {
    let seen = Cancelled::default();
    let server = server(&seen);
    assert_eq!(server.request_timeout(), TIMEOUT);
    let reply = server
        .dispatch_value(serde_json::from_str(&call(1, "stall", false)).unwrap())
        .await
        .unwrap();
    assert_timed_out(&reply, 1);
    wait_for(&seen, 1).await;
    // A streamed request (progress asked for) ends with the same error.
    let frames = server
        .dispatch_collect(serde_json::from_str(&call(2, "stall", true)).unwrap())
        .await;
    assert_timed_out(frames.last().unwrap(), 2);
    wait_for(&seen, 2).await;
    let fine = server
        .dispatch_value(serde_json::from_str(&call(3, "quick", false)).unwrap())
        .await
        .unwrap();
    assert_eq!(fine["result"]["content"][0]["text"], "quick");
}

#[tokio::test]
async fn stdio_requests_time_out_and_the_connection_goes_on() {
    let seen = Cancelled::default();
    let server = server(&seen);
    let (client, server_end) = tokio::io::duplex(64 * 1024);
    let (server_in, server_out) = tokio::io::split(server_end);
    let serving = tokio::spawn(async move {
        server
            .serve_lines(server_in, server_out, Default::default())
            .await
    });
    let (client_in, mut client_out) = tokio::io::split(client);
    let mut lines = BufReader::new(client_in).lines();
    for (id, progress) in [(1, false), (2, true)] {
        client_out
            .write_all(format!("{}\n", call(id, "stall", progress)).as_bytes())
            .await
            .unwrap();
    }
    let mut timed_out = Vec::new();
    while timed_out.len() < 2 {
        let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
            .await
            .expect("an answer within 5 s")
            .unwrap()
            .expect("a line");
        let frame: Value = serde_json::from_str(&line).unwrap();
        if frame.get("id").is_some() {
            assert_timed_out(&frame, frame["id"].as_u64().unwrap() as u32);
            timed_out.push(frame["id"].as_u64().unwrap());
        }
    }
    timed_out.sort_unstable();
    assert_eq!(timed_out, [1, 2]);
    wait_for(&seen, 2).await;
    client_out
        .write_all(format!("{}\n", call(3, "quick", false)).as_bytes())
        .await
        .unwrap();
    let line = lines.next_line().await.unwrap().unwrap();
    let frame: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(frame["result"]["content"][0]["text"], "quick");
    client_out.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server stops at end of input")
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_requests_use_the_server_timeout_without_any_http_option() {
    let seen = Cancelled::default();
    let listener = HttpListener::bind(
        &server(&seen),
        "127.0.0.1:0".parse().unwrap(),
        HttpOptions::new(),
    )
    .await
    .unwrap();
    let addr = listener.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(listener.run(async {
        let _ = stopped.await;
    }));

    let body = call(7, "stall", false);
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: stall\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_string(&mut answer))
        .await
        .expect("an answer within 5 s")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let json_start = answer.find("\r\n\r\n").unwrap() + 4;
    let reply: Value = serde_json::from_str(answer[json_start..].trim()).unwrap_or_else(|_| {
        // A chunked body: the JSON is the first chunk's data.
        let chunk = answer[json_start..].split("\r\n").nth(1).unwrap();
        serde_json::from_str(chunk).unwrap()
    });
    assert_timed_out(&reply, 7);
    wait_for(&seen, 1).await;
    let _ = stop.send(());
    task.await.unwrap().unwrap();
}
