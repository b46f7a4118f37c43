//! Pagination cursors, opened by a real server: any cursor text, and any
//! bytes inside the cursor's own envelope, give a page or -32602; a cursor
//! the server handed out gives the next page.
#![no_main]

mod common;

use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::tool::from_fn;

static SERVER: LazyLock<Server> = LazyLock::new(|| {
    let mut builder = Server::builder("fuzz", "1").page_size(7);
    for i in 0..40 {
        builder = builder.tool(from_fn(format!("tool_{i:02}"), |_, _| async {
            Ok(ToolResult::text("ok"))
        }));
    }
    builder.build().expect("a valid server")
});

/// The prefix of the server's own cursors (everything before their payload).
static PREFIX: LazyLock<String> = LazyLock::new(|| {
    let first = list(None);
    let cursor = first["result"]["nextCursor"]
        .as_str()
        .expect("a second page");
    let dot = cursor.find('.').expect("cursors have a prefix");
    cursor[..=dot].to_string()
});

fn list(cursor: Option<&str>) -> Value {
    let mut params = json!({"_meta": common::meta()});
    if let Some(cursor) = cursor {
        params["cursor"] = cursor.into();
    }
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params});
    common::RUNTIME
        .block_on(SERVER.dispatch_value(request))
        .expect("a request gets a response")
}

fn check(answer: &Value) {
    if let Some(error) = answer.get("error") {
        assert_eq!(error["code"], -32602, "{answer}");
        return;
    }
    let tools = answer["result"]["tools"]
        .as_array()
        .expect("a page of tools");
    assert!(!tools.is_empty() && tools.len() <= 7, "{answer}");
    if let Some(next) = answer["result"]["nextCursor"].as_str() {
        let following = list(Some(next));
        assert!(
            following.get("result").is_some(),
            "our own cursor: {following}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let cursor = if mode % 2 == 0 {
        String::from_utf8_lossy(rest).into_owned()
    } else {
        // Inside the envelope: the decoder's JSON and its checks.
        format!("{}{}", *PREFIX, URL_SAFE_NO_PAD.encode(rest))
    };
    check(&list(Some(&cursor)));
});
