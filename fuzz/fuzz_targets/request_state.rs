//! Sealed request state, opened by a real server: a `requestState` the
//! server never sealed is refused (an `isError` result or -32602, never
//! data), and any JSON value the server sealed opens to itself on the retry.
//! Input: a mode byte, then a token (even) or a JSON value (odd).
#![no_main]

mod common;

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use snodo::server::StateSealer;
use snodo::prelude::*;
use snodo::tool::from_fn;

static SEALER: LazyLock<StateSealer> =
    LazyLock::new(|| StateSealer::new("fuzz", [7u8; 32]).expect("a 32-byte secret"));

/// `keep` seals its argument `v` on the first round and hands back what it
/// opens on the retry.
static SERVER: LazyLock<Server> = LazyLock::new(|| {
    Server::builder("fuzz", "1")
        .tool(from_fn("keep", |args, cx| async move {
            match SEALER.open(&cx)? {
                Some(opened) => Ok(ToolResult::structured(json!({"opened": opened}))),
                None => {
                    let v = args.get("v").cloned().unwrap_or(Value::Null);
                    Ok(ToolResult::input_required(
                        InputRequired::new()
                            .list_roots("roots")
                            .state(SEALER.seal(&cx, &v)),
                    ))
                }
            }
        }))
        .build()
        .expect("a valid server")
});

fn call(arguments: &Value, state: Option<&str>) -> Value {
    let mut params = json!({"_meta": common::meta(), "name": "keep", "arguments": arguments});
    if let Some(state) = state {
        params["requestState"] = state.into();
        params["inputResponses"] = json!({"roots": {"roots": []}});
    }
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    common::RUNTIME
        .block_on(SERVER.dispatch_value(request))
        .expect("a request gets a response")
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let token = String::from_utf8_lossy(rest);
        let answer = call(&json!({}), Some(&token));
        let refused = answer["error"]["code"] == -32602 || answer["result"]["isError"] == true;
        assert!(refused, "a forged state was accepted: {answer}");
        return;
    }
    // Sealed tokens over 16 KiB are refused when opened: stay well below.
    if rest.len() > 4096 {
        return;
    }
    let Ok(v) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    let arguments = json!({"v": v});
    let first = call(&arguments, None);
    if let Some(code) = first["error"]["code"].as_i64() {
        // Past the server's message limits (nesting depth, digits).
        assert!(code == -32600 || code == -32602, "{first}");
        return;
    }
    let state = first["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("the first round asks for input: {first}"));
    let retry = call(&arguments, Some(state));
    assert_eq!(
        retry["result"]["structuredContent"]["opened"], v,
        "sealed state changed on the way: {retry}"
    );
});
