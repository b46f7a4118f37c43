//! The proxy (`snodo::proxy`) in process: backends are servers reached by
//! direct clients, and the proxy's server is driven with literal JSON-RPC
//! requests, as a host would send them.

#![cfg(all(feature = "client", feature = "macros"))]

mod client_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use client_support::{Recorded, Reply, ScriptServer, event};

use serde_json::{Value, json};
use snodo::client::{Client, ListenFilter};
use snodo::prelude::*;
use snodo::proxy::Proxy;
use snodo::server::Capability;

#[snodo::tool(
    description = "Returns its text",
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
)]
async fn echo(args: Arguments) -> CallResult {
    Ok(ToolResult::text(args.str("text")?))
}

#[snodo::tool(
    description = "Fails in its own way",
    input_schema = {"type": "object", "properties": {}}
)]
async fn broken(_args: Arguments) -> CallResult {
    Err("the disk is full".into())
}

#[snodo::tool(
    description = "Refuses with a JSON-RPC error that carries data",
    input_schema = {"type": "object", "properties": {}}
)]
async fn refuse(_args: Arguments) -> CallResult {
    Err(snodo::HandlerError::protocol(
        snodo::Error::new(-32042, "not on Sundays").with_data(json!({"retryAfter": "Monday"})),
    ))
}

#[snodo::tool(
    description = "Asks for a name first (a multi round-trip request)",
    input_schema = {"type": "object", "properties": {}}
)]
async fn ask(_args: Arguments, cx: Context) -> CallResult {
    if let Some(answer) = cx.elicitation("who") {
        let state = cx.request_state().unwrap_or("none").to_owned();
        return Ok(format!("Hello, {}! ({state})", answer.str("name").unwrap_or("?")).into());
    }
    let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    Ok(ToolResult::input_required(
        InputRequired::new()
            .elicit_form("who", "Your name?", form)
            .state("round-1"),
    ))
}

#[snodo::resource(uri_template = "notes://{id}", name = "note", mime_type = "text/plain")]
async fn note(req: ReadRequest) -> String {
    format!("note {}", req.vars[0].1)
}

#[snodo::prompt(name = "hello", description = "Says hello", arguments = [{"name": "who", "required": true}])]
async fn hello(args: PromptArguments) -> String {
    format!("Hello, {}!", args.get("who").unwrap_or("?"))
}

#[snodo::tool(
    description = "Logs twice, then answers",
    input_schema = {"type": "object", "properties": {}}
)]
async fn chatty(_args: Arguments, cx: Context) -> CallResult {
    cx.log(snodo::protocol::LogLevel::Info, "first").await;
    cx.log(snodo::protocol::LogLevel::Warning, json!({"second": true}))
        .await;
    Ok("said".into())
}

static CANCELLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks the backend's `wait` as stopped when dropped.
struct Stopped;

impl Drop for Stopped {
    fn drop(&mut self) {
        CANCELLED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[snodo::tool(
    description = "Waits until cancelled",
    input_schema = {"type": "object", "properties": {}}
)]
async fn wait(_args: Arguments, cx: Context) -> CallResult {
    let _stopped = Stopped;
    cx.cancellation().cancelled().await;
    Ok("cancelled".into())
}

fn backend(name: &str) -> Server {
    Server::builder(name, "1.0.0")
        .tool(chatty)
        .tool(wait)
        .tool(echo)
        .tool(broken)
        .tool(refuse)
        .tool(ask)
        .resource(note)
        .prompt(hello)
        .build()
        .unwrap()
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"host","version":"1"}}"#;

/// Sends `{"method": method, "params": params + _meta}` and returns the response.
async fn send(server: &Server, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = serde_json::from_str(META).unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    server.dispatch_value(request).await.expect("a response")
}

/// The proxy's server: every kind declared, since backends come and go.
fn gateway() -> Server {
    Server::builder("gateway", "1.0.0")
        .declare(Capability::Tools)
        .declare(Capability::Resources)
        .declare(Capability::Prompts)
        .build()
        .unwrap()
}

async fn two_backends() -> Proxy {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    for id in ["alpha", "beta"] {
        let synced = proxy
            .connect_backend(id, Client::builder(), backend(id))
            .await
            .unwrap();
        assert_eq!((synced.tools, synced.resources, synced.prompts), (6, 1, 1));
        assert!(synced.refused.is_empty(), "{:?}", synced.refused);
    }
    proxy
}

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    let mut out: Vec<String> = list["result"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[field].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn names_are_namespaced_and_each_call_reaches_its_backend() {
    let proxy = two_backends().await;
    let server = proxy.server();
    let tools = send(server, "tools/list", json!({})).await;
    assert_eq!(
        names(&tools, "tools", "name"),
        [
            "alpha.ask",
            "alpha.broken",
            "alpha.chatty",
            "alpha.echo",
            "alpha.refuse",
            "alpha.wait",
            "beta.ask",
            "beta.broken",
            "beta.chatty",
            "beta.echo",
            "beta.refuse",
            "beta.wait"
        ]
    );
    let r = send(
        server,
        "tools/call",
        json!({"name": "beta.echo", "arguments": {"text": "hi"}}),
    )
    .await;
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": "hi"}])
    );
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "gateway"
    );

    let templates = send(server, "resources/templates/list", json!({})).await;
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        ["alpha+notes://{id}", "beta+notes://{id}"]
    );
    let r = send(server, "resources/read", json!({"uri": "alpha+notes://42"})).await;
    assert_eq!(
        r["result"]["contents"],
        json!([{"uri": "alpha+notes://42", "text": "note 42", "mimeType": "text/plain"}])
    );
    let r = send(
        server,
        "prompts/get",
        json!({"name": "beta.hello", "arguments": {"who": "Ada"}}),
    )
    .await;
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn failures_keep_their_shape() {
    let proxy = two_backends().await;
    let server = proxy.server();
    // A tool's own failure stays a result.
    let r = send(
        server,
        "tools/call",
        json!({"name": "alpha.broken", "arguments": {}}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("the disk is full")
    );
    // A JSON-RPC error stays an error, with its code, message and data.
    let r = send(
        server,
        "tools/call",
        json!({"name": "alpha.refuse", "arguments": {}}),
    )
    .await;
    assert_eq!(
        r["error"],
        json!({"code": -32042, "message": "not on Sundays", "data": {"retryAfter": "Monday"}})
    );
    // Missing required arguments are refused before the backend is asked.
    let r = send(
        server,
        "tools/call",
        json!({"name": "alpha.echo", "arguments": {}}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let r = send(
        server,
        "tools/call",
        json!({"name": "gamma.echo", "arguments": {}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn a_backends_input_request_goes_to_the_caller_and_the_answer_back() {
    let proxy = two_backends().await;
    let server = proxy.server();
    let r = send(
        server,
        "tools/call",
        json!({"name": "alpha.ask", "arguments": {}}),
    )
    .await;
    let result = &r["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    assert_eq!(
        result["inputRequests"]["who"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        result["inputRequests"]["who"]["params"]["message"],
        "Your name?"
    );
    assert_eq!(result["requestState"], "round-1");
    let r = send(
        server,
        "tools/call",
        json!({
            "name": "alpha.ask",
            "arguments": {},
            "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": "round-1",
        }),
    )
    .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "Hello, Ada! (round-1)",
        "{r}"
    );
}

#[tokio::test]
async fn list_changes_of_a_backend_are_followed_and_a_removed_backend_is_gone() {
    let alpha = backend("alpha");
    let proxy = Proxy::namespaced(gateway(), "__").unwrap();
    proxy
        .add_backend("alpha", Client::connect(alpha.clone()).await.unwrap())
        .await
        .unwrap();
    assert!(alpha.remove_tool("broken"));
    let mut names_now = Vec::new();
    for _ in 0..100 {
        let tools = send(proxy.server(), "tools/list", json!({})).await;
        names_now = names(&tools, "tools", "name");
        if names_now.len() == 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        names_now,
        [
            "alpha__ask",
            "alpha__chatty",
            "alpha__echo",
            "alpha__refuse",
            "alpha__wait"
        ]
    );
    assert!(proxy.remove_backend("alpha"));
    let tools = send(proxy.server(), "tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"], json!([]));
    assert!(!proxy.remove_backend("alpha"));
}

#[tokio::test]
async fn ids_clashes_and_separators_are_refused_with_a_message_naming_them() {
    let server = Server::builder("gateway", "1.0.0").build().unwrap();
    assert!(Proxy::namespaced(server.clone(), "/").is_err());
    let proxy = Proxy::namespaced(server, "-").unwrap();
    proxy
        .add_backend("a", Client::connect(backend("a")).await.unwrap())
        .await
        .unwrap();
    let again = proxy
        .add_backend("a", Client::connect(backend("a")).await.unwrap())
        .await
        .unwrap_err();
    assert_eq!(again.to_string(), "two backends have the id \"a\"");
    // `a` + `-` + `b-x` would be the tool `a-b-x` of backend `a-b` too.
    let clashing = Server::builder("a-b", "1.0.0")
        .tool(snodo::tool::from_fn("x", |_a, _c| async { Ok("x".into()) }))
        .build()
        .unwrap();
    let with_b_x = Server::builder("a", "1.0.0")
        .tool(snodo::tool::from_fn("b-x", |_a, _c| async {
            Ok("b-x".into())
        }))
        .build()
        .unwrap();
    let proxy2 = Proxy::namespaced(Server::builder("g", "1").build().unwrap(), "-").unwrap();
    proxy2
        .add_backend("a", Client::connect(with_b_x).await.unwrap())
        .await
        .unwrap();
    let clash = proxy2
        .add_backend("a-b", Client::connect(clashing).await.unwrap())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        clash.contains("\"a-b-x\"") && clash.contains("\"a-b\"") && clash.contains("\"a\""),
        "{clash}"
    );
    assert_eq!(proxy2.backends(), ["a"]);
    let bad = proxy
        .add_backend("Bad_Id", Client::connect(backend("x")).await.unwrap())
        .await
        .unwrap_err();
    assert!(bad.to_string().contains("backend id \"Bad_Id\""), "{bad}");
}

#[tokio::test]
async fn the_backends_log_messages_reach_the_caller_before_the_answer() {
    let proxy = two_backends().await;
    let mut meta: Value = serde_json::from_str(META).unwrap();
    meta["io.modelcontextprotocol/logLevel"] = json!("debug");
    let request = json!({
        "jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "beta.chatty", "arguments": {}, "_meta": meta},
    });
    let frames = proxy.server().dispatch_collect(request).await;
    let methods: Vec<&str> = frames.iter().filter_map(|f| f["method"].as_str()).collect();
    assert_eq!(
        methods,
        ["notifications/message", "notifications/message"],
        "{frames:?}"
    );
    assert_eq!(frames[0]["params"]["level"], "info");
    assert_eq!(frames[0]["params"]["data"], "first");
    assert_eq!(frames[1]["params"]["data"], json!({"second": true}));
    assert_eq!(frames[2]["result"]["content"][0]["text"], "said");
}

#[tokio::test]
async fn a_cancelled_caller_cancels_the_backends_request() {
    let proxy = two_backends().await;
    let front = Client::connect(proxy.server().clone()).await.unwrap();
    let err = front
        .call_tool_with(
            "alpha.wait",
            json!({}),
            snodo::client::RequestOptions::new().timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    for _ in 0..100 {
        if CANCELLED.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the backend's request was not cancelled");
}

#[tokio::test]
async fn a_proxy_holds_at_most_max_backends() {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    let small = || {
        Server::builder("small", "1.0.0")
            .tool(snodo::tool::from_fn("ping", |_a, _c| async {
                Ok("pong".into())
            }))
            .build()
            .unwrap()
    };
    for i in 0..snodo::proxy::MAX_BACKENDS {
        let client = Client::connect(small()).await.unwrap();
        proxy.add_backend(&format!("b{i}"), client).await.unwrap();
    }
    let client = Client::connect(small()).await.unwrap();
    let err = proxy.add_backend("one-more", client).await.unwrap_err();
    assert_eq!(err.to_string(), "a proxy holds at most 64 backends");
    let tools = send(proxy.server(), "tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 64);
}

/// A fixed resource `numbered://N`.
struct Numbered(String);

impl snodo::resource::Resource for Numbered {
    fn uri(&self) -> Option<&str> {
        Some(&self.0)
    }

    fn name(&self) -> &str {
        &self.0
    }

    async fn read(
        &self,
        req: ReadRequest,
        _cx: Context,
    ) -> Result<snodo::resource::ReadResult, snodo::HandlerError> {
        Ok(snodo::resource::ResourceContents::text(req.uri, "n").into())
    }
}

#[tokio::test]
async fn updates_are_followed_for_the_first_max_followed_resources() {
    let count = snodo::proxy::MAX_FOLLOWED + 44;
    let mut builder = Server::builder("many", "1.0.0");
    for i in 0..count {
        // Fixed width: no URI is a prefix of another (a subscription
        // covers the URIs under it).
        builder = builder.resource(Numbered(format!("numbered://{i:04}")));
    }
    let backend = builder.build().unwrap();
    let proxy = Proxy::verbatim(gateway());
    let synced = proxy
        .add_backend("many", Client::connect(backend.clone()).await.unwrap())
        .await
        .unwrap();
    assert_eq!(synced.resources, count);
    let front = Client::connect(proxy.server().clone()).await.unwrap();
    let last = format!("numbered://{:04}", count - 1);
    let filter = ListenFilter::new()
        .resource("numbered://0000")
        .resource(last.clone());
    let mut updates = front.listen(filter).await.unwrap();
    // Once the proxy follows the backend, an update of the first resource
    // comes through.
    let mut seen = None;
    for _ in 0..100 {
        backend.events().resource_updated("numbered://0000");
        if let Ok(n) = tokio::time::timeout(Duration::from_millis(50), updates.next()).await {
            seen = n;
            break;
        }
    }
    assert_eq!(seen.unwrap().params["uri"], "numbered://0000");
    while tokio::time::timeout(Duration::from_millis(100), updates.next())
        .await
        .is_ok()
    {}
    // One past the bound is not followed: the next update is the first's.
    backend.events().resource_updated(&last);
    backend.events().resource_updated("numbered://0000");
    let n = tokio::time::timeout(Duration::from_secs(5), updates.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(n.params["uri"], "numbered://0000");
}

/// The discover result of a scripted backend that offers tools only, and
/// announces their changes.
fn tools_only(req: &Recorded) -> Reply {
    Reply::result(
        req,
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": true}},
            "ttlMs": 0, "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "script", "version": "1.0.0"}}}),
    )
}

/// A `tools/list` page of 100 tools out of `total` (the cursor is the page
/// number).
fn tools_page(req: &Recorded, total: usize) -> Value {
    let page: usize = req.body["params"]
        .get("cursor")
        .and_then(Value::as_str)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (start, end) = (page * 100, ((page + 1) * 100).min(total));
    let tools: Vec<Value> = (start..end)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    let mut result =
        json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": tools});
    if end < total {
        result["nextCursor"] = json!((page + 1).to_string());
    }
    json!({"jsonrpc": "2.0", "id": req.id(), "result": result})
}

/// A `subscriptions/listen` stream: acknowledged, then `changes`
/// `tools/list_changed` notifications at once (one write) after `after`
/// ms, held open.
fn listen_stream(req: &Recorded, after: u64, changes: usize) -> Reply {
    let meta = json!({"io.modelcontextprotocol/subscriptionId": req.id()});
    let ack = event(
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}}),
    );
    let change = event(
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": meta}}),
    );
    Reply::Sse(
        vec![],
        vec![(0, ack), (after, change.repeat(changes))],
        true,
    )
}

/// The tool names the proxy serves.
async fn served(proxy: &Proxy) -> Vec<String> {
    names(
        &send(proxy.server(), "tools/list", json!({})).await,
        "tools",
        "name",
    )
}

#[tokio::test]
async fn a_backend_past_the_listing_limit_is_refused_naming_it_and_the_others_serve_on() {
    let big = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => tools_only(req),
        Some("tools/list") => Reply::Json(200, vec![], tools_page(req, 5_000)),
        _ => Reply::Status(404),
    })
    .await;
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy
        .connect_backend("alpha", Client::builder(), backend("alpha"))
        .await
        .unwrap();
    let err = proxy
        .connect_backend(
            "big",
            Client::builder().max_listing_items(1_000),
            big.url.as_str(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.client_error().and_then(|e| e.exceeded_limit()),
        Some(snodo::client::ClientLimit::ListingItems),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "backend \"big\": limit exceeded: tools/list lists more than 1000 items \
         (max_listing_items = 1000)"
    );
    // What was read is bounded: 11 pages of the 50, then no more.
    assert_eq!(big.calls("tools/list").len(), 11);
    assert_eq!(proxy.backends(), ["alpha"]);
    assert!(served(&proxy).await.iter().all(|n| n.starts_with("alpha.")));
    let r = send(
        proxy.server(),
        "tools/call",
        json!({"name": "alpha.echo", "arguments": {"text": "still here"}}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "still here", "{r}");
}

#[tokio::test]
async fn a_backend_that_grows_past_the_listing_limit_is_withdrawn_and_the_others_serve_on() {
    let listings = Arc::new(AtomicUsize::new(0));
    let counted = listings.clone();
    let big = ScriptServer::start(move |req| match req.rpc_method() {
        Some("server/discover") => tools_only(req),
        Some("subscriptions/listen") => listen_stream(req, 200, 1),
        Some("tools/list") => {
            // Ten tools at first; 5 000 once it has announced a change.
            let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
            let total = if first { 10 } else { 5_000 };
            Reply::Json(200, vec![], tools_page(req, total))
        }
        _ => Reply::Status(404),
    })
    .await;
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy
        .connect_backend("alpha", Client::builder(), backend("alpha"))
        .await
        .unwrap();
    let synced = proxy
        .connect_backend(
            "big",
            Client::builder().max_listing_items(1_000),
            big.url.as_str(),
        )
        .await
        .unwrap();
    assert_eq!(synced.tools, 10);
    assert!(served(&proxy).await.contains(&"big.t9".to_string()));
    let mut names_now = Vec::new();
    for _ in 0..250 {
        names_now = served(&proxy).await;
        if !names_now.iter().any(|n| n.starts_with("big.")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !names_now.iter().any(|n| n.starts_with("big.")),
        "withdrawn: {names_now:?}"
    );
    assert_eq!(names_now.len(), 6, "alpha's tools stay: {names_now:?}");
    let why = proxy.withdrawn("big").expect("says why");
    assert!(why.contains("(max_listing_items = 1000)"), "{why}");
    assert_eq!(proxy.withdrawn("alpha"), None);
    assert_eq!(proxy.backends(), ["alpha", "big"]);
    assert_eq!(listings.load(Ordering::SeqCst), 1 + 11);
    let r = send(
        proxy.server(),
        "tools/call",
        json!({"name": "alpha.echo", "arguments": {"text": "served"}}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "served", "{r}");
}

#[tokio::test]
async fn a_burst_of_list_changes_costs_at_most_the_relist_in_flight_and_one_more() {
    let big = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => tools_only(req),
        Some("subscriptions/listen") => listen_stream(req, 50, 200),
        // A listing that takes 100 ms, as a real one may.
        Some("tools/list") => Reply::Sse(vec![], vec![(100, event(tools_page(req, 3)))], false),
        _ => Reply::Status(404),
    })
    .await;
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy
        .connect_backend("burst", Client::builder(), big.url.as_str())
        .await
        .unwrap();
    // 200 changes at 100 ms a listing would keep it listing for 20 s.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let calls = big.calls("tools/list");
    let listed = calls.len();
    let at: Vec<_> = calls.iter().map(|c| c.at - calls[0].at).collect();
    assert!(
        (2..=3).contains(&listed),
        "the first listing, then at most one in flight and one queued: {listed} at {at:?}"
    );
    assert_eq!(served(&proxy).await, ["burst.t0", "burst.t1", "burst.t2"]);
}

/// A server with one tool per name, each answering "`name` of `server`".
fn tools_of(server: &'static str, names: &[&'static str]) -> Server {
    let mut builder = Server::builder(server, "1.0.0");
    for &name in names {
        builder = builder.tool(snodo::tool::from_fn(name, move |_a, _c| async move {
            Ok(format!("{name} of {server}").into())
        }));
    }
    builder.build().unwrap()
}

/// What the proxy's tool `name` answers.
async fn answer(proxy: &Proxy, name: &str) -> Value {
    let r = send(
        proxy.server(),
        "tools/call",
        json!({"name": name, "arguments": {}}),
    )
    .await;
    r["result"]["content"][0]["text"].clone()
}

/// Waits (up to 5 s) until the proxy's tool `name` answers `want`.
async fn until_answer(proxy: &Proxy, name: &str, want: &str) -> Value {
    let mut got = Value::Null;
    for _ in 0..250 {
        got = answer(proxy, name).await;
        if got == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    got
}

#[tokio::test]
async fn a_clash_is_looked_at_again_once_the_names_move_and_the_name_is_served_again() {
    // With "-", tool `b-x` of backend `a` and tool `x` of backend `a-b` are
    // both `a-b-x`.
    let a = tools_of("a", &["b-x", "keep"]);
    let ab = tools_of("a-b", &["y"]);
    let proxy = Proxy::namespaced(gateway(), "-").unwrap();
    proxy
        .add_backend("a", Client::connect(a.clone()).await.unwrap())
        .await
        .unwrap();
    proxy
        .add_backend("a-b", Client::connect(ab.clone()).await.unwrap())
        .await
        .unwrap();

    // a-b gains `x`: its relist clashes, and a-b-x stays a's.
    ab.add_tool(snodo::tool::from_fn("x", |_a, _c| async {
        Ok("x of a-b".into())
    }))
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(answer(&proxy, "a-b-x").await, "b-x of a");
    assert_eq!(served(&proxy).await, ["a-b-x", "a-b-y", "a-keep"]);

    // a drops `b-x`: the clash is gone, and a-b's `x` is served.
    let mut changes = proxy.changes();
    changes.borrow_and_update();
    assert!(a.remove_tool("b-x"));
    assert_eq!(until_answer(&proxy, "a-b-x", "x of a-b").await, "x of a-b");
    assert_eq!(served(&proxy).await, ["a-b-x", "a-b-y", "a-keep"]);
    assert!(changes.has_changed().unwrap(), "the names moved");

    // A backend refused for a clash when added may be added once the
    // names move, which `changes` tells.
    let c = tools_of("c", &["d-z", "keep"]);
    let cd = tools_of("c-d", &["z"]);
    proxy
        .add_backend("c", Client::connect(c.clone()).await.unwrap())
        .await
        .unwrap();
    let refused = proxy
        .add_backend("c-d", Client::connect(cd.clone()).await.unwrap())
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("\"c-d-z\""), "{refused}");
    let mut changes = proxy.changes();
    changes.borrow_and_update();
    assert!(c.remove_tool("d-z"));
    tokio::time::timeout(Duration::from_secs(5), changes.changed())
        .await
        .expect("the names move within 5 s")
        .unwrap();
    proxy
        .add_backend("c-d", Client::connect(cd).await.unwrap())
        .await
        .unwrap();
    assert_eq!(answer(&proxy, "c-d-z").await, "z of c-d");
}
