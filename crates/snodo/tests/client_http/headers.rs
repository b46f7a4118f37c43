//! Modern requests: `_meta`, the standard headers and `Mcp-Param-*` headers
//! mirrored from arguments, and a header mismatch that relists tools.

use std::sync::{Arc, Mutex};

use serde_json::json;
use snodo::client::Client;

use crate::client_support::{Reply, ScriptServer, modern_meta};
use crate::{client_support, complete};

fn tools_page(req: &client_support::Recorded) -> Reply {
    Reply::result(
        req,
        json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
            {"name": "route", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
                "nested": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
                "query": {"type": "string"}}}},
            {"name": "bad", "inputSchema": {"type": "object", "properties": {
                "ratio": {"type": "number", "x-mcp-header": "Ratio"}}}},
            {"name": "dup", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "Same"},
                "b": {"type": "string", "x-mcp-header": "same"}}}}
        ]}),
    )
}

#[tokio::test]
async fn modern_requests_carry_meta_standard_and_param_headers() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("tools/list") => tools_page(req),
        Some("tools/call") => complete(req, "ok"),
        Some("resources/read") => Reply::result(
            req,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "contents": []}),
        ),
        Some("prompts/get") => {
            Reply::result(req, json!({"resultType": "complete", "messages": []}))
        }
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert!(!client.is_legacy());
    assert_eq!(client.server_info().unwrap()["name"], "script");

    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["route"],
        "tools with invalid x-mcp-header annotations are dropped"
    );

    client
        .call_tool(
            "route",
            json!({"region": "Hello, 世界", "priority": 42, "verbose": null,
                "nested": {"zone": " padded "}, "query": "SELECT 1"}),
        )
        .await
        .unwrap();
    client.read_resource("file:///a b.txt").await.unwrap();
    client
        .get_prompt("tab\tname", json!({"x": "1"}))
        .await
        .unwrap();

    let posts = server.posts();
    let discover = &posts[0];
    assert_eq!(
        discover.body,
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}})
    );
    assert_eq!(
        posts[1].body,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": modern_meta()}})
    );
    let call = &posts[2];
    assert_eq!(
        call.body,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "route",
            "arguments": {"region": "Hello, 世界", "priority": 42, "verbose": null,
                "nested": {"zone": " padded "}, "query": "SELECT 1"},
            "_meta": modern_meta()}})
    );
    for post in &posts {
        assert_eq!(post.header("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(post.header("mcp-method"), post.rpc_method());
        assert_eq!(post.header("content-type"), Some("application/json"));
        let accept = post.header("accept").unwrap();
        assert!(accept.contains("application/json") && accept.contains("text/event-stream"));
        assert_eq!(post.header("mcp-session-id"), None);
    }
    assert_eq!(discover.header("mcp-name"), None);
    assert_eq!(call.header("mcp-name"), Some("route"));
    assert_eq!(
        call.header("mcp-param-region"),
        Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
    );
    assert_eq!(call.header("mcp-param-priority"), Some("42"));
    assert_eq!(
        call.header("mcp-param-zone"),
        Some("=?base64?IHBhZGRlZCA=?=")
    );
    assert_eq!(
        call.header("mcp-param-verbose"),
        None,
        "null values send no header"
    );
    assert_eq!(
        call.header("mcp-param-query"),
        None,
        "unannotated arguments are not mirrored"
    );
    assert_eq!(
        posts[3].header("mcp-name"),
        Some("file:///a b.txt"),
        "inner spaces are safe"
    );
    assert_eq!(posts[3].body["params"]["uri"], "file:///a b.txt");
    assert_eq!(posts[4].header("mcp-name"), Some("=?base64?dGFiCW5hbWU=?="));
}

#[tokio::test]
async fn header_mismatch_relists_tools_and_retries_once() {
    let calls = Arc::new(Mutex::new(0));
    let seen = calls.clone();
    let server = ScriptServer::start(move |req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("tools/list") => tools_page(req),
        Some("tools/call") => {
            let mut n = seen.lock().unwrap();
            *n += 1;
            if *n == 1 || *n >= 3 {
                Reply::error(
                    req,
                    400,
                    json!({"code": -32020, "message": "Header mismatch"}),
                )
            } else {
                complete(req, "ok")
            }
        }
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    let result = client
        .call_tool("route", json!({"region": "eu"}))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "ok");
    let posts = server.posts();
    let methods: Vec<&str> = posts.iter().filter_map(|p| p.rpc_method()).collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/call", "tools/list", "tools/call"]
    );
    assert_eq!(
        posts[1].header("mcp-param-region"),
        None,
        "the tool was not listed yet"
    );
    assert_eq!(posts[3].header("mcp-param-region"), Some("eu"));
    assert_ne!(posts[1].id(), posts[3].id());

    let err = client
        .call_tool("route", json!({"region": "eu"}))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(-32020), "only one retry");
    assert!(err.is_rpc(), "{err:?}");
    assert_eq!(err.status(), Some(400));
    assert_eq!(server.calls("tools/call").len(), 4);
}
