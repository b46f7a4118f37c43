//! `snodo serve`: any MCP server (a command line or a URL) served over
//! Streamable HTTP or stdio, to clients of every revision snodo serves.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;
use snodo::client::{ClientBuilder, StderrMode, StdioCommand, Target};

/// How often the backend is checked.
const HEALTH_INTERVAL: Duration = Duration::from_secs(5);
/// How long one attempt to connect the backend again may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The arguments of `snodo serve`.
#[derive(Args)]
#[group(skip)]
#[command(group(
    clap::ArgGroup::new("transport").required(true).multiple(false).args(["stdio", "http"])
))]
pub(crate) struct ServeArgs {
    /// Serve over stdio (newline-delimited JSON on stdin and stdout).
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:0); prints {"url": ...} once listening.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// The server to expose: an http(s):// URL, or a command run as a child
    /// process over stdio, given as one quoted command line or, after `--`,
    /// as the program and its arguments.
    #[arg(value_name = "TARGET", required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    target: Vec<String>,
    /// Per-request timeout towards TARGET in seconds (progress restarts it).
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    timeout: f64,
    /// An extra HTTP header sent to a TARGET URL, e.g. -H 'Authorization: Bearer TOKEN' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    #[command(flatten)]
    auth: crate::client_cmd::AuthOptions,
    /// What happens to a TARGET command's stderr: inherit (the default:
    /// it goes to this command's stderr) or quiet.
    #[arg(long, value_name = "MODE", default_value = "inherit")]
    server_stderr: String,
}

/// Connects to the target, then serves it until stopped.
pub(crate) async fn run(args: ServeArgs) -> std::io::Result<()> {
    let (builder, target) = client(&args)?;
    let proxy = snodo::proxy::bridge(builder.clone(), target.clone())
        .await
        .map_err(|e| {
            std::io::Error::other(format!("cannot serve {}: {e}", args.target.join(" ")))
        })?;
    // Checked from now on: a backend that exits or stops answering is
    // withdrawn and started (or connected) again until it is back.
    let connected = proxy.client(snodo::proxy::BRIDGE_BACKEND);
    tokio::spawn(crate::proxy_cmd::supervise::supervise(
        proxy.clone(),
        snodo::proxy::BRIDGE_BACKEND.into(),
        crate::proxy_cmd::supervise::Connector {
            notes: None,
            builder,
            target,
            timeout: CONNECT_TIMEOUT,
            label: "snodo serve: backend".into(),
        },
        HEALTH_INTERVAL,
        None,
        connected,
    ));
    crate::serve_until_stopped(
        proxy.server().clone(),
        args.http,
        None,
        snodo::transport::http::HttpOptions::new(),
    )
    .await
}

/// The client towards the target, and the target.
fn client(args: &ServeArgs) -> std::io::Result<(ClientBuilder, Target)> {
    use crate::client_cmd::{auth, authorize, base_builder, stderr_mode};
    let usage = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, m.to_owned());
    let b =
        base_builder("snodo-serve", args.timeout, &args.headers).map_err(|e| usage(e.message()))?;
    let stderr = match stderr_mode(&args.server_stderr).map_err(|e| usage(e.message()))? {
        StderrMode::Capture => return Err(usage("--server-stderr: inherit or quiet")),
        mode => mode,
    };
    let command = match args.target.as_slice() {
        [url] if Target::is_url(url) => {
            // The tokens `snodo login URL` stored (refreshed as they
            // expire), --token, or the client-credentials grant; no browser
            // is opened: a host runs this command.
            let plan = auth::plan(url, &args.auth, false).map_err(|e| usage(e.message()))?;
            return Ok((authorize(b, plan), Target::from(url.as_str())));
        }
        [line] => StdioCommand::parse(line).map_err(|e| usage(&e.to_string()))?,
        [program, rest @ ..] => StdioCommand::new(program, rest),
        [] => return Err(usage("TARGET is missing")),
    };
    Ok((b, Target::Stdio(command.stderr(stderr))))
}
