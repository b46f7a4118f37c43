//! A request's and a listener's life: request timeouts, streamed answers,
//! graceful shutdown, serving a bound listener, and the service without one.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use snodo::transport::http::HttpOptions;
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use crate::SOON;
use crate::clients::{CALL_OK, LIST_OK, call_headers, h1_client, h2_client, list_headers, post};
use crate::server::{Gauge, Running, server};

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
async fn a_request_that_may_stream_is_json_until_a_notification_and_sse_is_bounded_by_the_timeout()
{
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
    // Asked for progress, it sent none before its response: plain JSON.
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.headers["content-type"], "application/json");
    let json = reply.json();
    assert_eq!(json["id"], 21);
    assert_eq!(json["result"]["content"][0]["text"], "Sunny in us-west1");

    // A notification first: server-sent events; a stream that outlives the
    // request timeout ends with -32603 and the id.
    let body = r#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"hang","arguments":{},"_meta":{"progressToken":"p-22","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = post(&client, &running.url, &call_headers("hang", None), body).await;
    assert_eq!(reply.headers["content-type"], "text/event-stream");
    assert_eq!(reply.headers["x-accel-buffering"], "no");
    let text = reply.text();
    assert!(text.contains("notifications/progress"), "{text}");
    let last = text.trim_end().rsplit("\n\n").next().unwrap();
    let last: Value =
        serde_json::from_str(last.strip_prefix("data: ").expect("a data event")).unwrap();
    assert_eq!(last["id"], 22);
    assert_eq!(last["error"]["code"], -32603);

    // Nothing before the request timeout: a JSON -32603 with the id.
    let body = r#"{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"slow","arguments":{"ms":5000},"_meta":{"progressToken":"p-23","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let reply = post(&client, &running.url, &call_headers("slow", None), body).await;
    assert_eq!(reply.headers["content-type"], "application/json");
    let json = reply.json();
    assert_eq!(json["id"], 23);
    assert_eq!(json["error"]["code"], -32603);
    assert_eq!(json["error"]["message"], "Request timed out");
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
