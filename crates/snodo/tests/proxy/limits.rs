//! Listing limits against scripted backends: a backend past them is refused
//! or withdrawn, and a burst of list changes costs few relists.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use snodo::client::Client;
use snodo::proxy::Proxy;

use crate::backend::backend;
use crate::client_support::{Recorded, Reply, ScriptServer, event};
use crate::host::{gateway, send, served};

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
