//! `snodo proxy CONFIG`: several MCP servers served as one, their names
//! namespaced by backend id; the configuration file is watched, and each
//! backend is health-checked, withdrawn while it is down and restored when
//! it is back.

mod backoff;
mod config;
mod file;
pub(crate) mod supervise;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use snodo::proxy::Proxy;
use snodo::server::Capability;

use self::config::Config;
use self::file::ConfigFile;
use self::supervise::Supervisors;

/// How often the configuration file is read for changes.
const WATCH_EVERY: Duration = Duration::from_secs(1);
/// How long the proxy waits for every backend's first attempt before it
/// starts serving.
const FIRST_ATTEMPTS: Duration = Duration::from_secs(30);

/// The arguments of `snodo proxy`.
#[derive(Args)]
#[group(skip)]
#[command(group(
    clap::ArgGroup::new("transport").required(true).multiple(false).args(["stdio", "http", "check"])
))]
pub(crate) struct ProxyArgs {
    /// Serve over stdio (newline-delimited JSON on stdin and stdout).
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:0); prints {"url": ...} once listening.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Check the configuration file and print a summary of its backends,
    /// starting nothing: exit status 0 when it is valid, 1 when it is not.
    #[arg(long)]
    check: bool,
    /// The configuration file (TOML): a [backends.ID] table per backend with
    /// a command or a url; watched for changes while the proxy runs.
    #[arg(value_name = "CONFIG")]
    config: PathBuf,
}

/// Starts the backends, then serves until stopped.
pub(crate) async fn run(args: ProxyArgs) -> std::io::Result<()> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    let file = ConfigFile::new(args.config.clone());
    let text = file
        .read()
        .await
        .map_err(|e| invalid(format!("{}: {e}", args.config.display())))?;
    let config =
        Config::parse(&text).map_err(|e| invalid(format!("{}: {e}", args.config.display())))?;
    if args.check {
        print!("{}", summary(&args.config, &config));
        return Ok(());
    }
    let server = snodo::Server::builder("snodo-proxy", env!("CARGO_PKG_VERSION"))
        .declare(Capability::Tools)
        .declare(Capability::Resources)
        .declare(Capability::Prompts)
        .declare(Capability::Completions)
        .request_timeout(snodo::proxy::BRIDGE_REQUEST_TIMEOUT)
        .build()
        .map_err(std::io::Error::other)?;
    let proxy = Proxy::namespaced(server, &config.separator).map_err(std::io::Error::other)?;
    let mut supervisors = Supervisors::new(
        proxy.clone(),
        Duration::from_secs_f64(config.health_interval),
    );
    let first = supervisors.apply(&config.backends);
    let _ = tokio::time::timeout(FIRST_ATTEMPTS, futures_join(first)).await;
    let mut options = snodo::transport::http::HttpOptions::new();
    if let Some(rate) = config.limits.rate {
        options = options.rate_per_caller(rate);
    }
    tokio::spawn(watch(file, text, config, supervisors));
    crate::serve_until_stopped(proxy.server().clone(), args.http, options).await
}

/// What `--check` prints of a valid file: a line for the file, then one
/// per backend with its settings. Header and environment values are left
/// out (they often hold credentials), and so is a URL's user information.
fn summary(path: &std::path::Path, config: &Config) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "{}: valid, {} backend(s), separator {:?}, health_interval {} s",
        path.display(),
        config.backends.len(),
        config.separator,
        config.health_interval
    );
    if let Some(rate) = &config.limits.rate {
        let _ = write!(out, ", per_principal {rate}");
    }
    out.push('\n');
    for (id, b) in &config.backends {
        let _ = write!(out, "backend {id}: ");
        match (&b.command, &b.url) {
            (Some(config::Command::Line(line)), _) => {
                let _ = write!(out, "command {line:?}, stderr {}", b.stderr);
            }
            (Some(config::Command::Argv(argv)), _) => {
                let _ = write!(out, "command {argv:?}, stderr {}", b.stderr);
            }
            (None, Some(url)) => {
                let _ = write!(out, "url {}", without_userinfo(url));
            }
            (None, None) => {}
        }
        let _ = write!(
            out,
            ", timeout {} s, connect_timeout {} s",
            b.timeout, b.connect_timeout
        );
        for (what, map) in [("env", &b.env), ("headers", &b.headers)] {
            if !map.is_empty() {
                let names: Vec<&str> = map.keys().map(String::as_str).collect();
                let _ = write!(out, ", {what}: {}", names.join(", "));
            }
        }
        for policy in [b.shaping.describe(), b.limits.describe()] {
            if !policy.is_empty() {
                let _ = write!(out, ", {policy}");
            }
        }
        out.push('\n');
    }
    out
}

/// `url` without the user information of its authority (`user:secret@`).
fn without_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

async fn futures_join(receivers: Vec<tokio::sync::oneshot::Receiver<()>>) {
    for rx in receivers {
        let _ = rx.await;
    }
}

/// Reads the file every second; a changed, valid file is applied (a
/// changed separator or health interval needs a restart), an invalid or
/// empty one, or one that cannot be read, is reported (once) and the running
/// configuration kept.
async fn watch(
    file: ConfigFile,
    mut text: String,
    mut config: Config,
    mut supervisors: Supervisors,
) {
    let path = file.path().display().to_string();
    let mut unreadable: Option<String> = None;
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let now = match file.read().await {
            Ok(now) => {
                unreadable = None;
                now
            }
            Err(e) => {
                if unreadable.as_ref() != Some(&e) {
                    eprintln!("snodo proxy: {path}: {e} (the running configuration is kept)");
                    unreadable = Some(e);
                }
                continue;
            }
        };
        if now == text {
            continue;
        }
        text = now;
        match Config::parse(&text) {
            Ok(next) => {
                if next.separator != config.separator
                    || next.health_interval != config.health_interval
                    || next.limits != config.limits
                {
                    eprintln!(
                        "snodo proxy: {path}: separator, health_interval and [limits] apply from the next start"
                    );
                }
                eprintln!("snodo proxy: {path}: reloaded");
                supervisors.apply(&next.backends);
                config = next;
            }
            Err(e) => eprintln!("snodo proxy: {path}: {e} (the running configuration is kept)"),
        }
    }
}
