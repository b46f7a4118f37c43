//! Scripted peers for the client tests: a loopback HTTP/1.1 server that
//! records every request and answers with literal JSON or server-sent
//! events, and a stdio child (Python) that logs every line it reads and
//! answers from a script.

#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One HTTP request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// `GET`, `POST`, `DELETE`, ...
    pub method: String,
    /// Header names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`Null` when empty or not JSON).
    pub body: Value,
    /// When it arrived.
    pub at: tokio::time::Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn rpc_method(&self) -> Option<&str> {
        self.body.get("method").and_then(Value::as_str)
    }

    pub fn id(&self) -> Value {
        self.body.get("id").cloned().unwrap_or(Value::Null)
    }
}

/// How the server answers one request.
pub enum Reply {
    /// A JSON body with a status and extra headers.
    Json(u16, Vec<(&'static str, String)>, Value),
    /// Server-sent events (raw event text, each after a delay in ms), then
    /// end the body, or hold it open until the client goes away.
    Sse(Vec<(&'static str, String)>, Vec<(u64, String)>, bool),
    /// A status and an empty body.
    Status(u16),
    /// No answer at all: wait for the client to close the connection.
    Hang,
}

impl Reply {
    /// `{"jsonrpc":"2.0","id":<id>,"result":<result>}` with status 200.
    pub fn result(req: &Recorded, result: Value) -> Reply {
        Reply::Json(
            200,
            vec![],
            json!({"jsonrpc": "2.0", "id": req.id(), "result": result}),
        )
    }

    /// A JSON-RPC error with an HTTP status.
    pub fn error(req: &Recorded, status: u16, error: Value) -> Reply {
        Reply::Json(
            status,
            vec![],
            json!({"jsonrpc": "2.0", "id": req.id(), "error": error}),
        )
    }

    /// The standard 2026-07-28 discover result.
    pub fn discover(req: &Recorded) -> Reply {
        Reply::result(
            req,
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {"listChanged": true}, "resources": {}, "prompts": {}},
                "ttlMs": 0, "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "script", "version": "1.0.0"}}}),
        )
    }
}

/// An SSE `data:` event carrying a JSON message.
pub fn event(message: Value) -> String {
    format!("event: message\ndata: {message}\n\n")
}

type Handler = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// The scripted HTTP server.
pub struct ScriptServer {
    pub url: String,
    log: Arc<Mutex<Vec<Recorded>>>,
    disconnects: Arc<AtomicUsize>,
}

impl ScriptServer {
    /// Binds 127.0.0.1:0 and serves `handler` until the test ends.
    pub async fn start(handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let disconnects = Arc::new(AtomicUsize::new(0));
        let handler: Arc<Handler> = Arc::new(handler);
        let (l, d) = (log.clone(), disconnects.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, handler.clone(), l.clone(), d.clone()));
            }
        });
        Self {
            url,
            log,
            disconnects,
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// The JSON-RPC messages POSTed so far.
    pub fn posts(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST")
            .collect()
    }

    /// The POSTs of one JSON-RPC method.
    pub fn calls(&self, method: &str) -> Vec<Recorded> {
        self.posts()
            .into_iter()
            .filter(|r| r.rpc_method() == Some(method))
            .collect()
    }

    /// How many held responses the client closed.
    pub fn disconnects(&self) -> usize {
        self.disconnects.load(Ordering::SeqCst)
    }

    /// Waits until the client has closed `n` held responses (at most 5 s).
    pub async fn wait_disconnects(&self, n: usize) -> bool {
        for _ in 0..100 {
            if self.disconnects() >= n {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }
}

async fn serve(
    stream: TcpStream,
    handler: Arc<Handler>,
    log: Arc<Mutex<Vec<Recorded>>>,
    disconnects: Arc<AtomicUsize>,
) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let method = line.split_whitespace().next().unwrap_or("").to_string();
        let mut headers = Vec::new();
        let mut length = 0usize;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).await.unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                let k = k.trim().to_ascii_lowercase();
                let v = v.trim().to_string();
                if k == "content-length" {
                    length = v.parse().unwrap_or(0);
                }
                headers.push((k, v));
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let rec = Recorded {
            method,
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            at: tokio::time::Instant::now(),
        };
        log.lock().unwrap().push(rec.clone());
        let reply = handler(&rec);
        let held = match reply {
            Reply::Json(status, extra, body) => {
                let body = body.to_string();
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
                    body.len()
                );
                for (k, v) in extra {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                head.push_str(&body);
                if write.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                false
            }
            Reply::Status(status) => {
                let head = format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\n\r\n");
                if write.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                false
            }
            Reply::Sse(extra, events, hold) => {
                let mut head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n".to_string();
                for (k, v) in extra {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                if write.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for (delay, text) in events {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    let chunk = format!("{:x}\r\n{text}\r\n", text.len());
                    if write.write_all(chunk.as_bytes()).await.is_err()
                        || write.flush().await.is_err()
                    {
                        disconnects.fetch_add(1, Ordering::SeqCst);
                        return;
                    }
                }
                if !hold {
                    if write.write_all(b"0\r\n\r\n").await.is_err() {
                        return;
                    }
                    false
                } else {
                    true
                }
            }
            Reply::Hang => true,
        };
        let _ = write.flush().await;
        if held {
            // Nothing more is sent: wait for the client to go away.
            let mut sink = [0u8; 1024];
            while matches!(reader.read(&mut sink).await, Ok(n) if n > 0) {}
            disconnects.fetch_add(1, Ordering::SeqCst);
            return;
        }
    }
}

/// The scripted stdio peer: `python3 -c SCRIPT LOG RULES`.
///
/// It appends every line it reads to LOG (and `EOF` when stdin closes), and
/// answers each message with the first rule whose `method` matches (`"__response__"`
/// matches a response the client sends). A rule's `reply` lines are written
/// after replacing `"$ID"` with the message's id, `"$LAST_ID"` with the id of
/// the last request, and `"$TOKEN"` with its progress token; `{"sleep": s}`
/// pauses. A rule with `"once": true` is used only once.
pub const STDIO_PEER: &str = r#"
import json, sys, time
log_path, rules = sys.argv[1], json.loads(sys.argv[2])
log = open(log_path, "a", buffering=1)
last_id = None
for line in sys.stdin:
    line = line.rstrip("\n")
    log.write(line + "\n")
    try:
        msg = json.loads(line)
    except Exception:
        continue
    method = msg.get("method", "__response__")
    if "method" in msg and "id" in msg:
        last_id = msg["id"]
    token = msg.get("params", {}).get("_meta", {}).get("progressToken")
    for rule in rules:
        if rule.get("method") == method and not rule.get("used"):
            if rule.get("once"):
                rule["used"] = True
            for out in rule.get("reply", []):
                if isinstance(out, dict) and "sleep" in out:
                    time.sleep(out["sleep"])
                    continue
                text = json.dumps(out)
                text = text.replace('"$ID"', json.dumps(msg.get("id")))
                text = text.replace('"$LAST_ID"', json.dumps(last_id))
                text = text.replace('"$TOKEN"', json.dumps(token))
                sys.stdout.write(text + "\n")
                sys.stdout.flush()
            break
log.write("EOF\n")
"#;

/// A stdio peer running `rules`, logging to a fresh file.
pub struct StdioPeer {
    pub command: snodo::client::StdioCommand,
    pub log: std::path::PathBuf,
}

impl StdioPeer {
    pub fn new(name: &str, rules: Value) -> Self {
        let dir = std::env::temp_dir().join(format!("snodo-client-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join(format!("{name}.log"));
        let _ = std::fs::remove_file(&log);
        let command = snodo::client::StdioCommand::new(
            "python3",
            [
                "-c".to_string(),
                STDIO_PEER.to_string(),
                log.display().to_string(),
                rules.to_string(),
            ],
        );
        Self { command, log }
    }

    /// The messages the client wrote, parsed (`EOF` as the string "EOF").
    pub fn lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| Value::String(l.to_string())))
            .collect()
    }

    /// Waits until a logged line satisfies `pred` (at most 5 s).
    pub async fn wait_for(&self, pred: impl Fn(&Value) -> bool) -> bool {
        for _ in 0..100 {
            if self.lines().iter().any(&pred) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }
}

/// The `_meta` a 2026-07-28 request from a client without handlers carries.
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "snodo", "version": env!("CARGO_PKG_VERSION")}
    })
}
