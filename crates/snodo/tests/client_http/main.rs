//! The client over Streamable HTTP, against a scripted loopback server that
//! records the exact requests and answers with literal JSON.

#![cfg(feature = "client")]

#[path = "../client_support/mod.rs"]
mod client_support;

mod errors;
mod headers;
mod input;
mod legacy_sse;
mod listings;
mod streams;
mod timeouts;
mod versions;

use serde_json::json;

use crate::client_support::Reply;

fn complete(req: &client_support::Recorded, text: &str) -> Reply {
    Reply::result(
        req,
        json!({"resultType": "complete", "content": [{"type": "text", "text": text}]}),
    )
}
