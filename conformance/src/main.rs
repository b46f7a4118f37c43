//! `snodo-conformance`: the fixture server the official MCP conformance suite
//! tests, written with snodo's public API as any user would.
//!
//! `snodo-conformance server [--port N]` binds 127.0.0.1 (port 0 picks a free
//! port), prints `{"url":"http://127.0.0.1:PORT/mcp"}` once it accepts
//! connections, and exits on SIGTERM, SIGINT or when its stdin closes.

mod catalog;
mod client;
mod fixtures;
mod legacy;
mod mrtr;
mod tasks;

use std::hash::{BuildHasher, Hasher};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use snodo::Server;
use snodo::model::{CacheHints, CacheScope};
use snodo::schema::Full;
use snodo::server::StateSealer;
use snodo::transport::http::{HttpListener, HttpOptions};

/// A per-process random secret for sealing request state.
fn random_secret() -> [u8; 32] {
    let mut secret = [0u8; 32];
    for chunk in secret.chunks_mut(8) {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        chunk.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    secret
}

/// The skills the fixture serves (the Skills extension's scenarios find them
/// through `skills/list`).
fn skills() -> Result<snodo::skills::Skills, snodo::skills::SkillsError> {
    snodo::skills::Skills::new().with_skill(
        "pdf-processing",
        [
            (
                "SKILL.md",
                &include_bytes!("../skills/pdf-processing/SKILL.md")[..],
            ),
            (
                "references/FORMS.md",
                &include_bytes!("../skills/pdf-processing/references/FORMS.md")[..],
            ),
        ],
    )
}

/// The fixture server.
fn server() -> Result<Server, Box<dyn std::error::Error>> {
    let sealer = Arc::new(StateSealer::new("fixture", random_secret())?);
    let builder = Server::builder("snodo-conformance", env!("CARGO_PKG_VERSION"))
        .instructions("The snodo conformance fixture.")
        .validator(Full)
        .list_cache(CacheHints {
            ttl_ms: 300_000,
            scope: CacheScope::Public,
        });
    let builder = fixtures::content_tools(builder);
    let builder = mrtr::register(builder, sealer);
    let builder = catalog::register(builder);
    let builder = legacy::register(builder);
    let builder = tasks::register(builder);
    let builder = builder.skills(skills()?);
    Ok(builder.build()?)
}

async fn serve(port: u16) -> Result<(), Box<dyn std::error::Error>> {
    let server = server()?;
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let listener = HttpListener::bind(&server, addr, HttpOptions::new()).await?;
    let stop = stop_signal();
    println!("{{\"url\":\"{}\"}}", listener.url());
    let events = server.events().clone();
    let shutdown = async move {
        stop.await;
        events.shutdown();
    };
    listener.run(shutdown).await?;
    Ok(())
}

/// SIGTERM, SIGINT, or stdin reaching end of file. The signal handlers are
/// installed when this is called, so that a signal sent right after the
/// fixture announced itself is caught.
fn stop_signal() -> impl std::future::Future<Output = ()> {
    use tokio::io::AsyncReadExt;
    let stdin_closed = async {
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 256];
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
        async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
                _ = stdin_closed => {}
            }
        }
    }
    #[cfg(not(unix))]
    async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = stdin_closed => {}
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: snodo-conformance server [--port N] | snodo-conformance client <url>");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [cmd, url] = args.as_slice()
        && cmd == "client"
    {
        return client::main(url);
    }
    let port = match args.as_slice() {
        [cmd] if cmd == "server" => 0,
        [cmd, flag, port] if cmd == "server" && flag == "--port" => match port.parse() {
            Ok(p) => p,
            Err(_) => return usage(),
        },
        _ => return usage(),
    };
    // Log lines (RUST_LOG) and the OTLP export (OTEL_*); flushed on return.
    let _telemetry = match snodo_otlp::init("snodo-conformance") {
        Ok(exporter) => exporter,
        Err(e) => {
            eprintln!("snodo-conformance: {e}");
            None
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let outcome = runtime.block_on(serve(port));
    // The read of stdin that watches for its end may still be blocked on a
    // thread of the runtime: exit without waiting for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("snodo-conformance: {e}");
            ExitCode::FAILURE
        }
    }
}
