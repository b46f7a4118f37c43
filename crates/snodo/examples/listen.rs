//! A listener receiving a `notifications/tools/list_changed` event after a
//! tool is added at runtime.
//!
//! Run with `cargo run -p snodo --example listen`.

use futures_util::StreamExt;
use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::tool::from_fn;
use snodo::{Dispatched, TransportInfo};
use snodo_test::request;

async fn run() -> Vec<Value> {
    let server = Server::builder("listen", "1.0.0")
        .tool(from_fn("first", |_, _| async { Ok("one".into()) }))
        .build()
        .expect("valid");
    let listen = request(
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let bytes = serde_json::to_vec(&listen).expect("json");
    let Dispatched::Stream(mut stream) = server.dispatch(&bytes, TransportInfo::default()).await
    else {
        panic!("subscriptions are streamed");
    };
    let mut seen = Vec::new();
    let ack: Value = serde_json::from_slice(&stream.next().await.expect("ack")).expect("json");
    println!("{ack}");
    seen.push(ack);
    server
        .add_tool(from_fn("second", |_, _| async { Ok("two".into()) }))
        .expect("valid tool");
    let change: Value = serde_json::from_slice(&stream.next().await.expect("event")).expect("json");
    println!("{change}");
    seen.push(change);
    seen
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    run().await;
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn hears_the_list_change() {
        let seen = super::run().await;
        assert_eq!(
            seen[0]["method"],
            "notifications/subscriptions/acknowledged"
        );
        assert_eq!(seen[1]["method"], "notifications/tools/list_changed");
        assert_eq!(
            seen[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            seen[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
        );
    }
}
