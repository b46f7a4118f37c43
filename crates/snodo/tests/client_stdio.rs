//! The client over stdio, against a scripted child process that logs every
//! line it reads and answers with literal JSON.

#![cfg(feature = "client")]

mod client_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use client_support::{StdioPeer, modern_meta};
use serde_json::{Value, json};
use snodo::client::{Client, ClientErrorKind, ListenFilter, RequestOptions};

/// `python3` runs the scripted stdio peers: the tests need it (README lists
/// Python among what the tests need), and fail, never pass unrun, without it.
fn require_python() {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "python3 is needed for the scripted stdio peers (install Python 3)"
    );
}

const DISCOVER: &str = "server/discover";

fn discover_rule() -> Value {
    json!({"method": DISCOVER, "reply": [{"jsonrpc": "2.0", "id": "$ID", "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
        "ttlMs": 0, "cacheScope": "private",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "stdio-script", "version": "1"}}}}]})
}

#[tokio::test]
async fn a_legacy_server_is_reached_through_initialize() {
    require_python();
    let peer = StdioPeer::new(
        "legacy",
        json!([
            {"method": DISCOVER, "reply": [{"jsonrpc": "2.0", "id": "$ID",
                "error": {"code": -32601, "message": "Method not found"}}]},
            {"method": "initialize", "reply": [{"jsonrpc": "2.0", "id": "$ID", "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "old-stdio", "version": "2"}}}]},
            {"method": "tools/list", "reply": [{"jsonrpc": "2.0", "id": "$ID", "result": {"tools": []}}]}
        ]),
    );
    let client = Client::connect(peer.command.clone()).await.unwrap();
    assert!(client.is_legacy());
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.server_info().unwrap()["name"], "old-stdio");
    assert!(client.list_tools().await.unwrap().is_empty());
    client.close().await;
    assert_eq!(
        peer.lines(),
        [
            json!({"jsonrpc": "2.0", "id": 1, "method": DISCOVER, "params": {"_meta": modern_meta()}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                "capabilities": {}, "clientInfo": {"name": "snodo", "version": env!("CARGO_PKG_VERSION")}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}),
            json!("EOF"),
        ],
        "close() ends stdin, and the server sees end of input"
    );
}

#[tokio::test]
async fn a_silent_probe_times_out_into_initialize() {
    require_python();
    let peer = StdioPeer::new(
        "silent",
        json!([
            {"method": "initialize", "reply": [{"jsonrpc": "2.0", "id": "$ID", "result": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "quiet", "version": "1"}}}]}
        ]),
    );
    let client = Client::builder()
        .probe_timeout(Duration::from_millis(300))
        .connect(peer.command.clone())
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2025-06-18");
    let lines = peer.lines();
    assert_eq!(lines[0]["method"], DISCOVER);
    assert_eq!(lines[1]["method"], "initialize");
}

#[tokio::test]
async fn progress_is_routed_by_token_and_timeouts_send_cancelled() {
    require_python();
    let peer = StdioPeer::new(
        "progress",
        json!([
            discover_rule(),
            {"method": "tools/call", "once": true, "reply": [
                {"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": "$TOKEN", "progress": 1, "total": 2}},
                {"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": 12345, "progress": 7}},
                {"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "working"}},
                {"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": "$TOKEN", "progress": 2, "total": 2, "message": "done"}},
                {"jsonrpc": "2.0", "id": "$ID", "result": {"resultType": "complete",
                    "content": [{"type": "text", "text": "ok"}]}}
            ]},
            {"method": "tools/call", "reply": []}
        ]),
    );
    let logs = Arc::new(Mutex::new(Vec::new()));
    let log_sink = logs.clone();
    let client = Client::builder()
        .on_log(move |m| log_sink.lock().unwrap().push(m.data))
        .connect(peer.command.clone())
        .await
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = RequestOptions::new().on_progress(move |p| sink.lock().unwrap().push(p.progress));
    let result = client
        .call_tool("work", json!({"n": 1}))
        .options(opts)
        .await
        .unwrap();
    assert_eq!(result.text_content(), "ok");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![1.0, 2.0],
        "only this call's token"
    );
    assert_eq!(*logs.lock().unwrap(), vec![json!("working")]);

    let err = client
        .call_tool("work", json!({}))
        .options(RequestOptions::new().timeout(Duration::from_millis(200)))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(
        peer.wait_for(|l| l["method"] == "notifications/cancelled" && l["params"]["requestId"] == 3)
            .await,
        "a timed-out request is cancelled: {:?}",
        peer.lines()
    );
    let cancelled = peer
        .lines()
        .into_iter()
        .find(|l| l["method"] == "notifications/cancelled")
        .unwrap();
    assert_eq!(
        cancelled,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 3, "reason": "The request timed out"}})
    );

    let call = client.call_tool("work", json!({}));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), call)
            .await
            .is_err()
    );
    assert!(
        peer.wait_for(|l| l["method"] == "notifications/cancelled" && l["params"]["requestId"] == 4)
            .await,
        "dropping the call future cancels it"
    );
}

#[tokio::test]
async fn subscriptions_are_demultiplexed_on_one_channel() {
    require_python();
    let ack = |filter: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": filter, "_meta": {"io.modelcontextprotocol/subscriptionId": "$ID"}}})
    };
    let peer = StdioPeer::new(
        "listen",
        json!([
            discover_rule(),
            {"method": "subscriptions/listen", "once": true, "reply": [ack(json!({"toolsListChanged": true}))]},
            {"method": "subscriptions/listen", "once": true, "reply": [
                ack(json!({"resourceSubscriptions": ["file:///a"]})),
                {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                    "params": {"uri": "file:///a", "_meta": {"io.modelcontextprotocol/subscriptionId": "$ID"}}},
                {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                    "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 2}}},
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "$ID"}},
                {"jsonrpc": "2.0", "id": "$ID", "result": {"resultType": "complete",
                    "_meta": {"io.modelcontextprotocol/subscriptionId": "$ID"}}}
            ]}
        ]),
    );
    let client = Client::connect(peer.command.clone()).await.unwrap();
    let mut tools = client.listen(ListenFilter::new().tools()).await.unwrap();
    let mut resources = client
        .listen(ListenFilter::new().resource("file:///a"))
        .await
        .unwrap();
    assert_eq!(tools.id(), Some(&snodo::model::RequestId::Number(2)));
    assert_eq!(
        resources.acknowledged(),
        &json!({"resourceSubscriptions": ["file:///a"]})
    );
    let wait = Duration::from_secs(5);
    let first = tokio::time::timeout(wait, resources.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.method, "notifications/resources/updated");
    assert_eq!(first.params["uri"], "file:///a");
    assert!(
        tokio::time::timeout(wait, resources.next())
            .await
            .unwrap()
            .is_none(),
        "the server ended it"
    );
    let change = tokio::time::timeout(wait, tools.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(change.method, "notifications/tools/list_changed");
    drop(tools);
    assert!(
        peer.wait_for(|l| l["method"] == "notifications/cancelled" && l["params"]["requestId"] == 2)
            .await,
        "dropping a subscription cancels the listen request"
    );
    let listen = peer
        .lines()
        .into_iter()
        .find(|l| l["method"] == "subscriptions/listen")
        .unwrap();
    assert_eq!(
        listen,
        json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": true}, "_meta": modern_meta()}})
    );
}

#[tokio::test]
async fn legacy_server_requests_are_answered_by_the_handlers() {
    require_python();
    let peer = StdioPeer::new(
        "server-requests",
        json!([
            {"method": DISCOVER, "reply": [{"jsonrpc": "2.0", "id": "$ID",
                "error": {"code": -32601, "message": "Method not found"}}]},
            {"method": "initialize", "reply": [{"jsonrpc": "2.0", "id": "$ID", "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "asks", "version": "1"}}}]},
            {"method": "tools/call", "reply": [
                {"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 5}}]},
            {"method": "__response__", "once": true, "reply": [
                {"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create",
                    "params": {"message": "Sure?", "requestedSchema": {"type": "object",
                        "properties": {"ok": {"type": "boolean", "default": true}}}}}]},
            {"method": "__response__", "once": true, "reply": [
                {"jsonrpc": "2.0", "id": "r-1", "method": "roots/list"}]},
            {"method": "__response__", "once": true, "reply": [
                {"jsonrpc": "2.0", "id": "p-1", "method": "ping"}]},
            {"method": "__response__", "once": true, "reply": [
                {"jsonrpc": "2.0", "id": "x-1", "method": "unknown/method"}]},
            {"method": "__response__", "once": true, "reply": [
                {"jsonrpc": "2.0", "id": "$LAST_ID", "result": {"content": [{"type": "text", "text": "thanks"}]}}]}
        ]),
    );
    let client = Client::builder()
        .on_sampling(|params| async move {
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": format!("max {}", params["maxTokens"])}, "model": "m"}))
        })
        .on_elicit_form(|req| async move { Ok(req.accept_defaults()) })
        .roots(vec![snodo::client::Root::new("file:///r", None)])
        .connect(peer.command.clone())
        .await
        .unwrap();
    let result = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "thanks");
    let responses: Vec<Value> = peer
        .lines()
        .into_iter()
        .filter(|l| l.get("method").is_none() && l.is_object())
        .collect();
    assert_eq!(
        responses,
        [
            json!({"jsonrpc": "2.0", "id": "s-1", "result": {"role": "assistant",
                "content": {"type": "text", "text": "max 5"}, "model": "m"}}),
            json!({"jsonrpc": "2.0", "id": "e-1", "result": {"action": "accept", "content": {"ok": true}}}),
            json!({"jsonrpc": "2.0", "id": "r-1", "result": {"roots": [{"uri": "file:///r"}]}}),
            json!({"jsonrpc": "2.0", "id": "p-1", "result": {}}),
            json!({"jsonrpc": "2.0", "id": "x-1", "error": {"code": -32601, "message": "Method not found: unknown/method"}}),
        ]
    );
    let init = peer
        .lines()
        .into_iter()
        .find(|l| l["method"] == "initialize")
        .unwrap();
    assert_eq!(
        init["params"]["capabilities"],
        json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {"listChanged": false}})
    );
}

#[tokio::test]
async fn a_server_that_exits_fails_pending_calls_as_transport_errors() {
    let client = Client::connect(snodo::client::StdioCommand::new(
        "sh",
        ["-c", "read line; exit 0"],
    ))
    .await;
    let err = client.unwrap_err();
    assert_eq!(err.kind(), ClientErrorKind::Transport, "{err:?}");
    let err = Client::connect(snodo::client::Target::command(
        "/nonexistent/mcp-server --stdio",
    ))
    .await
    .unwrap_err();
    assert!(err.is_transport(), "{err:?}");
}

#[tokio::test]
async fn legacy_listen_filters_pushed_notifications() {
    require_python();
    let peer = StdioPeer::new(
        "legacy-listen",
        json!([
            {"method": DISCOVER, "reply": [{"jsonrpc": "2.0", "id": "$ID",
                "error": {"code": -32601, "message": "Method not found"}}]},
            {"method": "initialize", "reply": [{"jsonrpc": "2.0", "id": "$ID", "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"resources": {"subscribe": true}},
                "serverInfo": {"name": "pusher", "version": "1"}}}]},
            {"method": "resources/subscribe", "reply": [
                {"jsonrpc": "2.0", "id": "$ID", "result": {}},
                {"sleep": 0.1},
                {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"},
                {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///x/y"}},
                {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///other"}},
                {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            ]}
        ]),
    );
    let client = Client::connect(peer.command.clone()).await.unwrap();
    assert!(client.is_legacy());
    let mut sub = client
        .listen(ListenFilter::new().tools().resource("file:///x"))
        .await
        .unwrap();
    assert_eq!(sub.id(), None);
    let wait = Duration::from_secs(5);
    let first = tokio::time::timeout(wait, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (first.method.as_str(), &first.params["uri"]),
        ("notifications/resources/updated", &json!("file:///x/y"))
    );
    let second = tokio::time::timeout(wait, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.method, "notifications/tools/list_changed");
    let subscribe = peer
        .lines()
        .into_iter()
        .find(|l| l["method"] == "resources/subscribe")
        .unwrap();
    assert_eq!(
        subscribe,
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": {"uri": "file:///x"}})
    );
}

#[tokio::test]
async fn an_answer_over_the_message_limit_fails_its_call_at_once() {
    require_python();
    let big = "x".repeat(5_000);
    let peer = StdioPeer::new(
        "oversized",
        json!([
            discover_rule(),
            {"method": "tools/call", "once": true, "reply": [
                // A notification over the limit is skipped, and fails nothing.
                {"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": big}},
                {"jsonrpc": "2.0", "id": "$ID", "result": {"resultType": "complete",
                    "content": [{"type": "text", "text": big}]}}
            ]},
            {"method": "tools/call", "reply": [{"jsonrpc": "2.0", "id": "$ID", "result": {
                "resultType": "complete", "content": [{"type": "text", "text": "small"}]}}]}
        ]),
    );
    let client = Client::builder()
        .max_message_bytes(2_048)
        .timeout(Duration::from_secs(20))
        .connect(peer.command.clone())
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let err = client.call_tool("big", json!({})).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "failed at once, not at the timeout: {err:?} after {:?}",
        started.elapsed()
    );
    assert_eq!(
        err.exceeded_limit(),
        Some(snodo::client::ClientLimit::MessageBytes),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "limit exceeded: the server's answer is a line on stdout of more than 2048 bytes \
         (max_message_bytes = 2048)"
    );
    // The connection goes on.
    let ok = client.call_tool("small", json!({})).await.unwrap();
    assert_eq!(ok.text_content(), "small");
    client.close().await;
}
