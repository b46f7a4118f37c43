//! The standalone GET stream of a session: updates and list changes, its
//! queue, and a stream that falls behind.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, StatusCode};
use serde_json::json;
use snodo::transport::http::{HttpOptions, MemorySessions, SessionStore};

use crate::V;
use crate::events::Events;
use crate::listener::start;

#[tokio::test]
async fn the_standalone_stream_carries_updates_and_list_changes() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", V),
    ];
    let mut stream = Events::new(run.send(Method::GET, &headers, "").await);
    let second = run.send(Method::GET, &headers, "").await;
    assert_eq!(
        second.status(),
        StatusCode::CONFLICT,
        "one standalone stream per session"
    );
    let (_, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched"}}"#)
        .await;
    assert_eq!(body["result"], json!({}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    run.server.events().resource_updated("test://other");
    run.server.events().resource_updated("test://watched");
    let update = stream.json().await;
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://watched"}})
    );
    assert!(run.server.remove_tool("wait"));
    assert_eq!(
        stream.json().await["method"],
        "notifications/tools/list_changed"
    );
    let response = run.send(Method::DELETE, &headers, "").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        stream.next().await.is_none(),
        "ending the session ends its stream"
    );
}

#[tokio::test]
async fn a_session_stream_queues_256_notifications_and_drops_the_rest() {
    assert_eq!(snodo::server::legacy::OUTBOX_QUEUE, 256, "README's queue");
    let store = Arc::new(MemorySessions::default());
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    let sid = run.initialize(json!({"elicitation": {"url": {}}})).await;
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", V),
    ];
    let mut stream = Events::new(run.send(Method::GET, &headers, "").await);
    let session = store.get(&sid).expect("the session");
    let complete = |n: usize| {
        let mut params = serde_json::Map::new();
        params.insert("elicitationId".into(), format!("e-{n}").into());
        params
    };
    // The test and the server share one thread: nothing drains the queue
    // while these are sent, as if the client had stopped reading.
    let queued: Vec<bool> = (0..300)
        .map(|n| session.send_notification("notifications/elicitation/complete", complete(n)))
        .collect();
    assert!(queued[..256].iter().all(|q| *q), "the first 256 are queued");
    assert!(
        queued[256..].iter().all(|q| !*q),
        "the rest are dropped, and the sender told so"
    );
    for n in 0..256 {
        let notification = stream.json().await;
        assert_eq!(
            notification,
            json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                "params": {"elicitationId": format!("e-{n}")}})
        );
    }
    // The session and its stream live on: the next one is queued and is
    // the next event.
    assert!(session.send_notification("notifications/elicitation/complete", complete(300)));
    assert_eq!(stream.json().await["params"]["elicitationId"], "e-300");
    let (status, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(
        (status, body["result"].clone()),
        (StatusCode::OK, json!({}))
    );
}

#[tokio::test]
async fn a_session_stream_that_falls_behind_on_changes_hears_of_each_once() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", V),
    ];
    let (_, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched"}}"#)
        .await;
    assert_eq!(body["result"], json!({}));
    let mut stream = Events::new(run.send(Method::GET, &headers, "").await);
    // One more change than the listener queue holds, with nothing reading
    // (the test and the server share one thread): the oldest is lost, and
    // the stream hears once of every list and subscribed resource instead.
    for _ in 0..=snodo::server::LISTENER_QUEUE {
        run.server.events().resource_updated("test://watched/part");
    }
    let notification = |method: &str| json!({"jsonrpc": "2.0", "method": method, "params": {}});
    assert_eq!(
        stream.json().await,
        notification("notifications/tools/list_changed")
    );
    assert_eq!(
        stream.json().await,
        notification("notifications/prompts/list_changed")
    );
    assert_eq!(
        stream.json().await,
        notification("notifications/resources/list_changed")
    );
    let watched = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
        "params": {"uri": "test://watched"}});
    assert_eq!(stream.json().await, watched);
    let part = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
        "params": {"uri": "test://watched/part"}});
    for _ in 0..snodo::server::LISTENER_QUEUE {
        assert_eq!(stream.json().await, part);
    }
    run.server.events().resource_updated("test://watched");
    assert_eq!(stream.json().await, watched, "nothing else was pending");
}
