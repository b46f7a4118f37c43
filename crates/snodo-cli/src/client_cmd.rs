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

mod args;
pub(crate) mod auth;
mod connect;
mod failure;
mod output;
mod render;
mod run;
mod skills;
mod task_log;
mod tasks;
mod terminal;

pub(crate) use args::{AuthOptions, ClientCommand};
pub(crate) use connect::{authorize, base_builder, stderr_mode};
pub(crate) use failure::EXIT_CODES;
pub(crate) use run::main;

/// Ends the command after a failed write to stdout: quietly (exit 0) when
/// the reader went away, with the error otherwise.
pub(crate) fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("snodo: cannot write the output: {e}");
    std::process::exit(1);
}
