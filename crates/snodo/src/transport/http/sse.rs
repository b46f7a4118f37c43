//! Streamed responses as server-sent events: each frame the core emits
//! (request-scoped notifications, then the response) becomes one
//! `data: <json>` event.
//!
//! No event ids and no resumption (2026-07-28). Long-lived streams
//! (`subscriptions/listen`) get a comment keep-alive when idle; the others
//! are bounded by the request timeout, past which the request is cancelled
//! and a `-32603` "Request timed out" response ends the stream. Dropping the
//! body (the client went away) drops the stream, which cancels the request.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::Stream;
use hyper::body::{Body, Frame};
use tokio::time::{Instant, Sleep};

use crate::Error;
use crate::server::ResponseStream;
use crate::wire::{RequestId, encode_error};

/// How long a long-lived stream may stay silent before a keep-alive comment.
pub(super) const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The keep-alive comment.
pub(super) const COMMENT: &[u8] = b":\n\n";

/// When a streamed (not long-lived) request gives up.
#[derive(Debug)]
pub(super) struct Deadline {
    pub(super) at: Instant,
    pub(super) id: Option<RequestId>,
}

/// A [`ResponseStream`] framed as `text/event-stream`.
pub(super) struct SseBody {
    /// `None` once the stream ended (or was cut off by the deadline).
    stream: Option<ResponseStream>,
    /// The keep-alive timer (long-lived streams) or the deadline (others).
    timer: Pin<Box<Sleep>>,
    /// The id to answer with when the deadline passes; `None` for
    /// long-lived streams.
    deadline: Option<Deadline>,
}

impl SseBody {
    pub(super) fn new(stream: ResponseStream, deadline: Deadline) -> Self {
        let (at, deadline) = if stream.is_long_lived() {
            (Instant::now() + KEEP_ALIVE, None)
        } else {
            (deadline.at, Some(deadline))
        };
        Self {
            stream: Some(stream),
            timer: Box::pin(tokio::time::sleep_until(at)),
            deadline,
        }
    }
}

/// How long a client should wait before reconnecting to a stream the server
/// closed (the `retry` field of a priming event).
const RETRY_MS: u64 = 1000;

/// `data: <json>\n\n`.
fn event(json: &[u8]) -> Bytes {
    event_with_id("", json)
}

/// One SSE event: `id:` when `id` is not empty, then `data:`; an empty
/// frame is a priming event, which also carries `retry:`.
pub(super) fn event_with_id(id: &str, frame: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(frame.len() + id.len() + 24);
    if !id.is_empty() {
        out.put_slice(b"id: ");
        out.put_slice(id.as_bytes());
        out.put_slice(b"\n");
    }
    if frame.is_empty() {
        out.put_slice(format!("retry: {RETRY_MS}\n").as_bytes());
    }
    out.put_slice(b"data: ");
    out.put_slice(frame);
    out.put_slice(b"\n\n");
    out.freeze()
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        let Some(stream) = this.stream.as_mut() else {
            return Poll::Ready(None);
        };
        match Pin::new(stream).poll_next(cx) {
            Poll::Ready(Some(frame)) => {
                if this.deadline.is_none() {
                    this.timer.as_mut().reset(Instant::now() + KEEP_ALIVE);
                }
                return Poll::Ready(Some(Ok(Frame::data(event(&frame)))));
            }
            Poll::Ready(None) => {
                this.stream = None;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if this.timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        match this.deadline.take() {
            None => {
                this.timer.as_mut().reset(Instant::now() + KEEP_ALIVE);
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(COMMENT)))))
            }
            Some(deadline) => {
                if let Some(stream) = this.stream.take() {
                    stream.cancel_signal().cancel();
                }
                let error =
                    encode_error(deadline.id.as_ref(), &Error::internal("Request timed out"));
                Poll::Ready(Some(Ok(Frame::data(event(&error)))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.stream.is_none() && self.deadline.is_none()
    }
}
