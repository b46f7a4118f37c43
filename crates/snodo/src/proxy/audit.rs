//! The audit log: one JSON line per forwarded request, written off the
//! request's path by a task of its own.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// The most lines waiting to be written; past it a line is dropped (and
/// counted).
pub const AUDIT_QUEUE: usize = 4096;

/// Where a proxy writes its audit lines (see
/// [`Proxy::audit`](super::Proxy::audit)): a file, appended to, one JSON
/// object per line with `time`, `principal` (the caller's subject, or
/// `null`), `method`, `name` (the tool or prompt name or the URI, as
/// served), `backend`, `outcome` (`ok`, `tool_error`, `input_required`,
/// `refused`, `error`, or `cancelled` for a request dropped before its
/// end: the caller gone, or the server's own timeout), `code` (of an
/// error), `durationMs`, and
/// `arguments` only when asked for. Credentials never appear: no header
/// or token is written. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Audit {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    arguments: bool,
    lines: mpsc::Sender<String>,
    dropped: AtomicU64,
}

/// One forwarded request, as audited.
pub(crate) struct Entry<'a> {
    pub(crate) principal: Option<&'a str>,
    pub(crate) method: &'static str,
    pub(crate) name: &'a str,
    pub(crate) backend: &'a str,
    pub(crate) outcome: &'static str,
    pub(crate) code: Option<i64>,
    pub(crate) took: Duration,
    pub(crate) arguments: Option<&'a Value>,
}

impl Audit {
    /// Appends to the file at `path` (created if needed), with each
    /// request's arguments when `arguments` is set. Needs a Tokio runtime:
    /// a task writes the lines.
    pub fn to_file(path: impl Into<PathBuf>, arguments: bool) -> std::io::Result<Self> {
        let path = path.into();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        let (lines, rx) = mpsc::channel(AUDIT_QUEUE);
        tokio::spawn(write(file, rx, path.clone()));
        Ok(Audit {
            inner: Arc::new(Inner {
                path,
                arguments,
                lines,
                dropped: AtomicU64::new(0),
            }),
        })
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Whether arguments are written.
    pub(crate) fn wants_arguments(&self) -> bool {
        self.inner.arguments
    }

    /// The lines dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// Queues the line of one request.
    pub(crate) fn record(&self, entry: Entry<'_>) {
        let ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut line = Map::new();
        line.insert("time".into(), crate::task::iso8601(ms).into());
        line.insert("principal".into(), json!(entry.principal));
        line.insert("method".into(), entry.method.into());
        line.insert("name".into(), entry.name.into());
        line.insert("backend".into(), entry.backend.into());
        line.insert("outcome".into(), entry.outcome.into());
        if let Some(code) = entry.code {
            line.insert("code".into(), code.into());
        }
        let ms = (entry.took.as_secs_f64() * 1e6).round() / 1e3;
        line.insert("durationMs".into(), json!(ms));
        if self.inner.arguments
            && let Some(arguments) = entry.arguments
        {
            line.insert("arguments".into(), arguments.clone());
        }
        let text = Value::Object(line).to_string();
        if self.inner.lines.try_send(text).is_err()
            && self.inner.dropped.fetch_add(1, Ordering::Relaxed) == 0
        {
            tracing::warn!(target: "snodo::proxy", "the audit log falls behind: lines are dropped");
        }
    }
}

/// Writes queued lines until every sender is gone.
async fn write(file: std::fs::File, mut rx: mpsc::Receiver<String>, path: PathBuf) {
    let mut file = std::io::BufWriter::new(file);
    while let Some(line) = rx.recv().await {
        let mut ok = writeln!(file, "{line}").is_ok();
        // What else is queued goes in the same write.
        while let Ok(line) = rx.try_recv() {
            ok &= writeln!(file, "{line}").is_ok();
        }
        ok &= file.flush().is_ok();
        if !ok {
            tracing::warn!(target: "snodo::proxy", path = %path.display(), "the audit log cannot be written");
        }
    }
}
