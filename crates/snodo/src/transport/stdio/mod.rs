//! Newline-delimited JSON over a pair of byte streams (a child process's stdin
//! and stdout).
//!
//! - One message per line; compact JSON out, nothing else on stdout.
//! - A leading byte-order mark and a CR before the LF are tolerated; blank
//!   lines are skipped.
//! - Requests run concurrently; each response is written whole by a single
//!   writer, so frames never interleave.
//! - At `max_in_flight` requests, one more is held and reading pauses; an
//!   initialize-era connection keeps reading (the requests in flight may wait
//!   for the client's answers) and answers requests beyond that with
//!   -32603 "Server busy".
//! - `notifications/cancelled {requestId}` fires the request's signal; no
//!   response is written for it afterwards.
//! - A line over the limit is answered -32600 without being decoded, and
//!   reading goes on.
//! - At end of input, reading stops, in-flight requests get a grace period to
//!   finish, and the serve call returns.

use std::collections::HashMap;
use std::io;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};

use crate::context::{CancelSignal, TransportInfo, TransportKind};
use crate::server::connection::{Carried, Connection, Framing, Speaks};
use crate::server::{Dispatched, Forbidden, Reply};
use crate::wire::lines::{Line, LineReader, trim_line};
use crate::wire::{self, Message, RequestId};
use crate::{Error, Server};

mod flights;

use flights::{Dispatching, Event, Flights, RequestFrames};

/// Limits of the stdio transport.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StdioOptions {
    /// Longest line accepted, in bytes (default: `None`, the server's
    /// message limit, [`Limits::max_bytes`](crate::wire::Limits::max_bytes)).
    pub max_line_bytes: Option<usize>,
    /// Most requests running at once (default 256). Beyond it one more request
    /// is held and reading pauses until a slot frees; notifications read so far
    /// (cancellations) still apply.
    pub max_in_flight: usize,
    /// How long in-flight requests may run after end of input (default 5 s).
    pub shutdown_grace: Duration,
}

impl StdioOptions {
    /// The defaults (see each field).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the longest line accepted, in bytes.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = Some(bytes);
        self
    }

    /// Sets how many requests may run at once (at least 1).
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.max(1);
        self
    }

    /// Sets how long in-flight requests may run after end of input.
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            max_line_bytes: None,
            max_in_flight: 256,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

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
    ///
    /// With those pipes, on a multi-thread runtime, the serving loop runs on
    /// one of the runtime's workers (the thread the reactor wakes), not on
    /// the thread that awaits this call, inside the caller's current span;
    /// dropping the call's future aborts it (it stops at its next poll).
    pub async fn serve_stdio(&self) -> io::Result<()> {
        self.serve_stdio_with(StdioOptions::default()).await
    }

    /// [`serve_stdio`](Self::serve_stdio) with options: line length, requests
    /// in flight, shutdown grace.
    ///
    /// ```no_run
    /// # async fn run(server: snodo::Server) -> std::io::Result<()> {
    /// use std::time::Duration;
    /// use snodo::transport::stdio::StdioOptions;
    /// let options = StdioOptions::new()
    ///     .max_in_flight(32)
    ///     .shutdown_grace(Duration::from_secs(2));
    /// server.serve_stdio_with(options).await
    /// # }
    /// ```
    pub async fn serve_stdio_with(&self, options: StdioOptions) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            use tokio::net::unix::pipe::OpenOptions;
            let input = OpenOptions::new().open_receiver("/proc/self/fd/0");
            let output = OpenOptions::new().open_sender("/proc/self/fd/1");
            if let (Ok(input), Ok(output)) = (input, output) {
                let server = self.clone();
                return on_worker(async move { server.serve_lines(input, output, options).await })
                    .await;
            }
        }
        self.serve_lines(tokio::io::stdin(), tokio::io::stdout(), options)
            .await
    }

    /// Serves newline-delimited JSON from `input` to `output` until `input`
    /// ends.
    ///
    /// One task does everything: it reads lines, polls the requests in
    /// flight (up to `max_in_flight`, favouring them over reading more), and
    /// writes whole frames, flushing when nothing else is ready. Handlers
    /// that stream run on tasks of their own (see [`ResponseStream`](crate::server::ResponseStream)).
    pub async fn serve_lines<R, W>(
        &self,
        input: R,
        output: W,
        options: StdioOptions,
    ) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        self.start_background();
        let max_line = options.max_line_bytes.unwrap_or(self.limits().max_bytes);
        let mut lines = LineReader::new(input, max_line);
        let mut out = BufWriter::new(output);
        let mut in_flight = Flights::default();
        let mut signals: HashMap<RequestId, CancelSignal> = HashMap::new();
        let max_in_flight = options.max_in_flight.max(1);
        let mut deadline: Option<tokio::time::Instant> = None;
        let mut waiting: Option<RequestFrames> = None;
        let mut connection = Connection::new(Framing::Lines);
        let mut unsolicited = Unsolicited::default();
        loop {
            if deadline.is_some() && in_flight.is_empty() && waiting.is_none() {
                break;
            }
            tokio::select! {
                biased;
                Some(event) = in_flight.next(), if !in_flight.is_empty() => {
                    let mut next = Some(event);
                    while let Some(event) = next.take() {
                        match event {
                            Event::Frame(frame) => {
                                out.write_all(&frame).await?;
                                out.write_all(b"\n").await?;
                            }
                            Event::Done(id) => {
                                signals.remove(&id);
                                if let Some(frames) = waiting.take() {
                                    in_flight.push(frames);
                                }
                            }
                        }
                        next = in_flight.next().now_or_never().flatten();
                    }
                    out.flush().await?;
                }
                // An initialize-era session keeps reading at capacity: the
                // requests in flight may be waiting for the client's answers.
                line = lines.next(), if deadline.is_none() && (waiting.is_none() || connection.session().is_some()) => {
                    let line = match line? {
                        Line::Eof => {
                            deadline = Some(tokio::time::Instant::now() + options.shutdown_grace);
                            continue;
                        }
                        Line::TooLong(_) => {
                            tracing::warn!(target: "snodo::transport", max_line, "limit reached: a stdin line over the limit (-32600)");
                            let err = Error::invalid_request("Invalid Request: message exceeds the line limit");
                            write_frame(&mut out, &wire::encode_error(None, &err)).await?;
                            continue;
                        }
                        Line::Data(line) => line,
                    };
                    let trimmed = trim_line(&line);
                    if trimmed.iter().all(u8::is_ascii_whitespace) {
                        lines.recycle(line);
                        continue;
                    }
                    let decoded = wire::decode(trimmed, self.limits());
                    // Decoded messages own their data: the line's buffer
                    // serves the next line.
                    lines.recycle(line);
                    let message = match decoded {
                        Ok(message) => message,
                        Err(e) => {
                            write_frame(&mut out, &Reply::undecodable(&e).body).await?;
                            continue;
                        }
                    };
                    if let Message::Notification(n) = &message
                        && let Some(signal) = crate::protocol::cancelled_request(n)
                            .and_then(|id| signals.get(&id))
                    {
                        signal.cancel();
                    }
                    let legacy = match connection.route(self, &message, Carried::default) {
                        Speaks::Session(session) => Some(session),
                        Speaks::Modern => None,
                        Speaks::Initialize => {
                            let Message::Request(request) = &message else { continue };
                            match self.initialize(request, &stdio_info(), || Ok((String::new(), None))) {
                                Ok(done) => {
                                    let (tx, rx) = tokio::sync::mpsc::channel(LEGACY_OUTBOX);
                                    done.session.attach_outbox(tx);
                                    unsolicited.outbox = Some(rx);
                                    unsolicited.events = Some(self.events().receiver());
                                    connection.pin_session(done.session);
                                    write_frame(&mut out, &done.reply.body).await?;
                                }
                                Err(Dispatched::Reply(reply) | Dispatched::Forbidden(Forbidden { reply, .. })) => {
                                    write_frame(&mut out, &reply.body).await?;
                                }
                                Err(_) => unreachable!("initialize answers with a reply"),
                            }
                            continue;
                        }
                        refused @ (Speaks::Ping | Speaks::NotInitialized | Speaks::Named) => {
                            if let Message::Request(request) = &message {
                                write_frame(&mut out, &before_initialize(request, &refused)).await?;
                            }
                            continue;
                        }
                    };
                    let request = match message {
                        Message::Request(request) => request,
                        Message::Notification(_) => {
                            if let Some(session) = legacy {
                                let _ = self
                                    .handle_legacy(message, &session, stdio_info(), CancelSignal::new())
                                    .now_or_never();
                            }
                            continue;
                        }
                        Message::Response(response) => {
                            if let Some(session) = legacy {
                                session.resolve(&response);
                            }
                            continue;
                        }
                    };
                    let id = request.id.clone();
                    if in_flight.len() >= max_in_flight && waiting.is_some() {
                        let busy = Error::internal(format!(
                            "Server busy: more than {max_in_flight} requests in flight"
                        ));
                        write_frame(&mut out, &wire::encode_error(Some(&id), &busy)).await?;
                        continue;
                    }
                    let cancel = CancelSignal::new();
                    let signal = cancel.clone();
                    let message = Message::Request(request);
                    let mut dispatching: Dispatching = match legacy {
                        Some(session) => {
                            let server = self.clone();
                            Box::pin(async move {
                                server.handle_legacy(message, &session, stdio_info(), signal).await
                            })
                        }
                        None => Box::pin(self.handle(message, stdio_info(), signal)),
                    };
                    // Most requests are answered on their first poll: with a
                    // slot free, that poll happens here, the reply is written
                    // at once, and the request never joins the set in flight
                    // (nothing to cancel, nothing to wake). One still pending
                    // is polled again by the set, with the set's waker; one
                    // over the limit is held unpolled.
                    let full = in_flight.len() >= max_in_flight;
                    let first = if full { None } else { dispatching.as_mut().now_or_never() };
                    let frames = match first {
                        None => RequestFrames::new(id.clone(), cancel.clone(), dispatching),
                        Some(Dispatched::Reply(reply) | Dispatched::Forbidden(Forbidden { reply, .. })) => {
                            write_frame(&mut out, &reply.body).await?;
                            continue;
                        }
                        Some(Dispatched::Nothing) => continue,
                        Some(Dispatched::Stream(stream)) => {
                            RequestFrames::streaming(id.clone(), cancel.clone(), stream)
                        }
                    };
                    signals.insert(id, cancel);
                    if !full {
                        in_flight.push(frames);
                    } else {
                        // Full: hold this one; a 2026-07-28 connection stops
                        // reading requests until a slot frees (notifications
                        // already read have been applied).
                        waiting = Some(frames);
                    }
                }
                Some(frame) = next_outbox(&mut unsolicited.outbox), if unsolicited.outbox.is_some() => {
                    write_frame(&mut out, &frame).await?;
                }
                event = next_event(&mut unsolicited.events), if unsolicited.events.is_some() => {
                    if let (Some(event), Some(session)) = (event, connection.session()) {
                        let caps = self.capabilities();
                        // A pipe carries no principal: the policy decides
                        // for the anonymous caller, as it does for lists.
                        let hears = |uri: &str| self.hears_of(None, uri);
                        if let Some(frame) = crate::server::legacy::notification_for(&event, session, &caps, &hears) {
                            write_frame(&mut out, &frame).await?;
                        }
                    }
                }
                // `select!` makes every branch's future on each pass,
                // disabled ones too: making this one reads no clock and
                // arms no timer until it is polled.
                () = grace(deadline), if deadline.is_some() => {
                    break;
                }
            }
        }
        for signal in signals.values() {
            signal.cancel();
        }
        drop(in_flight);
        out.flush().await
    }
}

/// Runs the serving loop on one of the runtime's workers when the runtime has
/// several, and where it was called otherwise.
///
/// `#[tokio::main]` polls its future on the main thread, which does not
/// drive the reactor: every line read would first wake a worker, which then
/// wakes the main thread. On a worker, the thread the pipe's readiness wakes
/// is the one that runs the loop, in the caller's current span. Dropping the
/// returned future aborts the loop: it stops at its next poll.
#[cfg(any(target_os = "linux", test))]
async fn on_worker<F>(serving: F) -> io::Result<()>
where
    F: Future<Output = io::Result<()>> + Send + 'static,
{
    /// Aborts the spawned loop when the caller stops waiting for it.
    struct Abort(tokio::task::AbortHandle);
    impl Drop for Abort {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if !multi_thread {
        return serving.await;
    }
    let task = tokio::spawn(tracing::Instrument::in_current_span(serving));
    let _abort = Abort(task.abort_handle());
    match task.await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(io::Error::other(e)),
    }
}

/// Ends at `deadline`; never without one.
async fn grace(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Messages of an initialize-era session that belong to no request
/// (resource updates, list changes) queued for the pipe.
const LEGACY_OUTBOX: usize = crate::server::legacy::OUTBOX_QUEUE;

fn stdio_info() -> TransportInfo {
    TransportInfo {
        kind: TransportKind::Stdio,
        ..TransportInfo::default()
    }
}

/// What an initialize-era session sends that answers no request: its
/// queued messages and the server's events it turns into notifications.
#[derive(Default)]
struct Unsolicited {
    outbox: Option<tokio::sync::mpsc::Receiver<Vec<u8>>>,
    events: Option<tokio::sync::broadcast::Receiver<crate::server::Event>>,
}

/// The answer to a request sent before `initialize` on a connection that
/// may still open a session: `{}` for `ping`, -32600 for anything else.
fn before_initialize(request: &wire::Request, speaks: &Speaks) -> Vec<u8> {
    if let Speaks::Ping = speaks {
        return wire::encode_raw_result(&request.id, b"{}");
    }
    wire::encode_error(
        Some(&request.id),
        &Error::invalid_request(
            "Invalid Request: the session is not initialized; send initialize first",
        ),
    )
}

async fn next_outbox(outbox: &mut Option<tokio::sync::mpsc::Receiver<Vec<u8>>>) -> Option<Vec<u8>> {
    match outbox {
        Some(rx) => rx.recv().await,
        None => None,
    }
}

/// The next event for the session; `None` after a lag (the lost events are
/// hints) or once the hub is gone (then the receiver is dropped).
async fn next_event(
    events: &mut Option<tokio::sync::broadcast::Receiver<crate::server::Event>>,
) -> Option<crate::server::Event> {
    use tokio::sync::broadcast::error::RecvError;
    let rx = events.as_mut()?;
    match rx.recv().await {
        Ok(event) => Some(event),
        Err(RecvError::Lagged(_)) => None,
        Err(RecvError::Closed) => {
            *events = None;
            None
        }
    }
}

/// Writes one whole frame and flushes it.
async fn write_frame<W: AsyncWrite + Unpin>(
    out: &mut BufWriter<W>,
    frame: &[u8],
) -> io::Result<()> {
    out.write_all(frame).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt as _, BufReader};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_loop_moved_to_a_worker_stops_when_its_caller_stops_waiting() {
        let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
        let (held_tx, held_rx) = tokio::sync::oneshot::channel::<()>();
        let caller = tokio::spawn(async move {
            on_worker(async move {
                let _held = held_tx;
                let _ = started_tx.send(());
                std::future::pending::<io::Result<()>>().await
            })
            .await
        });
        started_rx.await.unwrap();
        assert!(!caller.is_finished());
        caller.abort();
        // The loop's future is dropped with its task, and what it held with it.
        let dropped = tokio::time::timeout(Duration::from_secs(5), held_rx).await;
        assert!(matches!(dropped, Ok(Err(_))), "the spawned loop still runs");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_loop_moved_to_a_worker_returns_its_result_and_its_panic() {
        let done = on_worker(async { Err(io::Error::other("boom")) }).await;
        assert_eq!(done.unwrap_err().to_string(), "boom");
        let panicked = std::panic::AssertUnwindSafe(on_worker(async {
            let stop = true;
            if stop {
                panic!("the loop panicked");
            }
            Ok(())
        }))
        .catch_unwind()
        .await
        .unwrap_err();
        assert_eq!(panicked.downcast_ref::<&str>(), Some(&"the loop panicked"));
    }

    #[tokio::test]
    async fn a_cancelled_request_frees_its_slot_even_if_its_handler_never_wakes() {
        use crate::tool::from_fn;
        let server = Server::builder("s", "1")
            .tool(from_fn("stuck", |_, _| async {
                std::future::pending::<()>().await;
                Ok(crate::ToolResult::text("never"))
            }))
            .tool(from_fn("quick", |_, _| async {
                Ok(crate::ToolResult::text("quick"))
            }))
            .build()
            .unwrap();
        let (mut client, server_side) = tokio::io::duplex(4096);
        let (server_in, server_out) = tokio::io::split(server_side);
        let options = StdioOptions {
            max_in_flight: 1,
            ..StdioOptions::default()
        };
        let serving =
            tokio::spawn(async move { server.serve_lines(server_in, server_out, options).await });
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        let call = |id: u32, name: &str| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{{meta},\"name\":\"{name}\"}}}}\n"
            )
        };
        client.write_all(call(1, "stuck").as_bytes()).await.unwrap();
        client
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n")
            .await
            .unwrap();
        client.write_all(call(2, "quick").as_bytes()).await.unwrap();
        let mut reader = BufReader::new(&mut client);
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(5), reader.read_line(&mut line))
            .await
            .expect("the second request is served")
            .unwrap();
        let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], 2, "{reply}");
        drop(reader);
        drop(client);
        tokio::time::timeout(Duration::from_secs(10), serving)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn a_cancelled_listen_stream_ends_and_its_neighbour_goes_on() {
        use crate::tool::from_fn;
        let server = Server::builder("s", "1")
            .tool(from_fn("a", |_, _| async {
                Ok(crate::ToolResult::text("a"))
            }))
            .tool(from_fn("b", |_, _| async {
                Ok(crate::ToolResult::text("b"))
            }))
            .build()
            .unwrap();
        let (client, server_side) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server_side);
        let serving = {
            let server = server.clone();
            tokio::spawn(async move {
                server
                    .serve_lines(server_in, server_out, StdioOptions::default())
                    .await
            })
        };
        let (read, mut write) = tokio::io::split(client);
        let mut lines = BufReader::new(read).lines();
        let mut next = async || -> serde_json::Value {
            let line = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
                .await
                .expect("a line within 5 s")
                .unwrap()
                .unwrap();
            serde_json::from_str(&line).unwrap()
        };
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
        for id in ["l1", "l2"] {
            let listen = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":\"{id}\",\"method\":\"subscriptions/listen\",\"params\":{{{meta},\"notifications\":{{\"toolsListChanged\":true}}}}}}\n"
            );
            write.write_all(listen.as_bytes()).await.unwrap();
            let ack = next().await;
            assert_eq!(
                ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
                id
            );
        }
        write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"l1\"}}\n")
            .await
            .unwrap();
        // Let the cancellation land before the change.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(server.remove_tool("a"));
        let change = next().await;
        assert_eq!(change["method"], "notifications/tools/list_changed");
        assert_eq!(
            change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "l2",
            "only the open subscription hears of it: {change}"
        );
        assert!(server.remove_tool("b"));
        let again = next().await;
        assert_eq!(
            again["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "l2"
        );
        server.events().shutdown();
        let mut rest = Vec::new();
        loop {
            let frame = next().await;
            let done = frame["id"] == "l2";
            rest.push(frame);
            if done {
                break;
            }
        }
        assert!(
            rest.iter().all(|f| !f.to_string().contains("\"l1\"")),
            "nothing more for the cancelled subscription: {rest:?}"
        );
        // The duplex reports end of input once both client halves are gone.
        drop(lines);
        drop(write);
        tokio::time::timeout(Duration::from_secs(10), serving)
            .await
            .expect("the server stops at end of input")
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn the_line_limit_is_the_servers_message_limit() {
        let limits = crate::wire::Limits {
            max_bytes: 1024,
            ..crate::wire::Limits::default()
        };
        let server = Server::builder("s", "1").limits(limits).build().unwrap();
        let (mut client, server_side) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server_side);
        let serving = tokio::spawn(async move {
            server
                .serve_lines(server_in, server_out, StdioOptions::default())
                .await
        });
        let long = format!("{{\"pad\":\"{}\"}}\n", "x".repeat(2000));
        client.write_all(long.as_bytes()).await.unwrap();
        let mut reader = BufReader::new(&mut client);
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(5), reader.read_line(&mut line))
            .await
            .unwrap()
            .unwrap();
        assert!(line.contains("exceeds the line limit"), "{line}");
        drop(reader);
        drop(client);
        serving.await.unwrap().unwrap();
    }

    #[test]
    fn cr_is_trimmed_and_the_bom_left_to_the_decoder() {
        assert_eq!(trim_line(b"{}\r"), b"{}");
        assert_eq!(trim_line(b"\xEF\xBB\xBF{}\r"), b"\xEF\xBB\xBF{}");
    }
}
