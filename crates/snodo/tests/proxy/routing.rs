//! What crosses the proxy: namespaced calls, failures in their own shape,
//! input requests, log messages, cancellation and resource updates.

use std::time::Duration;

use serde_json::{Value, json};
use snodo::client::{Client, ListenFilter};
use snodo::prelude::*;
use snodo::proxy::Proxy;
use snodo::resource::ReadRequest;

use crate::backend::CANCELLED;
use crate::host::{META, gateway, names, send, two_backends};

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
        .call_tool("alpha.wait", json!({}))
        .options(snodo::client::RequestOptions::new().timeout(Duration::from_millis(200)))
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
