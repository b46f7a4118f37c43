//! A tool that reports progress. Progress is sent only when the request
//! carries a `progressToken`; every notification precedes the response.
//!
//! Run with `cargo run -p snodo --example progress`.

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo_test::request;

#[snodo::tool(
    description = "Counts to `to`, reporting progress",
    input_schema = {
        "type": "object",
        "properties": { "to": { "type": "integer", "minimum": 1, "maximum": 100 } },
        "required": ["to"]
    }
)]
async fn count(args: Arguments, cx: Context) -> CallResult {
    let to = args.i64("to")?;
    for step in 1..=to {
        // Without a progressToken this is a no-op that returns NotRequested.
        let _ = cx.progress(step as f64, Some(to as f64), None).await;
    }
    Ok(format!("Counted to {to}").into())
}

async fn run() -> Vec<Value> {
    let server = Server::builder("progress", "1.0.0")
        .tool(count)
        .build()
        .expect("valid");
    let frames = server
        .dispatch_collect(request(
            "tools/call",
            json!({"_meta": {"progressToken": "job-1"}, "name": "count", "arguments": {"to": 3}}),
        ))
        .await;
    for frame in &frames {
        println!("{frame}");
    }
    frames
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    run().await;
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn progress_precedes_the_response() {
        let frames = super::run().await;
        assert_eq!(frames.len(), 4);
        for (i, frame) in frames[..3].iter().enumerate() {
            assert_eq!(frame["method"], "notifications/progress");
            assert_eq!(frame["params"]["progress"], i as i64 + 1);
        }
        assert_eq!(frames[3]["result"]["content"][0]["text"], "Counted to 3");
    }
}
