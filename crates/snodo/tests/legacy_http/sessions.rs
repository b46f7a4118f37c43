//! Sessions: issued, required and ended, beside stateless 2026 requests, and
//! their limits (a full table, unfinished handshakes, idle expiry).

use std::sync::Arc;
use std::time::Duration;

use http::{Method, StatusCode};
use serde_json::json;
use snodo::transport::http::{HttpOptions, MemorySessions, SessionStore};

use crate::V;
use crate::common::assert_legacy_response;
use crate::events::Events;
use crate::listener::{read_json, start};

#[tokio::test]
async fn sessions_are_issued_required_and_ended() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    assert_eq!(sid.len(), 32);
    assert!(sid.bytes().all(|b| (0x21..=0x7e).contains(&b)));

    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let (status, _, body) = run.post(None, list).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], -32600);
    let (status, _, _) = run
        .post(Some("0123456789abcdef0123456789abcdef"), list)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a forged id");
    let (status, _, body) = run.post(Some(&sid), list).await;
    assert_eq!(status, StatusCode::OK);
    assert_legacy_response(V, &body, "ListToolsResult");

    // JSON-RPC errors of a live session travel on 200: a 404 would end it.
    let (status, _, body) = run
        .post(
            Some(&sid),
            r#"{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{}}"#,
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (StatusCode::OK, Some(-32601))
    );
    let (status, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#)
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (StatusCode::BAD_REQUEST, Some(-32600))
    );
    let response = run
        .send(
            Method::POST,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            list,
        )
        .await;
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "an unsupported version header"
    );
    let response = run
        .send(Method::POST, &[("mcp-session-id", &sid)], "[{}]")
        .await;
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "batches do not exist"
    );

    let response = run.send(Method::GET, &[], "").await;
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "GET needs a session"
    );
    let response = run
        .send(Method::DELETE, &[("mcp-session-id", "nope")], "")
        .await;
    assert_eq!(
        response.status(),
        StatusCode::NOT_FOUND,
        "DELETE of an unknown session"
    );
    let response = run
        .send(Method::DELETE, &[("mcp-session-id", &sid)], "")
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let (status, _, _) = run.post(Some(&sid), list).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "an ended session");
    let response = run.send(Method::GET, &[("mcp-session-id", &sid)], "").await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_2026_request_stays_stateless_beside_sessions() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let modern = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let response = run
        .send(
            Method::POST,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
            ],
            &modern.to_string(),
        )
        .await;
    let (status, _, body) = read_json(response).await;
    assert_eq!(
        (status, body["result"]["resultType"].as_str()),
        (StatusCode::OK, Some("complete"))
    );
    let response = run
        .send(
            Method::POST,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
                ("mcp-session-id", &sid),
            ],
            &modern.to_string(),
        )
        .await;
    let (_, _, body) = read_json(response).await;
    assert_eq!(
        body["result"]["resultType"], "complete",
        "the _meta claim wins over the session id"
    );
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;

#[tokio::test]
async fn ten_thousand_sessions_meet_a_clear_limit() {
    // One client may take the whole store here: the global bound is tested.
    let store = Arc::new(MemorySessions::new(1000, Duration::from_secs(600)).max_per_share(2000));
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    for _ in 0..1000 {
        run.initialize(json!({})).await;
    }
    let mut refused = 0;
    for _ in 0..9000 {
        let response = run.send(Method::POST, &[], INIT).await;
        let (status, headers, body) = read_json(response).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        // Every session is finished and active: the first gives way after
        // two idle minutes.
        let after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((60..=120).contains(&after), "Retry-After: {after}");
        assert_eq!(body["id"], 1);
        assert_eq!(
            body["error"]["message"],
            "Service unavailable: too many open sessions (at most 1000)"
        );
        refused += 1;
    }
    assert_eq!(refused, 9000);
    assert_eq!(store.len(), 1000, "memory stays bounded");
}

#[tokio::test]
async fn unfinished_handshakes_give_way_to_new_clients() {
    let store = Arc::new(
        MemorySessions::new(3, Duration::from_secs(600))
            .unfinished_grace(Duration::from_millis(200)),
    );
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    let finished = run.initialize(json!({})).await;
    for _ in 0..2 {
        let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "within the grace period"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    for _ in 0..2 {
        let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "an unfinished handshake was evicted"
        );
    }
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "the new ones are in their grace period"
    );
    let (status, _, _) = run
        .post(
            Some(&finished),
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        )
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a finished session is never evicted"
    );
    assert_eq!(store.len(), 3);
}

#[tokio::test]
async fn idle_sessions_expire_and_make_room() {
    let store = Arc::new(MemorySessions::new(10, Duration::from_millis(300)));
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    let mut ids = Vec::new();
    for _ in 0..10 {
        let (status, headers, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
        assert_eq!(status, StatusCode::OK);
        ids.push(headers["mcp-session-id"].to_str().unwrap().to_string());
    }
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (status, _, _) = run
        .post(Some(&ids[0]), r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "an expired session");
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(status, StatusCode::OK, "the expired session made room");
    assert_eq!(store.len(), 10, "idle sessions wait for a sweep");
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(status, StatusCode::OK, "a full store sweeps idle sessions");
    assert_eq!(store.len(), 2, "the sweep dropped every idle session");
}

#[tokio::test]
async fn a_session_that_only_listens_does_not_expire() {
    let store = Arc::new(MemorySessions::new(10, Duration::from_millis(200)));
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    let sid = run.initialize(json!({})).await;
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", V),
    ];
    let stream = Events::new(run.send(Method::GET, &headers, "").await);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (status, _, _) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(status, StatusCode::OK, "the open stream kept the session");
    drop(stream);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (status, _, _) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "idle once the stream closed");
}
