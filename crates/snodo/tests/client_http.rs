//! The client over Streamable HTTP, against a scripted loopback server that
//! records the exact requests and answers with literal JSON.

#![cfg(feature = "client")]

mod client_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use client_support::{Reply, ScriptServer, event, modern_meta};
use serde_json::{Value, json};
use snodo::client::{Client, ClientError, ListenFilter, RequestOptions, TimeoutKind};
use snodo::mrtr::{ElicitAction, ElicitResponse};

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

fn complete(req: &client_support::Recorded, text: &str) -> Reply {
    Reply::result(
        req,
        json!({"resultType": "complete", "content": [{"type": "text", "text": text}]}),
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
    match err {
        ClientError::Rpc { status, .. } => assert_eq!(status, Some(400)),
        other => panic!("{other:?}"),
    }
    assert_eq!(server.calls("tools/call").len(), 4);
}

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

#[tokio::test]
async fn input_required_is_answered_with_the_state_echoed_under_new_ids() {
    let round = Arc::new(Mutex::new(0));
    let r = round.clone();
    let server = ScriptServer::start(move |req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("tools/call") if req.body["params"]["name"] == "forever" => Reply::result(
            req,
            json!({"resultType": "input_required", "inputRequests": {"ask": {"method": "elicitation/create",
                "params": {"message": "Again?", "requestedSchema": {"type": "object", "properties": {}}}}}}),
        ),
        Some("tools/call") => {
            let mut n = r.lock().unwrap();
            *n += 1;
            match *n {
                1 => Reply::result(
                    req,
                    json!({"resultType": "input_required", "requestState": "{\"nonce\": \"a b\", \"n\":1}",
                        "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "Name?",
                            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string", "default": "Ada"}}}}},
                        "roots": {"method": "roots/list", "params": {}}}}),
                ),
                2 => Reply::result(
                    req,
                    json!({"resultType": "input_required", "inputRequests": {"model": {"method": "sampling/createMessage",
                        "params": {"messages": [], "maxTokens": 10}}}}),
                ),
                _ => complete(req, "done"),
            }
        }
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::builder()
        .on_elicit_form(|req| async move { Ok(req.accept_defaults()) })
        .on_sampling(|_| async { Ok(json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"})) })
        .roots(vec![snodo::client::Root::new("file:///work", Some("work"))])
        .max_input_rounds(3)
        .connect(server.url.as_str())
        .await
        .unwrap();
    let result = client.call_tool("mrtr", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "done");
    let calls = server.calls("tools/call");
    assert_eq!(calls.len(), 3);
    let caps = &calls[0].body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert_eq!(
        caps,
        &json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}})
    );
    assert_eq!(calls[0].body["params"].get("inputResponses"), None);
    assert_eq!(calls[0].body["params"].get("requestState"), None);
    assert_eq!(
        calls[1].body["params"]["inputResponses"],
        json!({"who": {"action": "accept", "content": {"name": "Ada"}},
            "roots": {"roots": [{"uri": "file:///work", "name": "work"}]}})
    );
    assert_eq!(
        calls[1].body["params"]["requestState"],
        "{\"nonce\": \"a b\", \"n\":1}"
    );
    assert_eq!(calls[1].body["params"]["name"], "mrtr");
    assert_eq!(
        calls[2].body["params"]["inputResponses"],
        json!({"model": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}})
    );
    assert_eq!(
        calls[2].body["params"].get("requestState"),
        None,
        "no state given, none echoed"
    );
    let ids: std::collections::HashSet<String> = calls.iter().map(|c| c.id().to_string()).collect();
    assert_eq!(ids.len(), 3, "every retry has a new id");

    let err = client.call_tool("forever", json!({})).await.unwrap_err();
    assert_eq!(
        err.protocol_kind(),
        Some(snodo::client::ProtocolErrorKind::InputRequest),
        "{err:?}"
    );
    let forever = server
        .calls("tools/call")
        .into_iter()
        .filter(|c| c.body["params"]["name"] == "forever")
        .count();
    assert_eq!(forever, 4, "the first call and three answered rounds");

    let unanswered = client
        .call_tool_with(
            "forever",
            json!({}),
            RequestOptions::new().answer_input(false),
        )
        .await
        .unwrap();
    assert!(snodo::client::is_input_required(&unanswered.to_wire()));
}

#[tokio::test]
async fn without_a_handler_input_required_goes_to_the_caller() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        _ => Reply::result(
            req,
            json!({"resultType": "input_required", "requestState": "s",
                "inputRequests": {"x": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}}}),
        ),
    })
    .await;
    let client = Client::builder()
        .on_elicit_form(|_| async {
            Ok(ElicitResponse {
                action: ElicitAction::Decline,
                content: Default::default(),
            })
        })
        .connect(server.url.as_str())
        .await
        .unwrap();
    let result = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(result.to_wire()["requestState"], "s");
    assert_eq!(server.calls("tools/call").len(), 1);
    // Answering by hand: the caller's responses and state go out as given.
    let mut responses = serde_json::Map::new();
    responses.insert(
        "x".into(),
        json!({"role": "assistant", "content": {"type": "text", "text": "y"}, "model": "me"}),
    );
    let opts = RequestOptions::new()
        .input_responses(responses, Some("s".into()))
        .answer_input(false);
    client.call_tool_with("t", json!({}), opts).await.unwrap();
    let last = server.calls("tools/call").pop().unwrap();
    assert_eq!(last.body["params"]["requestState"], "s");
    assert_eq!(last.body["params"]["inputResponses"]["x"]["model"], "me");
}

#[tokio::test]
async fn progress_over_sse_resets_the_timeout_under_a_total_cap() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("tools/call") => {
            let token = req.body["params"]["_meta"]["progressToken"].clone();
            let progress = |n: u32| {
                event(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": n, "total": 3, "message": format!("step {n}")}}))
            };
            Reply::Sse(
                vec![],
                vec![
                    (200, progress(1)),
                    (200, progress(2)),
                    (200, progress(3)),
                    (200, event(json!({"jsonrpc": "2.0", "id": req.id(),
                        "result": {"resultType": "complete", "content": [{"type": "text", "text": "slow"}]}}))),
                ],
                false,
            )
        }
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = RequestOptions::new()
        .timeout(Duration::from_millis(500))
        .reset_timeout_on_progress(true)
        .on_progress(move |p| sink.lock().unwrap().push((p.progress, p.total, p.message)));
    let result = client
        .call_tool_with("slow", json!({}), opts)
        .await
        .unwrap();
    assert_eq!(result.text_content(), "slow");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            (1.0, Some(3.0), Some("step 1".to_string())),
            (2.0, Some(3.0), Some("step 2".to_string())),
            (3.0, Some(3.0), Some("step 3".to_string())),
        ]
    );
    let call = server.calls("tools/call").pop().unwrap();
    assert_eq!(call.body["params"]["_meta"]["progressToken"], call.id());

    let err = client
        .call_tool_with(
            "slow",
            json!({}),
            RequestOptions::new()
                .timeout(Duration::from_millis(500))
                .on_progress(|_| {}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Timeout {
                kind: TimeoutKind::Request,
                ..
            }
        ),
        "{err:?}"
    );

    let err = client
        .call_tool_with(
            "slow",
            json!({}),
            RequestOptions::new()
                .timeout(Duration::from_millis(500))
                .reset_timeout_on_progress(true)
                .max_total_timeout(Duration::from_millis(650))
                .on_progress(|_| {}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Timeout {
                kind: TimeoutKind::MaxTotal,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn timeouts_and_dropped_calls_close_the_stream() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        _ => Reply::Hang,
    })
    .await;
    let client = Client::builder()
        .timeout(Duration::from_millis(200))
        .connect(server.url.as_str())
        .await
        .unwrap();
    let err = client.call_tool("hang", json!({})).await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert!(
        server.wait_disconnects(1).await,
        "a timed-out request closes its stream"
    );

    let call = client.call_tool_with(
        "hang",
        json!({}),
        RequestOptions::new().timeout(Duration::from_secs(30)),
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(200), call)
            .await
            .is_err()
    );
    assert!(
        server.wait_disconnects(2).await,
        "dropping the call future closes its stream"
    );
    // Nothing but the two calls was sent: no notifications/cancelled on HTTP.
    assert_eq!(server.posts().len(), 3);
}

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
async fn pagination_follows_cursors_and_stops_on_a_loop() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("prompts/list") => {
            let next = match req.body["params"].get("cursor").and_then(Value::as_str) {
                None => json!("a"),
                Some("a") => json!(""),
                Some(_) => Value::Null,
            };
            let mut result = json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                "prompts": [{"name": format!("p{}", req.id())}]});
            if !next.is_null() {
                result["nextCursor"] = next;
            }
            Reply::result(req, result)
        }
        Some("resources/list") => Reply::result(
            req,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "resources": [], "nextCursor": "same"}),
        ),
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(
        prompts.len(),
        3,
        "the empty-string cursor is a cursor, not the end"
    );
    let cursors: Vec<Value> = server
        .calls("prompts/list")
        .iter()
        .map(|r| {
            r.body["params"]
                .get("cursor")
                .cloned()
                .unwrap_or(Value::Null)
        })
        .collect();
    assert_eq!(cursors, [Value::Null, json!("a"), json!("")]);
    let err = client.list_resources().await.unwrap_err();
    assert_eq!(
        err.protocol_kind(),
        Some(snodo::client::ProtocolErrorKind::Pagination),
        "{err:?}"
    );
    assert_eq!(server.calls("resources/list").len(), 2);
}

#[tokio::test]
async fn errors_are_told_apart() {
    let err = Client::connect("http://127.0.0.1:1/mcp").await.unwrap_err();
    assert!(err.is_transport(), "{err:?}");

    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("tools/call") if req.body["params"]["name"] == "boom" => {
            Reply::Json(500, vec![], json!("not json-rpc"))
        }
        Some("tools/call") => Reply::error(
            req,
            200,
            json!({"code": -32602, "message": "Unknown tool: x", "data": {"name": "x"}}),
        ),
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    match client.call_tool("boom", json!({})).await.unwrap_err() {
        ClientError::Transport { status, .. } => assert_eq!(status, Some(500)),
        other => panic!("{other:?}"),
    }
    let err = client.call_tool("x", json!({})).await.unwrap_err();
    assert!(err.is_rpc());
    let rpc = err.rpc_error().unwrap();
    assert_eq!((rpc.code(), rpc.message()), (-32602, "Unknown tool: x"));
    assert_eq!(rpc.data(), Some(&json!({"name": "x"})));
    let err = client.request("nope/nope", json!({})).await.unwrap_err();
    assert!(
        err.is_transport(),
        "a 404 without a JSON-RPC body is a transport failure: {err:?}"
    );
}

#[tokio::test]
async fn legacy_server_requests_are_answered_and_cancellation_is_posted() {
    let server = ScriptServer::start(|req| match (req.method.as_str(), req.rpc_method()) {
        ("POST", Some("server/discover")) => Reply::Status(400),
        ("POST", Some("initialize")) => Reply::Json(
            200,
            vec![("mcp-session-id", "abc".into())],
            json!({"jsonrpc": "2.0", "id": req.id(), "result": {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "asks", "version": "1"}}}),
        ),
        ("POST", Some("tools/call")) if req.body["params"]["name"] == "ask" => Reply::Sse(
            vec![],
            vec![
                (
                    0,
                    event(
                        json!({"jsonrpc": "2.0", "id": "q1", "method": "elicitation/create",
                    "params": {"message": "Sure?", "requestedSchema": {"type": "object",
                        "properties": {"n": {"type": "integer", "default": 30}}}}}),
                    ),
                ),
                (
                    400,
                    event(json!({"jsonrpc": "2.0", "id": req.id(),
                    "result": {"content": [{"type": "text", "text": "asked"}]}})),
                ),
            ],
            false,
        ),
        ("POST", Some("tools/call")) => Reply::Hang,
        ("GET", _) => Reply::Status(405),
        _ => Reply::Status(202),
    })
    .await;
    let client = Client::builder()
        .on_elicit_form(|req| async move { Ok(req.accept_defaults()) })
        .connect(server.url.as_str())
        .await
        .unwrap();
    let result = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "asked");
    let answer = server
        .posts()
        .into_iter()
        .find(|p| p.body.get("method").is_none())
        .expect("the client POSTed its answer");
    assert_eq!(
        answer.body,
        json!({"jsonrpc": "2.0", "id": "q1", "result": {"action": "accept", "content": {"n": 30}}})
    );
    assert_eq!(answer.header("mcp-session-id"), Some("abc"));
    assert_eq!(answer.header("mcp-protocol-version"), Some("2025-11-25"));

    let err = client
        .call_tool_with(
            "hang",
            json!({}),
            RequestOptions::new().timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    let mut cancelled = None;
    for _ in 0..100 {
        cancelled = server.calls("notifications/cancelled").pop();
        if cancelled.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cancelled = cancelled.unwrap_or_else(|| {
        panic!(
            "no notifications/cancelled POSTed: {:#?}",
            server
                .requests()
                .iter()
                .map(|r| (r.method.clone(), r.body.clone()))
                .collect::<Vec<_>>()
        )
    });
    let hang_id = server.calls("tools/call").pop().unwrap().id();
    assert_eq!(
        cancelled.body,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": hang_id, "reason": "The request timed out"}})
    );
    assert_eq!(cancelled.header("mcp-session-id"), Some("abc"));
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

/// A `tools/list` page of 100 tools out of `total` (the cursor is the
/// number of the page), each tool about `pad` bytes longer than bare.
fn numbered_tools(req: &client_support::Recorded, total: usize, pad: usize) -> Reply {
    let page: usize = req.body["params"]
        .get("cursor")
        .and_then(Value::as_str)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (start, end) = (page * 100, ((page + 1) * 100).min(total));
    let tools: Vec<Value> = (start..end)
        .map(|i| {
            json!({"name": format!("t{i}"), "description": "x".repeat(pad),
                "inputSchema": {"type": "object"}})
        })
        .collect();
    let mut result =
        json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": tools});
    if end < total {
        result["nextCursor"] = json!((page + 1).to_string());
    }
    Reply::result(req, result)
}

#[tokio::test]
async fn a_listing_past_its_item_or_byte_bound_fails_naming_it_and_reads_no_further_page() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("tools/list") => numbered_tools(req, 5_000, 1_000),
        _ => Reply::Status(404),
    })
    .await;
    // Within the bounds, every page is read.
    let all = Client::builder()
        .connect(server.url.as_str())
        .await
        .unwrap();
    assert_eq!(all.list_tools().await.unwrap().len(), 5_000);
    assert_eq!(server.calls("tools/list").len(), 50);

    // 1 000 items: the eleventh page goes past it, and is the last asked for.
    let items = Client::builder()
        .max_listing_items(1_000)
        .connect(server.url.as_str())
        .await
        .unwrap();
    let err = items.list_tools().await.unwrap_err();
    assert_eq!(
        err.exceeded_limit(),
        Some(snodo::client::ClientLimit::ListingItems),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "limit exceeded: tools/list lists more than 1000 items (max_listing_items = 1000)"
    );
    assert_eq!(server.calls("tools/list").len(), 50 + 11);

    // 256 KiB: the tools take about 1 KiB each, so the third page goes past.
    let bytes = Client::builder()
        .max_listing_bytes(256 * 1024)
        .connect(server.url.as_str())
        .await
        .unwrap();
    let err = bytes.list_tools().await.unwrap_err();
    assert_eq!(
        err.exceeded_limit(),
        Some(snodo::client::ClientLimit::ListingBytes),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("(max_listing_bytes = 262144)"),
        "{err}"
    );
    assert_eq!(server.calls("tools/list").len(), 50 + 11 + 3);
    assert_eq!(
        snodo::client::DEFAULT_MAX_LISTING_ITEMS,
        10_000,
        "the documented default"
    );
}

#[tokio::test]
async fn an_answer_over_the_message_limit_fails_its_call_at_once_and_is_not_sent_again() {
    let big = "x".repeat(5_000);
    let server = ScriptServer::start(move |req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("tools/call") if req.body["params"]["name"] == "json" => complete(req, &big),
        Some("tools/call") => Reply::Sse(
            vec![],
            vec![(
                0,
                event(json!({"jsonrpc": "2.0", "id": req.id(), "result": {
                    "resultType": "complete", "content": [{"type": "text", "text": big}]}})),
            )],
            true,
        ),
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::builder()
        .max_message_bytes(2_048)
        .timeout(Duration::from_secs(20))
        .connect(server.url.as_str())
        .await
        .unwrap();
    for (tool, carrier) in [
        ("json", "an HTTP body"),
        ("sse", "an event of the response stream"),
    ] {
        let started = std::time::Instant::now();
        let err = client.call_tool(tool, json!({})).await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{tool}: failed at once: {err:?}"
        );
        assert_eq!(
            err.exceeded_limit(),
            Some(snodo::client::ClientLimit::MessageBytes),
            "{tool}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "limit exceeded: the server's answer is {carrier} of more than 2048 bytes \
                 (max_message_bytes = 2048)"
            )
        );
    }
    // Each was asked once: an answer too big is not asked for again.
    assert_eq!(server.calls("tools/call").len(), 2);
}
