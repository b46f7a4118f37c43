//! Newline-delimited JSON over a pair of byte streams (a child process's stdin
//! and stdout).
//!
//! - One message per line; compact JSON out, nothing else on stdout.
//! - A leading byte-order mark and a CR before the LF are tolerated; blank
//!   lines are skipped.
//! - Requests run concurrently; each response is written whole by a single
//!   writer, so frames never interleave.
//! - `notifications/cancelled {requestId}` fires the request's signal; no
//!   response is written for it afterwards.
//! - A line over the limit is answered -32600 without being decoded, and
//!   reading goes on.
//! - At end of input, reading stops, in-flight requests get a grace period to
//!   finish, and the serve call returns.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use crate::context::{CancelSignal, TransportInfo, TransportKind};
use crate::server::Dispatched;
use crate::wire::{self, Message, RequestId};
use crate::{Error, Server};

/// Limits of the stdio transport.
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// Longest line accepted, in bytes (default 2 MiB).
    pub max_line_bytes: usize,
    /// Most requests running at once; reading pauses beyond it (default 256).
    pub max_in_flight: usize,
    /// How long in-flight requests may run after end of input (default 5 s).
    pub shutdown_grace: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            max_line_bytes: 2 * 1024 * 1024,
            max_in_flight: 256,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

/// One line read from the input.
enum Line {
    /// A complete line (without the newline).
    Data(Vec<u8>),
    /// A line longer than the limit; its bytes were discarded.
    TooLong,
    /// End of input.
    Eof,
}

/// Reads one line of at most `max` bytes, discarding the rest of a longer one.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, max: usize) -> io::Result<Line> {
    let mut line = Vec::new();
    let mut overflow = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if overflow {
                Line::TooLong
            } else if line.is_empty() {
                Line::Eof
            } else {
                Line::Data(line)
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !overflow {
            if line.len() + chunk.len() > max {
                overflow = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(if overflow {
                Line::TooLong
            } else {
                Line::Data(line)
            });
        }
    }
}

fn trim_line(mut line: &[u8]) -> &[u8] {
    if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF") {
        line = rest;
    }
    if let Some(rest) = line.strip_suffix(b"\r") {
        line = rest;
    }
    line
}

type InFlight = Arc<Mutex<HashMap<RequestId, CancelSignal>>>;

impl Server {
    /// Serves this process's stdin and stdout until stdin closes.
    ///
    /// On Linux, when stdin and stdout are pipes (the usual case for a server
    /// a client spawned), they are reopened through `/proc/self/fd` as
    /// non-blocking pipes driven by the reactor, instead of tokio's
    /// `stdin()`/`stdout()`, which hand every read and write to a blocking
    /// thread. Reopening creates new open file descriptions, so the
    /// non-blocking mode does not leak to anyone else holding the same pipe.
    /// Terminals, files and sockets use the portable path.
    pub async fn serve_stdio(&self) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use tokio::net::unix::pipe::OpenOptions;
            let input = OpenOptions::new().open_receiver("/proc/self/fd/0");
            let output = OpenOptions::new().open_sender("/proc/self/fd/1");
            if let (Ok(input), Ok(output)) = (input, output) {
                return self
                    .serve_lines(input, output, StdioOptions::default())
                    .await;
            }
        }
        self.serve_lines(
            tokio::io::stdin(),
            tokio::io::stdout(),
            StdioOptions::default(),
        )
        .await
    }

    /// Serves newline-delimited JSON from `input` to `output` until `input`
    /// ends.
    pub async fn serve_lines<R, W>(
        &self,
        input: R,
        output: W,
        options: StdioOptions,
    ) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::channel::<Vec<u8>>(1024);
        let writer = tokio::spawn(write_frames(output, rx));
        let in_flight: InFlight = Arc::default();
        let permits = Arc::new(Semaphore::new(options.max_in_flight.max(1)));
        let mut tasks = JoinSet::new();
        let mut reader = BufReader::new(input);
        loop {
            while tasks.try_join_next().is_some() {}
            let line = match read_line(&mut reader, options.max_line_bytes).await? {
                Line::Eof => break,
                Line::TooLong => {
                    let err =
                        Error::invalid_request("Invalid Request: message exceeds the line limit");
                    let _ = tx.send(wire::encode_error(None, &err)).await;
                    continue;
                }
                Line::Data(line) => line,
            };
            let line = trim_line(&line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let message = match wire::decode(line, self.limits()) {
                Ok(message) => message,
                Err(e) => {
                    let _ = tx.send(wire::encode_error(e.id.as_ref(), &e.error)).await;
                    continue;
                }
            };
            let request_id = match &message {
                Message::Notification(n) => {
                    if let Some(id) = crate::protocol::cancelled_request(n)
                        && let Some(signal) = in_flight.lock().expect("in-flight map").get(&id)
                    {
                        signal.cancel();
                    }
                    continue;
                }
                Message::Response(_) => continue,
                Message::Request(r) => r.id.clone(),
            };
            let cancel = CancelSignal::new();
            in_flight
                .lock()
                .expect("in-flight map")
                .insert(request_id.clone(), cancel.clone());
            let Ok(permit) = permits.clone().acquire_owned().await else {
                break;
            };
            let server = self.clone();
            let tx = tx.clone();
            let in_flight = in_flight.clone();
            tasks.spawn(async move {
                let transport = TransportInfo {
                    kind: TransportKind::Stdio,
                    ..TransportInfo::default()
                };
                match server.handle(message, transport, cancel.clone()).await {
                    Dispatched::Nothing => {}
                    Dispatched::Reply(reply) => {
                        if !cancel.is_cancelled() {
                            let _ = tx.send(reply.body.to_vec()).await;
                        }
                    }
                    Dispatched::Stream(mut stream) => {
                        while let Some(frame) = stream.next().await {
                            if cancel.is_cancelled() || tx.send(frame.to_vec()).await.is_err() {
                                break;
                            }
                        }
                    }
                }
                in_flight.lock().expect("in-flight map").remove(&request_id);
                drop(permit);
            });
        }
        let drain = async { while tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(options.shutdown_grace, drain)
            .await
            .is_err()
        {
            for signal in in_flight.lock().expect("in-flight map").values() {
                signal.cancel();
            }
            tasks.abort_all();
        }
        drop(tx);
        writer.await.map_err(io::Error::other)?
    }
}

/// The single writer: whole frames, one per line, flushed when idle.
async fn write_frames<W: AsyncWrite + Unpin>(
    mut output: W,
    mut rx: mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    while let Some(mut frame) = rx.recv().await {
        frame.push(b'\n');
        output.write_all(&frame).await?;
        while let Ok(mut more) = rx.try_recv() {
            more.push(b'\n');
            output.write_all(&more).await?;
        }
        output.flush().await?;
    }
    output.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_skipped_whole() {
        let data = format!("{}\nok\n\nlast", "x".repeat(100));
        let mut reader = BufReader::with_capacity(8, data.as_bytes());
        assert!(matches!(
            read_line(&mut reader, 10).await.unwrap(),
            Line::TooLong
        ));
        assert!(matches!(read_line(&mut reader, 10).await.unwrap(), Line::Data(l) if l == b"ok"));
        assert!(matches!(read_line(&mut reader, 10).await.unwrap(), Line::Data(l) if l.is_empty()));
        assert!(matches!(read_line(&mut reader, 10).await.unwrap(), Line::Data(l) if l == b"last"));
        assert!(matches!(
            read_line(&mut reader, 10).await.unwrap(),
            Line::Eof
        ));
    }

    #[test]
    fn bom_and_cr_are_trimmed() {
        assert_eq!(trim_line(b"\xEF\xBB\xBF{}\r"), b"{}");
    }
}
