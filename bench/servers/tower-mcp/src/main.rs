//! The benchmark server written with tower-mcp 0.25, as its README and guides
//! show: `ToolBuilder` with typed (`schemars`) handlers for `echo` and `add`
//! (`output_schema_for` + `CallToolResult::from_serialize`), the inert tools
//! with an explicit `input_schema` and a `RawArgs` extractor handler, all in
//! one `McpRouter`.
//!
//! HTTP: feature `protocol-2026-07-28`, `HttpTransport::into_router_at("/mcp")`
//! served by `axum::serve` (the deployment guide's mounted form, which lets us
//! bind port 0 and print the address). The default subscription limit (256
//! active `subscriptions/listen` streams) is raised with
//! `subscription_limits` so that the 1 000-stream memory workload fits.
//! stdio: `StdioTransport::new(router).run()`.

use axum::serve::ListenerExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use snodo_bench_common::{Mode, announce, mode_from_args, stdin_closed};
use tower_mcp::extract::RawArgs;
use tower_mcp::{
    BoxError, CallToolResult, HttpTransport, McpRouter, StdioTransport, SubscriptionLimits,
    ToolBuilder,
};

#[derive(Debug, Deserialize, JsonSchema)]
struct EchoInput {
    /// The text to return
    text: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct AddInput {
    a: i64,
    b: i64,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

fn router() -> McpRouter {
    let echo = ToolBuilder::new("echo")
        .description("Returns its text argument unchanged")
        .read_only()
        .handler(|input: EchoInput| async move { Ok(CallToolResult::text(input.text)) })
        .build();
    let add = ToolBuilder::new("add")
        .description("Adds two integers and returns their sum as structured content")
        .read_only()
        .output_schema_for::<Sum>()
        .handler(|input: AddInput| async move {
            match input.a.checked_add(input.b) {
                Some(sum) => CallToolResult::from_serialize(&Sum { sum }),
                None => Ok(CallToolResult::error(
                    "The sum does not fit in a 64-bit integer",
                )),
            }
        })
        .build();
    let mut router = McpRouter::new()
        .server_info("bench-tower-mcp", env!("CARGO_PKG_VERSION"))
        .tool(echo)
        .tool(add);
    for i in 0..snodo_bench_common::INERT_TOOLS {
        let tool = ToolBuilder::new(snodo_bench_common::inert_name(i))
            .description(snodo_bench_common::inert_description(i))
            .input_schema(snodo_bench_common::inert_input_schema(i))
            .extractor_handler((), |RawArgs(_args): RawArgs| async move {
                Ok(CallToolResult::text(snodo_bench_common::INERT_REPLY))
            })
            .build();
        router = router.tool(tool);
    }
    router
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let mode = mode_from_args("bench-server-tower-mcp");
    let router = router();
    match mode {
        Mode::Stdio => {
            StdioTransport::new(router).run().await?;
        }
        // `HttpTransport` keeps initialize-era sessions by default (stateless
        // serving is an opt-in), so both modes are the same setup.
        Mode::Http | Mode::HttpSessions => {
            let app = HttpTransport::new(router)
                .subscription_limits(SubscriptionLimits::default().max_active(4096))
                .into_router_at("/mcp");
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            announce(&format!("http://{}/mcp", listener.local_addr()?));
            // TCP_NODELAY on accepted sockets, as snodo's listener sets it.
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, app)
                .with_graceful_shutdown(stdin_closed())
                .await?;
        }
    }
    Ok(())
}
