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
//! headers = { Authorization = "Bearer TOKEN" }
//! timeout = 60                         # seconds per request (default 300)
//! connect_timeout = 10                 # seconds to start and list it (default 30)
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

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
}

/// One backend.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Backend {
    pub(crate) command: Option<Command>,
    pub(crate) url: Option<String>,
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
    /// Parses and checks a configuration file's text. An empty (or
    /// whitespace-only) text is refused: it is what a file caught in the
    /// middle of being written looks like, and it would withdraw every
    /// backend.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Err("the file is empty".into());
        }
        let config: Config = toml::from_str(text).map_err(|e| e.to_string().trim().to_owned())?;
        snodo::proxy::check_separator(&config.separator).map_err(|e| e.to_string())?;
        if !(config.health_interval >= 0.1 && config.health_interval.is_finite()) {
            return Err("health_interval: at least 0.1 seconds".into());
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
            if b.url.is_some() && !b.env.is_empty() {
                return fail("env is for a command");
            }
            if b.command.is_some() && !b.headers.is_empty() {
                return fail("headers are for a url");
            }
            if !(b.timeout > 0.0 && b.timeout.is_finite()) {
                return fail("timeout must be a positive number of seconds");
            }
            if !(b.connect_timeout > 0.0 && b.connect_timeout.is_finite()) {
                return fail("connect_timeout must be a positive number of seconds");
            }
            if !matches!(b.stderr.as_str(), "inherit" | "quiet") {
                return fail("stderr is inherit or quiet");
            }
        }
        Ok(config)
    }
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
                "[backends.a]\ncommand = \"x\"\nheaders = { A = \"b\" }",
                "headers are for a url",
            ),
            ("[backends.a]\ncommand = \"x\"\ntimeout = 0", "timeout"),
            (
                "[backends.a]\ncommand = \"x\"\nport = 1",
                "unknown field `port`",
            ),
            ("health_interval = 0", "health_interval"),
            ("separator = ", "expected"),
            ("", "the file is empty"),
            (" \n\t\r\n", "the file is empty"),
        ] {
            let e = Config::parse(text).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
