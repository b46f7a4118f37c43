//! The benchmark server written with rmcp 3.11, as its README shows:
//! `#[tool_router]` / `#[tool]` with `Parameters<T>` and `Json<T>` for `echo`
//! and `add`, the inert tools as runtime `ToolRoute`s added to the same
//! `ToolRouter`, `#[tool_handler(router = ...)]` on `ServerHandler`, plus
//! `accepted_subscription_filter` / `listen` for `subscriptions/listen`
//! (as `examples/servers/src/subscriptions_streamhttp.rs`).
//!
//! HTTP: `StreamableHttpService` nested at `/mcp` in axum, configured as the
//! README's "Stateless Streamable HTTP" section shows (`legacy_session_mode`
//! off, `json_response` on); 2026-07-28 requests are served statelessly in
//! any case. The service factory clones a handler whose router was built once
//! (`Arc`), as the README advises ("keep shared state in a Clone handle").
//! stdio: `handler.serve(stdio())`.
//!
//! With `SNODO_BENCH_RMCP_STYLE=documented`, the `#[tool_router(server_handler)]`
//! style instead (see [`Documented`]).

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool};
use rmcp::service::SubscriptionContext;
use rmcp::transport::stdio;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use snodo_bench_common::{Mode, announce, mode_from_args, stdin_closed};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct EchoParams {
    /// The text to return
    text: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct AddParams {
    a: i64,
    b: i64,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(Clone)]
struct Bench {
    tool_router: Arc<ToolRouter<Self>>,
}

#[tool_router]
impl Bench {
    fn new() -> Self {
        let mut router = Self::tool_router();
        for i in 0..snodo_bench_common::INERT_TOOLS {
            let schema = rmcp::model::object(snodo_bench_common::inert_input_schema(i));
            let attr = Tool::new(
                snodo_bench_common::inert_name(i),
                snodo_bench_common::inert_description(i),
                Arc::new(schema),
            );
            router.add_route(ToolRoute::new(attr, || async {
                snodo_bench_common::INERT_REPLY.to_string()
            }));
        }
        Self {
            tool_router: Arc::new(router),
        }
    }

    #[tool(
        description = "Returns its text argument unchanged",
        annotations(read_only_hint = true)
    )]
    async fn echo(&self, Parameters(EchoParams { text }): Parameters<EchoParams>) -> String {
        text
    }

    #[tool(
        description = "Adds two integers and returns their sum as structured content",
        annotations(read_only_hint = true)
    )]
    async fn add(
        &self,
        Parameters(AddParams { a, b }): Parameters<AddParams>,
    ) -> Result<Json<Sum>, String> {
        a.checked_add(b)
            .map(|sum| Json(Sum { sum }))
            .ok_or_else(|| "The sum does not fit in a 64-bit integer".to_string())
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("bench-rmcp", env!("CARGO_PKG_VERSION")))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // Nothing ever changes in this server: hold the stream until the
        // client goes away.
        context.cancelled().await;
        Ok(())
    }
}

/// The same two tools in the style rmcp's documentation leads with:
/// `#[tool_router(server_handler)]`, whose generated `ServerHandler` builds
/// the router (`Self::tool_router()`) on every request. It has only the
/// `#[tool]` methods (runtime tools need a stored router), so it serves the
/// `tools/call` workloads only.
#[derive(Clone)]
struct Documented;

#[tool_router(server_handler)]
impl Documented {
    #[tool(
        description = "Returns its text argument unchanged",
        annotations(read_only_hint = true)
    )]
    async fn echo(&self, Parameters(EchoParams { text }): Parameters<EchoParams>) -> String {
        text
    }

    #[tool(
        description = "Adds two integers and returns their sum as structured content",
        annotations(read_only_hint = true)
    )]
    async fn add(
        &self,
        Parameters(AddParams { a, b }): Parameters<AddParams>,
    ) -> Result<Json<Sum>, String> {
        a.checked_add(b)
            .map(|sum| Json(Sum { sum }))
            .ok_or_else(|| "The sum does not fit in a 64-bit integer".to_string())
    }
}

/// Serves `handler` over stdio or Streamable HTTP, as `mode` says.
async fn serve<H: ServerHandler + Clone>(
    mode: Mode,
    handler: H,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    match mode {
        Mode::Stdio => {
            handler.serve(stdio()).await?.waiting().await?;
        }
        Mode::Http | Mode::HttpSessions => {
            let ct = CancellationToken::new();
            let config = match mode {
                // The README's "Stateless Streamable HTTP" setup.
                Mode::Http => StreamableHttpServerConfig::default()
                    .with_legacy_session_mode(false)
                    .with_json_response(true),
                // The default: initialize-era requests get sessions.
                _ => StreamableHttpServerConfig::default(),
            };
            let service = StreamableHttpService::new(
                move || Ok(handler.clone()),
                LocalSessionManager::default().into(),
                config.with_cancellation_token(ct.child_token()),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            announce(&format!("http://{}/mcp", listener.local_addr()?));
            // TCP_NODELAY on accepted sockets, as snodo's listener sets it:
            // the session mode writes each SSE response in several chunks,
            // which Nagle's algorithm would hold for the client's delayed ACK.
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    stdin_closed().await;
                    ct.cancel();
                })
                .await?;
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mode = mode_from_args("bench-server-rmcp");
    // `SNODO_BENCH_RMCP_STYLE=documented`: the documentation's style.
    if std::env::var("SNODO_BENCH_RMCP_STYLE").is_ok_and(|s| s == "documented") {
        serve(mode, Documented).await
    } else {
        serve(mode, Bench::new()).await
    }
}
