//! Listings: cursors followed and loops stopped, and the bounds on a whole
//! listing.

use serde_json::{Value, json};
use snodo::client::Client;

use crate::client_support::{self, Reply, ScriptServer};

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
