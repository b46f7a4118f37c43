//! Literal requests to a server in process, as one principal or none, and
//! polling a task until it reaches a state.

use std::time::Duration;

use serde_json::Value;
use snodo::prelude::*;
use snodo::{Dispatched, Principal, TransportInfo};

pub(crate) const DECLARED: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
    "io.modelcontextprotocol/clientCapabilities":{"elicitation":{},
    "extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;

pub(crate) const UNDECLARED: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
    "io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A request with the given `_meta` text.
pub(crate) fn request(id: u64, method: &str, params: &str, meta: &str) -> String {
    let params = params.strip_suffix('}').expect("params is an object");
    let sep = if params.trim() == "{" { "" } else { "," };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}{sep}"_meta":{meta}}}}}"#
    )
}

pub(crate) async fn send_as(server: &Server, text: &str, principal: Option<&str>) -> Value {
    let transport = TransportInfo {
        principal: principal.map(Principal::new),
        ..TransportInfo::default()
    };
    match server.dispatch(text.as_bytes(), transport).await {
        Dispatched::Reply(reply) => serde_json::from_slice(&reply.body).unwrap(),
        other => panic!("expected one reply, got {other:?}"),
    }
}

pub(crate) async fn send(server: &Server, text: &str) -> Value {
    send_as(server, text, None).await
}

pub(crate) async fn poll_until(server: &Server, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..200 {
        let got = send(
            server,
            &request(
                90,
                "tasks/get",
                &format!(r#"{{"taskId":"{id}"}}"#),
                DECLARED,
            ),
        )
        .await;
        if done(&got["result"]) {
            return got["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never reached the expected state");
}

pub(crate) fn terminal(r: &Value) -> bool {
    matches!(
        r["status"].as_str(),
        Some("completed" | "failed" | "cancelled")
    )
}
