//! An MCP endpoint protected by OAuth in an axum app: the resource server
//! as a tower layer in front of `http_service()`, its Protected Resource
//! Metadata on the well-known paths beside it.
//!
//! ```text
//! cargo run -p snodo --features auth --example oauth_axum -- https://auth.example.com
//! ```
//!
//! It listens on 127.0.0.1 (a free port), prints `{"url": ...}` and accepts
//! JWT access tokens of the issuer given as its argument whose audience is
//! that URL; `delete` needs scope `files:write`, everything else
//! `demo:read`. It exits when its stdin closes. `tests/oauth_provider.rs`
//! runs [`app`] against a real OpenID Connect provider.

use axum::Router;
use snodo::transport::http::oauth::{JwtVerifier, OAuthLayer, ResourceServer};
use snodo::{Server, ToolResult, tool::from_fn};

/// The example's server: `echo` (default scope) and `delete` (`files:write`).
pub fn server() -> Server {
    Server::builder("oauth-axum-example", "0.1.0")
        .tool(from_fn("echo", |args, _| async move {
            Ok(ToolResult::text(args.str("text").unwrap_or_default()))
        }))
        .tool(from_fn("delete", |_, _| async move {
            Ok(ToolResult::text("deleted"))
        }))
        .default_scopes(["demo:read"])
        .tool_scopes("delete", ["files:write"])
        .build()
        .expect("the example's tools are valid")
}

/// The resource server for the endpoint at `url`, trusting `issuer`.
pub fn resource_server(url: &str, issuer: &str) -> ResourceServer {
    ResourceServer::builder(url)
        .authorization_server(issuer)
        .scopes_supported(["demo:read", "files:write"])
        .challenge_scopes(["demo:read"])
        .verifier(JwtVerifier::new(issuer, url))
        .build()
        .expect("an absolute URL and an issuer")
}

/// The app: `/mcp` behind the layer, and the metadata routes (the layer
/// answers those itself).
pub fn app(server: &Server, rs: &ResourceServer) -> Router {
    let layer = OAuthLayer::new(rs.clone());
    let mut app = Router::new().route_service("/mcp", layer.layer(server.http_service()));
    for path in rs.metadata_paths() {
        app = app.route_service(path, layer.layer(server.http_service()));
    }
    app
}

#[allow(dead_code)]
#[tokio::main]
async fn main() -> std::io::Result<()> {
    let issuer = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:9000".to_string());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let app = app(&server(), &resource_server(&url, &issuer));
    println!("{}", serde_json::json!({ "url": url }));
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let mut sink = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut tokio::io::stdin(), &mut sink).await;
        })
        .await
}
