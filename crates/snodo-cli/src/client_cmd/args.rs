//! The client commands' command line: the commands, their arguments and the
//! options they share.

use clap::{Args, Subcommand};
use serde_json::{Map, Value};

use super::failure::Failure;

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
    /// List the server's skills, or fetch one (verified against its entry): snodo skills TARGET [SKILL] [--out DIR].
    Skills(Box<SkillsArgs>),
    /// Complete an argument: snodo complete TARGET prompt:NAME|resource:URI ARG=PREFIX.
    Complete(Box<CompleteArgs>),
    /// Print change notifications until interrupted: snodo listen TARGET [--tools] [--uri URI].
    Listen(Box<ListenArgs>),
    /// List the tasks `snodo call --task` started on TARGET, as the server sees them now.
    Tasks(Box<Common>),
    /// Show a task, or cancel it: snodo task TARGET ID [--cancel].
    Task(Box<TaskArgs>),
    /// Log in to a server with OAuth (authorization code with PKCE, a browser on this machine): snodo login TARGET.
    Login(Box<LoginArgs>),
    /// Forget the OAuth tokens kept for a server: snodo logout TARGET.
    Logout(Box<LogoutArgs>),
}

/// Options every client command takes.
#[derive(Args, Clone)]
pub(crate) struct Options {
    /// Print the raw JSON result instead of the human-readable form.
    #[arg(long)]
    pub(super) json: bool,
    /// Per-request timeout in seconds (progress restarts it).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub(super) timeout: f64,
    /// Speak this protocol revision instead of negotiating (2026-07-28, 2025-11-25, 2025-06-18).
    #[arg(long = "protocol", value_name = "VERSION")]
    pub(super) protocol: Option<String>,
    /// An extra HTTP header, e.g. -H 'Authorization: Bearer TOKEN' (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub(super) headers: Vec<String>,
    /// Ask the server for log messages at or above LEVEL (printed on stderr).
    #[arg(long, value_name = "LEVEL")]
    pub(super) log_level: Option<String>,
    /// What to do with a stdio server's stderr: inherit, quiet (discard) or capture (shown on failure).
    #[arg(long, value_name = "MODE", default_value = "inherit")]
    pub(super) server_stderr: String,
    /// Answer elicitations with the form's defaults instead of asking.
    #[arg(long)]
    pub(super) accept_defaults: bool,
    /// Never ask questions on the terminal; elicitations are declined.
    #[arg(long)]
    pub(super) no_input: bool,
    /// A root directory offered to servers that ask (repeatable).
    #[arg(long = "root", value_name = "PATH")]
    pub(super) roots: Vec<String>,
    #[command(flatten)]
    pub(super) auth: AuthOptions,
}

/// A command that takes only the target.
#[derive(Args)]
pub(crate) struct Common {
    /// An http(s):// URL or a quoted server command line.
    pub(super) target: String,
    #[command(flatten)]
    pub(super) opts: Options,
}

/// `snodo call`.
#[derive(Args)]
pub(crate) struct CallArgs {
    /// An http(s):// URL or a quoted server command line.
    pub(super) target: String,
    /// The tool's name.
    pub(super) tool: String,
    /// Arguments as key=value; values that parse as JSON are sent as JSON, others as strings.
    #[arg(value_name = "KEY=VALUE")]
    pub(super) args: Vec<String>,
    /// All arguments as one JSON object (key=value pairs are merged into it).
    #[arg(long = "args", value_name = "JSON")]
    pub(super) json_args: Option<String>,
    /// Allow the server to run the call as a task; shows the task's status
    /// and progress until its result.
    #[arg(long)]
    pub(super) task: bool,
    #[command(flatten)]
    pub(super) opts: Options,
}

/// `snodo task`.
#[derive(Args)]
pub(crate) struct TaskArgs {
    /// An http(s):// URL or a quoted server command line.
    pub(super) target: String,
    /// The task's id.
    pub(super) id: String,
    /// Ask the server to cancel the task, then show it.
    #[arg(long)]
    pub(super) cancel: bool,
    #[command(flatten)]
    pub(super) opts: Options,
}

/// `snodo skills`.
#[derive(Args)]
pub(crate) struct SkillsArgs {
    /// An http(s):// URL or a quoted server command line.
    pub(super) target: String,
    /// The skill to fetch: its name or the URI of its SKILL.md. Without it,
    /// the skills are listed.
    pub(super) skill: Option<String>,
    /// Write the fetched skill's files below DIR, at their path in the skill
    /// (DIR/SKILL.md, DIR/references/...), instead of printing its SKILL.md.
    #[arg(long, value_name = "DIR", requires = "skill")]
    pub(super) out: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(super) opts: Options,
}

/// `snodo read`.
#[derive(Args)]
pub(crate) struct ReadArgs {
    /// An http(s):// URL or a quoted server command line.
    pub(super) target: String,
    /// The resource URI.
    pub(super) uri: String,
    #[command(flatten)]
    pub(super) opts: Options,
}

/// `snodo prompt`.
#[derive(Args)]
pub(crate) struct PromptArgs {
    /// An http(s):// URL or a quoted server command line.
    pub(super) target: String,
    /// The prompt's name.
    pub(super) name: String,
    /// Arguments as key=value (prompt arguments are strings).
    #[arg(value_name = "KEY=VALUE")]
    pub(super) args: Vec<String>,
    #[command(flatten)]
    pub(super) opts: Options,
}

/// `snodo complete`.
#[derive(Args)]
pub(crate) struct CompleteArgs {
    /// An http(s):// URL or a quoted server command line.
    pub(super) target: String,
    /// What to complete for: prompt:NAME or resource:URI.
    pub(super) reference: String,
    /// The argument and the text typed so far, as NAME=PREFIX.
    pub(super) argument: String,
    /// Arguments already chosen, as key=value (repeatable).
    #[arg(long = "context", value_name = "KEY=VALUE")]
    pub(super) context: Vec<String>,
    #[command(flatten)]
    pub(super) opts: Options,
}

/// `snodo listen`.
#[derive(Args)]
pub(crate) struct ListenArgs {
    /// An http(s):// URL or a quoted server command line.
    pub(super) target: String,
    /// Tool list changes (all three list kinds when no filter is given).
    #[arg(long)]
    pub(super) tools: bool,
    /// Prompt list changes.
    #[arg(long)]
    pub(super) prompts: bool,
    /// Resource list changes.
    #[arg(long)]
    pub(super) resources: bool,
    /// Updates of this resource (repeatable).
    #[arg(long = "uri", value_name = "URI")]
    pub(super) uris: Vec<String>,
    /// Stop after N notifications.
    #[arg(long, value_name = "N")]
    pub(super) count: Option<u64>,
    #[command(flatten)]
    pub(super) opts: Options,
}

/// Splits `key=value`; the value is JSON when it parses, else a string.
pub(super) fn parse_pairs(
    pairs: &[String],
    json_values: bool,
) -> Result<Map<String, Value>, Failure> {
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

/// How the client commands authorize.
#[derive(Args, Clone, Default)]
pub(crate) struct AuthOptions {
    /// A bearer token to send as is, instead of stored OAuth tokens (also SNODO_TOKEN).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "SNODO_TOKEN",
        hide_env_values = true
    )]
    pub(crate) token: Option<String>,
    /// Authorize as this client: with --client-secret, the client-credentials
    /// grant; with --workload-token, workload identity federation; with
    /// --idp-token-endpoint, enterprise-managed authorization.
    #[arg(long, value_name = "ID")]
    pub(crate) client_id: Option<String>,
    /// A workload's JWT, read from FILE at each token request: the
    /// jwt-bearer grant as --client-id, a public client (workload identity
    /// federation, a draft of the authorization extensions).
    #[arg(
        long,
        value_name = "FILE",
        requires = "client_id",
        conflicts_with = "idp_token_endpoint"
    )]
    pub(crate) workload_token: Option<std::path::PathBuf>,
    /// Enterprise-managed authorization: the identity provider's token
    /// endpoint, where the user's ID token (--id-token) is exchanged for an
    /// identity assertion grant that the server's authorization server takes
    /// from --client-id and --client-secret.
    #[arg(long, value_name = "URL", requires_all = ["client_id", "client_secret", "idp_client_id", "id_token"])]
    pub(crate) idp_token_endpoint: Option<String>,
    /// The client's id at the identity provider (with --idp-token-endpoint).
    #[arg(long, value_name = "ID", requires = "idp_token_endpoint")]
    pub(crate) idp_client_id: Option<String>,
    /// The client's secret at the identity provider, when it is a
    /// confidential client there (also SNODO_IDP_CLIENT_SECRET).
    #[arg(
        long,
        value_name = "SECRET",
        env = "SNODO_IDP_CLIENT_SECRET",
        hide_env_values = true,
        requires = "idp_token_endpoint"
    )]
    pub(crate) idp_client_secret: Option<String>,
    /// A file holding the user's ID token from the identity provider (with
    /// --idp-token-endpoint), read at each exchange.
    #[arg(long, value_name = "FILE", requires = "idp_token_endpoint")]
    pub(crate) id_token: Option<std::path::PathBuf>,
    /// The secret of --client-id (also SNODO_CLIENT_SECRET).
    #[arg(
        long,
        value_name = "SECRET",
        env = "SNODO_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub(crate) client_secret: Option<String>,
    /// Ask for DPoP-bound tokens where the authorization server takes ES256
    /// proofs (a draft of the authorization extensions), proved with the key
    /// kept beside the stored tokens (made on first use).
    #[arg(long, conflicts_with = "token")]
    pub(crate) dpop: bool,
}

/// `snodo login`.
#[derive(Args)]
pub(crate) struct LoginArgs {
    /// The server's http(s):// URL.
    pub(crate) target: String,
    /// Print the authorization URL without trying to open a browser.
    #[arg(long)]
    pub(crate) no_browser: bool,
    /// The loopback port to receive the redirect on (default: any free port).
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub(crate) port: u16,
    #[command(flatten)]
    pub(crate) opts: Options,
}

/// `snodo logout`.
#[derive(Args)]
pub(crate) struct LogoutArgs {
    /// The server's http(s):// URL.
    pub(crate) target: String,
}
