//! The `snodo` command: a demo MCP server, a bridge (`serve`) and a proxy
//! (`proxy`) for any MCP server, and client commands.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// The command's allocator (feature `mimalloc`, on by default).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bundle;
mod client_cmd;
mod demo;
mod described;
mod escape;
mod proxy_cmd;
mod registry;
mod serve;
mod telemetry;

/// snodo: build and call Model Context Protocol servers.
#[derive(Parser)]
#[command(name = "snodo", version, about, after_help = client_cmd::EXIT_CODES)]
struct Cli {
    /// Show what goes over the wire on stderr: -v every frame sent and
    /// received, -vv the HTTP headers too (credentials redacted). On `demo`,
    /// raises snodo's log level (debug, trace) when RUST_LOG is unset.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the demo server (tools greet, add, lookup, count, confirm_delete, report, announce; resources; a prompt).
    Demo(DemoArgs),
    /// Serve another MCP server (a command line or a URL) over Streamable
    /// HTTP or stdio, to clients of every revision (2026-07-28 and the
    /// initialize era), translating between them.
    Serve(serve::ServeArgs),
    /// Serve several MCP servers as one (a TOML file of backends, each a
    /// command line or a URL): names namespaced as <id>.<name>, the file
    /// watched, backends health-checked, withdrawn while down, restored.
    Proxy(proxy_cmd::ProxyArgs),
    /// Build an MCP Bundle (.mcpb, manifest 0.3) for a stdio server binary:
    /// its name, version, description and tools read from the server itself.
    Bundle(bundle::BundleArgs),
    /// Describe a server for the MCP registry: `snodo registry init` writes
    /// server.json from the server's own discover answer.
    Registry(registry::RegistryArgs),
    #[command(flatten)]
    Client(client_cmd::ClientCommand),
}

#[derive(Args)]
#[group(skip)]
#[command(group(
    clap::ArgGroup::new("transport").required(true).multiple(false).args(["stdio", "http"])
))]
struct DemoArgs {
    /// Serve over stdio (newline-delimited JSON on stdin and stdout).
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:0); prints {"url": ...} once listening.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Protect the HTTP endpoint with OAuth: only JWT access tokens of this
    /// issuer for the printed URL pass (confirm_delete needs scope
    /// files:write, everything else demo:read).
    #[arg(long, value_name = "URL", requires = "http")]
    issuer: Option<String>,
    /// Where tasks are kept: memory (the default), sqlite:PATH (they
    /// survive a restart) or a postgres:// URL (shared by several demos).
    #[arg(long, value_name = "STORE", default_value = "memory")]
    tasks: String,
    /// Join the other nodes of a service on this bus (redis://HOST:PORT or a
    /// postgres:// URL): events reach every node's listeners, and
    /// initialize-era sessions are served by every node.
    #[arg(long, value_name = "URL", requires = "http")]
    bus: Option<String>,
    /// The bus's channel (Redis pub/sub channel, PostgreSQL NOTIFY channel
    /// of [a-z0-9_]), so that several services share one server (default
    /// snodo:events on Redis, snodo_events on PostgreSQL).
    #[arg(long, value_name = "NAME", requires = "bus")]
    bus_channel: Option<String>,
    /// The keyring: one KEY_ID=BASE64_SECRET per line, the last line seals,
    /// every line opens; reloaded when the file changes. Without it,
    /// $SNODO_KEYS (the same lines, or separated by ';') if set, else a key
    /// of this process only. --bus needs one: it authenticates the bus and
    /// the session directory.
    #[arg(long, value_name = "FILE")]
    keys: Option<std::path::PathBuf>,
    /// Items per page of tools/list, resources/list and prompts/list
    /// (default 100).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    page_size: Option<u16>,
    /// Also serve the skills below DIR (each directory holding a SKILL.md):
    /// their files as skill:// resources, and the Skills extension's
    /// skills/list, skills/get and resources/directory/read.
    #[arg(long, value_name = "DIR")]
    skills: Option<std::path::PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = match cli.command {
        Command::Client(cmd) => return client_cmd::main(cmd, cli.verbose),
        other => other,
    };
    // Log lines (RUST_LOG) and the OTLP export (OTEL_*); flushed on return.
    let _telemetry = telemetry::init("snodo-demo", cli.verbose, telemetry::LogStyle::Server);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("snodo: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match command {
            Command::Demo(args) => run_demo(args).await,
            Command::Serve(args) => serve::run(args).await,
            Command::Proxy(args) => proxy_cmd::run(args).await,
            Command::Bundle(args) => bundle::run(args).await,
            Command::Registry(args) => registry::run(args).await,
            Command::Client(_) => Ok(()),
        }
    });
    // A read of a terminal's stdin may still be blocked on a thread of the
    // runtime: exit without waiting for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The error may quote a backend (`snodo serve`).
            eprintln!("snodo: {}", escape::line(&e.to_string()));
            ExitCode::FAILURE
        }
    }
}

async fn run_demo(args: DemoArgs) -> std::io::Result<()> {
    let skills = match &args.skills {
        Some(dir) => Some(
            snodo::skills::Skills::from_dir(dir)
                .map_err(|e| std::io::Error::other(format!("--skills: {e}")))?,
        ),
        None => None,
    };
    let tasks = demo::task_options(&args.tasks)
        .await
        .map_err(std::io::Error::other)?;
    let service = Service::join(
        args.keys.as_deref(),
        args.bus.as_deref(),
        args.bus_channel.as_deref(),
    )
    .await?;
    let (keys, events, records) = (service.keys, service.events, service.records);
    if keys.is_none() && args.tasks != "memory" {
        return Err(std::io::Error::other(format!(
            "--tasks {} keeps tasks across restarts, but state sealed with a key made for this process would not open after one (a task waiting for input could not resume): give --keys FILE or SNODO_KEYS",
            args.tasks
        )));
    }
    let keys = match keys {
        Some(keys) => keys,
        None => snodo::server::keyring::Keyring::generate("demo").map_err(std::io::Error::other)?,
    };
    let server = demo::server(demo::Setup {
        tasks,
        events,
        keys,
        page_size: args.page_size.map(usize::from),
        skills,
    });
    if let Some(addr) = args.http {
        let mut options = snodo::transport::http::HttpOptions::new();
        if let Some(records) = records {
            options = options.shared_sessions(records);
        }
        let front = args.issuer.as_deref().map(|issuer| Front {
            issuer: issuer.to_owned(),
            resource: None,
            scopes: vec![demo::READ_SCOPE.into(), demo::WRITE_SCOPE.into()],
            challenge: vec![demo::READ_SCOPE.into()],
            name: "snodo demo",
            on_bound: None,
        });
        return serve_http(server, addr, front, options).await;
    }
    // SIGTERM or SIGINT ends the demo at once, even while stdin stays open.
    let stop = stop_signal();
    tokio::select! {
        served = server.serve_stdio() => served,
        _ = stop => Ok(()),
    }
}

/// Serves `server` over Streamable HTTP on `http` (printing its URL), or
/// over stdio, until SIGTERM or SIGINT (or the end of stdin).
async fn serve_until_stopped(
    server: snodo::Server,
    http: Option<SocketAddr>,
    front: Option<Front>,
    options: snodo::transport::http::HttpOptions,
) -> std::io::Result<()> {
    if let Some(addr) = http {
        return serve_http(server, addr, front, options).await;
    }
    let stop = stop_signal();
    tokio::select! {
        served = server.serve_stdio() => served,
        _ = stop => Ok(()),
    }
}

/// What a node shares with the other nodes of its service.
pub(crate) struct Service {
    /// The keyring, if one is given.
    pub(crate) keys: Option<snodo::server::keyring::Keyring>,
    /// The hub on the bus, with `--bus`.
    pub(crate) events: Option<snodo::server::events::EventHub>,
    /// The directory of initialize-era sessions, with `--bus`.
    pub(crate) records: Option<snodo::server::legacy::SessionRecords>,
}

impl Service {
    /// Reads the keyring (`--keys FILE`, reloaded when it changes, or
    /// `$SNODO_KEYS`) and joins the bus (`--bus URL`), which needs it.
    pub(crate) async fn join(
        keys: Option<&std::path::Path>,
        bus: Option<&str>,
        channel: Option<&str>,
    ) -> std::io::Result<Service> {
        let keys = match keys {
            Some(path) => {
                let ring = snodo::server::keyring::Keyring::from_file(path)
                    .map_err(std::io::Error::other)?;
                ring.watch_file(path, std::time::Duration::from_secs(1));
                Some(ring)
            }
            None if std::env::var_os("SNODO_KEYS").is_some() => Some(
                snodo::server::keyring::Keyring::from_env("SNODO_KEYS")
                    .map_err(std::io::Error::other)?,
            ),
            None => None,
        };
        let (events, records) = match (bus, &keys) {
            (Some(url), Some(keys)) => {
                let (hub, records) = demo::bus(url, channel, keys)
                    .await
                    .map_err(std::io::Error::other)?;
                (Some(hub), Some(records))
            }
            (Some(_), None) => {
                return Err(std::io::Error::other(
                    "--bus needs the service's keyring (--keys FILE, or $SNODO_KEYS): the nodes \
                     authenticate what they share on the bus and in the session directory with it",
                ));
            }
            (None, _) => (None, None),
        };
        Ok(Service {
            keys,
            events,
            records,
        })
    }
}

/// An HTTP server's OAuth front door: tokens from `issuer` for `resource`.
pub(crate) struct Front {
    /// The authorization server whose JWTs are accepted.
    pub(crate) issuer: String,
    /// The canonical URI tokens must name (default: the listener's URL).
    pub(crate) resource: Option<String>,
    /// The scopes the resource metadata lists.
    pub(crate) scopes: Vec<String>,
    /// The scopes a 401 challenge asks for.
    pub(crate) challenge: Vec<String>,
    /// The resource's name in its metadata.
    pub(crate) name: &'static str,
    /// Told the resource URI once the listener is bound (the proxy's
    /// virtual servers derive theirs from it).
    pub(crate) on_bound: Option<OnBound>,
}

/// What is told a front door's resource URI once its listener is bound.
pub(crate) type OnBound = Box<dyn FnOnce(&str) + Send>;

async fn serve_http(
    server: snodo::Server,
    addr: SocketAddr,
    front: Option<Front>,
    mut options: snodo::transport::http::HttpOptions,
) -> std::io::Result<()> {
    use snodo::transport::http::HttpListener;
    use snodo::transport::http::oauth::{JwtVerifier, ResourceServer};
    // Bound before the options are made: the audience is the bound URL.
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    let bound = socket.listen(1024)?;
    if let Some(front) = front {
        // The audience is the URL printed below, unless one is configured.
        let url = match front.resource {
            Some(resource) => resource,
            None => format!("http://{}{}", bound.local_addr()?, "/mcp"),
        };
        if let Some(tell) = front.on_bound {
            tell(&url);
        }
        let rs = ResourceServer::builder(&url)
            .authorization_server(&front.issuer)
            .scopes_supported(front.scopes)
            .challenge_scopes(front.challenge)
            .resource_name(front.name)
            .verifier(JwtVerifier::new(&front.issuer, &url))
            .build()
            .map_err(std::io::Error::other)?;
        options = options.oauth(rs);
    }
    let listener = HttpListener::from_listener(&server, bound, options)?;
    let stop = stop_signal();
    println!("{{\"url\":\"{}\"}}", listener.url());
    let events = server.events().clone();
    listener
        .run(async move {
            stop.await;
            events.shutdown();
        })
        .await
}

/// SIGINT or SIGTERM. The handlers are installed when this is called (not
/// when the future is first polled), so that a signal sent right after the
/// server announced itself is caught.
fn stop_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate()).ok();
        let int = signal(SignalKind::interrupt()).ok();
        async move {
            let (Some(mut term), Some(mut int)) = (term, int) else {
                let _ = tokio::signal::ctrl_c().await;
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
