//! The audit log: a request the proxy's server gives up on (its own
//! timeout) still gets its line, as `cancelled`, and counts as an error.

use std::time::Duration;

use serde_json::{Value, json};
use snodo::client::Client;
use snodo::prelude::*;
use snodo::proxy::{Audit, Proxy};
use snodo::server::Capability;

use crate::host::send;

#[tokio::test]
async fn a_request_dropped_by_the_servers_timeout_is_audited_as_cancelled() {
    let backend = Server::builder("b", "1")
        .tool(snodo::tool::from_fn("hang", |_a, cx| async move {
            cx.cancellation().cancelled().await;
            Ok("late".into())
        }))
        .tool(snodo::tool::from_fn("fine", |_a, _c| async {
            Ok("fine".into())
        }))
        .build()
        .unwrap();
    let server = Server::builder("gateway", "1")
        .declare(Capability::Tools)
        .request_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let proxy = Proxy::namespaced(server, ".").unwrap();
    let dir = std::env::temp_dir().join(format!("snodo-proxy-audit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("audit.jsonl");
    proxy.audit(Some(Audit::to_file(&path, false).unwrap()));
    proxy
        .add_backend("b", Client::connect(backend).await.unwrap())
        .await
        .unwrap();
    let r = send(
        proxy.server(),
        "tools/call",
        json!({"name": "b.hang", "arguments": {}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let r = send(
        proxy.server(),
        "tools/call",
        json!({"name": "b.fine", "arguments": {}}),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "fine", "{r}");
    let mut lines: Vec<Value> = Vec::new();
    for _ in 0..100 {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        lines = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        (lines[0]["name"].clone(), lines[0]["outcome"].clone()),
        (json!("b.hang"), json!("cancelled"))
    );
    assert!(
        lines[0]["durationMs"].as_f64().unwrap() >= 150.0,
        "{}",
        lines[0]
    );
    assert_eq!(lines[1]["outcome"], "ok");
    let metrics = proxy.metrics();
    assert!(
        metrics.contains("snodo_proxy_errors_total{backend=\"b\",method=\"tools/call\"} 1"),
        "{metrics}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
