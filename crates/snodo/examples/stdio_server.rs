//! A server on stdio with options: the longest line, how many requests run at
//! once, how long in-flight requests get after end of input, and the request
//! timeout every transport applies. `client.rs` spawns it.
//!
//! Run: `cargo run -p snodo --example stdio_server` and type a request, e.g.
//! `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`.

use std::time::Duration;

use snodo::prelude::*;
use snodo::schema::Basic;
use snodo::transport::stdio::StdioOptions;

/// Greets someone
#[snodo::tool(input_schema = {
    "type": "object",
    "properties": { "name": { "type": "string", "minLength": 1 } },
    "required": ["name"]
})]
async fn greet(args: Arguments) -> CallResult {
    Ok(format!("Hello, {}!", args.str("name")?).into())
}

/// The server `client.rs` talks to.
fn server() -> Server {
    Server::builder("stdio-example", "0.1.0")
        .request_timeout(Duration::from_secs(30))
        .validator(Basic)
        .tool(greet)
        .build()
        .expect("valid definitions")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let options = StdioOptions::new()
        .max_line_bytes(256 * 1024)
        .max_in_flight(16)
        .shutdown_grace(Duration::from_secs(2));
    server().serve_stdio_with(options).await
}
