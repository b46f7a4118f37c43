//! mcp-proxy 0.6 (crates.io) in front of one backend, as its own overhead
//! harness sets it up (`ProxyConfig::parse`, `Proxy::from_config`,
//! `into_router`, served with `axum::serve` on `127.0.0.1:0`).
//!
//! `bench-server-mcp-proxy URL` proxies the backend at `URL` under the name
//! `b` (its tools as `b/<name>`) with no middleware;
//! `bench-server-mcp-proxy --limits URL` adds a timeout, a concurrency cap,
//! a rate limit and a circuit breaker, none of which a healthy run reaches.
//! Prints `{"url":"http://127.0.0.1:PORT/"}` (its MCP endpoint is the
//! router's root); exits when stdin closes.

use snodo_bench_common::{announce, stdin_closed};

/// The per-backend middleware of `--limits`: the same limits as the snodo
/// proxy's `limits` variant, each set too high to refuse a call here.
const LIMITS: &str = r#"
[backends.timeout]
seconds = 60

[backends.concurrency]
max_concurrent = 1024

[backends.rate_limit]
requests = 1000000
period_seconds = 1

[backends.circuit_breaker]
failure_rate_threshold = 0.5
minimum_calls = 100
wait_duration_seconds = 30
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (limits, url) = match args.as_slice() {
        [url] => (false, url.clone()),
        [flag, url] if flag == "--limits" => (true, url.clone()),
        _ => {
            eprintln!("usage: bench-server-mcp-proxy [--limits] BACKEND_URL");
            std::process::exit(2);
        }
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve(&url, limits))
}

async fn serve(url: &str, limits: bool) -> Result<(), Box<dyn std::error::Error>> {
    let toml = format!(
        "[proxy]\nname = \"bench-proxy\"\n[proxy.listen]\nhost = \"127.0.0.1\"\nport = 0\n\n\
         [[backends]]\nname = \"b\"\ntransport = \"http\"\nurl = \"{url}\"\n{}",
        if limits { LIMITS } else { "" }
    );
    let config = mcp_proxy::ProxyConfig::parse(&toml).map_err(|e| format!("{e:#}"))?;
    let proxy = mcp_proxy::Proxy::from_config(config)
        .await
        .map_err(|e| format!("{e:#}"))?;
    let (router, _sessions) = proxy.into_router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    // mcp-proxy serves MCP at the root of its router.
    announce(&format!("http://{}/", listener.local_addr()?));
    axum::serve(listener, router)
        .with_graceful_shutdown(stdin_closed())
        .await?;
    Ok(())
}
