//! A server in the same process: messages go straight to
//! [`Server::handle`](crate::Server::handle), with no framing and no headers.
//! Dropping an exchange fires the request's cancellation signal.

use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::{Exchange, Incoming, Outgoing, Transport, TransportKind};
use crate::Server;
use crate::client::ClientError;
use crate::client::options::BoxFuture;
use crate::context::{CancelSignal, TransportInfo};
use crate::server::{Dispatched, Forbidden};
use crate::wire::envelope::envelope;
use crate::wire::{self, RequestId};

/// The in-process transport.
pub(crate) struct DirectTransport {
    server: Server,
    max_bytes: usize,
}

impl DirectTransport {
    pub(crate) fn new(server: Server, max_bytes: usize) -> Self {
        Self { server, max_bytes }
    }
}

async fn run(server: Server, body: Vec<u8>, tx: mpsc::Sender<Incoming>, max: usize) {
    crate::telemetry::wire::frame("send", "direct", &body);
    let message = match wire::decode(&body, server.limits()) {
        Ok(m) => m,
        Err(e) => {
            let bytes = crate::server::Reply::undecodable(&e).body;
            if let Some(msg) = Incoming::decode(&bytes, max) {
                let _ = tx.send(msg).await;
            }
            return;
        }
    };
    let cancel = CancelSignal::new();
    let info = TransportInfo {
        kind: TransportKind::Direct,
        ..TransportInfo::default()
    };
    let dispatched = tokio::select! {
        d = server.handle(message, info, cancel.clone()) => d,
        _ = tx.closed() => {
            cancel.cancel();
            return;
        }
    };
    match dispatched {
        Dispatched::Nothing => {}
        Dispatched::Reply(reply) | Dispatched::Forbidden(Forbidden { reply, .. }) => {
            if let Some(msg) = incoming(&reply.body, max) {
                let _ = tx.send(msg).await;
            }
        }
        Dispatched::Stream(mut stream) => loop {
            let frame = tokio::select! {
                f = stream.next() => f,
                _ = tx.closed() => return,
            };
            let Some(frame) = frame else { return };
            let Some(msg) = incoming(&frame, max) else {
                continue;
            };
            let over = matches!(msg, Incoming::Oversized { .. });
            if tx.send(msg).await.is_err() || over {
                return;
            }
        },
    }
}

/// A frame of the server's as the client takes it: a response over `max`
/// bytes is [`Incoming::Oversized`] (and ends the exchange), any other
/// message over it is dropped.
fn incoming(frame: &[u8], max: usize) -> Option<Incoming> {
    if frame.len() <= max {
        return Incoming::decode(frame, max);
    }
    let head = &frame[..frame.len().min(crate::wire::lines::HEAD)];
    if envelope(head).response_id().is_some() {
        return Some(Incoming::Oversized {
            max,
            carrier: "a message",
        });
    }
    tracing::warn!("snodo client: skipped a server message over {max} bytes");
    None
}

impl Transport for DirectTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Direct
    }

    fn request(&self, out: Outgoing) -> BoxFuture<'static, Result<Exchange, ClientError>> {
        let (tx, rx) = mpsc::channel(256);
        tokio::spawn(run(self.server.clone(), out.body, tx, self.max_bytes));
        Box::pin(async move { Ok(rx.into()) })
    }

    fn send(&self, out: Outgoing) -> BoxFuture<'static, Result<(), ClientError>> {
        let server = self.server.clone();
        Box::pin(async move {
            crate::telemetry::wire::frame("send", "direct", &out.body);
            if let Ok(message) = wire::decode(&out.body, server.limits()) {
                let _ = server
                    .handle(message, TransportInfo::default(), CancelSignal::new())
                    .await;
            }
            Ok(())
        })
    }

    fn cancel(&self, _id: &RequestId, _reason: &str) {}

    fn set_legacy(&self, _legacy: bool) {}

    fn close(&self) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
}
