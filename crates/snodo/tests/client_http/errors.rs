//! Failures told apart: transport, JSON-RPC and HTTP errors, and an answer
//! over the message limit.

use std::time::Duration;

use serde_json::json;
use snodo::client::Client;

use crate::client_support::{Reply, ScriptServer, event};
use crate::complete;

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
    let err = client.call_tool("boom", json!({})).await.unwrap_err();
    assert!(err.is_transport(), "{err:?}");
    assert_eq!(err.status(), Some(500));
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
