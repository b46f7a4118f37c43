//! No client takes what the others share: one remote address that opens
//! thousands of initialize-era sessions fills its own share only, and a client
//! from another address still gets in at once; hundreds of sessions streaming
//! large results keep no more frames for resumption than the replay budget.
//! Real sockets: the flood comes from 127.0.0.1, the other client from
//! 127.0.0.2.
#![cfg(feature = "http")]

mod legacy_support;

use std::net::IpAddr;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::server::legacy::ReplayBudget;
use snodo::tool::from_fn;
use snodo::transport::http::{
    DEFAULT_MAX_SESSIONS_PER_SHARE, HttpListener, HttpOptions, MemorySessions,
};
use tokio::sync::oneshot;

const V: &str = "2025-11-25";

/// An HTTP client whose connections leave from `from`.
fn client_from(from: &str) -> Client<HttpConnector, Full<Bytes>> {
    let mut connector = HttpConnector::new();
    connector.set_local_address(Some(from.parse::<IpAddr>().unwrap()));
    Client::builder(TokioExecutor::new()).build(connector)
}

/// What an `initialize` got: the status, the session id, the `Retry-After`.
struct Opened {
    status: StatusCode,
    session: Option<String>,
    retry_after: Option<u64>,
    body: Value,
}

async fn post(
    client: &Client<HttpConnector, Full<Bytes>>,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> Opened {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V);
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let request = request
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .expect("an answer within 10 s")
        .expect("the request goes through");
    let status = response.status();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let session = header("mcp-session-id");
    let retry_after = header("retry-after").map(|v| v.parse().expect("whole seconds"));
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Opened {
        status,
        session,
        retry_after,
        body,
    }
}

/// `initialize` then `notifications/initialized`: a finished handshake.
async fn open_session(client: &Client<HttpConnector, Full<Bytes>>, url: &str) -> Opened {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": V, "capabilities": {},
        "clientInfo": {"name": "shares", "version": "1.0.0"}}});
    let opened = post(client, url, None, initialize).await;
    if let Some(id) = &opened.session {
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let ack = post(client, url, Some(id), done).await;
        assert_eq!(ack.status, StatusCode::ACCEPTED);
    }
    opened
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_thousand_sessions_from_one_address_leave_another_address_room() {
    let server = legacy_support::server(Duration::from_secs(5));
    let listener = HttpListener::bind(&server, "127.0.0.1:0".parse().unwrap(), HttpOptions::new())
        .await
        .expect("bind 127.0.0.1:0");
    let url = listener.url();
    let (_stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listener.run(async {
        let _ = stopped.await;
    }));

    // The flood: 5 000 finished handshakes from 127.0.0.1, eight at a time.
    let flood = {
        let url = url.clone();
        tokio::spawn(async move {
            let client = client_from("127.0.0.1");
            let mut opened = 0;
            let mut refused = Vec::new();
            for _ in 0..5000 / 8 {
                let batch = (0..8).map(|_| open_session(&client, &url));
                for o in futures_util::future::join_all(batch).await {
                    match o.status {
                        StatusCode::OK => opened += 1,
                        _ => refused.push(o),
                    }
                }
            }
            (opened, refused)
        })
    };

    // Meanwhile, and after, a client from 127.0.0.2 gets in at the first try
    // (at most 200 times: its sessions stay open, and its own share is 256;
    // on a slow machine the flood outlasts that many tries).
    let other = client_from("127.0.0.2");
    let mut tries = 0;
    let mut slowest = Duration::ZERO;
    while !flood.is_finished() && tries < 200 {
        let started = std::time::Instant::now();
        let o = open_session(&other, &url).await;
        slowest = slowest.max(started.elapsed());
        assert_eq!(o.status, StatusCode::OK, "during the flood: {}", o.body);
        tries += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (opened, refused) = flood.await.unwrap();
    let o = open_session(&other, &url).await;
    assert_eq!(o.status, StatusCode::OK, "after the flood: {}", o.body);
    assert!(tries > 0, "the other client tried during the flood");
    eprintln!(
        "127.0.0.2 got in {tries} times out of {tries} during the flood, the slowest in {slowest:?}"
    );

    assert_eq!(
        opened, DEFAULT_MAX_SESSIONS_PER_SHARE,
        "one address, one share"
    );
    assert_eq!(refused.len(), 8 * (5000 / 8) - opened);
    for o in &refused {
        assert_eq!(o.status, StatusCode::SERVICE_UNAVAILABLE);
        // Finished, active sessions give way only after two idle minutes.
        let after = o.retry_after.expect("a 503 says when to come back");
        assert!((1..=120).contains(&after), "Retry-After: {after}");
        let message = o.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("for one client"), "{message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_default_listener_holds_4096_sessions_and_refuses_the_4097th_until_one_idles_two_minutes()
{
    use snodo::transport::http::{
        DEFAULT_IDLE_UNDER_PRESSURE, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, UNFINISHED_GRACE,
    };
    assert_eq!(DEFAULT_MAX_SESSIONS, 4096);
    assert_eq!(DEFAULT_MAX_SESSIONS_PER_SHARE, 256);
    assert_eq!(DEFAULT_SESSION_IDLE, Duration::from_secs(30 * 60));
    assert_eq!(DEFAULT_IDLE_UNDER_PRESSURE, Duration::from_secs(2 * 60));
    assert_eq!(UNFINISHED_GRACE, Duration::from_secs(5));
    assert_eq!(
        format!("{:?}", MemorySessions::default()),
        "MemorySessions { len: 0, max: 4096, max_per_share: 256, idle: 1800s }"
    );

    let server = legacy_support::server(Duration::from_secs(5));
    let listener = HttpListener::bind(&server, "127.0.0.1:0".parse().unwrap(), HttpOptions::new())
        .await
        .expect("bind 127.0.0.1:0");
    let url = listener.url();
    let (_stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listener.run(async {
        let _ = stopped.await;
    }));

    // Sixteen addresses fill their shares of 256: 4 096 finished handshakes.
    let fills = (1..=16).map(|n| {
        let url = url.clone();
        tokio::spawn(async move {
            let client = client_from(&format!("127.0.0.{n}"));
            let mut opened = 0;
            for _ in 0..256 / 8 {
                let batch = (0..8).map(|_| open_session(&client, &url));
                for o in futures_util::future::join_all(batch).await {
                    assert_eq!(o.status, StatusCode::OK, "127.0.0.{n}: {}", o.body);
                    opened += 1;
                }
            }
            opened
        })
    });
    let mut opened = 0;
    for fill in futures_util::future::join_all(fills).await {
        opened += fill.unwrap();
    }
    assert_eq!(opened, 4096);

    // A seventeenth address, its share empty, meets the full table. Every
    // session is finished and busy a moment ago: the first gives way after
    // two idle minutes, not the 30 min idle expiry.
    let o = open_session(&client_from("127.0.0.17"), &url).await;
    assert_eq!(o.status, StatusCode::SERVICE_UNAVAILABLE, "{}", o.body);
    assert_eq!(
        o.body["error"]["message"],
        "Service unavailable: too many open sessions (at most 4096)"
    );
    let after = o.retry_after.expect("a 503 says when to come back");
    assert!((100..=120).contains(&after), "Retry-After: {after}");
}

/// The resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_hundred_sessions_streaming_a_mebibyte_each_stay_within_the_replay_budget() {
    const MIB: usize = 1024 * 1024;
    let server = Server::builder("big", "1.0.0")
        .tool(
            from_fn("big", |_, cx: Context| async move {
                let _ = cx.progress(1.0, Some(1.0), None).await;
                Ok(ToolResult::text("x".repeat(MIB)))
            })
            .description("A mebibyte of text, after a progress update")
            .input_schema(json!({"type": "object"})),
        )
        .build()
        .unwrap();
    let budget = ReplayBudget::new(64 * MIB);
    let options = HttpOptions::new()
        .sessions(MemorySessions::default().max_per_share(1000))
        .replay_budget(budget.clone());
    let listener = HttpListener::bind(&server, "127.0.0.1:0".parse().unwrap(), options)
        .await
        .expect("bind 127.0.0.1:0");
    let url = listener.url();
    let (_stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listener.run(async {
        let _ = stopped.await;
    }));
    let client = client_from("127.0.0.1");
    let before = rss_kib();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "big", "_meta": {"progressToken": "p"}}});
    for _ in 0..400 / 4 {
        let calls = (0..4).map(|_| async {
            let opened = open_session(&client, &url).await;
            assert_eq!(opened.status, StatusCode::OK, "{}", opened.body);
            let session = opened.session.unwrap();
            let request = Request::builder()
                .method(Method::POST)
                .uri(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", V)
                .header("mcp-session-id", &session)
                .body(Full::new(Bytes::from(call.to_string())))
                .unwrap();
            let response = client.request(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert!(
                body.len() > MIB,
                "the whole result arrived: {} bytes",
                body.len()
            );
        });
        futures_util::future::join_all(calls).await;
    }
    let grown_mib = rss_kib().saturating_sub(before) / 1024;
    assert!(budget.held() <= 64 * MIB, "{} bytes kept", budget.held());
    assert!(
        budget.held() > 60 * MIB,
        "the budget is used: {} bytes",
        budget.held()
    );
    // 400 MiB of results went out; what stays is the budget, plus the
    // allocator's slack.
    assert!(
        grown_mib < 64 + 96,
        "resident memory grew by {grown_mib} MiB"
    );
    eprintln!(
        "resident memory grew by {grown_mib} MiB; kept {} bytes",
        budget.held()
    );
}

/// A `subscriptions/listen` request from `client`: its response, whose
/// stream stays open while the response is held.
async fn listen(
    client: &Client<HttpConnector, Full<Bytes>>,
    url: &str,
) -> http::Response<hyper::body::Incoming> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let request = Request::builder()
        .method(Method::POST)
        .uri(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .expect("an answer within 10 s")
        .expect("the request goes through")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_holds_its_share_of_listen_streams_and_another_still_listens() {
    let server = Server::builder("listen", "1.0.0")
        .tool(from_fn("echo", |_, _| async { Ok(ToolResult::text("ok")) }))
        .subscriptions_per_share(3)
        .build()
        .unwrap();
    let listener = HttpListener::bind(&server, "127.0.0.1:0".parse().unwrap(), HttpOptions::new())
        .await
        .expect("bind 127.0.0.1:0");
    let url = listener.url();
    let (_stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listener.run(async {
        let _ = stopped.await;
    }));
    let flood = client_from("127.0.0.1");
    let mut held = Vec::new();
    for _ in 0..3 {
        let response = listen(&flood, &url).await;
        assert_eq!(response.status(), StatusCode::OK);
        held.push(response);
    }
    let refused = listen(&flood, &url).await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "1");
    let body = refused.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        body["error"]["message"],
        "Too many open subscriptions for one client"
    );
    // Another address has its own share.
    let other = listen(&client_from("127.0.0.2"), &url).await;
    assert_eq!(other.status(), StatusCode::OK);
    // A stream that ends gives its slot back.
    drop(held.pop());
    let mut again = None;
    for _ in 0..50 {
        let response = listen(&flood, &url).await;
        if response.status() == StatusCode::OK {
            again = Some(response);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(again.is_some(), "the slot came back");
}
