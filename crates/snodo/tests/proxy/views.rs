//! Virtual servers: a view of some backends and names, served by a server
//! of its own, filled when it is set, following its backends' changes,
//! emptied when a backend leaves, with its own policy.

use std::time::Duration;

use serde_json::{Value, json};
use snodo::client::Client;
use snodo::prelude::*;
use snodo::proxy::{Glob, Proxy, Role, Roles, View};
use snodo::{Dispatched, Principal, TransportInfo};

use crate::backend::backend;
use crate::host::{gateway, names, send, two_backends};

fn globs(patterns: &[&str]) -> Vec<Glob> {
    patterns.iter().map(|p| Glob::new(p).unwrap()).collect()
}

/// Lists `key` (`tools`, `prompts`, `resources`, `resourceTemplates`) of
/// `server` until `want` (at most 5 s: a view is filled by a relist).
async fn until_listed(
    server: &Server,
    method: &str,
    key: &str,
    field: &str,
    want: &[&str],
) -> Vec<String> {
    let mut got = Vec::new();
    for _ in 0..250 {
        got = names(&send(server, method, json!({})).await, key, field);
        if got == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    got
}

/// Asserts that `server`'s tools become `want` (within 5 s).
async fn tools_become(server: &Server, want: &[&str]) {
    let got = until_listed(server, "tools/list", "tools", "name", want).await;
    assert_eq!(got, want);
}

#[tokio::test]
async fn a_view_serves_its_backends_names_and_nothing_else() {
    let proxy = two_backends().await;
    let view = gateway();
    proxy
        .serve_view(
            "echoes",
            view.clone(),
            View::new(["alpha"])
                .tools(globs(&["alpha.e*", "alpha.chatty"]))
                .prompts(globs(&[])),
        )
        .unwrap();
    tools_become(&view, &["alpha.chatty", "alpha.echo"]).await;
    // Resources without patterns are served whole; prompts with none, not at all.
    assert_eq!(
        names(
            &send(&view, "resources/templates/list", json!({})).await,
            "resourceTemplates",
            "uriTemplate"
        ),
        ["alpha+notes://{id}"]
    );
    assert_eq!(
        send(&view, "prompts/list", json!({})).await["result"]["prompts"],
        json!([])
    );
    // A call through the view reaches the backend as one through the proxy.
    let r = send(
        &view,
        "tools/call",
        json!({"name": "alpha.echo", "arguments": {"text": "via view"}}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "via view", "{r}");
    let r = send(&view, "resources/read", json!({"uri": "alpha+notes://7"})).await;
    assert!(r["result"]["contents"][0]["text"].is_string(), "{r}");
    // What the view leaves out is unknown there, and still served by the proxy.
    for name in ["alpha.wait", "beta.echo"] {
        let r = send(&view, "tools/call", json!({"name": name, "arguments": {}})).await;
        assert_eq!(r["error"]["code"], -32602, "{name}: {r}");
        assert_eq!(
            r["error"]["message"],
            format!("Unknown tool: {name}"),
            "{r}"
        );
    }
    let r = send(
        &view,
        "prompts/get",
        json!({"name": "alpha.hello", "arguments": {"who": "x"}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = send(
        proxy.server(),
        "tools/call",
        json!({"name": "beta.echo", "arguments": {"text": "full"}}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "full", "{r}");
    assert_eq!(proxy.views_served(), ["echoes"]);
}

#[tokio::test]
async fn a_view_follows_its_backends_and_is_emptied_when_they_leave() {
    let alpha = backend("alpha");
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    let view = gateway();
    // Set before the backend joins: its first listing fills the view.
    proxy
        .serve_view(
            "a",
            view.clone(),
            View::new(["alpha"]).tools(globs(&["alpha.b*", "alpha.r*"])),
        )
        .unwrap();
    proxy
        .add_backend("alpha", Client::connect(alpha.clone()).await.unwrap())
        .await
        .unwrap();
    tools_become(&view, &["alpha.broken", "alpha.refuse"]).await;
    // The backend changes: the view follows.
    assert!(alpha.remove_tool("broken"));
    tools_become(&view, &["alpha.refuse"]).await;
    // The backend leaves: the view is empty, and served again when it is back.
    assert!(proxy.remove_backend("alpha"));
    assert_eq!(
        send(&view, "tools/list", json!({})).await["result"]["tools"],
        json!([])
    );
    proxy
        .add_backend("alpha", Client::connect(backend("alpha")).await.unwrap())
        .await
        .unwrap();
    tools_become(&view, &["alpha.broken", "alpha.refuse"]).await;
    // Replaced by a view of other names, then removed: its server follows.
    proxy
        .serve_view(
            "a",
            view.clone(),
            View::new(["alpha"]).tools(globs(&["alpha.echo"])),
        )
        .unwrap();
    tools_become(&view, &["alpha.echo"]).await;
    assert!(proxy.remove_view("a"));
    assert!(!proxy.remove_view("a"));
    assert_eq!(
        send(&view, "tools/list", json!({})).await["result"]["tools"],
        json!([])
    );
    assert!(proxy.views_served().is_empty());
}

#[tokio::test]
async fn a_view_has_its_own_policy() {
    let proxy = two_backends().await;
    let roles = Roles::new([Role::new("beta-only").tools(globs(&["beta.*"]))]);
    let view = Server::builder("view", "1.0.0")
        .declare(snodo::server::Capability::Tools)
        .policy(roles)
        .build()
        .unwrap();
    proxy
        .serve_view(
            "both",
            view.clone(),
            View::new(["alpha", "beta"]).tools(globs(&["*.echo"])),
        )
        .unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": serde_json::from_str::<Value>(crate::host::META).unwrap()}});
    let mut listed = Value::Null;
    for _ in 0..250 {
        let as_ada = TransportInfo {
            principal: Some(Principal::new("ada")),
            ..Default::default()
        };
        let Dispatched::Reply(reply) = view
            .dispatch(&serde_json::to_vec(&request).unwrap(), as_ada)
            .await
        else {
            panic!("a plain reply");
        };
        listed = serde_json::from_slice(&reply.body).unwrap();
        if names(&listed, "tools", "name") == ["beta.echo"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(names(&listed, "tools", "name"), ["beta.echo"], "{listed}");
    // The proxy's own server has no policy: both are there.
    let all = names(
        &send(proxy.server(), "tools/list", json!({})).await,
        "tools",
        "name",
    );
    assert!(all.contains(&"alpha.echo".to_string()) && all.contains(&"beta.echo".to_string()));
    assert!(
        proxy
            .serve_view("Bad Name", view, View::new(["beta"]))
            .is_err()
    );
}
