//! Shaping a backend: exposed and hidden names, aliases, injected
//! arguments and the bound on a request's arguments, set before a backend
//! is added and changed while it runs.

use std::time::Duration;

use serde_json::json;
use snodo::client::Client;
use snodo::proxy::{Component, Glob, Proxy, Shaping};

use crate::backend::backend;
use crate::client_support::{Reply, ScriptServer};
use crate::host::{gateway, names, send, served};

fn globs(patterns: &[&str]) -> Vec<Glob> {
    patterns.iter().map(|p| Glob::new(p).unwrap()).collect()
}

async fn shaped() -> Proxy {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy
        .shape(
            "alpha",
            Shaping::new()
                .expose(Component::Tool, globs(&["e*", "wa?t", "broken"]))
                .hide(Component::Tool, globs(&["wait"]))
                .hide(Component::Resource, globs(&["notes://secret*"]))
                .alias("echo", "say")
                .inject("text", json!("nothing to say")),
        )
        .unwrap();
    proxy
        .shape(
            "beta",
            Shaping::new()
                .hide(Component::Prompt, globs(&["hel*"]))
                .inject_override("text", json!("fixed"))
                .max_argument_bytes(40),
        )
        .unwrap();
    for id in ["alpha", "beta"] {
        proxy
            .connect_backend(id, Client::builder(), backend(id))
            .await
            .unwrap();
    }
    proxy
}

#[tokio::test]
async fn expose_hide_and_alias_decide_what_is_listed_and_reachable() {
    let proxy = shaped().await;
    let server = proxy.server();
    assert_eq!(
        served(&proxy).await,
        [
            "alpha.broken",
            "alpha.say",
            "beta.ask",
            "beta.broken",
            "beta.chatty",
            "beta.echo",
            "beta.refuse",
            "beta.wait"
        ]
    );
    // The alias reaches the backend's own tool; hidden and renamed names
    // are not there.
    let r = send(
        server,
        "tools/call",
        json!({"name": "alpha.say", "arguments": {"text": "hi"}}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    for hidden in ["alpha.echo", "alpha.wait", "alpha.ask"] {
        let r = send(
            server,
            "tools/call",
            json!({"name": hidden, "arguments": {}}),
        )
        .await;
        assert_eq!(r["error"]["code"], -32602, "{hidden}: {r}");
    }
    // A hidden prompt is neither listed nor served.
    let prompts = send(server, "prompts/list", json!({})).await;
    assert_eq!(names(&prompts, "prompts", "name"), ["alpha.hello"]);
    let r = send(
        server,
        "prompts/get",
        json!({"name": "beta.hello", "arguments": {"who": "Ada"}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // A hidden resource URI is not found, even through a template that
    // would serve it; others are read as before.
    let r = send(
        server,
        "resources/read",
        json!({"uri": "alpha+notes://secret-1"}),
    )
    .await;
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "Resource not found", "data": {"uri": "alpha+notes://secret-1"}})
    );
    let r = send(server, "resources/read", json!({"uri": "alpha+notes://7"})).await;
    assert_eq!(r["result"]["contents"][0]["text"], "note 7", "{r}");
    let r = send(
        server,
        "resources/read",
        json!({"uri": "beta+notes://secret-1"}),
    )
    .await;
    assert_eq!(r["result"]["contents"][0]["text"], "note secret-1", "{r}");
}

#[tokio::test]
async fn injected_arguments_fill_in_or_override_and_the_schema_says_so() {
    let proxy = shaped().await;
    let server = proxy.server();
    let tools = send(server, "tools/list", json!({})).await;
    let schema = |name: &str| {
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["inputSchema"]
            .clone()
    };
    assert_eq!(
        schema("alpha.say"),
        json!({"type": "object", "properties": {"text": {"type": "string", "default": "nothing to say"}}, "required": []})
    );
    assert_eq!(
        schema("beta.echo"),
        json!({"type": "object", "properties": {}, "required": []})
    );
    let text = |r: serde_json::Value| r["result"]["content"][0]["text"].clone();
    let call = |name: &'static str, args: serde_json::Value| {
        send(
            server,
            "tools/call",
            json!({"name": name, "arguments": args}),
        )
    };
    assert_eq!(text(call("alpha.say", json!({})).await), "nothing to say");
    assert_eq!(
        text(call("alpha.say", json!({"text": "mine"})).await),
        "mine"
    );
    assert_eq!(text(call("beta.echo", json!({})).await), "fixed");
    assert_eq!(
        text(call("beta.echo", json!({"text": "mine"})).await),
        "fixed"
    );
}

#[tokio::test]
async fn arguments_past_the_bound_are_refused_before_the_backend_is_asked() {
    let proxy = shaped().await;
    let server = proxy.server();
    // {"text":"…"} is 11 bytes around the text: 29 characters fit in 40.
    let r = send(
        server,
        "tools/call",
        json!({"name": "beta.echo", "arguments": {"text": "a".repeat(29)}}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "fixed", "{r}");
    let r = send(
        server,
        "tools/call",
        json!({"name": "beta.echo", "arguments": {"text": "a".repeat(30)}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(
        r["error"]["data"],
        json!({"maxArgumentBytes": 40, "argumentBytes": 41})
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("backend \"beta\""),
        "{r}"
    );
    // The other backend has no bound.
    let r = send(
        server,
        "tools/call",
        json!({"name": "alpha.say", "arguments": {"text": "a".repeat(1000)}}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "a".repeat(1000));
}

#[tokio::test]
async fn a_new_shaping_relists_a_running_backend() {
    let proxy = shaped().await;
    assert!(!served(&proxy).await.contains(&"alpha.wait".to_string()));
    proxy.shape("alpha", Shaping::new()).unwrap();
    let mut tools = Vec::new();
    for _ in 0..250 {
        tools = served(&proxy).await;
        if tools.contains(&"alpha.wait".to_string()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(tools.contains(&"alpha.wait".to_string()), "{tools:?}");
    assert!(tools.contains(&"alpha.echo".to_string()), "{tools:?}");
    assert!(!tools.contains(&"alpha.say".to_string()), "{tools:?}");
    assert!(proxy.shape("Bad", Shaping::new()).is_err());
}

/// A scripted backend (not this library, which refuses a fixed resource a
/// template also matches) listing `notes://vault` and `notes://{id}`; a
/// read answers with the URI read.
async fn overlapping() -> ScriptServer {
    ScriptServer::start(|req| {
        let result = match req.rpc_method() {
            Some("server/discover") => json!({"resultType": "complete",
                "supportedVersions": ["2026-07-28"], "capabilities": {"resources": {}},
                "ttlMs": 0, "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "script", "version": "1"}}}),
            Some("resources/list") => json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                "resources": [{"uri": "notes://vault", "name": "vault"}]}),
            Some("resources/templates/list") => json!({"resultType": "complete", "ttlMs": 0,
                "cacheScope": "private",
                "resourceTemplates": [{"uriTemplate": "notes://{id}", "name": "note"}]}),
            Some("resources/read") => {
                let uri = req.body["params"]["uri"].clone();
                json!({"resultType": "complete", "contents": [{"uri": uri, "text": format!("read {uri}")}]})
            }
            _ => return Reply::Status(404),
        };
        Reply::result(req, result)
    })
    .await
}

#[tokio::test]
async fn a_resource_hidden_by_name_is_not_read_through_a_template() {
    let backend = overlapping().await;
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    proxy
        .shape(
            "b",
            Shaping::new().hide(Component::Resource, globs(&["vault"])),
        )
        .unwrap();
    proxy
        .add_backend("b", Client::http(backend.url.as_str()).await.unwrap())
        .await
        .unwrap();
    let server = proxy.server();
    let listed = send(server, "resources/list", json!({})).await;
    assert_eq!(listed["result"]["resources"], json!([]), "{listed}");
    for uri in ["b+notes://vault", "b+NOTES://vault"] {
        let r = send(server, "resources/read", json!({"uri": uri})).await;
        assert!(r["error"].is_object(), "{uri}: {r}");
    }
    assert!(backend.calls("resources/read").is_empty());
    let r = send(server, "resources/read", json!({"uri": "b+notes://7"})).await;
    assert_eq!(
        r["result"]["contents"][0]["text"], "read \"notes://7\"",
        "{r}"
    );
}
