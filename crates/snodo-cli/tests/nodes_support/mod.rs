//! The rig for several nodes: `snodo demo` processes on loopback ports
//! joined by a bus (Redis or PostgreSQL) and a keyring file, a round-robin
//! balancer in front of them, and literal HTTP exchanges.

#![allow(dead_code, unreachable_pub)]

pub mod balancer;
pub mod raw;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const SNODO: &str = env!("CARGO_BIN_EXE_snodo");

/// The 2026-07-28 `_meta` of a request, as JSON text.
pub const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

/// A bus the rig runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bus {
    Redis,
    Postgres,
}

impl Bus {
    /// The server's URL, or `None` when told to skip (`SNODO_SKIP_REDIS`,
    /// `SNODO_SKIP_POSTGRES`); panics when the server is not reachable.
    pub fn url(self) -> Option<String> {
        let (skip, var, default, port) = match self {
            Bus::Redis => (
                "SNODO_SKIP_REDIS",
                "SNODO_REDIS_URL",
                "redis://127.0.0.1:6379",
                6379,
            ),
            Bus::Postgres => (
                "SNODO_SKIP_POSTGRES",
                "SNODO_POSTGRES_URL",
                "postgres://postgres@127.0.0.1:5432/test",
                5432,
            ),
        };
        if std::env::var_os(skip).is_some() {
            eprintln!("{skip} is set: skipped");
            return None;
        }
        let url = std::env::var(var).unwrap_or_else(|_| default.into());
        if std::net::TcpStream::connect_timeout(
            &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            Duration::from_secs(2),
        )
        .is_err()
            && std::env::var_os(var).is_none()
        {
            panic!("{self:?} is not reachable on 127.0.0.1:{port}; start it, or set {skip}=1");
        }
        Some(url)
    }

    /// A channel name of this test alone.
    pub fn channel(self, test: &str) -> String {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        format!("snodo_test_{test}_{}_{nanos}", std::process::id())
    }
}

pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snodo-nodes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A keyring line: `id` with 32 bytes of `byte`, base64.
pub fn key_line(id: &str, byte: u8) -> String {
    use base64::Engine;
    format!(
        "{id}={}\n",
        base64::engine::general_purpose::STANDARD.encode([byte; 32])
    )
}

/// Writes a keyring file at once (a rename, so a watcher never reads half).
pub fn write_keys(path: &Path, lines: &[String]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, lines.concat()).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// One `snodo demo` node.
pub struct Node {
    pub child: Child,
    pub url: String,
}

/// Starts `snodo demo --http 127.0.0.1:0 ARGS...` and reads its URL line.
pub async fn node(args: &[String]) -> Node {
    let mut child = Command::new(SNODO)
        .args(["demo", "--http", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut line = String::new();
    let stdout = child.stdout.take().unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        BufReader::new(stdout).read_line(&mut line),
    )
    .await
    .expect("the node starts")
    .unwrap();
    let v: Value =
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not the URL line: {line:?}"));
    Node {
        child,
        url: v["url"].as_str().unwrap().to_string(),
    }
}

/// `n` nodes on `bus_url` with the keyring at `keys` and `extra` flags.
pub async fn cluster(
    bus_url: &str,
    channel: &str,
    keys: &Path,
    n: usize,
    extra: &[&str],
) -> Vec<Node> {
    let mut args: Vec<String> = vec![
        "--bus".into(),
        bus_url.into(),
        "--bus-channel".into(),
        channel.into(),
        "--keys".into(),
        keys.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut nodes = Vec::new();
    for _ in 0..n {
        nodes.push(node(&args).await);
    }
    nodes
}

/// A 2026-07-28 request: its headers and body.
pub fn modern(
    id: u64,
    method: &str,
    name: Option<&str>,
    params: &str,
) -> (Vec<(String, String)>, String) {
    modern_with(id, method, name, params, META)
}

/// The `_meta` of a request that declares the Tasks extension.
pub const TASKS_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;

/// A 2026-07-28 request with the given `_meta`.
pub fn modern_with(
    id: u64,
    method: &str,
    name: Option<&str>,
    params: &str,
    meta: &str,
) -> (Vec<(String, String)>, String) {
    let mut headers = vec![
        ("MCP-Protocol-Version".to_string(), "2026-07-28".to_string()),
        ("Mcp-Method".to_string(), method.to_string()),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name".to_string(), name.to_string()));
    }
    let params = if params.is_empty() {
        format!(r#"{{"_meta":{meta}}}"#)
    } else {
        format!(r#"{{"_meta":{meta},{params}}}"#)
    };
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
    (headers, body)
}

/// Sends a 2026-07-28 request to `url`.
pub async fn send_modern(
    url: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: &str,
) -> raw::Reply {
    let (headers, body) = modern(id, method, name, params);
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    raw::request("POST", url, &headers, &body).await
}

/// Sends a 2026-07-28 request with the Tasks extension declared.
pub async fn send_tasks(
    url: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: &str,
) -> raw::Reply {
    let (headers, body) = modern_with(id, method, name, params, TASKS_META);
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    raw::request("POST", url, &headers, &body).await
}

/// Sends an initialize-era message of `session` to `url`.
pub async fn send_legacy(url: &str, session: &str, body: &str) -> raw::Reply {
    raw::request(
        "POST",
        url,
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", session),
        ],
        body,
    )
    .await
}

/// Opens an initialize-era session on `url`; returns its id.
pub async fn initialize(url: &str) -> String {
    let mut reply = raw::request(
        "POST",
        url,
        &[],
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"rig","version":"1"}}}"#,
    )
    .await;
    assert_eq!(reply.status, 200);
    let session = reply
        .headers
        .get("mcp-session-id")
        .expect("a session id")
        .clone();
    let init = reply.json().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    session
}
