//! The exit codes, and a failure that carries one.

use snodo::client::{ClientError, ClientErrorKind};

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
when they expire), --token TOKEN or SNODO_TOKEN, or --client-id ID with
--client-secret SECRET (client credentials), --workload-token FILE (workload
identity) or --idp-token-endpoint URL (enterprise-managed authorization).";

/// The exit code of a tool result with `isError: true`.
pub(super) const EXIT_TOOL_ERROR: u8 = 1;

/// The exit code of a bad command line.
pub(super) const EXIT_USAGE: u8 = 2;

/// The exit code of a JSON-RPC error from the server.
pub(super) const EXIT_RPC: u8 = 3;

/// The exit code of a connection failure.
pub(super) const EXIT_CONNECTION: u8 = 4;

/// The exit code of a timeout.
pub(super) const EXIT_TIMEOUT: u8 = 5;

/// The exit code of a protocol violation or unanswerable input request.
pub(super) const EXIT_PROTOCOL: u8 = 6;

/// The exit code of a request the server would not authorize.
pub(super) const EXIT_AUTH: u8 = 7;

/// A failure with its exit code.
pub(crate) struct Failure {
    pub(super) code: u8,
    pub(super) message: String,
}

impl Failure {
    /// What went wrong, for a command that reports it itself.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
}

impl Failure {
    pub(super) fn usage(message: impl Into<String>) -> Self {
        Self {
            code: EXIT_USAGE,
            message: message.into(),
        }
    }

    /// A failure of the command's own work (a file it cannot write), with
    /// the protocol's exit code: what the server sent could not be used.
    pub(super) fn from_message(message: String) -> Self {
        Self {
            code: EXIT_PROTOCOL,
            message,
        }
    }

    /// A server that asked for what the CLI cannot give, worded as the
    /// client words a protocol violation.
    pub(super) fn protocol(message: &str) -> Self {
        Self {
            code: EXIT_PROTOCOL,
            message: format!("protocol violation: {message}"),
        }
    }

    /// A task cancelled on the user's request, worded as the client words a
    /// cancelled task.
    pub(super) fn task_cancelled(task_id: &str) -> Self {
        Self {
            code: EXIT_RPC,
            message: format!("task {task_id} was cancelled"),
        }
    }
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        let code = match e.kind() {
            ClientErrorKind::Rpc | ClientErrorKind::TaskCancelled => EXIT_RPC,
            ClientErrorKind::Transport => EXIT_CONNECTION,
            ClientErrorKind::Timeout => EXIT_TIMEOUT,
            ClientErrorKind::Auth => EXIT_AUTH,
            _ => EXIT_PROTOCOL,
        };
        Self {
            code,
            message: e.to_string(),
        }
    }
}
