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

#[tokio::test]
async fn resources_templates_and_prompts_arrive_typed_and_keep_what_they_do_not_model() {
    let server = ScriptServer::start(|req| {
        let page = |key: &str, items: Value| {
            let mut result = json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private"});
            result[key] = items;
            Reply::result(req, result)
        };
        match req.rpc_method() {
            Some("server/discover") => Reply::discover(req),
            Some("resources/list") => page(
                "resources",
                json!([
                    {"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain", "size": 3,
                     "annotations": {"priority": 1}, "x-vendor": {"kept": true}},
                    {"name": "no uri"},
                    {"uri": "file:///b.txt"}
                ]),
            ),
            Some("resources/templates/list") => page(
                "resourceTemplates",
                json!([{"uriTemplate": "file:///{path}", "name": "files", "title": "Files"}, 7]),
            ),
            Some("prompts/list") => page(
                "prompts",
                json!([
                    {"name": "review", "description": "Reviews code",
                     "arguments": [{"name": "code", "required": true}, {"name": "style", "required": false}],
                     "_meta": {"k": "v"}},
                    {"description": "no name"}
                ]),
            ),
            _ => Reply::Status(404),
        }
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();

    let resources = client.list_resources().await.unwrap();
    assert_eq!(resources.len(), 2, "the item without a uri is dropped");
    let a = &resources[0];
    assert_eq!((a.uri.as_str(), a.name.as_str()), ("file:///a.txt", "a"));
    assert_eq!(
        (a.mime_type.as_deref(), a.size),
        (Some("text/plain"), Some(3))
    );
    assert_eq!(
        serde_json::to_value(a).unwrap(),
        json!({"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain", "size": 3,
               "annotations": {"priority": 1}, "x-vendor": {"kept": true}}),
        "what it received, unknown members included"
    );
    assert_eq!(resources[1].name, "", "a missing name reads as empty");

    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 1, "a non-object item is dropped");
    assert_eq!(templates[0].uri_template, "file:///{path}");
    assert_eq!(templates[0].title.as_deref(), Some("Files"));

    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(prompts.len(), 1, "the prompt without a name is dropped");
    let review = &prompts[0];
    let required: Vec<(&str, bool)> = review
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(required, [("code", true), ("style", false)]);
    assert_eq!(
        serde_json::to_value(review).unwrap(),
        json!({"name": "review", "description": "Reviews code",
               "arguments": [{"name": "code", "required": true}, {"name": "style", "required": false}],
               "_meta": {"k": "v"}})
    );
}

#[tokio::test]
async fn a_completion_arrives_typed_and_a_malformed_one_is_a_decode_error() {
    let server = ScriptServer::start(|req| match req.rpc_method() {
        Some("server/discover") => Reply::discover(req),
        Some("completion/complete") => {
            let completion = match req.body["params"]["argument"]["value"].as_str() {
                Some("py") => json!({"values": ["python", "pytorch"], "total": 2, "hasMore": false}),
                _ => json!({"values": [1, 2]}),
            };
            Reply::result(
                req,
                json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "completion": completion}),
            )
        }
        _ => Reply::Status(404),
    })
    .await;
    let client = Client::connect(server.url.as_str()).await.unwrap();
    let language = || snodo::client::CompletionRef::Prompt("code".into());
    let done = client
        .complete(language(), "language", "py", None)
        .await
        .unwrap();
    assert_eq!(done.values, ["python", "pytorch"]);
    assert_eq!((done.total, done.has_more), (Some(2), Some(false)));
    let sent = &server.calls("completion/complete")[0].body["params"];
    assert_eq!(sent["ref"], json!({"type": "ref/prompt", "name": "code"}));
    assert_eq!(sent["argument"], json!({"name": "language", "value": "py"}));

    let err = client
        .complete(language(), "language", "x", None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("language"), "{err}");
}
