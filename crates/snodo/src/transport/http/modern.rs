//! A 2026-07-28 request over HTTP, answered within the request timeout, and
//! how each [`Dispatched`] travels over HTTP.
//!
//! The request is handed to the server at once; what waits for its answer
//! is a small future of its own ([`Answer`]) that holds the server's request
//! future in place, so that the common request costs the allocator only
//! small blocks.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use tokio::time::{Instant, Sleep};

use super::body::McpBody;
use super::response::{Challenger, json, status};
use super::sse::{Deadline, SseBody};
use crate::server::{Dispatched, First, Forbidden};
use crate::wire::{self, Message, RequestId};
use crate::{CancelSignal, Error, Server, TransportInfo};

/// Starts `message` on `server` and returns the future of its HTTP answer,
/// due within `timeout`.
///
/// The server's own request timeout already bounds the handler; a timer of
/// this transport's is armed only when `timeout` is tighter.
pub(super) fn answer(
    server: &Server,
    timeout: Duration,
    message: Message,
    transport: TransportInfo,
) -> Answer<impl Future<Output = Dispatched> + Send + use<>> {
    let id = message.request_id().cloned();
    let at = Instant::now() + timeout;
    let cancel = CancelSignal::new();
    let challenger = Challenger::of(&transport);
    let tighter =
        (timeout < server.request_timeout()).then(|| Box::pin(tokio::time::sleep_until(at)));
    Answer::Handling {
        handling: server.handle(message, transport, cancel.clone()),
        tighter,
        id,
        at,
        guard: CancelOnDrop(Some(cancel)),
        challenger,
    }
}

pin_project_lite::pin_project! {
    /// The future of [`answer`]: the request being handled, then, for a
    /// response that may stream, its first frame awaited (boxed: most
    /// requests never get there).
    #[project = AnswerProj]
    pub(super) enum Answer<H> {
        Handling {
            #[pin]
            handling: H,
            tighter: Option<Pin<Box<Sleep>>>,
            id: Option<RequestId>,
            at: Instant,
            guard: CancelOnDrop,
            challenger: Challenger,
        },
        Streaming { rest: Pin<Box<dyn Future<Output = Response<McpBody>> + Send>> },
    }
}

impl<H: Future<Output = Dispatched>> Future for Answer<H> {
    type Output = Response<McpBody>;

    fn poll(mut self: Pin<&mut Self>, task: &mut Context<'_>) -> Poll<Response<McpBody>> {
        let (mut stream, id, at, cancel) = match self.as_mut().project() {
            AnswerProj::Streaming { rest } => return rest.as_mut().poll(task),
            AnswerProj::Handling {
                handling,
                tighter,
                id,
                at,
                guard,
                challenger,
            } => {
                let dispatched = match handling.poll(task) {
                    Poll::Ready(dispatched) => dispatched,
                    Poll::Pending => {
                        let late = tighter
                            .as_mut()
                            .is_some_and(|sleep| sleep.as_mut().poll(task).is_ready());
                        if !late {
                            return Poll::Pending;
                        }
                        let cancel = guard.disarm();
                        return Poll::Ready(timed_out(&cancel, id.as_ref()));
                    }
                };
                let cancel = guard.disarm();
                match dispatched {
                    Dispatched::Forbidden(refused) => {
                        return Poll::Ready(challenger.forbidden(refused));
                    }
                    // A request that may stream is answered as JSON when its
                    // response comes before any notification: server-sent
                    // events only when there is something to send ahead of
                    // the response.
                    Dispatched::Stream(stream) if !stream.is_long_lived() => {
                        (stream, id.take(), *at, cancel)
                    }
                    dispatched => {
                        let deadline = Deadline {
                            at: *at,
                            id: id.take(),
                        };
                        return Poll::Ready(respond(dispatched, deadline));
                    }
                }
            }
        };
        let rest = Box::pin(async move {
            match tokio::time::timeout_at(at, stream.first()).await {
                Ok(First::Final(body)) => json(StatusCode::OK, body),
                Ok(First::Streaming | First::Ended) => {
                    respond(Dispatched::Stream(stream), Deadline { at, id })
                }
                Err(_) => timed_out(&cancel, id.as_ref()),
            }
        });
        self.set(Answer::Streaming { rest });
        self.poll(task)
    }
}

/// Cancels a request past its timeout and answers -32603 with its id.
fn timed_out(cancel: &CancelSignal, id: Option<&wire::RequestId>) -> Response<McpBody> {
    cancel.cancel();
    let error = Error::internal("Request timed out");
    json(StatusCode::OK, wire::encode_error(id, &error).into())
}

/// Fires the request's signal if its future is dropped before it finishes.
pub(super) struct CancelOnDrop(Option<CancelSignal>);

impl CancelOnDrop {
    /// The signal, no longer fired on drop (an empty one if already taken).
    fn disarm(&mut self) -> CancelSignal {
        self.0.take().unwrap_or_default()
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(signal) = self.0.take() {
            signal.cancel();
        }
    }
}

/// Maps what the core produced to the HTTP response: 202 for nothing, JSON
/// for one reply, server-sent events for a stream. The one place that knows
/// how each [`Dispatched`] travels over HTTP.
pub(super) fn respond(dispatched: Dispatched, deadline: Deadline) -> Response<McpBody> {
    match dispatched {
        Dispatched::Nothing => status(StatusCode::ACCEPTED),
        Dispatched::Reply(reply) | Dispatched::Forbidden(Forbidden { reply, .. }) => {
            json(reply.status, reply.body)
        }
        Dispatched::Stream(stream) => {
            let mut response = Response::new(McpBody::new(SseBody::new(stream, deadline)));
            let headers = response.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
            headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
            response
        }
    }
}
