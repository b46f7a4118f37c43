//! The benchmark server written with snodo: the tool set of
//! `bench-snodo-tools` (`echo` and `add` with the `#[snodo::tool]` macro, the
//! inert tools with `tool::from_fn`), served by `HttpListener` or
//! `Server::serve_stdio`; with `SNODO_BENCH_AXUM` set, its tower service
//! mounted in `axum::serve` instead of the listener; with
//! `SNODO_BENCH_VALIDATE=basic`, arguments checked by the bundled `Basic`
//! validator, with `SNODO_BENCH_VALIDATE=full` by the `Full` JSON Schema
//! 2020-12 validator (in the build with the `jsonschema` feature).
//!
//! Several packages build this source. `bench-server-snodo` holds only the
//! above, as the peers' servers hold only their tools, so that its memory is
//! compared with theirs for the same work. `bench-server-snodo-validated`
//! (the `jsonschema` feature) adds snodo's `jsonschema` feature for the `Full`
//! validator, as tower-mcp's validating build adds its `schema-validation`.
//! `bench-server-snodo-full` (the `full` feature) adds what the snodo-only
//! workloads need: tasks in memory, SQLite or PostgreSQL
//! (`SNODO_BENCH_TASKS`), an OAuth-protected listener (`SNODO_BENCH_ISSUER`)
//! and OTLP export (`SNODO_BENCH_OTLP`).

use snodo::prelude::*;
use snodo::schema::Basic;
#[cfg(feature = "full")]
use snodo::transport::http::oauth::{JwtVerifier, ResourceServer};
use snodo::transport::http::{HttpListener, HttpOptions};
use snodo_bench_common::{Mode, announce, mode_from_args, stdin_closed};

#[cfg(feature = "full")]
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

/// The share of tasks and listen streams the benchmark's one client may
/// hold (the defaults, 1 000 tasks and 256 streams, bound one client among
/// many; the workloads create tens of thousands of tasks and open 1 000
/// streams from one load generator).
const ONE_CLIENT_SHARE: usize = 1_000_000;

#[cfg(feature = "full")]
/// The task store named by `SNODO_BENCH_TASKS` (`memory`, `sqlite:PATH`
/// or a `postgres://` URL, whose tasks are cleared first).
async fn task_options(spec: &str) -> std::io::Result<snodo::task::TaskOptions> {
    use snodo::task::TaskOptions;
    let err = |e: snodo::task::StoreError| std::io::Error::other(e.to_string());
    let options = if let Some(path) = spec.strip_prefix("sqlite:") {
        TaskOptions::new(snodo_sqlite::SqliteTaskStore::open(path).map_err(err)?)
    } else if spec.starts_with("postgres") {
        let store = snodo_postgres::PostgresTaskStore::connect(spec)
            .await
            .map_err(err)?;
        store.clear().await.map_err(err)?;
        TaskOptions::new(store)
    } else {
        // A memory store that keeps every task of a run (the default
        // 10 000 fill within a round, and a full store refuses).
        TaskOptions::new(snodo::task::MemoryTaskStore::with_capacity(
            ONE_CLIENT_SHARE,
        ))
    };
    Ok(options.max_per_share(ONE_CLIENT_SHARE))
}

/// The tool set with the validator `SNODO_BENCH_VALIDATE` names (the
/// validated workloads): `basic`, the bundled keyword subset, or `full`, JSON
/// Schema 2020-12 through the `jsonschema` crate (only in the build with the
/// `jsonschema` feature); unset, the default pass-through.
///
/// The load generator is one client from one address, so the per-client
/// share of listen streams is raised to [`ONE_CLIENT_SHARE`]: the
/// workloads measure the server, not its limits on one client.
fn builder() -> std::io::Result<snodo::ServerBuilder> {
    let builder = bench_snodo_tools::builder().subscriptions_per_share(ONE_CLIENT_SHARE);
    let Some(name) = std::env::var_os("SNODO_BENCH_VALIDATE") else {
        return Ok(builder);
    };
    match name.to_str() {
        Some("basic") => Ok(builder.validator(Basic)),
        #[cfg(feature = "jsonschema")]
        Some("full") => Ok(builder.validator(snodo::schema::Full)),
        _ => Err(std::io::Error::other(format!(
            "SNODO_BENCH_VALIDATE={name:?}: this build validates with `basic`{}",
            if cfg!(feature = "jsonschema") {
                " or `full`"
            } else {
                " (`full` needs bench-server-snodo-validated)"
            }
        ))),
    }
}

#[cfg(feature = "full")]
/// With `SNODO_BENCH_OTLP=http://HOST:PORT`, spans and metrics are exported
/// there over OTLP/HTTP (the telemetry overhead runs); without it no
/// subscriber is installed.
fn telemetry() -> Option<snodo_otlp::Exporter> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let endpoint = std::env::var("SNODO_BENCH_OTLP").ok()?;
    let exporter = snodo_otlp::Exporter::to_endpoint(&endpoint, "bench-snodo")
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

/// The full build's server: tasks when `SNODO_BENCH_TASKS` names a store.
#[cfg(feature = "full")]
async fn server() -> std::io::Result<Server> {
    let mut builder = builder()?;
    if let Ok(spec) = std::env::var("SNODO_BENCH_TASKS") {
        builder = builder.tool(echo_task).tasks(task_options(&spec).await?);
    }
    Ok(builder.build().expect("the benchmark tools are valid"))
}

/// The lean build's server, which refuses the full build's settings.
#[cfg(not(feature = "full"))]
async fn server() -> std::io::Result<Server> {
    for var in [
        "SNODO_BENCH_TASKS",
        "SNODO_BENCH_ISSUER",
        "SNODO_BENCH_OTLP",
    ] {
        if std::env::var_os(var).is_some() {
            return Err(std::io::Error::other(format!(
                "{var} needs bench-server-snodo-full"
            )));
        }
    }
    Ok(builder()?.build().expect("the benchmark tools are valid"))
}

/// The listener; in the full build, protected by OAuth when
/// `SNODO_BENCH_ISSUER` names an issuer (every call carries a JWT verified
/// against the issuer's cached keys).
async fn listener(server: &Server) -> std::io::Result<HttpListener> {
    let addr: std::net::SocketAddr = "127.0.0.1:0".parse().expect("a valid address");
    #[cfg(feature = "full")]
    if let Ok(issuer) = std::env::var("SNODO_BENCH_ISSUER") {
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
        return HttpListener::from_listener(server, bound, HttpOptions::new().oauth(rs));
    }
    HttpListener::bind(server, addr, HttpOptions::new()).await
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mode = mode_from_args("bench-server-snodo");
    #[cfg(feature = "full")]
    let _telemetry = telemetry();
    let server = server().await?;
    match mode {
        Mode::Stdio => server.serve_stdio().await,
        // One setup serves both eras: 2026-07-28 statelessly, the
        // initialize era with sessions.
        Mode::Http | Mode::HttpSessions if std::env::var_os("SNODO_BENCH_AXUM").is_some() => {
            serve_in_axum(&server).await
        }
        Mode::Http | Mode::HttpSessions => {
            let listener = listener(&server).await?;
            announce(&listener.url());
            listener.run(stdin_closed()).await
        }
    }
}
