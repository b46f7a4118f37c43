//! MCP Apps (`io.modelcontextprotocol/ui`) on the server: a tool bound to a
//! `ui://` app, a tool for the app alone, and the app resource; what a host
//! that declared the extension sees, and what one that did not sees.
//! Literal JSON in, literal JSON out.

mod common;

use serde_json::{Value, json};
use snodo::apps::{AppResource, Csp, Permissions, ToolUi, Visibility};
use snodo::tool::from_fn;
use snodo::{Dispatched, Server, ToolResult, TransportInfo};

use common::meta_with;

const HTML: &str = "<!doctype html><title>Dice</title><p id=roll></p>";

fn server() -> Server {
    Server::builder("apps", "1.0.0")
        .tool(
            from_fn("roll", |_, _| async { Ok(ToolResult::text("4")) })
                .description("Rolls a die")
                .meta(json!({"com.example/kept": 1}))
                .ui(ToolUi::new("ui://dice/app.html")),
        )
        .tool(
            from_fn("reroll", |_, _| async { Ok(ToolResult::text("2")) })
                .ui(ToolUi::new("ui://dice/app.html").visibility([Visibility::App])),
        )
        .tool(from_fn("plain", |_, _| async {
            Ok(ToolResult::text("plain"))
        }))
        .app(
            AppResource::html("ui://dice/app.html", "dice-app", HTML)
                .title("Dice")
                .csp(Csp {
                    resource_domains: vec!["https://cdn.example.com".into()],
                    ..Csp::default()
                })
                .permissions(Permissions {
                    clipboard_write: true,
                    ..Permissions::default()
                })
                .prefers_border(true),
        )
        .build()
        .unwrap()
}

/// The client capabilities of a host that speaks MCP Apps.
fn host() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
}

async fn send(server: &Server, caps: Value, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta_with(caps);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let Dispatched::Reply(reply) = server
        .dispatch(
            &serde_json::to_vec(&body).unwrap(),
            TransportInfo::default(),
        )
        .await
    else {
        panic!("a plain reply");
    };
    serde_json::from_slice(&reply.body).unwrap()
}

fn without_meta(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("_meta");
    v
}

#[tokio::test]
async fn the_server_declares_the_extension_it_uses() {
    let s = server();
    let found = send(&s, json!({}), "server/discover", json!({})).await;
    assert_eq!(
        found["result"]["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/ui": {}})
    );
    // A server without apps declares nothing.
    let bare = Server::builder("bare", "1")
        .tool(from_fn("plain", |_, _| async { Ok(ToolResult::text("p")) }))
        .build()
        .unwrap();
    let found = send(&bare, json!({}), "server/discover", json!({})).await;
    assert!(found["result"]["capabilities"].get("extensions").is_none());
}

#[tokio::test]
async fn a_host_with_apps_sees_the_binding_the_app_only_tool_and_the_app() {
    let s = server();
    let tools = send(&s, host(), "tools/list", json!({})).await;
    assert_eq!(
        tools["result"]["tools"],
        json!([
            {"name": "plain", "inputSchema": {"type": "object"}},
            {"name": "reroll", "inputSchema": {"type": "object"},
             "_meta": {"ui": {"resourceUri": "ui://dice/app.html", "visibility": ["app"]}}},
            {"name": "roll", "description": "Rolls a die", "inputSchema": {"type": "object"},
             "_meta": {"com.example/kept": 1, "ui": {"resourceUri": "ui://dice/app.html"}}}
        ])
    );
    let resources = send(&s, host(), "resources/list", json!({})).await;
    let ui = json!({"csp": {"resourceDomains": ["https://cdn.example.com"]},
        "permissions": {"clipboardWrite": {}}, "prefersBorder": true});
    assert_eq!(
        resources["result"]["resources"],
        json!([{"uri": "ui://dice/app.html", "name": "dice-app", "title": "Dice",
            "mimeType": "text/html;profile=mcp-app", "size": HTML.len(), "_meta": {"ui": ui}}])
    );
    let read = send(
        &s,
        host(),
        "resources/read",
        json!({"uri": "ui://dice/app.html"}),
    )
    .await;
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": "ui://dice/app.html", "mimeType": "text/html;profile=mcp-app",
            "text": HTML, "_meta": {"ui": ui}}])
    );
    let called = send(&s, host(), "tools/call", json!({"name": "reroll"})).await;
    assert_eq!(
        without_meta(called["result"].clone()),
        json!({"content": [{"type": "text", "text": "2"}], "resultType": "complete"})
    );
}

#[tokio::test]
async fn a_host_without_apps_sees_plain_tools_and_no_app() {
    let s = server();
    // Neither no declaration nor one without the app MIME type counts.
    for caps in [
        json!({}),
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}}),
    ] {
        let tools = send(&s, caps.clone(), "tools/list", json!({})).await;
        assert_eq!(
            tools["result"]["tools"],
            json!([
                {"name": "plain", "inputSchema": {"type": "object"}},
                {"name": "roll", "description": "Rolls a die", "inputSchema": {"type": "object"},
                 "_meta": {"com.example/kept": 1}}
            ]),
            "{caps}"
        );
        let resources = send(&s, caps.clone(), "resources/list", json!({})).await;
        assert_eq!(resources["result"]["resources"], json!([]), "{caps}");
        let called = send(&s, caps.clone(), "tools/call", json!({"name": "roll"})).await;
        assert_eq!(
            called["result"]["content"],
            json!([{"type": "text", "text": "4"}])
        );
        let refused = send(&s, caps.clone(), "tools/call", json!({"name": "reroll"})).await;
        assert_eq!(
            refused["error"],
            json!({"code": -32602, "message": "Unknown tool: reroll"})
        );
    }
}

#[tokio::test]
async fn an_app_outside_ui_is_refused_when_the_server_is_built() {
    let err = Server::builder("apps", "1")
        .app(AppResource::html("https://x.example/app.html", "app", HTML))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("ui://"), "{err}");
}
