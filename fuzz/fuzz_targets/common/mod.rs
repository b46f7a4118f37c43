//! What several targets share: one runtime, and the 2026-07-28 `_meta` of a
//! request.
#![allow(dead_code)]

use std::sync::LazyLock;

use serde_json::{Value, json};

/// A current-thread runtime, built once per fuzzing process.
pub static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
});

/// The per-request `_meta` of MCP 2026-07-28.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "roots": {}}
    })
}
