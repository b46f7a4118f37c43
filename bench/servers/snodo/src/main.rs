//! The benchmark server written with snodo: the tool set of
//! `bench-snodo-tools` (`echo` and `add` with the `#[snodo::tool]` macro, the
//! inert tools with `tool::from_fn`), served by `HttpListener` or
//! `Server::serve_stdio`; with `SNODO_BENCH_AXUM` set, its tower service
//! mounted in `axum::serve` instead of the listener; with
//! `SNODO_BENCH_VALIDATE` set, arguments checked by the `Basic` validator.

use snodo::prelude::*;
use snodo::transport::http::oauth::{JwtVerifier, ResourceServer};
use snodo::transport::http::{HttpListener, HttpOptions};
use snodo_bench_common::{Mode, announce, mode_from_args, stdin_closed};

/// `echo` as a task, for the task workloads (registered with a store only).
#[snodo::tool(
    description = "Returns its text argument unchanged, as a task when the client allows it",
    input_schema = {
        "type": "object",
        "properties": { "text": { "type": "string" } },
        "required": ["text"]
    },
    task = "optional"
)]
async fn echo_task(args: Arguments) -> CallResult {
    Ok(ToolResult::text(args.str("text")?))
}

/// The task store named by `SNODO_BENCH_TASKS` (`memory`, `sqlite:PATH`
/// or a `postgres://` URL, whose tasks are cleared first).
async fn task_options(spec: &str) -> std::io::Result<snodo::task::TaskOptions> {
    use snodo::task::TaskOptions;
    let err = |e: snodo::task::StoreError| std::io::Error::other(e.to_string());
    Ok(if let Some(path) = spec.strip_prefix("sqlite:") {
        TaskOptions::new(snodo_sqlite::SqliteTaskStore::open(path).map_err(err)?)
    } else if spec.starts_with("postgres") {
        let store = snodo_postgres::PostgresTaskStore::connect(spec)
            .await
            .map_err(err)?;
        store.clear().await.map_err(err)?;
        TaskOptions::new(store)
    } else {
        TaskOptions::memory()
    })
}

fn server(tasks: Option<snodo::task::TaskOptions>) -> Server {
    let mut builder = bench_snodo_tools::builder();
    if std::env::var_os("SNODO_BENCH_VALIDATE").is_some() {
        // The validated workload: arguments checked by the bundled subset.
        builder = builder.validator(Basic);
    }
    if let Some(tasks) = tasks {
        builder = builder.tool(echo_task).tasks(tasks);
    }
    builder.build().expect("the benchmark tools are valid")
}

/// With `SNODO_BENCH_OTLP=http://HOST:PORT`, spans and metrics are exported
/// there over OTLP/HTTP (the telemetry overhead runs); without it no
/// subscriber is installed.
fn telemetry() -> Option<snodo::telemetry::otlp::Exporter> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let endpoint = std::env::var("SNODO_BENCH_OTLP").ok()?;
    let exporter = snodo::telemetry::otlp::Exporter::to_endpoint(&endpoint, "bench-snodo")
        .expect("the OTLP exporter starts");
    tracing_subscriber::registry()
        .with(exporter.layer())
        .try_init()
        .expect("no other subscriber");
    Some(exporter)
}

/// The same server's tower service mounted in `axum::serve`, as the peers
/// are served (`TCP_NODELAY` set the same way), instead of snodo's own
/// listener.
async fn serve_in_axum(server: &Server) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let app = axum::Router::new().route_service("/mcp", server.http_service());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    announce(&format!("http://{}/mcp", listener.local_addr()?));
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(stdin_closed())
        .await
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mode = mode_from_args("bench-server-snodo");
    let _telemetry = telemetry();
    let tasks = match std::env::var("SNODO_BENCH_TASKS") {
        Ok(spec) => Some(task_options(&spec).await?),
        Err(_) => None,
    };
    let server = server(tasks);
    match mode {
        Mode::Stdio => server.serve_stdio().await,
        // One setup serves both eras: 2026-07-28 statelessly, the
        // initialize era with sessions.
        Mode::Http | Mode::HttpSessions if std::env::var_os("SNODO_BENCH_AXUM").is_some() => {
            serve_in_axum(&server).await
        }
        Mode::Http | Mode::HttpSessions => {
            let addr: std::net::SocketAddr = "127.0.0.1:0".parse().expect("a valid address");
            let listener = match std::env::var("SNODO_BENCH_ISSUER") {
                // The protected workload: every call carries a JWT that is
                // verified against the issuer's (cached) keys.
                Ok(issuer) => {
                    let bound = tokio::net::TcpListener::bind(addr).await?;
                    let url = format!("http://{}/mcp", bound.local_addr()?);
                    let mut verifier = JwtVerifier::new(&issuer, &url);
                    if std::env::var_os("SNODO_BENCH_JWT_EVERY_CALL").is_some() {
                        // The signature checked on every call, nothing remembered.
                        verifier = verifier.verified_ttl(std::time::Duration::ZERO);
                    }
                    let rs = ResourceServer::builder(&url)
                        .authorization_server(&issuer)
                        .verifier(verifier)
                        .build()
                        .map_err(std::io::Error::other)?;
                    HttpListener::from_listener(&server, bound, HttpOptions::new().oauth(rs))?
                }
                Err(_) => HttpListener::bind(&server, addr, HttpOptions::new()).await?,
            };
            announce(&listener.url());
            listener.run(stdin_closed()).await
        }
    }
}
