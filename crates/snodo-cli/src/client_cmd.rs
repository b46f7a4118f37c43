//! The client commands: `snodo <command> [options] <TARGET> [args...]`.
//!
//! TARGET is an `http(s)://` URL or a quoted command line that starts a
//! stdio server (`"python server.py"`, split like a shell would).

/// `println!` for the commands' output: when stdout is closed (`snodo tools
/// URL | head -1`), the command ends quietly instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::client_cmd::stdout_failed(e);
        }
    }};
}

pub(crate) mod auth;
mod render;
mod task_log;
mod terminal;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};
use snodo::client::{
    Client, ClientBuilder, ClientError, CompletionRef, ListenFilter, RequestOptions, Root,
    StderrMode, StdioCommand, Target, Task, TaskCall, TaskWait,
};
use snodo::mrtr::{ElicitAction, ElicitResponse};
use snodo::protocol::LogLevel;
use snodo::task::TaskStatus;

use crate::escape;
use render::Style;

/// The exit codes, as documented in `snodo --help`.
pub(crate) const EXIT_CODES: &str = "\
Client commands: snodo <command> [options] <TARGET> [args...]
  TARGET is an http(s):// URL, or a quoted command line that starts a stdio
  server (\"python server.py\"). Output is human-readable; --json prints the
  raw result for scripts.

Exit codes (client commands):
  0  success
  1  the tool returned a result with isError: true
  2  bad command line
  3  the server answered with a JSON-RPC error
  4  connection failure (cannot start or reach the server, connection lost,
     an HTTP answer that is not JSON-RPC)
  5  a request timed out
  6  the server broke the protocol, or asked for input the CLI cannot give
  7  not authorized: the server refused the credentials (snodo login TARGET)

Authorization (http targets): stored OAuth tokens (snodo login TARGET keeps
them in a file per issuer under ~/.config/snodo/oauth, mode 0600; refreshed
when they expire), --token TOKEN or SNODO_TOKEN, or --client-id ID
--client-secret SECRET for the client-credentials grant.";

/// The exit code of a tool result with `isError: true`.
const EXIT_TOOL_ERROR: u8 = 1;
/// The exit code of a bad command line.
const EXIT_USAGE: u8 = 2;
/// The exit code of a JSON-RPC error from the server.
const EXIT_RPC: u8 = 3;
/// The exit code of a connection failure.
const EXIT_CONNECTION: u8 = 4;
/// The exit code of a timeout.
const EXIT_TIMEOUT: u8 = 5;
/// The exit code of a protocol violation or unanswerable input request.
const EXIT_PROTOCOL: u8 = 6;
/// The exit code of a request the server would not authorize.
const EXIT_AUTH: u8 = 7;

/// The client commands.
#[derive(Subcommand)]
pub(crate) enum ClientCommand {
    /// Show the server's identity, protocol revision and capabilities.
    Discover(Box<Common>),
    /// List the server's tools.
    Tools(Box<Common>),
    /// Call a tool: snodo call TARGET TOOL [key=value ...] [--args '{...}'].
    Call(Box<CallArgs>),
    /// List the server's resources and resource templates.
    Resources(Box<Common>),
    /// Read a resource: snodo read TARGET URI.
    Read(Box<ReadArgs>),
    /// List the server's prompts.
    Prompts(Box<Common>),
    /// Get a prompt: snodo prompt TARGET NAME [key=value ...].
    Prompt(Box<PromptArgs>),
    /// Complete an argument: snodo complete TARGET prompt:NAME|resource:URI ARG=PREFIX.
    Complete(Box<CompleteArgs>),
    /// Print change notifications until interrupted: snodo listen TARGET [--tools] [--uri URI].
    Listen(Box<ListenArgs>),
    /// List the tasks `snodo call --task` started on TARGET, as the server sees them now.
    Tasks(Box<Common>),
    /// Show a task, or cancel it: snodo task TARGET ID [--cancel].
    Task(Box<TaskArgs>),
    /// Log in to a server with OAuth (authorization code with PKCE, a browser on this machine): snodo login TARGET.
    Login(Box<auth::LoginArgs>),
    /// Forget the OAuth tokens kept for a server: snodo logout TARGET.
    Logout(Box<auth::LogoutArgs>),
}

/// Options every client command takes.
#[derive(Args, Clone)]
pub(crate) struct Options {
    /// Print the raw JSON result instead of the human-readable form.
    #[arg(long)]
    json: bool,
    /// Per-request timeout in seconds (progress restarts it).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    timeout: f64,
    /// Speak this protocol revision instead of negotiating (2026-07-28, 2025-11-25, 2025-06-18).
    #[arg(long = "protocol", value_name = "VERSION")]
    protocol: Option<String>,
    /// An extra HTTP header, e.g. -H 'Authorization: Bearer TOKEN' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Ask the server for log messages at or above LEVEL (printed on stderr).
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<String>,
    /// What to do with a stdio server's stderr: inherit, quiet (discard) or capture (shown on failure).
    #[arg(long, value_name = "MODE", default_value = "inherit")]
    server_stderr: String,
    /// Answer elicitations with the form's defaults instead of asking.
    #[arg(long)]
    accept_defaults: bool,
    /// Never ask questions on the terminal; elicitations are declined.
    #[arg(long)]
    no_input: bool,
    /// A root directory offered to servers that ask (repeatable).
    #[arg(long = "root", value_name = "PATH")]
    roots: Vec<String>,
    #[command(flatten)]
    auth: auth::AuthOptions,
}

/// A command that takes only the target.
#[derive(Args)]
pub(crate) struct Common {
    /// An http(s):// URL or a quoted server command line.
    target: String,
    #[command(flatten)]
    opts: Options,
}

/// `snodo call`.
#[derive(Args)]
pub(crate) struct CallArgs {
    /// An http(s):// URL or a quoted server command line.
    target: String,
    /// The tool's name.
    tool: String,
    /// Arguments as key=value; values that parse as JSON are sent as JSON, others as strings.
    #[arg(value_name = "KEY=VALUE")]
    args: Vec<String>,
    /// All arguments as one JSON object (key=value pairs are merged into it).
    #[arg(long = "args", value_name = "JSON")]
    json_args: Option<String>,
    /// Allow the server to run the call as a task; shows the task's status
    /// and progress until its result.
    #[arg(long)]
    task: bool,
    #[command(flatten)]
    opts: Options,
}

/// `snodo task`.
#[derive(Args)]
pub(crate) struct TaskArgs {
    /// An http(s):// URL or a quoted server command line.
    target: String,
    /// The task's id.
    id: String,
    /// Ask the server to cancel the task, then show it.
    #[arg(long)]
    cancel: bool,
    #[command(flatten)]
    opts: Options,
}

/// `snodo read`.
#[derive(Args)]
pub(crate) struct ReadArgs {
    /// An http(s):// URL or a quoted server command line.
    target: String,
    /// The resource URI.
    uri: String,
    #[command(flatten)]
    opts: Options,
}

/// `snodo prompt`.
#[derive(Args)]
pub(crate) struct PromptArgs {
    /// An http(s):// URL or a quoted server command line.
    target: String,
    /// The prompt's name.
    name: String,
    /// Arguments as key=value (prompt arguments are strings).
    #[arg(value_name = "KEY=VALUE")]
    args: Vec<String>,
    #[command(flatten)]
    opts: Options,
}

/// `snodo complete`.
#[derive(Args)]
pub(crate) struct CompleteArgs {
    /// An http(s):// URL or a quoted server command line.
    target: String,
    /// What to complete for: prompt:NAME or resource:URI.
    reference: String,
    /// The argument and the text typed so far, as NAME=PREFIX.
    argument: String,
    /// Arguments already chosen, as key=value (repeatable).
    #[arg(long = "context", value_name = "KEY=VALUE")]
    context: Vec<String>,
    #[command(flatten)]
    opts: Options,
}

/// `snodo listen`.
#[derive(Args)]
pub(crate) struct ListenArgs {
    /// An http(s):// URL or a quoted server command line.
    target: String,
    /// Tool list changes (all three list kinds when no filter is given).
    #[arg(long)]
    tools: bool,
    /// Prompt list changes.
    #[arg(long)]
    prompts: bool,
    /// Resource list changes.
    #[arg(long)]
    resources: bool,
    /// Updates of this resource (repeatable).
    #[arg(long = "uri", value_name = "URI")]
    uris: Vec<String>,
    /// Stop after N notifications.
    #[arg(long, value_name = "N")]
    count: Option<u64>,
    #[command(flatten)]
    opts: Options,
}

/// A failure with its exit code.
pub(crate) struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// What went wrong, for a command that reports it itself.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
}

impl Failure {
    fn usage(message: impl Into<String>) -> Self {
        Self {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        let code = match &e {
            ClientError::Rpc { .. } | ClientError::TaskCancelled { .. } => EXIT_RPC,
            ClientError::Transport { .. } => EXIT_CONNECTION,
            ClientError::Timeout { .. } => EXIT_TIMEOUT,
            ClientError::Auth { .. } => EXIT_AUTH,
            _ => EXIT_PROTOCOL,
        };
        Self {
            code,
            message: e.to_string(),
        }
    }
}

/// Splits `key=value`; the value is JSON when it parses, else a string.
fn parse_pairs(pairs: &[String], json_values: bool) -> Result<Map<String, Value>, Failure> {
    let mut out = Map::new();
    for pair in pairs {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| Failure::usage(format!("expected key=value, got {pair:?}")))?;
        if key.is_empty() {
            return Err(Failure::usage(format!("empty key in {pair:?}")));
        }
        let value = if json_values {
            serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()))
        } else {
            Value::String(value.to_string())
        };
        out.insert(key.to_string(), value);
    }
    Ok(out)
}

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
fn builder(opts: &Options, style: &Style) -> Result<ClientBuilder, Failure> {
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
async fn connect(target: &str, opts: &Options, style: &Style) -> Result<Client, Failure> {
    let interactive = !opts.no_input && std::io::stdin().is_terminal();
    let plan = auth::plan(target, &opts.auth, interactive)?;
    connect_with(target, opts, style, plan).await
}

async fn connect_with(
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

/// Prints `value` as pretty JSON: exactly the value, with the characters
/// a terminal would act on written as JSON escapes.
fn print_json(value: &Value) {
    outln!(
        "{}",
        escape::json(&serde_json::to_string_pretty(value).unwrap_or_default())
    );
}

async fn run_command(cmd: ClientCommand, style: &Style) -> Result<u8, Failure> {
    match cmd {
        ClientCommand::Login(c) => {
            let oauth = auth::login_oauth(&c)?;
            let plan = auth::Plan::OAuth(oauth.clone());
            let client = connect_with(&c.target, &c.opts, style, plan).await?;
            let outcome = client.discover().await.map(|_| {
                let Some(issuer) = oauth.issuer_for(&c.target) else {
                    outln!("{} did not ask for authorization", c.target);
                    return 0;
                };
                let scopes = oauth.granted_scopes_for(&c.target).join(" ");
                let scopes = if scopes.is_empty() {
                    "none".into()
                } else {
                    scopes
                };
                outln!(
                    "Logged in to {} (issuer {}, scopes: {})",
                    c.target,
                    escape::line(&issuer),
                    escape::line(&scopes)
                );
                0
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Logout(c) => auth::logout(&c),
        ClientCommand::Discover(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let result = client.discover().await;
            let outcome = result.map(|d| {
                if c.opts.json {
                    print_json(&d);
                } else {
                    render::discover(style, &client, &d);
                }
            });
            finish(&client, &c.opts, outcome.map(|()| 0)).await
        }
        ClientCommand::Tools(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = client.list_tools().await.map(|tools| {
                let tools: Vec<Value> = tools
                    .iter()
                    .map(|t| serde_json::to_value(t).unwrap_or_default())
                    .collect();
                if c.opts.json {
                    print_json(&json!({"tools": tools}));
                } else {
                    render::tools(style, &tools);
                }
                0
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Call(c) => {
            let mut args = match &c.json_args {
                Some(text) => match serde_json::from_str(text) {
                    Ok(Value::Object(map)) => map,
                    Ok(_) => return Err(Failure::usage("--args must be a JSON object")),
                    Err(e) => return Err(Failure::usage(format!("--args is not JSON: {e}"))),
                },
                None => Map::new(),
            };
            args.extend(parse_pairs(&c.args, true)?);
            let client = connect(&c.target, &c.opts, style).await?;
            if c.task {
                let outcome = call_as_task(&client, &c, Value::Object(args), style).await;
                return finish(&client, &c.opts, outcome).await;
            }
            let bar = terminal::ProgressBar::new(style.clone(), c.opts.json);
            let progress = bar.clone();
            let opts = RequestOptions::new().on_progress(move |p| progress.update(&p));
            let result = client
                .call_tool_with(&c.tool, Value::Object(args), opts)
                .await;
            bar.finish();
            let outcome = result.and_then(|r| {
                let r = r.to_wire();
                if snodo::client::is_input_required(&r) {
                    if c.opts.json {
                        print_json(&r);
                    }
                    return Err(ClientError::Protocol {
                        kind: snodo::client::ProtocolErrorKind::InputRequest,
                        message: "the server asked for input the CLI cannot give (sampling, or a declined form)".into(),
                    });
                }
                let is_error = r.get("isError").and_then(Value::as_bool) == Some(true);
                if c.opts.json {
                    print_json(&r);
                } else {
                    render::call_result(style, &r);
                }
                Ok(if is_error { EXIT_TOOL_ERROR } else { 0 })
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Resources(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let caps = client.server_capabilities();
            let outcome = async {
                let resources = client.list_resources().await?;
                let templates = if caps.get("resources").is_some() || client.is_legacy() {
                    client.list_resource_templates().await.unwrap_or_default()
                } else {
                    Vec::new()
                };
                if c.opts.json {
                    print_json(&json!({"resources": resources, "resourceTemplates": templates}));
                } else {
                    render::resources(style, &resources, &templates);
                }
                Ok(0)
            }
            .await;
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Read(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = client.read_resource(&c.uri).await.map(|r| {
                if c.opts.json {
                    print_json(&r);
                } else {
                    render::read_result(style, &r);
                }
                0
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Prompts(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = client.list_prompts().await.map(|prompts| {
                if c.opts.json {
                    print_json(&json!({"prompts": prompts}));
                } else {
                    render::prompts(style, &prompts);
                }
                0
            });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Prompt(c) => {
            let args = parse_pairs(&c.args, false)?;
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = client
                .get_prompt(&c.name, Value::Object(args))
                .await
                .map(|r| {
                    if c.opts.json {
                        print_json(&r);
                    } else {
                        render::prompt_result(style, &r);
                    }
                    0
                });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Complete(c) => {
            let reference = match c.reference.split_once(':') {
                Some(("prompt", name)) => CompletionRef::Prompt(name.to_string()),
                Some(("resource", uri)) => CompletionRef::Resource(uri.to_string()),
                _ => {
                    return Err(Failure::usage(
                        "the reference must be prompt:NAME or resource:URI",
                    ));
                }
            };
            let (name, prefix) = c
                .argument
                .split_once('=')
                .ok_or_else(|| Failure::usage("the argument must be NAME=PREFIX"))?;
            let context = parse_pairs(&c.context, false)?;
            let client = connect(&c.target, &c.opts, style).await?;
            let context = (!context.is_empty()).then_some(context);
            let outcome = client
                .complete(reference, name, prefix, context)
                .await
                .map(|r| {
                    if c.opts.json {
                        print_json(&r);
                    } else {
                        render::completion(style, &r);
                    }
                    0
                });
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Listen(c) => {
            let mut filter = ListenFilter::new();
            filter.tools_list_changed = c.tools;
            filter.prompts_list_changed = c.prompts;
            filter.resources_list_changed = c.resources;
            filter.resource_subscriptions = c.uris.clone();
            if filter == ListenFilter::new() {
                filter = ListenFilter::all_lists();
            }
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = listen(&client, filter, &c, style).await;
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Tasks(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = list_tasks(&client, &c, style).await;
            finish(&client, &c.opts, outcome).await
        }
        ClientCommand::Task(c) => {
            let client = connect(&c.target, &c.opts, style).await?;
            let outcome = show_task(&client, &c, style).await;
            finish(&client, &c.opts, outcome).await
        }
    }
}

/// A task's wire form (for `--json`).
fn task_json(task: &Task) -> Value {
    let mut out = json!({
        "taskId": task.task_id,
        "status": task.status.as_str(),
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttlMs": task.ttl_ms,
    });
    if let Some(message) = &task.status_message {
        out["statusMessage"] = message.clone().into();
    }
    if let Some(interval) = task.poll_interval_ms {
        out["pollIntervalMs"] = interval.into();
    }
    if !task.input_requests.is_empty() {
        out["inputRequests"] = Value::Object(task.input_requests.clone());
    }
    if let Some(result) = &task.result {
        out["result"] = result.to_wire();
    }
    if let Some(error) = &task.error {
        out["error"] = error.clone();
    }
    out
}

/// One line about a task, on stderr while waiting and in listings.
fn task_line(style: &Style, task: &Task) -> String {
    let status = match task.status {
        TaskStatus::Completed => style.bold(task.status.as_str()),
        TaskStatus::Failed | TaskStatus::Cancelled => style.red(task.status.as_str()),
        _ => style.cyan(task.status.as_str()),
    };
    let id = style.dim(&escape::line(&task.task_id));
    match &task.status_message {
        Some(message) => format!("{id} {status}  {}", escape::line(message)),
        None => format!("{id} {status}"),
    }
}

/// `snodo call --task`: the call, then the task's status until its result.
async fn call_as_task(
    client: &Client,
    c: &CallArgs,
    args: Value,
    style: &Style,
) -> Result<u8, ClientError> {
    let task = match client
        .call_tool_as_task(&c.tool, args, RequestOptions::new())
        .await?
    {
        TaskCall::Done(result) => return Ok(print_call_result(&c.opts, style, &result.to_wire())),
        TaskCall::Task(task) => task,
        _ => unreachable!("TaskCall has two variants"),
    };
    task_log::remember(&c.target, &task.task_id, &c.tool);
    if !c.opts.json {
        eprintln!(
            "{} task {} started",
            style.dim("·"),
            escape::line(&task.task_id)
        );
    }
    let json = c.opts.json;
    let waiting = client.wait_task(&task.task_id, TaskWait::new(), |t| {
        if !json {
            eprintln!("{}", task_line(style, t));
        }
    });
    let result = tokio::select! {
        r = waiting => r?,
        _ = tokio::signal::ctrl_c() => {
            client.cancel_task(&task.task_id).await?;
            eprintln!(
                "{} asked the server to cancel task {}",
                style.dim("·"),
                escape::line(&task.task_id)
            );
            return Err(ClientError::TaskCancelled { task_id: task.task_id });
        }
    };
    Ok(print_call_result(&c.opts, style, &result.to_wire()))
}

/// Prints a tool result; its exit code.
fn print_call_result(opts: &Options, style: &Style, r: &Value) -> u8 {
    let is_error = r.get("isError").and_then(Value::as_bool) == Some(true);
    if opts.json {
        print_json(r);
    } else {
        render::call_result(style, r);
    }
    if is_error { EXIT_TOOL_ERROR } else { 0 }
}

/// `snodo tasks TARGET`.
async fn list_tasks(client: &Client, c: &Common, style: &Style) -> Result<u8, ClientError> {
    let mut tasks = Vec::new();
    let mut gone = Vec::new();
    for (id, tool) in task_log::list(&c.target) {
        match client.get_task(&id).await {
            Ok(task) => tasks.push((task, tool)),
            Err(ClientError::Rpc { error, .. })
                if error.code() == snodo::error::code::INVALID_PARAMS =>
            {
                gone.push(id)
            }
            Err(e) => return Err(e),
        }
    }
    task_log::forget(&c.target, &gone);
    if c.opts.json {
        let list: Vec<Value> = tasks
            .iter()
            .map(|(t, tool)| {
                let mut v = task_json(t);
                v["tool"] = tool.clone().into();
                v
            })
            .collect();
        print_json(&json!({ "tasks": list }));
    } else if tasks.is_empty() {
        outln!("no tasks (snodo call --task starts one)");
    } else {
        for (task, tool) in &tasks {
            outln!(
                "{}  {}  {}",
                task_line(style, task),
                style.bold(&escape::line(tool)),
                style.dim(&escape::line(&task.created_at))
            );
        }
    }
    Ok(0)
}

/// `snodo task TARGET ID [--cancel]`.
async fn show_task(client: &Client, c: &TaskArgs, style: &Style) -> Result<u8, ClientError> {
    if c.cancel {
        client.cancel_task(&c.id).await?;
    }
    let task = client.get_task(&c.id).await?;
    if c.opts.json {
        print_json(&task_json(&task));
    } else {
        outln!("{}", task_line(style, &task));
        outln!(
            "  created {}, updated {}",
            escape::line(&task.created_at),
            escape::line(&task.last_updated_at)
        );
        if let Some(ttl) = task.ttl_ms {
            outln!("  kept {} s from creation", ttl / 1000);
        }
        for (key, request) in &task.input_requests {
            let message = request["params"]["message"].as_str().unwrap_or("");
            outln!(
                "  waits on {}: {} {}",
                escape::line(key),
                escape::line(request["method"].as_str().unwrap_or("?")),
                escape::line(message)
            );
        }
        if let Some(result) = &task.result {
            render::call_result(style, &result.to_wire());
        }
        if let Some(error) = &task.error {
            outln!(
                "  error {}: {}",
                render::json_text(&error["code"]),
                escape::line(error["message"].as_str().unwrap_or(""))
            );
        }
    }
    Ok(match (&task.status, &task.result) {
        (TaskStatus::Completed, Some(r)) if r.is_error() => EXIT_TOOL_ERROR,
        (TaskStatus::Failed, _) | (TaskStatus::Cancelled, _) => EXIT_RPC,
        _ => 0,
    })
}

async fn listen(
    client: &Client,
    filter: ListenFilter,
    c: &ListenArgs,
    style: &Style,
) -> Result<u8, ClientError> {
    let mut sub = client.listen(filter).await?;
    if !c.opts.json {
        eprintln!(
            "{} listening for {} (Ctrl-C to stop)",
            style.dim("·"),
            render::json_text(sub.acknowledged())
        );
    }
    let mut seen = 0u64;
    loop {
        if c.count.is_some_and(|n| seen >= n) {
            return Ok(0);
        }
        let next = tokio::select! {
            n = sub.next() => n,
            _ = tokio::signal::ctrl_c() => return Ok(0),
        };
        let Some(n) = next else {
            if !c.opts.json {
                eprintln!("{} the server ended the subscription", style.dim("·"));
            }
            return Ok(0);
        };
        seen += 1;
        if c.opts.json {
            outln!(
                "{}",
                render::json_text(&json!({"method": n.method, "params": n.params}))
            );
        } else {
            render::notification(style, &n.method, &n.params);
        }
    }
}

/// Closes the client and turns the outcome into an exit code.
async fn finish(
    client: &Client,
    opts: &Options,
    outcome: Result<u8, ClientError>,
) -> Result<u8, Failure> {
    client.close().await;
    match outcome {
        Ok(code) => Ok(code),
        Err(e) => {
            if opts.server_stderr == "capture"
                && let Some(text) = client.stderr()
                && !text.trim().is_empty()
            {
                eprintln!("server stderr:\n{}", escape::block(text.trim_end()));
            }
            Err(e.into())
        }
    }
}

/// Runs a client command and returns the process exit code.
pub(crate) fn main(cmd: ClientCommand, verbose: u8) -> ExitCode {
    let _telemetry =
        crate::telemetry::init("snodo-cli", verbose, crate::telemetry::LogStyle::Client);
    let style = Style::detect();
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
    match runtime.block_on(run_command(cmd, &style)) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("{} {}", style.error("error:"), escape::line(&f.message));
            ExitCode::from(f.code)
        }
    }
}

/// Ends the command after a failed write to stdout: quietly (exit 0) when
/// the reader went away, with the error otherwise.
pub(crate) fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("snodo: cannot write the output: {e}");
    std::process::exit(1);
}
