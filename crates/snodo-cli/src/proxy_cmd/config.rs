//! The `snodo proxy` configuration file (TOML):
//!
//! ```toml
//! separator = "."            # between a backend's id and its names (default ".")
//! health_interval = 5        # seconds between health checks (default 5)
//!
//! [backends.demo]
//! command = "snodo demo --stdio"       # a command line, or ["program", "arg", ...]
//! env = { RUST_LOG = "warn" }          # for a command
//! stderr = "quiet"                     # a command's stderr: inherit (default) or quiet
//!
//! [backends.docs]
//! url = "http://127.0.0.1:8080/mcp"
//! transport = "streamable-http"       # or "sse": a 2024-11-05 HTTP+SSE server, url its GET stream
//! headers = { Authorization = "Bearer ${DOCS_TOKEN}" }   # ${NAME}: the proxy's environment
//! timeout = 60                         # seconds per request (default 300)
//! connect_timeout = 10                 # seconds to start and list it (default 30)
//! expose = ["search_*", "get_*"]       # only what these name patterns match (default: all)
//! hide = { tools = ["delete_*"], resources = ["secret://*"] }  # never these
//! alias = { search_docs = "search" }   # served as docs.search
//! inject = { lang = "en" }             # an argument a call leaves out
//! inject_override = { tenant = "acme" } # an argument the caller cannot set
//! max_argument_bytes = 65536           # larger arguments are refused
//! concurrency = 8                      # calls in flight (default: no cap)
//! rate = "30/s"                        # calls per period (default: no limit)
//! retry = { attempts = 3, budget_percent = 20 }   # read-only and idempotent tools
//! circuit_breaker = { failures = 5, open_for = 30 }
//!
//! pin = true                           # pin its definitions (default: the file's `pin`)
//! forward_identity = true              # X-Snodo-Subject and X-Snodo-Scopes (a url's)
//! required = false                     # /readyz does not wait for it (default true)
//!
//! [backends.github]                    # a command started once per caller (needs [auth])
//! command = "github-mcp --stdio"
//! env_from_claims = { GITHUB_USER = "sub", TEAMS = "groups" }   # variable = claim
//! max_callers = 64                     # callers' servers at once (default 64)
//! caller_idle = 300                    # seconds before an idle one stops (default 300)
//!
//! [limits]
//! per_principal = "20/s"               # each caller's requests (HTTP)
//! ```
//!
//! ```toml
//! [auth]                               # a token from this issuer on every request (HTTP)
//! issuer = "https://login.example.com"
//! resource = "https://gateway.example.com/mcp"   # default: the listener's URL
//! scopes = ["mcp:tools"]               # what a 401 challenge asks for
//!
//! [[auth.roles]]                       # without roles, a valid token sees everything
//! name = "reader"
//! when = { scope = ["reports:read"] }  # claims that grant the role
//! tools = ["reports.get_*"]            # names served, as patterns
//! resources = ["reports+*"]
//! prompts = []
//! ```
//!
//! ```toml
//! [audit]
//! path = "audit.jsonl"                 # beside this file when relative
//! arguments = false                    # write each request's arguments (default false)
//! ```
//!
//! At the top, `pin = true` pins every backend's definitions and
//! `pin_file` names the file that keeps them (default: beside this file,
//! its name with `.pins.json`).
//!
//! `expose` and `hide` take a list of patterns for every kind, or a table
//! of lists by kind (`tools`, `prompts`, `resources`); `*` is any run of
//! characters, `?` one. A resource is matched by its name or its URI.
//! Changing only these shaping keys relists the backend without restarting
//! it.

use std::collections::BTreeMap;

use serde::Deserialize;
use snodo::proxy::{BackendLimits, Component, Glob, Role, Shaping, View};
use snodo::server::Rate;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    #[serde(default = "default_separator")]
    pub(crate) separator: String,
    #[serde(default = "default_health_interval")]
    pub(crate) health_interval: f64,
    #[serde(default)]
    pub(crate) backends: BTreeMap<String, Backend>,
    #[serde(default)]
    pub(crate) limits: FrontLimits,
    #[serde(default)]
    pub(crate) pin: bool,
    pub(crate) pin_file: Option<String>,
    pub(crate) auth: Option<Auth>,
    pub(crate) audit: Option<AuditKeys>,
    /// The virtual servers, by name.
    #[serde(default)]
    pub(crate) servers: BTreeMap<String, ServerKeys>,
}

/// `[audit]`: a JSON line per forwarded request.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuditKeys {
    /// The file, beside the configuration when relative.
    pub(crate) path: String,
    /// Whether each request's arguments are written.
    #[serde(default)]
    pub(crate) arguments: bool,
}

/// `[auth]`: the front door.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Auth {
    pub(crate) issuer: String,
    pub(crate) resource: Option<String>,
    #[serde(default)]
    pub(crate) scopes: Vec<String>,
    #[serde(default)]
    pub(crate) roles: Vec<RoleKeys>,
    /// The bearer token of the admin surface (`${NAME}` read from the
    /// environment).
    pub(crate) admin_token: Option<String>,
}

impl Auth {
    /// The roles as the policy holds them; without roles, one that lets
    /// every token see everything.
    pub(crate) fn policy_roles(&self) -> Result<Vec<Role>, String> {
        if self.roles.is_empty() {
            let all = || [Glob::new("*").expect("a valid pattern")];
            return Ok(vec![
                Role::new("any token")
                    .tools(all())
                    .resources(all())
                    .prompts(all()),
            ]);
        }
        roles_of(&self.roles, "auth.roles")
    }
}

/// The roles `keys` give (the tables at `key`); an error names the key.
pub(crate) fn roles_of(keys: &[RoleKeys], key: &str) -> Result<Vec<Role>, String> {
    let mut names = std::collections::BTreeSet::new();
    for role in keys {
        if role.name.trim().is_empty() {
            return Err(format!("{key}: each role has a name"));
        }
        if !names.insert(role.name.as_str()) {
            return Err(format!("{key}: two roles are named {:?}", role.name));
        }
    }
    keys.iter().map(|r| r.role(key)).collect()
}

/// One `[[auth.roles]]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RoleKeys {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) when: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(crate) tools: Vec<String>,
    #[serde(default)]
    pub(crate) resources: Vec<String>,
    #[serde(default)]
    pub(crate) prompts: Vec<String>,
}

impl RoleKeys {
    fn role(&self, key: &str) -> Result<Role, String> {
        let name = &self.name;
        let mut role = Role::new(name);
        for (claim, values) in &self.when {
            if values.is_empty() {
                return Err(format!(
                    "{key} {name:?}: when.{claim}: give the values that grant the role"
                ));
            }
            role = role.when(claim, values.iter().cloned());
        }
        let globs = |field: &str, patterns: &[String]| -> Result<Vec<Glob>, String> {
            patterns
                .iter()
                .map(|p| Glob::new(p).map_err(|e| format!("{key} {name:?}: {field}: {e}")))
                .collect()
        };
        Ok(role
            .tools(globs("tools", &self.tools)?)
            .resources(globs("resources", &self.resources)?)
            .prompts(globs("prompts", &self.prompts)?))
    }
}

/// One `[servers.NAME]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerKeys {
    pub(crate) backends: Vec<String>,
    pub(crate) tools: Option<Vec<String>>,
    pub(crate) resources: Option<Vec<String>>,
    pub(crate) prompts: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) roles: Vec<RoleKeys>,
}

/// The most virtual servers a file may name.
pub(crate) const MAX_SERVERS: usize = 64;

impl ServerKeys {
    /// The view it serves; an error names the key.
    pub(crate) fn view(&self) -> Result<View, String> {
        let globs = |key: &str, patterns: &[String]| -> Result<Vec<Glob>, String> {
            patterns
                .iter()
                .map(|p| Glob::new(p).map_err(|e| format!("{key}: {e}")))
                .collect()
        };
        let mut view = View::new(self.backends.iter().cloned());
        if let Some(tools) = &self.tools {
            view = view.tools(globs("tools", tools)?);
        }
        if let Some(resources) = &self.resources {
            view = view.resources(globs("resources", resources)?);
        }
        if let Some(prompts) = &self.prompts {
            view = view.prompts(globs("prompts", prompts)?);
        }
        Ok(view)
    }
}

/// Checks the `[servers]` tables of `config`.
fn check_servers(config: &Config) -> Result<(), String> {
    if config.servers.len() > MAX_SERVERS {
        return Err(format!("at most {MAX_SERVERS} servers"));
    }
    for (name, keys) in &config.servers {
        let fail = |m: String| Err(format!("servers.{name}: {m}"));
        if snodo::proxy::check_id(name).is_err() {
            return fail("a name is 1 to 64 of a-z, 0-9, _ and -".into());
        }
        if keys.backends.is_empty() {
            return fail("backends: name at least one".into());
        }
        for id in &keys.backends {
            if !config.backends.contains_key(id) {
                return fail(format!("backends: no backend {id:?} in this file"));
            }
        }
        if let Err(e) = keys.view() {
            return fail(e);
        }
        if !keys.roles.is_empty() && config.auth.is_none() {
            return fail("roles: give [auth] too (roles are granted by tokens)".into());
        }
        roles_of(&keys.roles, &format!("servers.{name}.roles"))?;
    }
    Ok(())
}

/// `[limits]`: what each caller may send.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FrontLimits {
    pub(crate) per_principal: Option<String>,
    /// `per_principal` read, by [`Config::parse`].
    #[serde(skip)]
    pub(crate) rate: Option<Rate>,
}

/// `retry = { attempts, budget_percent }`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetryKeys {
    #[serde(default = "default_attempts")]
    pub(crate) attempts: u32,
    #[serde(default = "default_budget_percent")]
    pub(crate) budget_percent: u32,
}

/// `circuit_breaker = { failures, open_for }`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BreakerKeys {
    #[serde(default = "default_failures")]
    pub(crate) failures: u32,
    #[serde(default = "default_open_for")]
    pub(crate) open_for: f64,
}

fn default_attempts() -> u32 {
    3
}

fn default_budget_percent() -> u32 {
    20
}

fn default_failures() -> u32 {
    5
}

fn default_open_for() -> f64 {
    30.0
}

/// One backend.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Backend {
    pub(crate) command: Option<Command>,
    pub(crate) url: Option<String>,
    /// How a url is spoken to: `streamable-http` (default) or `sse`.
    pub(crate) transport: Option<String>,
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
    #[serde(default = "default_timeout")]
    pub(crate) timeout: f64,
    #[serde(default = "default_stderr")]
    pub(crate) stderr: String,
    #[serde(default = "default_connect_timeout")]
    pub(crate) connect_timeout: f64,
    pub(crate) expose: Option<toml::Value>,
    pub(crate) hide: Option<toml::Value>,
    #[serde(default)]
    pub(crate) alias: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) inject: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub(crate) inject_override: BTreeMap<String, toml::Value>,
    pub(crate) max_argument_bytes: Option<u64>,
    pub(crate) concurrency: Option<u64>,
    pub(crate) rate: Option<String>,
    pub(crate) retry: Option<RetryKeys>,
    pub(crate) circuit_breaker: Option<BreakerKeys>,
    pub(crate) pin: Option<bool>,
    /// Whether `/readyz` waits for it (default true).
    pub(crate) required: Option<bool>,
    /// Whether the caller's subject and scopes go with each request.
    #[serde(default)]
    pub(crate) forward_identity: bool,
    /// A command started once per caller, these variables set from the
    /// caller's claims (variable = claim).
    pub(crate) env_from_claims: Option<BTreeMap<String, String>>,
    /// The most callers' servers at once.
    pub(crate) max_callers: Option<u64>,
    /// Seconds before an idle caller's server stops.
    pub(crate) caller_idle: Option<f64>,
    /// What the shaping keys above say, built by [`Config::parse`].
    #[serde(skip)]
    pub(crate) shaping: Shaping,
    /// What the limit keys above say, built by [`Config::parse`].
    #[serde(skip)]
    pub(crate) limits: BackendLimits,
}

impl Backend {
    /// Whether `/readyz` waits for it.
    pub(crate) fn is_required(&self) -> bool {
        self.required.unwrap_or(true)
    }

    /// Whether its definitions are pinned, `pin` being the file's.
    pub(crate) fn pinned(&self, pin: bool) -> bool {
        self.pin.unwrap_or(pin)
    }

    /// Whether `other` reaches the same backend the same way (the shaping
    /// and limit keys aside: those apply without a restart).
    pub(crate) fn same_connection(&self, other: &Backend) -> bool {
        self.command == other.command
            && self.url == other.url
            && self.transport == other.transport
            && self.env == other.env
            && self.headers == other.headers
            && self.timeout == other.timeout
            && self.stderr == other.stderr
            && self.connect_timeout == other.connect_timeout
            && self.env_from_claims == other.env_from_claims
            && self.max_callers == other.max_callers
            && self.caller_idle == other.caller_idle
    }
}

/// A command: one command line, or the program and its arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub(crate) enum Command {
    Line(String),
    Argv(Vec<String>),
}

fn default_separator() -> String {
    snodo::proxy::DEFAULT_SEPARATOR.into()
}

fn default_health_interval() -> f64 {
    5.0
}

fn default_timeout() -> f64 {
    300.0
}

fn default_connect_timeout() -> f64 {
    30.0
}

fn default_stderr() -> String {
    "inherit".into()
}

/// The most backends a file may name.
const MAX_BACKENDS: usize = snodo::proxy::MAX_BACKENDS;
/// The largest configuration file read.
pub(crate) const MAX_BYTES: u64 = 1024 * 1024;

impl Config {
    /// Where the pins of the file at `path` are kept.
    pub(crate) fn pin_path(&self, path: &std::path::Path) -> std::path::PathBuf {
        let dir = path.parent().unwrap_or_else(|| std::path::Path::new("."));
        match &self.pin_file {
            Some(file) => dir.join(file),
            None => {
                let stem = path.file_stem().unwrap_or_default().to_string_lossy();
                dir.join(format!("{stem}.pins.json"))
            }
        }
    }

    /// Whether any backend's definitions are pinned.
    pub(crate) fn pins_any(&self) -> bool {
        self.backends.values().any(|b| b.pinned(self.pin))
    }

    /// Parses and checks a configuration file's text. An empty (or
    /// whitespace-only) text is refused: it is what a file caught in the
    /// middle of being written looks like, and it would withdraw every
    /// backend.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        Self::parse_in(text, &|name| std::env::var(name).ok())
    }

    /// [`Config::parse`], reading `${NAME}` in header values from `env`.
    pub(crate) fn parse_in(
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Err("the file is empty".into());
        }
        let mut config: Config =
            toml::from_str(text).map_err(|e| e.to_string().trim().to_owned())?;
        snodo::proxy::check_separator(&config.separator).map_err(|e| e.to_string())?;
        if !(config.health_interval >= 0.1 && config.health_interval <= MAX_SECONDS) {
            return Err("health_interval: at least 0.1 seconds, at most a year".into());
        }
        if config.backends.len() > MAX_BACKENDS {
            return Err(format!("at most {MAX_BACKENDS} backends"));
        }
        for (id, b) in &config.backends {
            snodo::proxy::check_id(id).map_err(|e| e.to_string())?;
            let fail = |m: &str| Err(format!("backend {id:?}: {m}"));
            match (&b.command, &b.url) {
                (Some(_), Some(_)) => return fail("give either command or url, not both"),
                (None, None) => return fail("give a command or a url"),
                (None, Some(url)) if !snodo::client::Target::is_url(url) => {
                    return fail("url must be an http:// or https:// URL");
                }
                (Some(Command::Argv(argv)), None) if argv.is_empty() => {
                    return fail("command is empty");
                }
                (Some(Command::Line(line)), None) if line.trim().is_empty() => {
                    return fail("command is empty");
                }
                _ => {}
            }
            match b.transport.as_deref() {
                None | Some("streamable-http" | "sse") if b.url.is_some() => {}
                None => {}
                Some("streamable-http" | "sse") => return fail("transport is for a url"),
                Some(other) => {
                    return fail(&format!(
                        "transport {other:?}: give \"streamable-http\" or \"sse\""
                    ));
                }
            }
            if b.url.is_some() && !b.env.is_empty() {
                return fail("env is for a command");
            }
            if b.command.is_some() && !b.headers.is_empty() {
                return fail("headers are for a url");
            }
            if b.command.is_some() && b.forward_identity {
                return fail("forward_identity is for a url (it sends headers)");
            }
            if !(b.timeout > 0.0 && b.timeout <= MAX_SECONDS) {
                return fail("timeout must be a positive number of seconds, at most a year");
            }
            if !(b.connect_timeout > 0.0 && b.connect_timeout <= MAX_SECONDS) {
                return fail(
                    "connect_timeout must be a positive number of seconds, at most a year",
                );
            }
            if !matches!(b.stderr.as_str(), "inherit" | "quiet") {
                return fail("stderr is inherit or quiet");
            }
            per_caller_keys(b, config.auth.is_some())
                .map_err(|e| format!("backend {id:?}: {e}"))?;
        }
        for (id, b) in &mut config.backends {
            for (name, value) in &mut b.headers {
                *value = expand(value, env)
                    .map_err(|e| format!("backend {id:?}: headers.{name}: {e}"))?;
            }
            b.shaping = shaping(b).map_err(|e| format!("backend {id:?}: {e}"))?;
            b.limits = limits(b).map_err(|e| format!("backend {id:?}: {e}"))?;
        }
        if let Some(auth) = &config.auth {
            if !snodo::client::Target::is_url(&auth.issuer) {
                return Err("auth.issuer: an http:// or https:// URL".into());
            }
            if let Some(resource) = &auth.resource
                && !snodo::client::Target::is_url(resource)
            {
                return Err("auth.resource: an http:// or https:// URL".into());
            }
            auth.policy_roles()?;
        }
        if config
            .audit
            .as_ref()
            .is_some_and(|a| a.path.trim().is_empty())
        {
            return Err("audit.path: a file name".into());
        }
        if let Some(token) = config.auth.as_mut().and_then(|a| a.admin_token.as_mut()) {
            *token = expand(token, env).map_err(|e| format!("auth.admin_token: {e}"))?;
            if token.len() < 16 {
                return Err("auth.admin_token: at least 16 characters".into());
            }
        }
        if config
            .pin_file
            .as_deref()
            .is_some_and(|f| f.trim().is_empty())
        {
            return Err("pin_file: a file name".into());
        }
        check_servers(&config)?;
        if let Some(rate) = &config.limits.per_principal {
            config.limits.rate =
                Some(Rate::parse(rate).map_err(|e| format!("limits.per_principal: {e}"))?);
        }
        Ok(config)
    }
}

/// The longest time a key in seconds may give (a year): what a
/// `Duration` holds with room to spare.
const MAX_SECONDS: f64 = 31_536_000.0;

/// The most callers' servers `max_callers` may allow.
const MAX_CALLERS: u64 = 4096;

/// Checks the keys of a backend started per caller.
fn per_caller_keys(b: &Backend, auth: bool) -> Result<(), String> {
    let Some(claims) = &b.env_from_claims else {
        if b.max_callers.is_some() {
            return Err("max_callers is for a backend with env_from_claims".into());
        }
        if b.caller_idle.is_some() {
            return Err("caller_idle is for a backend with env_from_claims".into());
        }
        return Ok(());
    };
    if b.command.is_none() {
        return Err("env_from_claims is for a command (one is started per caller)".into());
    }
    if !auth {
        return Err("env_from_claims needs [auth]: callers are told apart by their tokens".into());
    }
    for (var, claim) in claims {
        let valid = !var.is_empty() && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "env_from_claims: {var:?} is no variable name (A-Z, a-z, 0-9 and _)"
            ));
        }
        // What the loader and the shell read is not for a caller to set.
        let upper = var.to_ascii_uppercase();
        if upper == "PATH" || upper.starts_with("LD_") || upper.starts_with("DYLD_") {
            return Err(format!(
                "env_from_claims: {var} is read by the loader or the shell; name another variable"
            ));
        }
        if claim.is_empty() {
            return Err(format!("env_from_claims.{var}: name a claim"));
        }
        if b.env.contains_key(var) {
            return Err(format!(
                "env_from_claims.{var}: also in env; give it in one of them"
            ));
        }
    }
    if let Some(n) = b.max_callers
        && !(1..=MAX_CALLERS).contains(&n)
    {
        return Err(format!("max_callers: 1 to {MAX_CALLERS}"));
    }
    if let Some(s) = b.caller_idle
        && !(s > 0.0 && s <= MAX_SECONDS)
    {
        return Err(format!(
            "caller_idle must be a positive number of seconds, at most {MAX_SECONDS}"
        ));
    }
    Ok(())
}

/// The most calls in flight a backend's `concurrency` may allow.
const MAX_CONCURRENCY: u64 = 1_000_000;

/// The longest tool or prompt name an alias may give.
const MAX_NAME: usize = 128;

/// A backend's shaping keys as a [`Shaping`]; an error names the key.
fn shaping(b: &Backend) -> Result<Shaping, String> {
    let mut shaping = Shaping::new();
    for (key, value) in [("expose", &b.expose), ("hide", &b.hide)] {
        let Some(value) = value else { continue };
        for (kind, globs) in patterns(key, value)? {
            shaping = if key == "expose" {
                shaping.expose(kind, globs)
            } else {
                shaping.hide(kind, globs)
            };
        }
    }
    for (name, alias) in &b.alias {
        let valid = !alias.is_empty()
            && alias.len() <= MAX_NAME
            && alias
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !valid {
            return Err(format!(
                "alias.{name}: {alias:?} is no name (1 to {MAX_NAME} of A-Z, a-z, 0-9, _, - and .)"
            ));
        }
        if b.alias.contains_key(alias) && alias != name {
            return Err(format!(
                "alias.{name}: {alias:?} is itself renamed; give each name one alias"
            ));
        }
        shaping = shaping.alias(name, alias);
    }
    for (key, map) in [
        ("inject", &b.inject),
        ("inject_override", &b.inject_override),
    ] {
        for (name, value) in map {
            if key == "inject" && b.inject_override.contains_key(name) {
                return Err(format!(
                    "inject.{name}: also in inject_override; give it in one of them"
                ));
            }
            let value = json_of(value).map_err(|e| format!("{key}.{name}: {e}"))?;
            shaping = if key == "inject" {
                shaping.inject(name, value)
            } else {
                shaping.inject_override(name, value)
            };
        }
    }
    shaping = shaping.forward_identity(b.forward_identity);
    if let Some(bytes) = b.max_argument_bytes {
        if bytes == 0 {
            return Err("max_argument_bytes: at least 1".into());
        }
        shaping = shaping.max_argument_bytes(usize::try_from(bytes).unwrap_or(usize::MAX));
    }
    Ok(shaping)
}

/// A backend's limit keys as [`BackendLimits`]; an error names the key.
fn limits(b: &Backend) -> Result<BackendLimits, String> {
    let mut limits = BackendLimits::new();
    if let Some(n) = b.concurrency {
        if !(1..=MAX_CONCURRENCY).contains(&n) {
            return Err(format!("concurrency: 1 to {MAX_CONCURRENCY}"));
        }
        limits = limits.concurrency(usize::try_from(n).unwrap_or(usize::MAX));
    }
    if let Some(rate) = &b.rate {
        limits = limits.rate(Rate::parse(rate).map_err(|e| format!("rate: {e}"))?);
    }
    if let Some(retry) = b.retry {
        if !(1..=10).contains(&retry.attempts) {
            return Err("retry.attempts: 1 to 10 (the first try included)".into());
        }
        if retry.budget_percent > 100 {
            return Err("retry.budget_percent: 0 to 100".into());
        }
        limits = limits.retry(retry.attempts, retry.budget_percent);
    }
    if let Some(breaker) = b.circuit_breaker {
        if breaker.failures == 0 {
            return Err("circuit_breaker.failures: at least 1".into());
        }
        if !(breaker.open_for > 0.0 && breaker.open_for <= 86_400.0) {
            return Err("circuit_breaker.open_for: more than 0 and at most 86400 seconds".into());
        }
        limits = limits.circuit_breaker(
            breaker.failures,
            std::time::Duration::from_secs_f64(breaker.open_for),
        );
    }
    Ok(limits)
}

/// `expose` or `hide`: a list of patterns for every kind, or a table of
/// lists by kind.
fn patterns(key: &str, value: &toml::Value) -> Result<Vec<(Component, Vec<Glob>)>, String> {
    let list = |key: &str, value: &toml::Value| -> Result<Vec<Glob>, String> {
        let items = value
            .as_array()
            .ok_or_else(|| format!("{key}: a list of name patterns"))?;
        items
            .iter()
            .map(|item| {
                let text = item
                    .as_str()
                    .ok_or_else(|| format!("{key}: a list of name patterns (strings)"))?;
                Glob::new(text).map_err(|e| format!("{key}: {e}"))
            })
            .collect()
    };
    match value {
        toml::Value::Array(_) => {
            let globs = list(key, value)?;
            Ok(Component::ALL
                .into_iter()
                .map(|kind| (kind, globs.clone()))
                .collect())
        }
        toml::Value::Table(table) => table
            .iter()
            .map(|(kind, value)| {
                let component = match kind.as_str() {
                    "tools" => Component::Tool,
                    "prompts" => Component::Prompt,
                    "resources" => Component::Resource,
                    _ => {
                        return Err(format!(
                            "{key}.{kind}: the kinds are tools, prompts and resources"
                        ));
                    }
                };
                Ok((component, list(&format!("{key}.{kind}"), value)?))
            })
            .collect(),
        _ => Err(format!(
            "{key}: a list of name patterns, or a table of them by kind (tools, prompts, resources)"
        )),
    }
}

/// An injected value as JSON (TOML's dates have no JSON form).
fn json_of(value: &toml::Value) -> Result<serde_json::Value, String> {
    Ok(match value {
        toml::Value::String(s) => s.clone().into(),
        toml::Value::Integer(i) => (*i).into(),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .ok_or("a number JSON cannot carry")?
            .into(),
        toml::Value::Boolean(b) => (*b).into(),
        toml::Value::Datetime(_) => return Err("a date has no JSON form: quote it".into()),
        toml::Value::Array(items) => items.iter().map(json_of).collect::<Result<_, _>>()?,
        toml::Value::Table(table) => serde_json::Value::Object(
            table
                .iter()
                .map(|(k, v)| Ok((k.clone(), json_of(v)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// A header value with each `${NAME}` replaced by the variable `NAME` of
/// `env` (`$${` stands for a literal `${`). A variable that is not set, or
/// whose value is no valid header value, is an error naming the variable,
/// never its value.
fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
        } else if let Some(after) = tail.strip_prefix("${") {
            let end = after.find('}').ok_or("a ${ is not closed by }")?;
            let name = &after[..end];
            let well_formed = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !well_formed {
                return Err(format!(
                    "${{{name}}} is no variable name (letters, digits, _)"
                ));
            }
            let found = env(name).ok_or_else(|| format!("${{{name}}} is not set"))?;
            if found.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
                return Err(format!("${{{name}}} holds a control character"));
            }
            out.push_str(&found);
            rest = &after[end + 1..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_max_backends() {
        let many = |n: usize| {
            (0..n)
                .map(|i| format!("[backends.b{i}]\ncommand = \"x\"\n"))
                .collect::<String>()
        };
        assert!(Config::parse(&many(MAX_BACKENDS)).is_ok());
        let e = Config::parse(&many(MAX_BACKENDS + 1)).unwrap_err();
        assert_eq!(e, "at most 64 backends");
    }

    #[test]
    fn a_full_file_parses() {
        let c = Config::parse(
            r#"
            separator = "__"
            health_interval = 2
            [backends.demo]
            command = "snodo demo --stdio"
            env = { A = "1" }
            [backends.argv]
            command = ["node", "server.js", "stdio"]
            stderr = "quiet"
            [backends.docs]
            url = "http://127.0.0.1:8080/mcp"
            headers = { Authorization = "Bearer x" }
            timeout = 60
            "#,
        )
        .unwrap();
        assert_eq!(c.separator, "__");
        assert_eq!(c.backends.len(), 3);
        assert_eq!(
            c.backends["argv"].command,
            Some(Command::Argv(vec![
                "node".into(),
                "server.js".into(),
                "stdio".into()
            ]))
        );
        assert_eq!(c.backends["docs"].timeout, 60.0);
        assert_eq!(c.backends["demo"].timeout, 300.0);
    }

    #[test]
    fn header_values_read_the_environment() {
        let env = |name: &str| match name {
            "TOKEN" => Some("s3cret".to_string()),
            "EMPTY" => Some(String::new()),
            "BROKEN" => Some("a\r\nX-Injected: 1".to_string()),
            _ => None,
        };
        let file = |value: &str| {
            format!(
                "[backends.docs]\nurl = \"http://127.0.0.1:1/mcp\"\nheaders = {{ Authorization = {value:?} }}"
            )
        };
        let header = |value: &str| {
            Config::parse_in(&file(value), &env)
                .map(|c| c.backends["docs"].headers["Authorization"].clone())
        };
        assert_eq!(header("Bearer ${TOKEN}").unwrap(), "Bearer s3cret");
        assert_eq!(
            header("${TOKEN}-${TOKEN}${EMPTY}").unwrap(),
            "s3cret-s3cret"
        );
        assert_eq!(header("cost $5, $${TOKEN}").unwrap(), "cost $5, ${TOKEN}");
        assert_eq!(header("plain").unwrap(), "plain");
        for (value, want) in [
            (
                "Bearer ${MISSING}",
                "backend \"docs\": headers.Authorization: ${MISSING} is not set",
            ),
            ("${TOKEN", "headers.Authorization: a ${ is not closed by }"),
            ("${1X}", "${1X} is no variable name"),
            ("${}", "${} is no variable name"),
            ("${BROKEN}", "${BROKEN} holds a control character"),
        ] {
            let e = header(value).unwrap_err();
            assert!(e.contains(want), "{value:?}: {e}");
            assert!(!e.contains("s3cret"), "{e}");
        }
    }

    #[test]
    fn shaping_keys_build_the_backends_shaping() {
        let c = Config::parse(
            r#"
            [backends.docs]
            url = "http://127.0.0.1:1/mcp"
            expose = ["search_*", "get_*"]
            hide = { tools = ["get_secret"], resources = ["secret://*"] }
            alias = { search_docs = "search" }
            inject = { lang = "en", depth = 2, tags = ["a", { b = true }] }
            inject_override = { tenant = "acme" }
            max_argument_bytes = 1024
            "#,
        )
        .unwrap();
        let globs = |p: &[&str]| p.iter().map(|p| Glob::new(p).unwrap()).collect::<Vec<_>>();
        let want = Shaping::new()
            .expose(Component::Tool, globs(&["search_*", "get_*"]))
            .expose(Component::Prompt, globs(&["search_*", "get_*"]))
            .expose(Component::Resource, globs(&["search_*", "get_*"]))
            .hide(Component::Resource, globs(&["secret://*"]))
            .hide(Component::Tool, globs(&["get_secret"]))
            .alias("search_docs", "search")
            .inject("depth", serde_json::json!(2))
            .inject("lang", serde_json::json!("en"))
            .inject("tags", serde_json::json!(["a", {"b": true}]))
            .inject_override("tenant", serde_json::json!("acme"))
            .max_argument_bytes(1024);
        assert_eq!(c.backends["docs"].shaping, want);
        let plain = Config::parse("[backends.a]\ncommand = \"x\"").unwrap();
        assert_eq!(plain.backends["a"].shaping, Shaping::new());
        let mut moved = c.backends["docs"].clone();
        moved.alias.clear();
        assert!(moved.same_connection(&c.backends["docs"]));
        moved.timeout = 1.0;
        assert!(!moved.same_connection(&c.backends["docs"]));
    }

    #[test]
    fn limit_keys_build_the_backends_limits_and_the_callers_rate() {
        let c = Config::parse(
            r#"
            [limits]
            per_principal = "20/s"
            [backends.docs]
            url = "http://127.0.0.1:1/mcp"
            concurrency = 8
            rate = "30/s"
            retry = { attempts = 2, budget_percent = 10 }
            circuit_breaker = { failures = 3, open_for = 1.5 }
            [backends.plain]
            command = "x"
            retry = {}
            circuit_breaker = {}
            "#,
        )
        .unwrap();
        assert_eq!(c.limits.rate, Some(Rate::parse("20/s").unwrap()));
        assert_eq!(
            c.backends["docs"].limits,
            BackendLimits::new()
                .concurrency(8)
                .rate(Rate::parse("30/s").unwrap())
                .retry(2, 10)
                .circuit_breaker(3, std::time::Duration::from_millis(1500))
        );
        assert_eq!(
            c.backends["plain"].limits,
            BackendLimits::new()
                .retry(3, 20)
                .circuit_breaker(5, std::time::Duration::from_secs(30))
        );
        let none = Config::parse("[backends.a]\ncommand = \"x\"").unwrap();
        assert_eq!(none.limits.rate, None);
        assert_eq!(none.backends["a"].limits, BackendLimits::new());
    }

    #[test]
    fn pin_keys_say_which_backends_are_pinned_and_where() {
        let c = Config::parse(
            "pin = true\npin_file = \"state/pins.json\"\n\
             [backends.a]\ncommand = \"x\"\n[backends.b]\ncommand = \"x\"\npin = false\n",
        )
        .unwrap();
        assert!(c.backends["a"].pinned(c.pin) && !c.backends["b"].pinned(c.pin));
        let at = std::path::Path::new("/etc/snodo/proxy.toml");
        assert_eq!(
            c.pin_path(at),
            std::path::Path::new("/etc/snodo/state/pins.json")
        );
        let one = Config::parse("[backends.a]\ncommand = \"x\"\npin = true\n").unwrap();
        assert!(one.pins_any());
        assert_eq!(
            one.pin_path(at),
            std::path::Path::new("/etc/snodo/proxy.pins.json")
        );
        assert!(
            !Config::parse("[backends.a]\ncommand = \"x\"")
                .unwrap()
                .pins_any()
        );
    }

    #[test]
    fn auth_keys_give_the_front_door_and_its_roles() {
        let c = Config::parse(
            r#"
            [auth]
            issuer = "http://127.0.0.1:9/"
            scopes = ["mcp"]
            [[auth.roles]]
            name = "reader"
            when = { scope = ["reports:read"] }
            tools = ["reports.get_*"]
            [[auth.roles]]
            name = "ops"
            when = { groups = ["ops"] }
            tools = ["*"]
            resources = ["*"]
            prompts = ["*"]
            "#,
        )
        .unwrap();
        let auth = c.auth.unwrap();
        assert_eq!(auth.scopes, ["mcp"]);
        let roles = auth.policy_roles().unwrap();
        assert_eq!(
            roles[0],
            Role::new("reader")
                .when("scope", ["reports:read"])
                .tools([Glob::new("reports.get_*").unwrap()])
        );
        let open = Config::parse("[auth]\nissuer = \"http://127.0.0.1:9\"").unwrap();
        let roles = open.auth.unwrap().policy_roles().unwrap();
        let anyone = snodo::Principal::new("x");
        assert!(roles[0].grants(&anyone));
    }

    #[test]
    fn bad_files_are_refused_with_a_message_naming_the_fault() {
        for (text, want) in [
            (
                "[backends.a]\ncommand = \"x\"\n[backends.a]\nurl = \"http://h/\"",
                "duplicate key",
            ),
            ("separator = \"/\"", "separator \"/\""),
            ("[backends.Bad]\ncommand = \"x\"", "backend id \"Bad\""),
            (
                "[backends.a]\ncommand = \"x\"\nurl = \"http://h/\"",
                "backend \"a\": give either",
            ),
            ("[backends.a]\n", "backend \"a\": give a command or a url"),
            ("[backends.a]\nurl = \"ftp://h/\"", "url must be"),
            ("[backends.a]\ncommand = []", "command is empty"),
            (
                "[backends.a]\ncommand = \"x\"\n[servers.v]\nbackends = []",
                "servers.v: backends: name at least one",
            ),
            (
                "[backends.a]\ncommand = \"x\"\n[servers.V]\nbackends = [\"a\"]",
                "servers.V: a name is",
            ),
            (
                "[backends.a]\ncommand = \"x\"\n[servers.v]\nbackends = [\"a\"]\ntools = [\"\"]",
                "servers.v: tools:",
            ),
            (
                "[backends.a]\ncommand = \"x\"\n[servers.v]\nbackends = [\"a\"]\n[[servers.v.roles]]\nname = \"r\"",
                "servers.v: roles: give [auth] too",
            ),
            (
                "[auth]\nissuer = \"https://i.example\"\n[backends.a]\ncommand = \"x\"\n[servers.v]\nbackends = [\"a\"]\n[[servers.v.roles]]\nname = \"r\"\n[[servers.v.roles]]\nname = \"r\"",
                "servers.v.roles: two roles are named \"r\"",
            ),
            (
                "[backends.a]\ncommand = \"x\"\ntransport = \"sse\"",
                "backend \"a\": transport is for a url",
            ),
            (
                "[backends.a]\nurl = \"http://h/sse\"\ntransport = \"websocket\"",
                "transport \"websocket\": give \"streamable-http\" or \"sse\"",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nheaders = { A = \"b\" }",
                "headers are for a url",
            ),
            ("[backends.a]\ncommand = \"x\"\ntimeout = 0", "timeout"),
            (
                "[backends.a]\ncommand = \"x\"\nport = 1",
                "unknown field `port`",
            ),
            ("health_interval = 0", "health_interval"),
            (
                "[backends.a]\ncommand = \"x\"\nexpose = \"read_*\"",
                "backend \"a\": expose: a list of name patterns, or a table",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nhide = [\"\"]",
                "backend \"a\": hide: pattern \"\"",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nhide = [1]",
                "hide: a list of name patterns (strings)",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nexpose = { tool = [\"x\"] }",
                "expose.tool: the kinds are tools, prompts and resources",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nexpose = { tools = \"x\" }",
                "expose.tools: a list of name patterns",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nalias = { a = \"b c\" }",
                "alias.a: \"b c\" is no name",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nalias = { a = \"b\", b = \"c\" }",
                "alias.a: \"b\" is itself renamed",
            ),
            (
                "[backends.a]\ncommand = \"x\"\ninject = { d = 1979-05-27 }",
                "inject.d: a date has no JSON form",
            ),
            (
                "[backends.a]\ncommand = \"x\"\ninject = { t = 1 }\ninject_override = { t = 2 }",
                "inject.t: also in inject_override",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nconcurrency = 0",
                "backend \"a\": concurrency: 1 to 1000000",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nconcurrency = 18446744073709551615",
                "backend \"a\": concurrency: 1 to 1000000",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nrate = \"30\"",
                "backend \"a\": rate: \"30\" is no rate",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nretry = { attempts = 0 }",
                "retry.attempts: 1 to 10",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nretry = { budget_percent = 101 }",
                "retry.budget_percent: 0 to 100",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nretry = { tries = 2 }",
                "unknown field `tries`",
            ),
            (
                "[backends.a]\ncommand = \"x\"\ncircuit_breaker = { failures = 0 }",
                "circuit_breaker.failures: at least 1",
            ),
            (
                "[backends.a]\ncommand = \"x\"\ncircuit_breaker = { open_for = -1 }",
                "circuit_breaker.open_for",
            ),
            (
                "[limits]\nper_principal = \"fast\"",
                "limits.per_principal: \"fast\" is no rate",
            ),
            (
                "[limits]\nper_caller = \"1/s\"",
                "unknown field `per_caller`",
            ),
            ("pin_file = \" \"", "pin_file: a file name"),
            ("[audit]\npath = \"\"", "audit.path: a file name"),
            (
                "[backends.a]\ncommand = \"x\"\nforward_identity = true",
                "forward_identity is for a url",
            ),
            (
                "[backends.a]\nurl = \"http://h/mcp\"\nenv_from_claims = { U = \"sub\" }",
                "backend \"a\": env_from_claims is for a command",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nenv_from_claims = { U = \"sub\" }",
                "env_from_claims needs [auth]",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[backends.a]\ncommand = \"x\"\nenv_from_claims = { \"A-B\" = \"sub\" }",
                "env_from_claims: \"A-B\" is no variable name",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[backends.a]\ncommand = \"x\"\nenv_from_claims = { U = \"\" }",
                "env_from_claims.U: name a claim",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[backends.a]\ncommand = \"x\"\nenv = { U = \"1\" }\nenv_from_claims = { U = \"sub\" }",
                "env_from_claims.U: also in env",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[backends.a]\ncommand = \"x\"\nenv_from_claims = {}\nmax_callers = 0",
                "max_callers: 1 to 4096",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[backends.a]\ncommand = \"x\"\nenv_from_claims = {}\ncaller_idle = 0",
                "caller_idle must be a positive number",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[backends.a]\ncommand = \"x\"\nenv_from_claims = {}\ncaller_idle = 1e20",
                "caller_idle must be a positive number of seconds, at most 31536000",
            ),
            (
                "[backends.a]\ncommand = \"x\"\ntimeout = 1e20",
                "timeout must be a positive number of seconds, at most a year",
            ),
            (
                "health_interval = 1e300",
                "health_interval: at least 0.1 seconds, at most a year",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[backends.a]\ncommand = \"x\"\nenv_from_claims = { LD_PRELOAD = \"sub\" }",
                "LD_PRELOAD is read by the loader",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nmax_callers = 3",
                "max_callers is for a backend with env_from_claims",
            ),
            (
                "[backends.a]\ncommand = \"x\"\ncaller_idle = 3",
                "caller_idle is for a backend with env_from_claims",
            ),
            ("[audit]\narguments = true", "missing field `path`"),
            ("pin = \"yes\"", "invalid type"),
            ("[auth]\nscopes = []", "missing field `issuer`"),
            ("[auth]\nissuer = \"login\"", "auth.issuer: an http"),
            (
                "[auth]\nissuer = \"http://h\"\nresource = \"x\"",
                "auth.resource: an http",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[[auth.roles]]\nname = \"a\"\n[[auth.roles]]\nname = \"a\"",
                "two roles are named \"a\"",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[[auth.roles]]\nname = \" \"",
                "auth.roles: each role has a name",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[[auth.roles]]\nname = \"a\"\nwhen = { scope = [] }",
                "auth.roles \"a\": when.scope: give the values",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[[auth.roles]]\nname = \"a\"\ntools = [\"\"]",
                "auth.roles \"a\": tools: pattern",
            ),
            (
                "[auth]\nissuer = \"http://h\"\n[[auth.roles]]\nname = \"a\"\nrole = 1",
                "unknown field `role`",
            ),
            (
                "[auth]\nissuer = \"http://h\"\nadmin_token = \"short\"",
                "auth.admin_token: at least 16 characters",
            ),
            (
                "[auth]\nissuer = \"http://h\"\nadmin_token = \"${SNODO_UNSET_ADMIN}\"",
                "auth.admin_token: ${SNODO_UNSET_ADMIN} is not set",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nmax_argument_bytes = 0",
                "max_argument_bytes: at least 1",
            ),
            (
                "[backends.a]\ncommand = \"x\"\nmax_argument_bytes = -1",
                "max_argument_bytes",
            ),
            ("separator = ", "expected"),
            ("", "the file is empty"),
            (" \n\t\r\n", "the file is empty"),
        ] {
            let e = Config::parse(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
