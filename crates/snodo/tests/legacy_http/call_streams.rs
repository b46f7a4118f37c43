//! A call's own stream: requests to the client on it, resumption with
//! `Last-Event-ID`, cancellation, and waiting for the client.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::Full;
use serde_json::{Value, json};
use snodo::transport::http::HttpOptions;

use crate::V;
use crate::common::{assert_legacy_response, assert_valid_in};
use crate::events::Events;
use crate::listener::{read_json, start};

#[tokio::test]
async fn a_handler_that_needs_input_asks_on_its_own_stream() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({"elicitation": {}})).await;
    let mut events = run
        .stream(
            &sid,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}"#,
        )
        .await;
    let priming = events.next().await.unwrap();
    assert!(
        priming.retry && priming.data.is_empty() && priming.id.is_some(),
        "{priming:?}"
    );
    let request = events.json().await;
    assert_valid_in(V, "ElicitRequest", &request);
    assert_eq!(request["method"], "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Grace"}}});
    let (status, _, _) = run.post(Some(&sid), &answer.to_string()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let reply = events.json().await;
    assert_legacy_response(V, &reply, "CallToolResult");
    assert_eq!(reply["id"], 7);
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "name=Grace state=kept-in-process"
    );
    assert!(
        events.next().await.is_none(),
        "the stream ends with the response"
    );
}

#[tokio::test]
async fn a_broken_stream_resumes_from_last_event_id() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let mut events = run.stream(&sid, r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"p"}}}"#).await;
    let _priming = events.next().await.unwrap();
    let first = events.next().await.unwrap();
    let progress: Value = serde_json::from_str(&first.data).unwrap();
    assert_eq!(progress["params"]["progress"], 1);
    let last_id = first.id.clone().unwrap();
    drop(events); // the connection breaks; the call goes on

    let response = run
        .send(
            Method::GET,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", V),
                ("last-event-id", &last_id),
            ],
            "",
        )
        .await;
    let mut resumed = Events::new(response);
    let mut seen = Vec::new();
    while let Some(event) = resumed.next().await {
        assert!(event.id.is_some() && event.id.as_deref() != Some(last_id.as_str()));
        seen.push(serde_json::from_str::<Value>(&event.data).unwrap());
    }
    let progress: Vec<&Value> = seen
        .iter()
        .filter_map(|f| f["params"].get("progress"))
        .collect();
    assert_eq!(progress, [&json!(2), &json!(3)], "{seen:?}");
    let reply = seen.last().unwrap();
    assert_legacy_response(V, reply, "CallToolResult");
    assert_eq!(reply["result"]["content"][0]["text"], "stepped");

    let response = run
        .send(
            Method::GET,
            &[("mcp-session-id", &sid), ("last-event-id", "999-1")],
            "",
        )
        .await;
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "an id no stream has"
    );

    // An id that is not visible ASCII is refused too: it does not open the
    // standalone stream instead.
    let request = Request::builder()
        .method(Method::GET)
        .uri(&run.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", V)
        .header(
            "last-event-id",
            http::HeaderValue::from_bytes(b"1-\xe91").unwrap(),
        )
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = run.client.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_last_event_id_of_64_visible_characters_resumes_and_one_of_65_or_none_is_400() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let mut events = run.stream(&sid, r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"p"}}}"#).await;
    let _priming = events.next().await.unwrap();
    let first = events.next().await.unwrap();
    let last_id = first.id.clone().unwrap();
    drop(events);

    // `<stream>-<seq>` with the stream number padded by zeros to a given
    // length names the same event.
    let (stream, seq) = last_id.split_once('-').unwrap();
    let padded = |len: usize| format!("{stream:0>width$}-{seq}", width = len - seq.len() - 1);
    let longest = padded(64);
    assert_eq!(longest.len(), 64);
    let response = run
        .send(
            Method::GET,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", V),
                ("last-event-id", &longest),
            ],
            "",
        )
        .await;
    let mut resumed = Events::new(response);
    let mut seen = Vec::new();
    while let Some(event) = resumed.next().await {
        seen.push(serde_json::from_str::<Value>(&event.data).unwrap());
    }
    let progress: Vec<&Value> = seen
        .iter()
        .filter_map(|f| f["params"].get("progress"))
        .collect();
    assert_eq!(progress, [&json!(2), &json!(3)], "{seen:?}");

    let refusal = json!({"jsonrpc": "2.0", "error": {"code": -32600,
        "message": "Bad Request: Last-Event-ID must be 1 to 64 visible ASCII characters"}});
    for id in [padded(65), String::new()] {
        let response = run
            .send(
                Method::GET,
                &[
                    ("mcp-session-id", &sid),
                    ("mcp-protocol-version", V),
                    ("last-event-id", &id),
                ],
                "",
            )
            .await;
        let (status, _, body) = read_json(response).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{id:?}");
        assert_eq!(body, refusal, "{id:?}");
    }
}

#[tokio::test]
async fn notifications_cancelled_ends_a_streamed_call_without_a_response() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let mut events = run.stream(&sid, r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","_meta":{"progressToken":1}}}"#).await;
    let _priming = events.next().await.unwrap();
    let (status, _, _) = run
        .post(
            Some(&sid),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert!(
        events.next().await.is_none(),
        "the stream ends with no response"
    );
    let (status, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#)
        .await;
    assert_eq!(
        (status, body["result"].clone()),
        (StatusCode::OK, json!({}))
    );
}

#[tokio::test]
async fn waiting_for_the_client_does_not_count_against_the_request_timeout() {
    let run = start(HttpOptions::default().request_timeout(Duration::from_millis(300))).await;
    let sid = run.initialize(json!({"elicitation": {}})).await;
    let mut events = run
        .stream(
            &sid,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ask"}}"#,
        )
        .await;
    let _priming = events.next().await.unwrap();
    let request = events.json().await;
    tokio::time::sleep(Duration::from_millis(700)).await; // a human, thinking
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Edsger"}}});
    let (status, _, _) = run.post(Some(&sid), &answer.to_string()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let reply = events.json().await;
    assert_eq!(
        reply["result"]["content"][0]["text"], "name=Edsger state=kept-in-process",
        "{reply}"
    );
}
