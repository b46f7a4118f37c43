//! The host's side: the proxy's server, literal requests to it, and the names
//! and answers it serves.

use std::time::Duration;

use serde_json::{Value, json};
use snodo::client::Client;
use snodo::prelude::*;
use snodo::proxy::Proxy;
use snodo::server::Capability;

use crate::backend::backend;

pub(crate) const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"host","version":"1"}}"#;

/// Sends `{"method": method, "params": params + _meta}` and returns the response.
pub(crate) async fn send(server: &Server, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = serde_json::from_str(META).unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    server.dispatch_value(request).await.expect("a response")
}

/// The proxy's server: every kind declared, since backends come and go.
pub(crate) fn gateway() -> Server {
    Server::builder("gateway", "1.0.0")
        .declare(Capability::Tools)
        .declare(Capability::Resources)
        .declare(Capability::Prompts)
        .build()
        .unwrap()
}

pub(crate) async fn two_backends() -> Proxy {
    let proxy = Proxy::namespaced(gateway(), ".").unwrap();
    for id in ["alpha", "beta"] {
        let synced = proxy
            .connect_backend(id, Client::builder(), backend(id))
            .await
            .unwrap();
        assert_eq!((synced.tools, synced.resources, synced.prompts), (6, 1, 1));
        assert!(synced.refused.is_empty(), "{:?}", synced.refused);
    }
    proxy
}

pub(crate) fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    let mut out: Vec<String> = list["result"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[field].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

/// The tool names the proxy serves.
pub(crate) async fn served(proxy: &Proxy) -> Vec<String> {
    names(
        &send(proxy.server(), "tools/list", json!({})).await,
        "tools",
        "name",
    )
}

/// What the proxy's tool `name` answers.
pub(crate) async fn answer(proxy: &Proxy, name: &str) -> Value {
    let r = send(
        proxy.server(),
        "tools/call",
        json!({"name": name, "arguments": {}}),
    )
    .await;
    r["result"]["content"][0]["text"].clone()
}

/// Waits (up to 5 s) until the proxy's tool `name` answers `want`.
pub(crate) async fn until_answer(proxy: &Proxy, name: &str, want: &str) -> Value {
    let mut got = Value::Null;
    for _ in 0..250 {
        got = answer(proxy, name).await;
        if got == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    got
}
