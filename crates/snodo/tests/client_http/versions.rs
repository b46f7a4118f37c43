//! Choosing a protocol revision: an unsupported version retried, and the
//! fallback to `initialize` from 2025-11-25 to 2025-06-18.

use std::sync::{Arc, Mutex};

use serde_json::json;
use snodo::client::Client;

use crate::client_support::{Reply, ScriptServer};

#[tokio::test]
async fn unsupported_version_is_retried_with_a_supported_one() {
    let first = Arc::new(Mutex::new(true));
    let server = ScriptServer::start(move |req| {
        let mut first = first.lock().unwrap();
        if std::mem::take(&mut *first) {
            return Reply::error(
                req,
                400,
                json!({"code": -32022, "message": "Unsupported protocol version",
                    "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}),
            );
        }
        match req.rpc_method() {
            Some("server/discover") => Reply::discover(req),
            _ => Reply::result(
                req,
                json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": []}),
            ),
        }
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert!(client.list_tools().await.unwrap().is_empty());
    let discovers = server.calls("server/discover");
    assert_eq!(discovers.len(), 2);
    assert_ne!(discovers[0].id(), discovers[1].id());
    assert_eq!(
        discovers[1].header("mcp-protocol-version"),
        Some("2026-07-28")
    );
}

#[tokio::test]
async fn falls_back_to_initialize_with_a_session_and_deletes_it() {
    let server = ScriptServer::start(|req| match (req.method.as_str(), req.rpc_method()) {
        ("POST", Some("server/discover")) => Reply::Json(
            404,
            vec![],
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}),
        ),
        ("POST", Some("initialize")) => Reply::Json(
            200,
            vec![("mcp-session-id", "sess-1".into())],
            json!({"jsonrpc": "2.0", "id": req.id(), "result": {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "legacy", "version": "0.9"},
                "instructions": "Be nice."}}),
        ),
        ("POST", Some("notifications/initialized")) => Reply::Status(202),
        ("POST", Some("tools/list")) => Reply::result(req, json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})),
        ("GET", _) => Reply::Status(405),
        ("DELETE", _) => Reply::Status(200),
        _ => Reply::Status(400),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    assert!(client.is_legacy());
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(client.session_id().as_deref(), Some("sess-1"));
    assert_eq!(client.server_info().unwrap()["name"], "legacy");
    assert_eq!(client.instructions().as_deref(), Some("Be nice."));
    assert_eq!(client.list_tools().await.unwrap().len(), 1);
    client.close().await;

    let reqs = server.requests();
    let shape: Vec<(String, Option<String>)> = reqs
        .iter()
        .map(|r| (r.method.clone(), r.rpc_method().map(str::to_string)))
        .collect();
    assert_eq!(
        shape,
        [
            ("POST".into(), Some("server/discover".into())),
            ("POST".into(), Some("initialize".into())),
            ("POST".into(), Some("notifications/initialized".into())),
            ("GET".into(), None),
            ("POST".into(), Some("tools/list".into())),
            ("DELETE".into(), None),
        ]
    );
    assert_eq!(
        reqs[1].body,
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "snodo", "version": env!("CARGO_PKG_VERSION")}}})
    );
    assert_eq!(reqs[1].header("mcp-protocol-version"), None);
    assert_eq!(reqs[1].header("mcp-session-id"), None);
    assert_eq!(
        reqs[2].body,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    for r in &reqs[2..] {
        assert_eq!(
            r.header("mcp-session-id"),
            Some("sess-1"),
            "{} {:?}",
            r.method,
            r.body
        );
        assert_eq!(r.header("mcp-protocol-version"), Some("2025-11-25"));
        assert_eq!(
            r.header("mcp-method"),
            None,
            "no modern headers on the legacy wire"
        );
    }
    assert_eq!(
        reqs[4].body,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}})
    );
}

#[tokio::test]
async fn initialize_falls_back_from_2025_11_25_to_2025_06_18() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::error(req, 200, json!({"code": -32601, "message": "Method not found"})),
        Some("initialize") if req.body["params"]["protocolVersion"] == "2025-11-25" => Reply::error(
            req,
            200,
            json!({"code": -32602, "message": "Unsupported protocol version", "data": {"supported": ["2025-06-18"]}}),
        ),
        Some("initialize") => Reply::result(
            req,
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "old", "version": "1"}}),
        ),
        _ => Reply::Status(202),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    assert_eq!(client.protocol_version(), "2025-06-18");
    let inits = server.calls("initialize");
    assert_eq!(inits.len(), 2);
    assert_eq!(inits[1].body["params"]["protocolVersion"], "2025-06-18");
}
