//! The client's transports: Streamable HTTP, a child process over stdio, a
//! server in the same process, and the 2024-11-05 HTTP+SSE transport.
//!
//! A transport moves bytes and attributes incoming messages to requests; the
//! protocol (ids, `_meta`, negotiation, input rounds) lives in the client.
//! Sending a request yields an [`Exchange`]: the messages that
//! belong to it (progress and log notifications, subscription notifications,
//! initialize-era server requests) ending with its response. Dropping the
//! exchange cancels the request as the transport defines it.

pub(crate) mod direct;
pub(crate) mod http;
pub(crate) mod legacy_sse;
mod response;
mod router;
pub(crate) mod sse;
pub(crate) mod stdio;

use ::http::{HeaderName, HeaderValue};
use tokio::sync::mpsc;

use super::ClientError;
use super::options::BoxFuture;
use crate::wire::{self, Limits, Message, Notification, Request, RequestId};

pub(crate) use response::Response;

/// One message from the server.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A response (`result` or `error`).
    Response {
        /// Its id and its result or error.
        message: Response,
        /// The HTTP status that carried it (Streamable HTTP only).
        status: Option<u16>,
    },
    /// A notification.
    Notification(Notification),
    /// A server-to-client request (initialize-era wire only).
    Request(Request),
    /// The answer to the request was larger than the message limit and was
    /// dropped unread.
    Oversized {
        /// The limit, in bytes.
        max: usize,
        /// What carried it (`"a line on stdout"`).
        carrier: &'static str,
    },
}

impl Incoming {
    /// Decodes one message within `limits`; `None` when it is not JSON-RPC.
    pub(crate) fn decode(bytes: &[u8], max_bytes: usize) -> Option<Self> {
        crate::telemetry::wire::frame("recv", "", bytes);
        let limits = Limits {
            max_bytes,
            max_depth: 128,
            max_digits: 64,
        };
        // A client mostly reads responses: read in one pass, the result
        // kept as text; anything else goes the value path.
        let bytes = wire::strip_bom(bytes);
        if bytes.len() <= max_bytes
            && wire::scan(bytes, limits.max_depth, limits.max_digits).is_ok()
            && let Some(message) = Response::read(bytes)
        {
            return Some(Incoming::Response {
                message,
                status: None,
            });
        }
        match wire::decode::decode_by(bytes, &limits, false) {
            Ok(Message::Response(v)) => Some(Incoming::Response {
                message: Response::from_value(v),
                status: None,
            }),
            Ok(Message::Notification(n)) => Some(Incoming::Notification(n)),
            Ok(Message::Request(r)) => Some(Incoming::Request(r)),
            Err(e) => {
                tracing::debug!("snodo client: ignoring an undecodable message: {}", e.error);
                None
            }
        }
    }

    /// The error a call gets for an answer over the message limit.
    pub(crate) fn oversized(max: usize, carrier: &str) -> ClientError {
        ClientError::limit(
            crate::client::ClientLimit::MessageBytes,
            max,
            format!("the server's answer is {carrier} of more than {max} bytes"),
        )
    }
}

/// The messages that belong to one request, ending with its response:
/// those of a JSON body, all read already, or a stream still being read.
pub(crate) struct Exchange(Messages);

/// Where an [`Exchange`]'s messages come from.
enum Messages {
    /// Read whole (a JSON body): no channel is needed.
    Read(std::vec::IntoIter<Incoming>),
    /// Still arriving.
    Arriving(mpsc::Receiver<Incoming>),
}

impl Exchange {
    /// The messages of a body read whole.
    pub(crate) fn read(messages: Vec<Incoming>) -> Self {
        Exchange(Messages::Read(messages.into_iter()))
    }

    /// The next message; `None` once the exchange has ended.
    pub(crate) async fn recv(&mut self) -> Option<Incoming> {
        match &mut self.0 {
            Messages::Read(messages) => messages.next(),
            Messages::Arriving(rx) => rx.recv().await,
        }
    }
}

impl From<mpsc::Receiver<Incoming>> for Exchange {
    fn from(rx: mpsc::Receiver<Incoming>) -> Self {
        Exchange(Messages::Arriving(rx))
    }
}

/// One message to send.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    /// The request id; `None` for notifications and responses.
    pub(crate) id: Option<RequestId>,
    /// The compact JSON body.
    pub(crate) body: Vec<u8>,
    /// Protocol headers (HTTP only): `MCP-Protocol-Version`, `Mcp-Method`,
    /// `Mcp-Name`, `Mcp-Param-*`.
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// A subscription: the exchange stays open until it is dropped.
    pub(crate) long_lived: bool,
}

/// Which transport a client uses: the same kinds a server tells its
/// handlers of.
pub use crate::context::TransportKind;

/// What every transport implements.
pub(crate) trait Transport: Send + Sync + 'static {
    /// Which transport this is.
    fn kind(&self) -> TransportKind;

    /// Sends a request; the exchange carries what belongs to it.
    fn request(&self, out: Outgoing) -> BoxFuture<'static, Result<Exchange, ClientError>>;

    /// Sends a notification, or a response to a server request.
    fn send(&self, out: Outgoing) -> BoxFuture<'static, Result<(), ClientError>>;

    /// Cancels an in-flight request whose exchange is being dropped (stdio:
    /// `notifications/cancelled`; initialize-era HTTP: the same, POSTed;
    /// modern HTTP: nothing, closing the stream is the cancellation).
    fn cancel(&self, id: &RequestId, reason: &str);

    /// Whether the server speaks only the initialize era (the 2024-11-05
    /// HTTP+SSE transport): negotiation starts with `initialize`.
    fn initialize_only(&self) -> bool {
        false
    }

    /// Switches to the initialize-era wire: sessions (HTTP), resumable streams.
    fn set_legacy(&self, legacy: bool);

    /// The `Mcp-Session-Id` of an initialize-era HTTP session.
    fn session_id(&self) -> Option<String> {
        None
    }

    /// Opens the initialize-era standalone GET stream (HTTP only).
    fn open_event_stream(
        &self,
        _headers: Vec<(HeaderName, HeaderValue)>,
    ) -> BoxFuture<'static, Result<bool, ClientError>> {
        Box::pin(async { Ok(false) })
    }

    /// Shuts the transport down (HTTP: `DELETE` of a session; stdio: close
    /// stdin, wait, terminate).
    fn close(&self) -> BoxFuture<'static, ()>;

    /// The captured standard error of a stdio server.
    fn stderr(&self) -> Option<String> {
        None
    }
}

/// The `notifications/cancelled` message for request `id`, encoded.
pub(crate) fn cancelled(id: &RequestId, reason: &str) -> Vec<u8> {
    let body = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id.to_value(), "reason": reason}});
    serde_json::to_vec(&body).unwrap_or_default()
}

/// Whether a notification belongs to a subscription (carries its id).
pub(crate) fn subscription_id(n: &Notification) -> Option<RequestId> {
    n.params
        .get("_meta")
        .and_then(|m| m.get(crate::protocol::keys::SUBSCRIPTION_ID))
        .and_then(RequestId::from_value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(id: i64) -> Incoming {
        Incoming::decode(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#).as_bytes(),
            1024,
        )
        .expect("a response")
    }

    fn id_of(msg: Option<Incoming>) -> Option<RequestId> {
        match msg {
            Some(Incoming::Response { message, .. }) => message.id,
            _ => None,
        }
    }

    #[tokio::test]
    async fn an_exchange_gives_its_messages_in_order_then_ends() {
        let mut read = Exchange::read(vec![response(1), response(2)]);
        assert_eq!(id_of(read.recv().await), Some(RequestId::Number(1)));
        assert_eq!(id_of(read.recv().await), Some(RequestId::Number(2)));
        assert!(read.recv().await.is_none());
        let (tx, rx) = mpsc::channel(4);
        let mut arriving = Exchange::from(rx);
        tx.send(response(3)).await.unwrap();
        drop(tx);
        assert_eq!(id_of(arriving.recv().await), Some(RequestId::Number(3)));
        assert!(arriving.recv().await.is_none());
    }
}
