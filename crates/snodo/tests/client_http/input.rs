//! Requests for input: `input_required` answered through handlers or left to
//! the caller, and an initialize-era server's own requests.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use snodo::client::{Client, RequestOptions};
use snodo::handler::{ElicitAction, ElicitResponse};

use crate::client_support::{Reply, ScriptServer, event};
use crate::complete;

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
        .call_tool("forever", json!({}))
        .options(RequestOptions::new().answer_input(false))
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
    client
        .call_tool("t", json!({}))
        .options(opts)
        .await
        .unwrap();
    let last = server.calls("tools/call").pop().unwrap();
    assert_eq!(last.body["params"]["requestState"], "s");
    assert_eq!(last.body["params"]["inputResponses"]["x"]["model"], "me");
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
        .call_tool("hang", json!({}))
        .options(RequestOptions::new().timeout(Duration::from_millis(200)))
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
