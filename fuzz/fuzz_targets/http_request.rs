//! The Streamable HTTP service, both eras: any method, headers and body,
//! against a server with a live initialize-era session. This reaches the
//! `Mcp-Session-Id` lookup, `Last-Event-ID` resumption, the
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`
//! checks, message classification and the body limits. Whatever arrives, the
//! answer is a 2xx/4xx (or a 503 for a full budget), never another 5xx, and a
//! JSON answer is JSON.
//!
//! Input, as text: the method on the first line, then `Name: value` header
//! lines, an empty line, and the body. `$SESSION` in a header value stands
//! for the id of a session opened for this input (and ended after it).
#![no_main]

mod common;

use std::sync::LazyLock;

use bytes::Bytes;
use futures_util::FutureExt as _;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::tool::from_fn;
use snodo::transport::http::{HttpOptions, McpService};
use tower_service::Service as _;

const VERSION: &str = "2025-11-25";

static SERVICE: LazyLock<McpService> = LazyLock::new(|| {
    let server = Server::builder("fuzz", "1")
        .tool(from_fn("echo", |args, _| async move {
            Ok(ToolResult::text(args.str("text").unwrap_or_default()))
        }))
        .build()
        .expect("a valid server");
    server.http_service_with(HttpOptions::new().max_body_bytes(64 * 1024))
});

async fn send(request: Request<Full<Bytes>>) -> Response<snodo::transport::http::McpBody> {
    let Ok(response) = SERVICE.clone().call(request).await;
    response
}

fn post(session: Option<&str>, body: &Value) -> Request<Full<Bytes>> {
    let mut request = Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION);
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    request
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid request")
}

/// Opens a session the fuzzed request can name.
async fn open_session() -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}});
    let response = send(post(None, &initialize)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .expect("a visible session id")
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        send(post(Some(&id), &initialized)).await.status(),
        StatusCode::ACCEPTED
    );
    id
}

/// Builds the fuzzed request, or `None` when the input is no HTTP request
/// (an invalid method, header name or value).
fn parse(data: &[u8], session: &str) -> Option<Request<Full<Bytes>>> {
    let split = data
        .windows(2)
        .position(|w| w == b"\n\n")
        .unwrap_or(data.len());
    let head = std::str::from_utf8(&data[..split]).ok()?;
    let body = data.get(split + 2..).unwrap_or_default();
    let mut lines = head.lines();
    let method = Method::from_bytes(lines.next()?.trim().as_bytes()).ok()?;
    let mut request = Request::builder().method(method).uri("/mcp");
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let value = value.trim().replace("$SESSION", session);
        request = request.header(name.trim(), value);
    }
    request.body(Full::new(Bytes::copy_from_slice(body))).ok()
}

/// Reads what the body has ready: a JSON body whole, a stream as far as it
/// goes without waiting.
async fn drain(response: Response<snodo::transport::http::McpBody>) {
    let status = response.status();
    assert!(
        !status.is_server_error() || status == StatusCode::SERVICE_UNAVAILABLE,
        "{status}"
    );
    let json = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    for _ in 0..64 {
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        match body.frame().now_or_never() {
            Some(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    bytes.extend_from_slice(&data);
                }
            }
            Some(Some(Err(_))) | Some(None) | None => break,
        }
    }
    if json && status == StatusCode::OK {
        serde_json::from_slice::<Value>(&bytes).expect("a JSON answer is JSON");
    }
}

async fn end_session(id: &str) {
    let request = Request::delete("/mcp")
        .header("host", "127.0.0.1")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-session-id", id)
        .body(Full::new(Bytes::new()))
        .expect("a valid request");
    let status = send(request).await.status();
    // Ended here, or by the fuzzed request itself.
    assert!(
        status == StatusCode::OK
            || status == StatusCode::NO_CONTENT
            || status == StatusCode::NOT_FOUND,
        "{status}"
    );
}

fuzz_target!(|data: &[u8]| {
    common::RUNTIME.block_on(async {
        let session = open_session().await;
        if let Some(request) = parse(data, &session) {
            drain(send(request).await).await;
        }
        end_session(&session).await;
    });
});
