//! Where a client connects: an HTTP endpoint, a child process, or a server in
//! the same process.

use std::ffi::OsString;
use std::path::PathBuf;

use super::ClientError;
use crate::Server;

/// What happens to a stdio server's standard error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// Passed through to this process's standard error (the default).
    #[default]
    Inherit,
    /// Captured; the last 64 KiB are kept ([`Client::stderr`](super::Client::stderr)).
    Capture,
    /// Discarded.
    Null,
}

/// A server started as a child process, spoken to over its stdin and stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioCommand {
    /// The program to run (looked up on `PATH`).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment variables.
    pub env: Vec<(OsString, OsString)>,
    /// The working directory, if not this process's.
    pub cwd: Option<PathBuf>,
    /// What happens to its standard error.
    pub stderr: StderrMode,
}

impl StdioCommand {
    /// A program and its arguments.
    pub fn new<I, S>(program: impl Into<OsString>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: None,
            stderr: StderrMode::Inherit,
        }
    }

    /// Splits a command line like a POSIX shell would (quotes, escapes; no
    /// expansion).
    ///
    /// ```
    /// use snodo::client::StdioCommand;
    /// let cmd = StdioCommand::parse("python 'my server.py' --stdio").unwrap();
    /// assert_eq!(cmd.program, "python");
    /// assert_eq!(cmd.args, vec!["my server.py", "--stdio"]);
    /// assert!(StdioCommand::parse("  ").is_err());
    /// ```
    pub fn parse(line: &str) -> Result<Self, ClientError> {
        let words = shell_words::split(line)
            .map_err(|e| ClientError::transport(format!("cannot split command line: {e}")))?;
        let mut words = words.into_iter();
        let program = words
            .next()
            .ok_or_else(|| ClientError::transport("empty command line"))?;
        Ok(Self::new(program, words))
    }

    /// Adds an environment variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets what happens to standard error.
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }
}

/// Where a [`Client`](super::Client) connects.
///
/// A string is a URL: `Target::from("http://127.0.0.1:3000/mcp")` is an
/// HTTP endpoint, and connecting to a string that is not an `http://` or
/// `https://` URL fails without running anything. A command line is named
/// as one, with [`Target::command`] (or a [`StdioCommand`]).
///
/// ```
/// use snodo::client::Target;
/// assert!(matches!(Target::from("http://127.0.0.1:3000/mcp"), Target::Http(_)));
/// assert!(matches!(Target::from("python server.py"), Target::Http(_)));
/// assert!(matches!(Target::command("python server.py"), Target::Command(_)));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Target {
    /// A Streamable HTTP endpoint URL.
    Http(String),
    /// A command line, split like a shell would when connecting.
    Command(String),
    /// A child process.
    Stdio(StdioCommand),
    /// A 2024-11-05 HTTP+SSE endpoint: the URL its event stream is opened
    /// at (often `/sse`); only the initialize-era revisions are spoken.
    Sse(String),
    /// A server in this process, called without any transport.
    Direct(Server),
}

impl Target {
    /// A command line for a stdio server, split like a shell would when
    /// connecting (a program that looks like a mistyped URL is refused).
    pub fn command(line: impl Into<String>) -> Self {
        Target::Command(line.into())
    }

    /// Whether `text` looks like an HTTP(S) URL.
    pub fn is_url(text: &str) -> bool {
        let lower = text.trim_start().to_ascii_lowercase();
        lower.starts_with("http://") || lower.starts_with("https://")
    }

    /// Why a command line is refused before anything is run: its program
    /// looks like a mistyped endpoint (another scheme, `host:port` or
    /// `localhost/...` without `http://`), so starting it would run whatever
    /// program that name finds instead of connecting. `None` when it may run.
    ///
    /// ```
    /// use snodo::client::Target;
    /// assert!(Target::mistyped_url("htp://127.0.0.1:3000/mcp").is_some());
    /// assert!(Target::mistyped_url("localhost:3000/mcp").is_some());
    /// assert!(Target::mistyped_url("python server.py").is_none());
    /// ```
    pub fn mistyped_url(command_line: &str) -> Option<String> {
        let program = command_line.split_whitespace().next()?;
        if let Some((scheme, _)) = program.split_once("://") {
            return Some(format!(
                "`{program}` is not a command: the scheme `{scheme}` is not http or https"
            ));
        }
        let host = program.split('/').next().unwrap_or(program);
        let (name, port) = match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        };
        let local = ["localhost", "127.0.0.1", "[::1]", "0.0.0.0"].contains(&name);
        let has_port = port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        let hostlike = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.[]:".contains(&b));
        if (local && (has_port || program.contains('/'))) || (hostlike && has_port) {
            return Some(format!(
                "`{program}` looks like an address, not a command: write http://{program}"
            ));
        }
        None
    }
}

impl From<&str> for Target {
    /// An HTTP endpoint: whatever `text` holds, it is never run.
    fn from(text: &str) -> Self {
        Target::Http(text.trim().to_string())
    }
}

impl From<String> for Target {
    fn from(text: String) -> Self {
        Target::from(text.as_str())
    }
}

impl From<&String> for Target {
    fn from(text: &String) -> Self {
        Target::from(text.as_str())
    }
}

impl From<StdioCommand> for Target {
    fn from(cmd: StdioCommand) -> Self {
        Target::Stdio(cmd)
    }
}

impl From<Server> for Target {
    fn from(server: Server) -> Self {
        Target::Direct(server)
    }
}

impl From<&Server> for Target {
    fn from(server: &Server) -> Self {
        Target::Direct(server.clone())
    }
}

/// The span attributes of where `target` leads: the transport, and for
/// HTTP the URL's host and port.
pub(crate) fn peer_of(target: &Target) -> crate::telemetry::client::Peer {
    use crate::telemetry::client::Peer;
    match target {
        Target::Http(url) | Target::Sse(url) => {
            let address = url.parse::<http::Uri>().ok().and_then(|uri| {
                let host: std::sync::Arc<str> = uri.host()?.trim_matches(['[', ']']).into();
                let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
                    Some("https") => 443,
                    _ => 80,
                });
                Some((host, port))
            });
            Peer {
                transport: Some("tcp"),
                address,
            }
        }
        Target::Command(_) | Target::Stdio(_) => Peer {
            transport: Some("pipe"),
            address: None,
        },
        Target::Direct(_) => Peer::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mistyped_urls_are_told_from_command_lines() {
        for typo in [
            "htp://127.0.0.1:3000/mcp",
            "ws://localhost:3000/mcp",
            "localhost:3000/mcp",
            "localhost/mcp",
            "127.0.0.1:3000",
            "[::1]:8080/mcp",
            "example.com:443/mcp --flag",
        ] {
            assert!(Target::mistyped_url(typo).is_some(), "{typo}");
        }
        for command in [
            "python server.py",
            "target/debug/snodo demo --stdio",
            "/usr/bin/node build/index.js",
            "npx -y @modelcontextprotocol/server-everything",
            "uvx mcp-server-time --local-timezone=Europe/Paris",
            "C:\\tools\\server.exe",
        ] {
            assert!(Target::mistyped_url(command).is_none(), "{command}");
        }
    }
}
