//! Timeouts: progress restarts them under a total cap, and a timed-out or
//! dropped call closes its stream.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use snodo::client::{Client, RequestOptions, TimeoutKind};

use crate::client_support::{Reply, ScriptServer, event};

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
        .call_tool("slow", json!({}))
        .options(opts)
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

    // The timeout set on the pending call applies over its options'.
    let err = client
        .call_tool("slow", json!({}))
        .options(RequestOptions::new().on_progress(|_| {}))
        .timeout(Duration::from_millis(500))
        .await
        .unwrap_err();
    assert_eq!(
        err.timeout_after().map(|(kind, _)| kind),
        Some(TimeoutKind::Request),
        "{err:?}"
    );

    let err = client
        .call_tool("slow", json!({}))
        .options(
            RequestOptions::new()
                .timeout(Duration::from_millis(500))
                .reset_timeout_on_progress(true)
                .max_total_timeout(Duration::from_millis(650))
                .on_progress(|_| {}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.timeout_after().map(|(kind, _)| kind),
        Some(TimeoutKind::MaxTotal),
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

    let call = client
        .call_tool("hang", json!({}))
        .options(RequestOptions::new().timeout(Duration::from_secs(30)));
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
