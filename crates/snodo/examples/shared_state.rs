//! Shared state: one value registered on the builder, handed to any tool,
//! resource or prompt that takes a `State<S>` parameter.
//!
//! Run: `cargo run -p snodo --example shared_state`

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use snodo::State;
use snodo::prelude::*;

/// A tiny key-value store.
#[derive(Clone, Default)]
struct Store(Arc<Mutex<BTreeMap<String, String>>>);

/// Stores a value under a key
#[snodo::tool(input_schema = {
    "type": "object",
    "properties": { "key": { "type": "string" }, "value": { "type": "string" } },
    "required": ["key", "value"]
})]
async fn put(args: Arguments, State(store): State<Store>) -> CallResult {
    let (key, value) = (args.str("key")?, args.str("value")?);
    store.0.lock().unwrap().insert(key.into(), value.into());
    Ok(format!("stored {key}").into())
}

/// Every key and value.
#[snodo::resource(uri = "store://all", mime_type = "application/json")]
async fn all(State(store): State<Store>) -> String {
    serde_json::to_string(&*store.0.lock().unwrap()).unwrap()
}

async fn run() -> Value {
    let server = Server::builder("store", "0.1.0")
        .state(Store::default())
        .tool(put)
        .resource(all)
        .build()
        .unwrap();
    for (key, value) in [("a", "1"), ("b", "2")] {
        server
            .dispatch_value(snodo_test::request(
                "tools/call",
                json!({"name": "put", "arguments": {"key": key, "value": value}}),
            ))
            .await
            .unwrap();
    }
    server
        .dispatch_value(snodo_test::request(
            "resources/read",
            json!({"uri": "store://all"}),
        ))
        .await
        .unwrap()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    println!("{}", run().await["result"]["contents"][0]["text"]);
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn tools_and_resources_share_the_store() {
        let read = super::run().await;
        assert_eq!(
            read["result"]["contents"][0]["text"],
            r#"{"a":"1","b":"2"}"#
        );
    }
}
