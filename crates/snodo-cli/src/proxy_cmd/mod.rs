//! `snodo proxy CONFIG`: several MCP servers served as one, their names
//! namespaced by backend id; the configuration file is watched, and each
//! backend is health-checked, withdrawn while it is down and restored when
//! it is back.

mod backoff;
mod config;
mod file;
mod ops;
mod servers;
pub(crate) mod supervise;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use snodo::proxy::{PinStore, Proxy, Roles};
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
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    group(
        clap::ArgGroup::new("transport").required(true).multiple(false).args(["stdio", "http", "check"])
    )
)]
pub(crate) struct ProxyArgs {
    #[command(subcommand)]
    action: Option<Action>,
    /// Serve over stdio (newline-delimited JSON on stdin and stdout).
    #[arg(long)]
    stdio: bool,
    /// Serve Streamable HTTP on ADDR (e.g. 127.0.0.1:0); prints {"url": ...} once listening.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Join the other replicas of this gateway on this bus (redis://HOST:PORT
    /// or a postgres:// URL): initialize-era sessions are served by every
    /// replica, and events reach every replica's listeners.
    #[arg(long, value_name = "URL", requires = "http")]
    bus: Option<String>,
    /// The bus's channel (default snodo:events on Redis, snodo_events on
    /// PostgreSQL).
    #[arg(long, value_name = "NAME", requires = "bus")]
    bus_channel: Option<String>,
    /// The keyring the replicas share (one KEY_ID=BASE64_SECRET per line;
    /// or $SNODO_KEYS): --bus needs it.
    #[arg(long, value_name = "FILE")]
    keys: Option<PathBuf>,
    /// Check the configuration file and print a summary of its backends,
    /// starting nothing: exit status 0 when it is valid, 1 when it is not.
    #[arg(long)]
    check: bool,
    /// The configuration file (TOML): a [backends.ID] table per backend with
    /// a command or a url; watched for changes while the proxy runs.
    #[arg(value_name = "CONFIG", required = true)]
    config: Option<PathBuf>,
}

/// What `snodo proxy` does besides serving.
#[derive(clap::Subcommand)]
enum Action {
    /// Approve pinned definitions that changed (all of them when no NAME is
    /// given); a running proxy serves them again within a second.
    Approve {
        /// The proxy's configuration file (its pin file is found from it).
        #[arg(value_name = "CONFIG")]
        config: PathBuf,
        /// Names as the proxy serves them (`docs.search`), URI templates, or
        /// keys (`tool:docs.search`).
        #[arg(value_name = "NAME")]
        names: Vec<String>,
    },
}

fn invalid(m: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, m)
}

/// Reads and checks the configuration file at `path`.
async fn load(path: &std::path::Path) -> std::io::Result<(ConfigFile, String, Config)> {
    let file = ConfigFile::new(path.to_owned());
    let text = file
        .read()
        .await
        .map_err(|e| invalid(format!("{}: {e}", path.display())))?;
    let config = Config::parse(&text).map_err(|e| invalid(format!("{}: {e}", path.display())))?;
    Ok((file, text, config))
}

/// `snodo proxy approve CONFIG [NAME...]`.
async fn approve(path: &std::path::Path, names: &[String]) -> std::io::Result<()> {
    let (_, _, config) = load(path).await?;
    let pins = PinStore::open(config.pin_path(path)).map_err(|e| invalid(e.to_string()))?;
    let waiting = pins.pending();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let approved = pins.approve(&names).map_err(|e| invalid(e.to_string()))?;
    if approved.is_empty() {
        println!("nothing waits for approval");
    }
    for key in approved {
        let change = waiting.iter().find(|c| c.key == key);
        match change {
            Some(c) => println!("approved {key}: {} (was {})", c.seen, c.pinned),
            None => println!("approved {key}"),
        }
    }
    Ok(())
}

/// Starts the backends, then serves until stopped.
pub(crate) async fn run(args: ProxyArgs) -> std::io::Result<()> {
    if let Some(Action::Approve { config, names }) = &args.action {
        return approve(config, names).await;
    }
    let Some(path) = args.config.clone() else {
        return Err(invalid("give the configuration file".into()));
    };
    let (file, text, config) = load(&path).await?;
    if args.check {
        print!("{}", summary(&path, &config));
        return Ok(());
    }
    let pins = if config.pins_any() {
        let at = config.pin_path(&path);
        Some(PinStore::open(at).map_err(|e| invalid(e.to_string()))?)
    } else {
        None
    };
    if config.auth.is_some() && args.stdio {
        return Err(invalid(format!(
            "{}: [auth] needs --http (stdio carries no token)",
            path.display()
        )));
    }
    let roles = match &config.auth {
        Some(auth) => Some(Roles::new(auth.policy_roles().map_err(invalid)?)),
        None => None,
    };
    let service = crate::Service::join(
        args.keys.as_deref(),
        args.bus.as_deref(),
        args.bus_channel.as_deref(),
    )
    .await?;
    let mut server = snodo::Server::builder("snodo-proxy", env!("CARGO_PKG_VERSION"))
        .declare(Capability::Tools)
        .declare(Capability::Resources)
        .declare(Capability::Prompts)
        .declare(Capability::Completions)
        .request_timeout(request_timeout(&config));
    if let Some(roles) = &roles {
        server = server.policy(roles.clone());
    }
    if let Some(hub) = service.events {
        server = server.events(hub);
    }
    let server = server.build().map_err(std::io::Error::other)?;
    let proxy = Proxy::namespaced(server, &config.separator).map_err(std::io::Error::other)?;
    let mut supervisors = Supervisors::new(
        proxy.clone(),
        Duration::from_secs_f64(config.health_interval),
        pins,
    );
    let first = supervisors.apply(&config.backends, config.pin);
    let _ = tokio::time::timeout(FIRST_ATTEMPTS, futures_join(first)).await;
    let ops = ops::Ops {
        proxy: proxy.clone(),
        setting: Default::default(),
        notes: supervisors.notes(),
        mounts: servers::Mounts::default(),
    };
    settle(&ops, &config, supervisors.pins());
    if !config.servers.is_empty() && args.stdio {
        return Err(invalid(format!(
            "{}: [servers] needs --http (they are served at /servers/NAME/mcp)",
            path.display()
        )));
    }
    install_servers(&ops, &config, roles.as_ref()).map_err(invalid)?;
    let mut options = snodo::transport::http::HttpOptions::new();
    if let Some(records) = service.records {
        options = options.shared_sessions(records);
    }
    if let Some(rate) = config.limits.rate {
        options = options.rate_per_caller(rate);
    }
    let surface = ops.clone();
    options = options.other_paths(move |request| surface.clone().answer(request));
    let front = config.auth.as_ref().map(|auth| {
        // Virtual servers are resources on the front door's origin: with
        // no `resource` configured, that is the listener's.
        let (ops, config, roles) = (ops.clone(), config.clone(), roles.clone());
        let on_bound = move |url: &str| {
            ops.mounts.resource(url);
            if let Err(e) = install_servers(&ops, &config, roles.as_ref()) {
                eprintln!("snodo proxy: {e}");
            }
        };
        crate::Front {
            issuer: auth.issuer.clone(),
            resource: auth.resource.clone(),
            scopes: auth.scopes.clone(),
            challenge: auth.scopes.clone(),
            name: "snodo proxy",
            on_bound: Some(Box::new(on_bound)),
        }
    });
    keep_audit(&proxy, &path, config.audit.as_ref())?;
    tokio::spawn(watch(file, text, config, supervisors, roles, ops));
    crate::serve_until_stopped(proxy.server().clone(), args.http, front, options).await
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
    if config.pins_any() {
        let _ = write!(out, ", pin_file {}", config.pin_path(path).display());
    }
    out.push('\n');
    if let Some(audit) = &config.audit {
        let _ = writeln!(
            out,
            "audit: {}, arguments {}",
            audit.path,
            if audit.arguments {
                "written"
            } else {
                "left out"
            }
        );
    }
    if let Some(auth) = &config.auth {
        let _ = writeln!(
            out,
            "auth: issuer {}, resource {}, scopes [{}]",
            auth.issuer,
            auth.resource.as_deref().unwrap_or("the listener's URL"),
            auth.scopes.join(" ")
        );
        for role in auth.policy_roles().unwrap_or_default() {
            let _ = writeln!(out, "{}", role.describe());
        }
    }
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
                if let Some(transport) = &b.transport {
                    let _ = write!(out, " ({transport})");
                }
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
        if let Some(claims) = &b.env_from_claims {
            let vars: Vec<String> = claims.iter().map(|(v, c)| format!("{v}={c}")).collect();
            let _ = write!(
                out,
                ", per caller (env from claims: {}; at most {}, idle {} s)",
                vars.join(", "),
                b.max_callers.unwrap_or(snodo::proxy::MAX_CALLERS as u64),
                b.caller_idle
                    .unwrap_or(snodo::proxy::CALLER_IDLE.as_secs_f64())
            );
        }
        for policy in [b.shaping.describe(), b.limits.describe()] {
            if !policy.is_empty() {
                let _ = write!(out, ", {policy}");
            }
        }
        if b.pinned(config.pin) {
            out.push_str(", pinned");
        }
        out.push('\n');
    }
    for (name, keys) in &config.servers {
        let view = keys.view().map(|v| v.describe()).unwrap_or_default();
        let _ = write!(
            out,
            "server {name} at {}: {view}",
            servers::Mounts::path(name)
        );
        if !keys.roles.is_empty() {
            let _ = write!(out, "; {} roles of its own", keys.roles.len());
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

/// Writes the audit log `keys` name (beside the configuration file at
/// `config` when relative), or none.
fn keep_audit(
    proxy: &Proxy,
    config: &std::path::Path,
    keys: Option<&config::AuditKeys>,
) -> std::io::Result<()> {
    let audit = match keys {
        Some(keys) => {
            let dir = config.parent().unwrap_or_else(|| std::path::Path::new("."));
            let at = dir.join(&keys.path);
            let audit = snodo::proxy::Audit::to_file(&at, keys.arguments)
                .map_err(|e| invalid(format!("audit.path {}: {e}", at.display())))?;
            Some(audit)
        }
        None => None,
    };
    proxy.audit(audit);
    Ok(())
}

/// Builds and mounts the virtual servers `config` names.
fn install_servers(ops: &ops::Ops, config: &Config, roles: Option<&Roles>) -> Result<(), String> {
    let shared = servers::Shared {
        proxy: ops.proxy(),
        roles,
        request_timeout: request_timeout(config),
    };
    ops.mounts.install(config, &shared)
}

/// How long the proxy's server lets a request run: past every backend's
/// own `timeout` (by 5 s), so that a backend that hangs fails there first
/// and counts for its breaker and retries; at least
/// [`BRIDGE_REQUEST_TIMEOUT`](snodo::proxy::BRIDGE_REQUEST_TIMEOUT).
fn request_timeout(config: &Config) -> Duration {
    let longest = config
        .backends
        .values()
        .map(|b| b.timeout)
        .fold(0.0, f64::max);
    Duration::from_secs_f64(longest + 5.0).max(snodo::proxy::BRIDGE_REQUEST_TIMEOUT)
}

/// Tells the operational surface about the running configuration.
fn settle(ops: &ops::Ops, config: &Config, pins: Option<&PinStore>) {
    let mut setting = ops.setting.lock().unwrap_or_else(|e| e.into_inner());
    setting.backends = config
        .backends
        .iter()
        .map(|(id, b)| (id.clone(), b.is_required()))
        .collect();
    let admin = match &config.auth {
        None => ops::Admin::Loopback,
        Some(auth) => match &auth.admin_token {
            Some(token) => ops::Admin::Token(token.clone()),
            None => ops::Admin::Closed,
        },
    };
    // Who may use the admin surface is set at startup, as the rest of
    // [auth]; a running proxy takes a new token only (a rotation).
    match (&setting.admin, admin) {
        (ops::Admin::Token(_), ops::Admin::Token(token)) => {
            setting.admin = ops::Admin::Token(token)
        }
        (_, admin) if !setting.started => setting.admin = admin,
        _ => {}
    }
    setting.started = true;
    setting.pins = pins.cloned();
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
    roles: Option<Roles>,
    ops: ops::Ops,
) {
    let config_path = file.path().to_owned();
    let path = config_path.display().to_string();
    let mut unreadable: Option<String> = None;
    let mut pin_fault: Option<String> = None;
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        // An approval written by `snodo proxy approve` serves the changed
        // definitions again.
        if let Some(pins) = supervisors.pins() {
            match pins.reload() {
                Ok(changed) => {
                    pin_fault = None;
                    if changed {
                        supervisors.relist_pinned(config.pin);
                    }
                }
                Err(e) => {
                    let e = e.to_string();
                    if pin_fault.as_ref() != Some(&e) {
                        eprintln!("snodo proxy: {e} (the pins in memory are kept)");
                        pin_fault = Some(e);
                    }
                }
            }
        }
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
                    || next.pin_file != config.pin_file
                {
                    eprintln!(
                        "snodo proxy: {path}: separator, health_interval, [limits] and pin_file apply from the next start"
                    );
                }
                match (&roles, &next.auth, &config.auth) {
                    (Some(roles), Some(now), Some(before))
                        if now.issuer == before.issuer
                            && now.resource == before.resource
                            && now.scopes == before.scopes =>
                    {
                        roles.set(now.policy_roles().unwrap_or_default());
                    }
                    (_, now, before) if now != before => eprintln!(
                        "snodo proxy: {path}: [auth] applies from the next start (but for its roles)"
                    ),
                    _ => {}
                }
                if next.pins_any() && supervisors.pins().is_none() {
                    match PinStore::open(next.pin_path(&config_path)) {
                        Ok(pins) => supervisors.set_pins(pins),
                        Err(e) => {
                            eprintln!("snodo proxy: {e} (the running configuration is kept)");
                            continue;
                        }
                    }
                }
                if next.audit != config.audit
                    && let Err(e) = keep_audit(ops.proxy(), &config_path, next.audit.as_ref())
                {
                    eprintln!("snodo proxy: {e} (the running configuration is kept)");
                    continue;
                }
                if request_timeout(&next) > request_timeout(&config) {
                    eprintln!(
                        "snodo proxy: {path}: a backend timeout past the proxy's request time ({} s) applies from the next start",
                        request_timeout(&config).as_secs_f64()
                    );
                }
                eprintln!("snodo proxy: {path}: reloaded");
                supervisors.apply(&next.backends, next.pin);
                settle(&ops, &next, supervisors.pins());
                if next.servers != config.servers
                    && let Err(e) = install_servers(&ops, &next, roles.as_ref())
                {
                    eprintln!("snodo proxy: {path}: {e}");
                }
                config = next;
            }
            Err(e) => eprintln!("snodo proxy: {path}: {e} (the running configuration is kept)"),
        }
    }
}
