//! Mounts the MCP endpoint in an axum router, next to a `/health` route.
//!
//! Run it with `cargo run -p snodo --example axum_mount`. Once it listens it
//! prints one line of JSON on stdout, `{"url":"http://127.0.0.1:PORT/mcp"}`,
//! and it exits (gracefully) when its stdin closes, so a parent process or a
//! test can drive it. Try it with:
//!
//! ```text
//! curl -s "$URL" -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/list' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
//!        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!        "io.modelcontextprotocol/clientCapabilities":{}}}}'
//! ```

use axum::Router;
use axum::routing::get;
use serde_json::{Value, json};
use snodo::{Arguments, CallResult, Context, Server, Tool, ToolResult};

/// Returns its `text` argument.
struct Echo;

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn description(&self) -> Option<&str> {
        Some("Returns its text")
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        })
    }

    async fn call(&self, args: Arguments, _cx: Context) -> CallResult {
        Ok(ToolResult::text(args.str("text")?))
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let server = Server::builder("axum-example", "0.1.0")
        .tool(Echo)
        .build()
        .map_err(std::io::Error::other)?;

    let app = Router::new()
        .route_service("/mcp", server.http_service())
        .route("/health", get(|| async { "ok" }));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    println!("{}", json!({ "url": url }));

    let stdin_closed = async {
        let _ = tokio::io::copy(&mut tokio::io::stdin(), &mut tokio::io::sink()).await;
    };
    axum::serve(listener, app)
        .with_graceful_shutdown(stdin_closed)
        .await
}
