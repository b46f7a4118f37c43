//! Backends joining and leaving: list changes followed, ids and clashing names
//! refused, the bound on backends, and a clash looked at again.

use std::time::Duration;

use serde_json::json;
use snodo::client::Client;
use snodo::prelude::*;
use snodo::proxy::Proxy;

use crate::backend::{backend, tools_of};
use crate::host::{answer, gateway, names, send, served, until_answer};

#[tokio::test]
async fn list_changes_of_a_backend_are_followed_and_a_removed_backend_is_gone() {
    let alpha = backend("alpha");
    let proxy = Proxy::namespaced(gateway(), "__").unwrap();
    proxy
        .add_backend("alpha", Client::connect(alpha.clone()).await.unwrap())
        .await
        .unwrap();
    assert!(alpha.remove_tool("broken"));
    let mut names_now = Vec::new();
    for _ in 0..100 {
        let tools = send(proxy.server(), "tools/list", json!({})).await;
        names_now = names(&tools, "tools", "name");
        if names_now.len() == 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        names_now,
        [
            "alpha__ask",
            "alpha__chatty",
            "alpha__echo",
            "alpha__refuse",
            "alpha__wait"
        ]
    );
    assert!(proxy.remove_backend("alpha"));
    let tools = send(proxy.server(), "tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"], json!([]));
    assert!(!proxy.remove_backend("alpha"));
}

#[tokio::test]
async fn ids_clashes_and_separators_are_refused_with_a_message_naming_them() {
    let server = Server::builder("gateway", "1.0.0").build().unwrap();
    assert!(Proxy::namespaced(server.clone(), "/").is_err());
    let proxy = Proxy::namespaced(server, "-").unwrap();
    proxy
        .add_backend("a", Client::connect(backend("a")).await.unwrap())
        .await
        .unwrap();
    let again = proxy
        .add_backend("a", Client::connect(backend("a")).await.unwrap())
        .await
        .unwrap_err();
    assert_eq!(again.to_string(), "two backends have the id \"a\"");
    // `a` + `-` + `b-x` would be the tool `a-b-x` of backend `a-b` too.
    let clashing = Server::builder("a-b", "1.0.0")
        .tool(snodo::tool::from_fn("x", |_a, _c| async { Ok("x".into()) }))
        .build()
        .unwrap();
    let with_b_x = Server::builder("a", "1.0.0")
        .tool(snodo::tool::from_fn("b-x", |_a, _c| async {
            Ok("b-x".into())
        }))
        .build()
        .unwrap();
    let proxy2 = Proxy::namespaced(Server::builder("g", "1").build().unwrap(), "-").unwrap();
    proxy2
        .add_backend("a", Client::connect(with_b_x).await.unwrap())
        .await
        .unwrap();
    let clash = proxy2
        .add_backend("a-b", Client::connect(clashing).await.unwrap())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        clash.contains("\"a-b-x\"") && clash.contains("\"a-b\"") && clash.contains("\"a\""),
        "{clash}"
    );
    assert_eq!(proxy2.backends(), ["a"]);
    let bad = proxy
        .add_backend("Bad_Id", Client::connect(backend("x")).await.unwrap())
        .await
        .unwrap_err();
    assert!(bad.to_string().contains("backend id \"Bad_Id\""), "{bad}");
}

#[tokio::test]
async fn a_proxy_holds_at_most_max_backends() {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    let small = || {
        Server::builder("small", "1.0.0")
            .tool(snodo::tool::from_fn("ping", |_a, _c| async {
                Ok("pong".into())
            }))
            .build()
            .unwrap()
    };
    for i in 0..snodo::proxy::MAX_BACKENDS {
        let client = Client::connect(small()).await.unwrap();
        proxy.add_backend(&format!("b{i}"), client).await.unwrap();
    }
    let client = Client::connect(small()).await.unwrap();
    let err = proxy.add_backend("one-more", client).await.unwrap_err();
    assert_eq!(err.to_string(), "a proxy holds at most 64 backends");
    let tools = send(proxy.server(), "tools/list", json!({})).await;
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 64);
}

#[tokio::test]
async fn a_clash_is_looked_at_again_once_the_names_move_and_the_name_is_served_again() {
    // With "-", tool `b-x` of backend `a` and tool `x` of backend `a-b` are
    // both `a-b-x`.
    let a = tools_of("a", &["b-x", "keep"]);
    let ab = tools_of("a-b", &["y"]);
    let proxy = Proxy::namespaced(gateway(), "-").unwrap();
    proxy
        .add_backend("a", Client::connect(a.clone()).await.unwrap())
        .await
        .unwrap();
    proxy
        .add_backend("a-b", Client::connect(ab.clone()).await.unwrap())
        .await
        .unwrap();

    // a-b gains `x`: its relist clashes, and a-b-x stays a's.
    ab.add_tool(snodo::tool::from_fn("x", |_a, _c| async {
        Ok("x of a-b".into())
    }))
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(answer(&proxy, "a-b-x").await, "b-x of a");
    assert_eq!(served(&proxy).await, ["a-b-x", "a-b-y", "a-keep"]);

    // a drops `b-x`: the clash is gone, and a-b's `x` is served.
    let mut changes = proxy.changes();
    changes.borrow_and_update();
    assert!(a.remove_tool("b-x"));
    assert_eq!(until_answer(&proxy, "a-b-x", "x of a-b").await, "x of a-b");
    assert_eq!(served(&proxy).await, ["a-b-x", "a-b-y", "a-keep"]);
    assert!(changes.has_changed().unwrap(), "the names moved");

    // A backend refused for a clash when added may be added once the
    // names move, which `changes` tells.
    let c = tools_of("c", &["d-z", "keep"]);
    let cd = tools_of("c-d", &["z"]);
    proxy
        .add_backend("c", Client::connect(c.clone()).await.unwrap())
        .await
        .unwrap();
    let refused = proxy
        .add_backend("c-d", Client::connect(cd.clone()).await.unwrap())
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("\"c-d-z\""), "{refused}");
    let mut changes = proxy.changes();
    changes.borrow_and_update();
    assert!(c.remove_tool("d-z"));
    tokio::time::timeout(Duration::from_secs(5), changes.changed())
        .await
        .expect("the names move within 5 s")
        .unwrap();
    proxy
        .add_backend("c-d", Client::connect(cd).await.unwrap())
        .await
        .unwrap();
    assert_eq!(answer(&proxy, "c-d-z").await, "z of c-d");
}
