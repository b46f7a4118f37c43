//! The fan-out benchmark: three `snodo demo` nodes joined by a bus, 1 000
//! `subscriptions/listen` streams spread over them, and updates announced
//! on the nodes in turn at fixed rates. Each update names its publish time
//! (`demo://greetings/e-<seq>-<unix ns>`), so every listener measures the
//! time from publish to delivery; a rate counts as sustained when every
//! listener received every update and no listener was told to resync.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

use super::histogram::Histogram;
use super::provenance::Provenance;

/// Nodes in the fan-out runs.
pub(crate) const NODES: usize = 3;

/// The result of one rate step.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// Updates announced per second (the target).
    pub(crate) rate: u64,
    /// Updates announced.
    pub(crate) published: u64,
    /// Updates announced per second, as achieved.
    pub(crate) achieved: f64,
    /// Notifications the listeners received (of those updates).
    pub(crate) delivered: u64,
    /// Notifications expected (`published` x listeners).
    pub(crate) expected: u64,
    /// Deliveries per second over the step.
    pub(crate) deliveries_per_s: f64,
    /// Publish-to-delivery latency percentiles, ms.
    pub(crate) p50_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) max_ms: f64,
    /// Overflow notifications seen (the listeners were told to resync).
    pub(crate) resyncs: u64,
}

impl Step {
    /// The rate was kept (within 5 %), every update reached every listener,
    /// and nobody was told to resync.
    pub(crate) fn sustained(&self) -> bool {
        self.achieved >= 0.95 * self.rate as f64
            && self.delivered == self.expected
            && self.resyncs == 0
    }
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default()
}

struct Node {
    child: Child,
    addr: String,
}

async fn start_node(snodo: &Path, bus: &str, channel: &str) -> Result<Node, String> {
    let mut child = Command::new(snodo)
        .args([
            "demo",
            "--http",
            "127.0.0.1:0",
            "--bus",
            bus,
            "--bus-channel",
            channel,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{}: {e}", snodo.display()))?;
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no stdout")?;
    tokio::time::timeout(
        Duration::from_secs(30),
        BufReader::new(stdout).read_line(&mut line),
    )
    .await
    .map_err(|_| "a node did not start within 30 s".to_string())?
    .map_err(|e| e.to_string())?;
    let v: serde_json::Value =
        serde_json::from_str(&line).map_err(|_| format!("not the URL line: {line:?}"))?;
    let url = v["url"].as_str().ok_or("no url")?;
    let addr = url
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .ok_or("a URL")?
        .to_string();
    Ok(Node { child, addr })
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn post(addr: &str, method: &str, name: Option<&str>, body: &str) -> String {
    let name = name
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// What one listener saw.
#[derive(Default)]
struct Seen {
    latencies: Histogram,
    delivered: u64,
    resyncs: u64,
}

/// Moves the data of every complete chunk of `raw` to `out`; `true` when
/// the last chunk (size 0) was seen.
fn dechunk(raw: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<bool, String> {
    loop {
        let Some(eol) = raw.windows(2).position(|w| w == b"\r\n") else {
            return Ok(false);
        };
        let size = std::str::from_utf8(&raw[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .ok_or_else(|| format!("a chunk size: {:?}", String::from_utf8_lossy(&raw[..eol])))?;
        if size == 0 {
            return Ok(true);
        }
        if raw.len() < eol + 2 + size + 2 {
            return Ok(false);
        }
        out.extend_from_slice(&raw[eol + 2..eol + 2 + size]);
        raw.drain(..eol + 2 + size + 2);
    }
}

/// A listener: opens its stream, signals when acknowledged, then records
/// every update until `stop`, when it hands back what it saw.
async fn listener(
    addr: String,
    id: usize,
    ready: tokio::sync::mpsc::Sender<()>,
    mut stop: tokio::sync::watch::Receiver<bool>,
    counting: Arc<AtomicBool>,
) -> Result<Seen, String> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"_meta":{META},"notifications":{{"resourceSubscriptions":["demo://greetings/"]}}}}}}"#
    );
    let mut stream = TcpStream::connect(&addr).await.map_err(|e| e.to_string())?;
    stream
        .write_all(post(&addr, "subscriptions/listen", None, &body).as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        reader
            .read_line(&mut line)
            .await
            .map_err(|e| e.to_string())?;
        if line == "\r\n" {
            break;
        }
        if line.is_empty() {
            return Err("the stream closed in its head".into());
        }
    }
    let mut raw = reader.buffer().to_vec();
    let mut stream = reader.into_inner();
    let mut seen = Seen::default();
    let mut pending: Vec<u8> = Vec::new();
    let mut acknowledged = false;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let ended = dechunk(&mut raw, &mut pending)?;
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let at = now_ns();
            let line: Vec<u8> = pending.drain(..=end).collect();
            let Some(data) = line
                .strip_prefix(b"data: ")
                .or_else(|| line.strip_prefix(b"data:"))
            else {
                continue;
            };
            let text = String::from_utf8_lossy(data);
            if !acknowledged && text.contains("notifications/subscriptions/acknowledged") {
                acknowledged = true;
                let _ = ready.send(()).await;
                continue;
            }
            let Some(start) = text.find("demo://greetings/") else {
                continue;
            };
            let uri = &text[start + "demo://greetings/".len()..];
            let uri = &uri[..uri.find('"').unwrap_or(uri.len())];
            if !counting.load(Ordering::Relaxed) {
                continue;
            }
            if uri.is_empty() {
                seen.resyncs += 1;
                continue;
            }
            if let Some(sent) = uri
                .strip_prefix('e')
                .and_then(|u| u.rsplit('-').next())
                .and_then(|n| n.parse::<u64>().ok())
            {
                seen.delivered += 1;
                seen.latencies.record(at.saturating_sub(sent));
            }
        }
        if ended {
            break;
        }
        tokio::select! {
            n = stream.read(&mut buf) => match n {
                Ok(0) | Err(_) => break,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            },
            _ = stop.changed() => break,
        }
    }
    Ok(seen)
}

/// One keep-alive connection that announces updates.
struct Announcer {
    reader: BufReader<TcpStream>,
    addr: String,
}

impl Announcer {
    async fn open(addr: &str) -> Result<Self, String> {
        let stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        Ok(Self {
            reader: BufReader::new(stream),
            addr: addr.to_string(),
        })
    }

    async fn announce(&mut self, seq: u64) -> Result<(), String> {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{seq},"method":"tools/call","params":{{"_meta":{META},"name":"announce","arguments":{{"what":"demo://greetings/e-{seq}-{}"}}}}}}"#,
            now_ns()
        );
        let request = post(&self.addr, "tools/call", Some("announce"), &body);
        self.reader
            .get_mut()
            .write_all(request.as_bytes())
            .await
            .map_err(|e| e.to_string())?;
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            self.reader
                .read_line(&mut line)
                .await
                .map_err(|e| e.to_string())?;
            if line.is_empty() {
                return Err("the connection closed".into());
            }
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0u8; length];
        self.reader
            .read_exact(&mut body)
            .await
            .map_err(|e| e.to_string())?;
        if !body.windows(9).any(|w| w == b"Announced") {
            return Err(format!(
                "announce failed: {}",
                String::from_utf8_lossy(&body)
            ));
        }
        Ok(())
    }
}

/// Runs the rate steps against three nodes on `bus` with `listeners`
/// streams; stops after the first step that is not sustained.
pub(crate) async fn run(
    snodo: &Path,
    bus: &str,
    channel: &str,
    listeners: usize,
    rates: &[u64],
    step: Duration,
) -> Result<Vec<Step>, String> {
    let mut nodes = Vec::new();
    for _ in 0..NODES {
        nodes.push(start_node(snodo, bus, channel).await?);
    }
    let mut results = Vec::new();
    for &rate in rates {
        let (stop, stop_rx) = tokio::sync::watch::channel(false);
        let counting = Arc::new(AtomicBool::new(false));
        let (ready_tx, mut ready) = tokio::sync::mpsc::channel(listeners);
        let mut tasks = Vec::new();
        for i in 0..listeners {
            let addr = nodes[i % NODES].addr.clone();
            tasks.push(tokio::spawn(listener(
                addr,
                i,
                ready_tx.clone(),
                stop_rx.clone(),
                counting.clone(),
            )));
        }
        drop(ready_tx);
        for _ in 0..listeners {
            tokio::time::timeout(Duration::from_secs(30), ready.recv())
                .await
                .map_err(|_| "the listeners were not all acknowledged within 30 s".to_string())?
                .ok_or("a listener failed to open")?;
        }
        let mut announcers = Vec::new();
        for node in &nodes {
            announcers.push(Announcer::open(&node.addr).await?);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        counting.store(true, Ordering::Relaxed);
        let published = Arc::new(AtomicU64::new(0));
        let interval = Duration::from_secs_f64(1.0 / rate as f64);
        let started = tokio::time::Instant::now();
        let total = (rate as f64 * step.as_secs_f64()).round() as u64;
        for seq in 0..total {
            tokio::time::sleep_until(started + interval * seq as u32).await;
            announcers[(seq as usize) % NODES].announce(seq).await?;
            published.fetch_add(1, Ordering::Relaxed);
        }
        let publish_time = started.elapsed();
        // Let deliveries drain, then stop the listeners.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let _ = stop.send(true);
        let mut latencies = Histogram::default();
        let (mut delivered, mut resyncs) = (0, 0);
        for task in tasks {
            let seen = task.await.map_err(|e| e.to_string())??;
            latencies.merge(&seen.latencies);
            delivered += seen.delivered;
            resyncs += seen.resyncs;
        }
        let published = published.load(Ordering::Relaxed);
        let ms = |p: f64| latencies.percentile(p) as f64 / 1e6;
        let result = Step {
            rate,
            published,
            achieved: published as f64 / publish_time.as_secs_f64(),
            delivered,
            expected: published * listeners as u64,
            deliveries_per_s: delivered as f64 / publish_time.as_secs_f64(),
            p50_ms: ms(50.0),
            p99_ms: ms(99.0),
            max_ms: ms(100.0),
            resyncs,
        };
        eprintln!(
            "fanout {bus}: {rate}/s: {published} published ({:.0}/s), {delivered}/{} delivered, p50 {:.2} ms, p99 {:.2} ms, resyncs {resyncs}",
            result.achieved, result.expected, result.p50_ms, result.p99_ms
        );
        let sustained = result.sustained();
        results.push(result);
        if !sustained {
            break;
        }
    }
    for node in &mut nodes {
        let _ = node.child.start_kill();
        let _ = node.child.wait().await;
    }
    Ok(results)
}

/// The `--fanout` JSON document: the settings, the steps of each bus
/// (`buses`) and the provenance block.
pub(crate) fn document(
    listeners: usize,
    rounds: usize,
    step: Duration,
    buses: serde_json::Map<String, serde_json::Value>,
    provenance: &Provenance,
) -> serde_json::Value {
    provenance.stamp(serde_json::json!({
        "fanout": {"listeners": listeners, "nodes": NODES, "rounds": rounds,
                   "step_s": step.as_secs_f64(), "buses": buses}
    }))
}

/// The results of several rounds, by rate: the median of each figure.
pub(crate) fn medians(rounds: &[Vec<Step>]) -> Vec<Step> {
    let mut by_rate: HashMap<u64, Vec<&Step>> = HashMap::new();
    for round in rounds {
        for step in round {
            by_rate.entry(step.rate).or_default().push(step);
        }
    }
    let mut rates: Vec<u64> = by_rate.keys().copied().collect();
    rates.sort_unstable();
    rates
        .into_iter()
        .map(|rate| {
            let steps = &by_rate[&rate];
            let med = |f: &dyn Fn(&Step) -> f64| {
                let mut v: Vec<f64> = steps.iter().map(|s| f(s)).collect();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let medu = |f: &dyn Fn(&Step) -> u64| med(&|s| f(s) as f64) as u64;
            Step {
                rate,
                published: medu(&|s| s.published),
                achieved: med(&|s| s.achieved),
                delivered: medu(&|s| s.delivered),
                expected: medu(&|s| s.expected),
                deliveries_per_s: med(&|s| s.deliveries_per_s),
                p50_ms: med(&|s| s.p50_ms),
                p99_ms: med(&|s| s.p99_ms),
                max_ms: med(&|s| s.max_ms),
                resyncs: medu(&|s| s.resyncs),
            }
        })
        .collect()
}
