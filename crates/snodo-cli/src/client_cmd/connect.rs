//! Building the client from a command's options, and connecting it to the
//! target.

use std::io::IsTerminal;
use std::time::Duration;

use serde_json::Map;
use snodo::client::{Client, ClientBuilder, Root, StderrMode, StdioCommand, Target};
use snodo::handler::{ElicitAction, ElicitResponse};
use snodo::model::LogLevel;

use super::args::Options;
use super::failure::Failure;
use super::render::Style;
use super::{auth, terminal};

/// A client named `client_name` with the options every command that talks
/// to a server shares: `--timeout` (progress restarts it) and `-H` headers.
pub(crate) fn base_builder(
    client_name: &str,
    timeout: f64,
    headers: &[String],
) -> Result<ClientBuilder, Failure> {
    if !(timeout > 0.0 && timeout.is_finite()) {
        return Err(Failure::usage(
            "--timeout must be a positive number of seconds",
        ));
    }
    let mut b = Client::builder()
        .client_info(client_name, env!("CARGO_PKG_VERSION"))
        .timeout(Duration::from_secs_f64(timeout))
        .reset_timeout_on_progress(true);
    for header in headers {
        let (name, value) = header
            .split_once(':')
            .ok_or_else(|| Failure::usage(format!("expected 'Name: value', got {header:?}")))?;
        b = b.header(name.trim(), value.trim());
    }
    Ok(b)
}

/// `builder` authorized as `plan` says.
pub(crate) fn authorize(builder: ClientBuilder, plan: auth::Plan) -> ClientBuilder {
    match plan {
        auth::Plan::Header(value) => builder.header("authorization", &value),
        auth::Plan::OAuth(oauth) => builder.oauth(oauth),
        auth::Plan::Nothing => builder,
    }
}

/// The `--server-stderr` mode named `mode`.
pub(crate) fn stderr_mode(mode: &str) -> Result<StderrMode, Failure> {
    match mode {
        "inherit" => Ok(StderrMode::Inherit),
        "quiet" | "null" => Ok(StderrMode::Null),
        "capture" => Ok(StderrMode::Capture),
        other => Err(Failure::usage(format!(
            "--server-stderr: unknown mode {other:?}"
        ))),
    }
}

/// Builds the client for a command's options.
pub(super) fn builder(opts: &Options, style: &Style) -> Result<ClientBuilder, Failure> {
    let mut b = base_builder("snodo-cli", opts.timeout, &opts.headers)?;
    if let Some(version) = &opts.protocol {
        b = b.protocol_version(version);
    }
    if let Some(level) = &opts.log_level {
        let level = LogLevel::parse(level)
            .ok_or_else(|| Failure::usage(format!("unknown log level {level:?}")))?;
        b = b.log_level(level);
    }
    let log_style = style.clone();
    b = b.on_log(move |m| terminal::print_log(&log_style, &m));
    let interactive = !opts.no_input && !opts.accept_defaults && std::io::stdin().is_terminal();
    if opts.accept_defaults {
        b = b.on_elicit_form(|req| async move { Ok(req.accept_defaults()) });
    } else if interactive {
        let form_style = style.clone();
        b = b.on_elicit_form(move |req| terminal::ask_form(form_style.clone(), req));
        let url_style = style.clone();
        b = b.on_elicit_url(move |req| terminal::ask_url(url_style.clone(), req));
    } else {
        b = b.on_elicit_form(|_req| async move {
            Ok(ElicitResponse {
                action: ElicitAction::Decline,
                content: Map::new(),
            })
        });
    }
    if !opts.roots.is_empty() {
        let mut roots = Vec::new();
        for path in &opts.roots {
            let abs = std::path::absolute(path)
                .map_err(|e| Failure::usage(format!("--root {path}: {e}")))?;
            roots.push(Root::new(format!("file://{}", abs.display()), None));
        }
        b = b.roots(roots);
    }
    Ok(b)
}

/// Connects to TARGET.
pub(super) async fn connect(
    target: &str,
    opts: &Options,
    style: &Style,
) -> Result<Client, Failure> {
    let interactive = !opts.no_input && std::io::stdin().is_terminal();
    let plan = auth::plan(target, &opts.auth, interactive)?;
    connect_with(target, opts, style, plan).await
}

pub(super) async fn connect_with(
    target: &str,
    opts: &Options,
    style: &Style,
    plan: auth::Plan,
) -> Result<Client, Failure> {
    let b = authorize(builder(opts, style)?, plan);
    let stderr = stderr_mode(&opts.server_stderr)?;
    let target = if Target::is_url(target) {
        Target::from(target)
    } else {
        Target::Stdio(
            StdioCommand::parse(target)
                .map_err(|e| Failure::usage(e.to_string()))?
                .stderr(stderr),
        )
    };
    Ok(b.connect(target).await?)
}
