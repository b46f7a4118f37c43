//! The rig for several nodes: `snodo demo` processes on loopback ports
//! joined by a bus (Redis or PostgreSQL) and a keyring file, a round-robin
//! balancer in front of them, and literal HTTP exchanges.

#![allow(dead_code, unreachable_pub)]

pub mod balancer;
pub mod counting;
pub mod raw;
pub mod tap;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tokio::process::Child;

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
        if snodo_test::skip(skip) {
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
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (child, url) = crate::support::spawn_demo(&args).await;
    Node { child, url }
}

/// What a node wrote on its stderr so far.
#[derive(Clone, Default)]
pub struct Log(std::sync::Arc<std::sync::Mutex<String>>);

impl Log {
    /// Everything written so far.
    pub fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }

    /// Whether `needle` is written within `wait` (a line is read from the
    /// node's pipe a little after the node writes it).
    pub async fn shows_within(&self, needle: &str, wait: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if self.text().contains(needle) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

/// [`node`], its stderr kept (and passed on to the test's).
pub async fn logged_node(args: &[String]) -> (Node, Log) {
    use tokio::io::AsyncBufReadExt;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (mut child, url) = crate::support::spawn_demo_with(&args, |c| {
        c.stderr(std::process::Stdio::piped());
    })
    .await;
    let log = Log::default();
    let sink = log.clone();
    let stderr = child.stderr.take().unwrap();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("{line}");
            let mut text = sink.0.lock().unwrap();
            text.push_str(&line);
            text.push('\n');
        }
    });
    (Node { child, url }, log)
}

/// The arguments of a node on `bus_url` with the keyring at `keys`.
pub fn node_args(bus_url: &str, channel: &str, keys: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "--bus".into(),
        bus_url.into(),
        "--bus-channel".into(),
        channel.into(),
        "--keys".into(),
        keys.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// `n` nodes on `bus_url` with the keyring at `keys` and `extra` flags.
pub async fn cluster(
    bus_url: &str,
    channel: &str,
    keys: &Path,
    n: usize,
    extra: &[&str],
) -> Vec<Node> {
    let args = node_args(bus_url, channel, keys, extra);
    let mut nodes = Vec::new();
    for _ in 0..n {
        nodes.push(node(&args).await);
    }
    nodes
}

/// The `_meta` of a request that declares the Tasks extension.
pub const TASKS_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;

/// Sends a 2026-07-28 request with the given `_meta` to `url`: the
/// standard headers (`Mcp-Name` when `name` is given) and a body of `id`,
/// `method` and `params` (members after `_meta`, as JSON text; may be empty).
pub async fn send_with_meta(
    url: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: &str,
    meta: &str,
) -> raw::Reply {
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    let sep = if params.is_empty() { "" } else { "," };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"_meta":{meta}{sep}{params}}}}}"#
    );
    raw::request("POST", url, &headers, &body).await
}

/// Sends a 2026-07-28 request to `url`.
pub async fn send_modern(
    url: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: &str,
) -> raw::Reply {
    send_with_meta(url, id, method, name, params, META).await
}

/// Sends a 2026-07-28 request with the Tasks extension declared.
pub async fn send_tasks(
    url: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: &str,
) -> raw::Reply {
    send_with_meta(url, id, method, name, params, TASKS_META).await
}

/// Opens a `subscriptions/listen` stream on `url` with `notifications`
/// (the JSON text of the filter); returns it after its acknowledgement.
pub async fn listen(url: &str, id: u64, notifications: &str) -> raw::Reply {
    let mut stream = send_modern(
        url,
        id,
        "subscriptions/listen",
        None,
        &format!(r#""notifications":{notifications}"#),
    )
    .await;
    assert_eq!(stream.status, 200);
    let ack = stream.frame().await.expect("the acknowledgement");
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    stream
}

/// Calls the demo's `announce` on `url`; returns the whole response.
pub async fn announce(url: &str, what: &str) -> Value {
    send_modern(
        url,
        9,
        "tools/call",
        Some("announce"),
        &format!(r#""name":"announce","arguments":{{"what":"{what}"}}"#),
    )
    .await
    .json()
    .await
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
