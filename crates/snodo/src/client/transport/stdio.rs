//! A server run as a child process: newline-delimited JSON on its stdin and
//! stdout, one shared channel demultiplexed by request id, progress token and
//! subscription id.
//!
//! Shutdown closes stdin, waits, then asks the process to terminate
//! (`SIGTERM` through `kill`), then kills it. Dropping the client kills the
//! child.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

use super::router::Router;
use super::{Exchange, Incoming, Outgoing, Transport, TransportKind};
use crate::client::ClientError;
use crate::client::options::BoxFuture;
use crate::client::target::{StderrMode, StdioCommand};
use crate::wire::RequestId;
use crate::wire::envelope::envelope;
use crate::wire::lines::{Line, LineReader, trim_line};

/// How much captured standard error is kept.
const STDERR_KEEP: usize = 64 * 1024;
/// How long the child gets after stdin closes, and again after `SIGTERM`.
const GRACE: Duration = Duration::from_secs(2);

enum WriterCmd {
    Line(Vec<u8>),
    Close,
}

/// The stdio transport.
pub(crate) struct StdioTransport {
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    writer: mpsc::UnboundedSender<WriterCmd>,
    router: Arc<Router>,
    stderr: Option<Arc<Mutex<VecDeque<u8>>>>,
    max_bytes: usize,
}

impl StdioTransport {
    /// Spawns the server.
    pub(crate) fn spawn(
        cmd: &StdioCommand,
        unsolicited: mpsc::Sender<Incoming>,
        max_bytes: usize,
    ) -> Result<Self, ClientError> {
        let mut command = Command::new(&cmd.program);
        command
            .args(&cmd.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in &cmd.env {
            command.env(k, v);
        }
        if let Some(dir) = &cmd.cwd {
            command.current_dir(dir);
        }
        command.stderr(match cmd.stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Capture => Stdio::piped(),
            StderrMode::Null => Stdio::null(),
        });
        let mut child = command.spawn().map_err(|e| {
            ClientError::transport_with(
                format!("cannot start {}: {e}", cmd.program.to_string_lossy()),
                e,
            )
        })?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| ClientError::transport("no stdin pipe"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| ClientError::transport("no stdout pipe"))?;
        let stderr = child.stderr.take().map(|pipe| {
            let buffer = Arc::new(Mutex::new(VecDeque::new()));
            tokio::spawn(capture(pipe, buffer.clone()));
            buffer
        });
        let router = Arc::new(Router::new(unsolicited));
        let (writer, commands) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(stdin, commands));
        tokio::spawn(read_lines(stdout, router.clone(), max_bytes));
        Ok(Self {
            child: Arc::new(tokio::sync::Mutex::new(Some(child))),
            writer,
            router,
            stderr,
            max_bytes,
        })
    }

    fn write(&self, body: Vec<u8>) -> Result<(), ClientError> {
        if self.router.closed.load(Ordering::Acquire) {
            return Err(ClientError::transport("the server process has exited"));
        }
        if body.len() > self.max_bytes {
            return Err(ClientError::transport("the message exceeds the size limit"));
        }
        self.writer
            .send(WriterCmd::Line(body))
            .map_err(|_| ClientError::transport("the server's stdin is closed"))
    }
}

async fn capture(mut pipe: tokio::process::ChildStderr, buffer: Arc<Mutex<VecDeque<u8>>>) {
    let mut chunk = [0u8; 4096];
    while let Ok(n) = pipe.read(&mut chunk).await {
        if n == 0 {
            break;
        }
        let mut buf = buffer.lock().unwrap_or_else(|e| e.into_inner());
        buf.extend(&chunk[..n]);
        while buf.len() > STDERR_KEEP {
            buf.pop_front();
        }
    }
}

async fn write_lines(mut stdin: ChildStdin, mut commands: mpsc::UnboundedReceiver<WriterCmd>) {
    while let Some(cmd) = commands.recv().await {
        match cmd {
            WriterCmd::Line(mut line) => {
                crate::telemetry::wire::frame("send", "stdio", &line);
                line.push(b'\n');
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
            WriterCmd::Close => break,
        }
    }
    let _ = stdin.shutdown().await;
}

async fn read_lines<R: AsyncRead + Unpin>(reader: R, router: Arc<Router>, max: usize) {
    let mut lines = LineReader::new(reader, max);
    loop {
        match lines.next().await {
            Ok(Line::Data(line)) => {
                let line = trim_line(&line);
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match Incoming::decode(line, max) {
                    Some(msg) => router.route(msg),
                    None => {
                        tracing::debug!(
                            "snodo client: the server wrote a line that is not JSON-RPC"
                        )
                    }
                }
            }
            Ok(Line::TooLong(head)) => {
                // The answer to a call fails that call now: the call would
                // otherwise wait its whole timeout for an answer dropped.
                let answered = envelope(&head).response_id();
                match answered {
                    Some(id) if router.oversized(&id, max, "a line on stdout") => tracing::warn!(
                        "snodo client: the answer to request {id} is over {max} bytes: the request fails"
                    ),
                    _ => tracing::warn!("snodo client: skipped a server message over {max} bytes"),
                }
            }
            Ok(Line::Eof) | Err(_) => break,
        }
    }
    router.closed.store(true, Ordering::Release);
    router.lock().clear();
}

impl Transport for StdioTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn request(&self, out: Outgoing) -> BoxFuture<'static, Result<Exchange, ClientError>> {
        let result = (|| {
            let id = out
                .id
                .clone()
                .ok_or_else(|| ClientError::transport("a request needs an id"))?;
            let (tx, rx) = mpsc::channel(256);
            self.router.lock().insert(id.clone(), tx);
            if let Err(e) = self.write(out.body) {
                self.router.lock().remove(&id);
                return Err(e);
            }
            Ok(rx.into())
        })();
        Box::pin(async move { result })
    }

    fn send(&self, out: Outgoing) -> BoxFuture<'static, Result<(), ClientError>> {
        let result = self.write(out.body);
        Box::pin(async move { result })
    }

    fn cancel(&self, id: &RequestId, reason: &str) {
        let was_pending = self.router.lock().remove(id).is_some();
        if was_pending {
            let _ = self.write(super::cancelled(id, reason));
        }
    }

    fn set_legacy(&self, _legacy: bool) {}

    fn close(&self) -> BoxFuture<'static, ()> {
        let _ = self.writer.send(WriterCmd::Close);
        let child = self.child.clone();
        Box::pin(async move {
            let mut slot = child.lock().await;
            let Some(mut child) = slot.take() else { return };
            if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
                return;
            }
            #[cfg(unix)]
            if let Some(pid) = child.id() {
                let _ = Command::new("kill")
                    .arg("-TERM")
                    .arg(pid.to_string())
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .await;
                if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
                    return;
                }
            }
            let _ = child.kill().await;
        })
    }

    fn stderr(&self) -> Option<String> {
        let buffer = self.stderr.as_ref()?;
        let buf = buffer.lock().unwrap_or_else(|e| e.into_inner());
        let (a, b) = buf.as_slices();
        let mut bytes = a.to_vec();
        bytes.extend_from_slice(b);
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}
