//! Shared pieces of the benchmark: the tool set every server offers, and the
//! small command-line contract of the server binaries.
//!
//! Every server binary (`bench-server-snodo`, `bench-server-rmcp`,
//! `bench-server-tower-mcp`, `bench-server-ceiling`) takes exactly one of
//!
//! - `--http`: serve MCP 2026-07-28 Streamable HTTP statelessly on
//!   `127.0.0.1` (a free port), print `{"url":"http://127.0.0.1:PORT/mcp"}` on
//!   one stdout line once listening, and exit when stdin reaches end of file;
//! - `--stdio`: serve MCP over stdin/stdout until stdin ends.
//!
//! The tool set is the same for the three MCP libraries:
//!
//! - `echo {text: string}`: returns `text` as a text block;
//! - `add {a: integer, b: integer}`: returns `{"sum": a + b}` as structured
//!   content, with an output schema;
//! - 50 inert tools (`inert_00` ... `inert_49`) with realistic descriptions
//!   and input schemas, so that `tools/list` has a realistic size (about
//!   28 KB). They answer `"inert"` and are never called by the workloads.
//!
//! Only this module's plain JSON is shared; each server declares its tools the
//! way its library documents.

use serde_json::{Value, json};

/// The protocol revision every request carries.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The `_meta` member (with its name) every 2026-07-28 request of the load
/// generators carries: protocol version, no client capabilities, client info.
pub const REQUEST_META: &str = concat!(
    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
    r#""io.modelcontextprotocol/clientCapabilities":{},"#,
    r#""io.modelcontextprotocol/clientInfo":{"name":"snodo-bench","version":"0.1.0"}}"#
);

/// How many inert tools each server registers.
pub const INERT_TOOLS: usize = 50;

/// How many tools `tools/list` must return: `echo`, `add` and the inert ones.
pub const TOTAL_TOOLS: usize = INERT_TOOLS + 2;

/// The description of `echo`.
pub const ECHO_DESCRIPTION: &str = "Returns its text argument unchanged";

/// The description of `add`.
pub const ADD_DESCRIPTION: &str = "Adds two integers and returns their sum as structured content";

/// The name of inert tool `i`.
pub fn inert_name(i: usize) -> String {
    format!("inert_{i:02}")
}

/// Subjects the inert tools pretend to search, for varied descriptions.
const SUBJECTS: &[&str] = &[
    "invoices",
    "customers",
    "shipments",
    "support tickets",
    "calendar events",
    "repositories",
    "build logs",
    "feature flags",
    "documents",
    "metrics",
];

/// The description of inert tool `i`: about 180 characters, like a real tool's.
pub fn inert_description(i: usize) -> String {
    let subject = SUBJECTS[i % SUBJECTS.len()];
    format!(
        "Searches the {subject} of workspace section {i} and returns the matching records, \
         newest first. Use it when the user asks about {subject}; it never changes anything."
    )
}

/// The input schema of inert tool `i`: three typed, documented properties.
pub fn inert_input_schema(i: usize) -> Value {
    let subject = SUBJECTS[i % SUBJECTS.len()];
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": format!("Words to look for in the {subject}")
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "description": "Most records to return (default 20)"
            },
            "include_archived": {
                "type": "boolean",
                "description": "Whether archived records count too"
            }
        },
        "required": ["query"]
    })
}

/// What an inert tool answers.
pub const INERT_REPLY: &str = "inert";

/// Which transport a server binary was asked to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Streamable HTTP on 127.0.0.1.
    Http,
    /// Streamable HTTP on 127.0.0.1, with initialize-era sessions served in
    /// the library's stateful mode (for libraries whose default `--http`
    /// setup serves the initialize era statelessly).
    HttpSessions,
    /// stdin/stdout.
    Stdio,
}

/// Reads `--http`, `--http-sessions` or `--stdio` from the command line; exits with a usage
/// message otherwise.
pub fn mode_from_args(program: &str) -> Mode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["--http"] => Mode::Http,
        ["--http-sessions"] => Mode::HttpSessions,
        ["--stdio"] => Mode::Stdio,
        _ => {
            eprintln!("usage: {program} --http | --http-sessions | --stdio");
            std::process::exit(2);
        }
    }
}

/// Prints the `{"url": ...}` line the harness waits for.
pub fn announce(url: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", json!({ "url": url }));
    let _ = out.flush();
}

/// Resolves when stdin reaches end of file (the harness closed it or died):
/// HTTP servers stop then.
pub async fn stdin_closed() {
    use tokio::io::AsyncReadExt;
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 64];
    loop {
        match stdin.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}
