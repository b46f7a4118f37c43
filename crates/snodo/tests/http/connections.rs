//! Connections: slow clients time out, concurrent requests are bounded, and
//! HTTP/2 with prior knowledge is served.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use snodo::transport::http::HttpOptions;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::SOON;
use crate::clients::{
    CALL_OK, HttpClient, LIST_OK, call_headers, h2_client, list_headers, post, read_until_closed,
};
use crate::server::Running;

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
