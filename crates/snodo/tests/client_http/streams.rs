//! Streams: listen streams demultiplexed and scoped to a task, and broken
//! streams resumed or reissued.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use snodo::client::{Client, ListenFilter};

use crate::client_support::{Reply, ScriptServer, event, modern_meta};
use crate::complete;

#[tokio::test]
async fn listen_demultiplexes_by_subscription_id_and_ends_on_drop() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("subscriptions/listen") => {
            let sid = req.id();
            let meta = json!({"io.modelcontextprotocol/subscriptionId": sid});
            Reply::Sse(
                vec![],
                vec![
                    (0, event(json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}}))),
                    (20, event(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 999}}}))),
                    (20, event(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                        "params": {"_meta": meta}}))),
                    (20, ": keep-alive\n\n".to_string()),
                ],
                true,
            )
        }
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    let mut sub = client.listen(ListenFilter::new().tools()).await.unwrap();
    assert_eq!(sub.acknowledged(), &json!({"toolsListChanged": true}));
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(n.method, "notifications/tools/list_changed");
    assert_eq!(
        n.params["_meta"]["io.modelcontextprotocol/subscriptionId"],
        json!(sub.id().unwrap().to_value())
    );
    let listen = server.calls("subscriptions/listen").pop().unwrap();
    assert_eq!(
        listen.body,
        json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
            "params": {"notifications": {"toolsListChanged": true}, "_meta": modern_meta()}})
    );
    drop(sub);
    assert!(
        server.wait_disconnects(1).await,
        "dropping the subscription closes its stream"
    );
}

#[tokio::test]
async fn listening_to_a_task_sends_its_id_and_declares_the_tasks_extension() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("subscriptions/listen") => {
            let meta = json!({"io.modelcontextprotocol/subscriptionId": req.id()});
            Reply::Sse(
                vec![],
                vec![
                    (0, event(json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                        "params": {"notifications": {"taskIds": ["t-1"]}, "_meta": meta}}))),
                    (20, event(json!({"jsonrpc": "2.0", "method": "notifications/tasks",
                        "params": {"taskId": "t-1", "status": "completed", "_meta": meta}}))),
                ],
                true,
            )
        }
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    let mut sub = client
        .listen(ListenFilter::new().task("t-1"))
        .await
        .unwrap();
    assert_eq!(sub.acknowledged(), &json!({"taskIds": ["t-1"]}));
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (n.method.as_str(), &n.params["taskId"], &n.params["status"]),
        ("notifications/tasks", &json!("t-1"), &json!("completed"))
    );
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let listen = server.calls("subscriptions/listen").pop().unwrap();
    assert_eq!(
        listen.body,
        json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": ["t-1"]}, "_meta": meta}})
    );
}

#[tokio::test]
async fn legacy_streams_resume_with_last_event_id_after_retry() {
    let server = ScriptServer::start(|req| match (req.method.as_str(), req.rpc_method()) {
        ("POST", Some("server/discover")) => Reply::Status(404),
        ("POST", Some("initialize")) => Reply::Json(
            200,
            vec![("mcp-session-id", "s-9".into())],
            json!({"jsonrpc": "2.0", "id": req.id(), "result": {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "resumable", "version": "1"}}}),
        ),
        ("POST", Some("tools/call")) => Reply::Sse(
            vec![("mcp-session-id", "s-9".into())],
            vec![(0, "id: e-1\nretry: 300\ndata: \n\n".to_string())],
            false,
        ),
        ("GET", _) if req.header("last-event-id") == Some("e-1") => Reply::Sse(
            vec![],
            vec![(0, format!("id: e-2\n{}", event(json!({"jsonrpc": "2.0", "id": 3,
                "result": {"content": [{"type": "text", "text": "resumed"}]}}))))],
            true,
        ),
        ("GET", _) => Reply::Status(405),
        _ => Reply::Status(202),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    let result = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "resumed");
    let reqs = server.requests();
    let call = reqs
        .iter()
        .find(|r| r.rpc_method() == Some("tools/call"))
        .unwrap();
    assert_eq!(call.id(), json!(3));
    let resume = reqs
        .iter()
        .find(|r| r.header("last-event-id").is_some())
        .unwrap();
    assert_eq!(resume.method, "GET");
    assert_eq!(resume.header("mcp-session-id"), Some("s-9"));
    assert_eq!(resume.header("accept"), Some("text/event-stream"));
    assert!(
        resume.at - call.at >= Duration::from_millis(300),
        "the retry delay is honoured"
    );
}

#[tokio::test]
async fn a_broken_modern_stream_is_reissued_once_under_a_new_id() {
    let attempts = Arc::new(Mutex::new(0));
    let n = attempts.clone();
    let server = ScriptServer::start(move |req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("tools/call") => {
            let mut n = n.lock().unwrap();
            *n += 1;
            if *n == 2 {
                complete(req, "second try")
            } else {
                Reply::Sse(vec![], vec![(0, ": opened\n\n".to_string())], false)
            }
        }
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    let result = client.call_tool("flaky", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "second try");
    let calls = server.calls("tools/call");
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].id(), calls[1].id());
    let err = client.call_tool("flaky", json!({})).await.unwrap_err();
    assert!(err.is_transport(), "only one re-issue: {err:?}");
    assert_eq!(server.calls("tools/call").len(), 4);
}
