//! `snodo proxy CONFIG`: several MCP servers served as one, their names
//! namespaced by backend id; the configuration file is watched, and each
//! backend is health-checked, withdrawn while it is down and restored when
//! it is back.

mod config;
pub(crate) mod supervise;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use snodo::proxy::Proxy;
use snodo::server::Capability;

use self::config::Config;
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
    clap::ArgGroup::new("transport").required(true).multiple(false).args(["stdio", "http"])
))]
pub(crate) struct ProxyArgs {
    /// Serve over stdio (newline-delimited JSON on stdin and stdout).
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:0); prints {"url": ...} once listening.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// The configuration file (TOML): a [backends.ID] table per backend with
    /// a command or a url; watched for changes while the proxy runs.
    #[arg(value_name = "CONFIG")]
    config: PathBuf,
}

fn read(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    file.take(config::MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > config::MAX_BYTES {
        return Err(format!(
            "{}: larger than {} bytes",
            path.display(),
            config::MAX_BYTES
        ));
    }
    Ok(text)
}

/// Starts the backends, then serves until stopped.
pub(crate) async fn run(args: ProxyArgs) -> std::io::Result<()> {
    let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
    let text = read(&args.config).map_err(invalid)?;
    let config =
        Config::parse(&text).map_err(|e| invalid(format!("{}: {e}", args.config.display())))?;
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
    tokio::spawn(watch(args.config.clone(), text, config, supervisors));
    crate::serve_until_stopped(proxy.server().clone(), args.http).await
}

async fn futures_join(receivers: Vec<tokio::sync::oneshot::Receiver<()>>) {
    for rx in receivers {
        let _ = rx.await;
    }
}

/// Reads the file every second; a changed, valid file is applied (a
/// changed separator or health interval needs a restart), an invalid one
/// is reported and the running configuration kept.
async fn watch(path: PathBuf, mut text: String, mut config: Config, mut supervisors: Supervisors) {
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let Ok(now) = read(&path) else { continue };
        if now == text {
            continue;
        }
        text = now;
        match Config::parse(&text) {
            Ok(next) => {
                if next.separator != config.separator
                    || next.health_interval != config.health_interval
                {
                    eprintln!(
                        "snodo proxy: {}: separator and health_interval apply from the next start",
                        path.display()
                    );
                }
                eprintln!("snodo proxy: {}: reloaded", path.display());
                supervisors.apply(&next.backends);
                config = next;
            }
            Err(e) => eprintln!(
                "snodo proxy: {}: {e} (the running configuration is kept)",
                path.display()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_configuration_file_past_max_bytes_is_refused() {
        let dir = std::env::temp_dir().join(format!("snodo-proxy-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("proxy.toml");
        std::fs::write(&path, vec![b'#'; super::config::MAX_BYTES as usize + 1]).unwrap();
        let e = super::read(&path).unwrap_err();
        assert!(e.ends_with("larger than 1048576 bytes"), "{e}");
        std::fs::write(&path, "# fine\n").unwrap();
        assert_eq!(super::read(&path).unwrap(), "# fine\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
