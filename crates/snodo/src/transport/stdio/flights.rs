//! The requests in flight on one stdio connection, polled by the serving
//! loop itself: no task per request, no channel hop, and nothing written
//! once a request is cancelled.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use futures_util::stream::{FuturesUnordered, Stream, StreamExt};

use crate::context::CancelSignal;
use crate::server::{Dispatched, Forbidden, ResponseStream};
use crate::wire::RequestId;

/// What one in-flight request yields to the serving loop.
pub(super) enum Event {
    /// A frame to write (a notification, or the response).
    Frame(Bytes),
    /// The request is finished (answered, cancelled, or a notification).
    Done(RequestId),
}

/// The frames of one request, polled by the serving loop itself: no task
/// per request, no channel hop, and nothing written once it is cancelled.
pub(super) struct RequestFrames {
    id: RequestId,
    cancel: CancelSignal,
    /// Wakes the loop when the request is cancelled, so that a handler
    /// waiting on anything else does not keep its slot.
    cancelled: Pin<Box<dyn Future<Output = ()> + Send>>,
    state: State,
}

impl RequestFrames {
    pub(super) fn new(id: RequestId, cancel: CancelSignal, dispatching: Dispatching) -> Self {
        Self::in_state(id, cancel, State::Dispatching(dispatching))
    }

    /// A request whose handler answered with a stream on its first poll.
    pub(super) fn streaming(id: RequestId, cancel: CancelSignal, stream: ResponseStream) -> Self {
        Self::in_state(id, cancel, State::Streaming(stream))
    }

    fn in_state(id: RequestId, cancel: CancelSignal, state: State) -> Self {
        let signal = cancel.clone();
        Self {
            id,
            cancel,
            cancelled: Box::pin(async move { signal.cancelled().await }),
            state,
        }
    }
}

/// A request being dispatched, boxed where it is made: each era's future is
/// as large as its own path, and is moved as a pointer from then on.
pub(super) type Dispatching = Pin<Box<dyn Future<Output = Dispatched> + Send>>;

enum State {
    Dispatching(Dispatching),
    Streaming(ResponseStream),
    Finishing,
    Ended,
}

impl Stream for RequestFrames {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Event>> {
        let this = &mut *self;
        loop {
            if this.cancel.is_cancelled() && !matches!(this.state, State::Ended) {
                this.state = State::Ended;
                return Poll::Ready(Some(Event::Done(this.id.clone())));
            }
            match &mut this.state {
                State::Dispatching(future) => match future.as_mut().poll(cx) {
                    Poll::Pending => {
                        if this.cancelled.as_mut().poll(cx).is_ready() {
                            continue;
                        }
                        return Poll::Pending;
                    }
                    Poll::Ready(Dispatched::Nothing) => this.state = State::Finishing,
                    Poll::Ready(
                        Dispatched::Reply(reply) | Dispatched::Forbidden(Forbidden { reply, .. }),
                    ) => {
                        this.state = State::Finishing;
                        return Poll::Ready(Some(Event::Frame(reply.body)));
                    }
                    Poll::Ready(Dispatched::Stream(stream)) => {
                        this.state = State::Streaming(stream);
                    }
                },
                State::Streaming(stream) => match Pin::new(stream).poll_next(cx) {
                    Poll::Pending => {
                        if this.cancelled.as_mut().poll(cx).is_ready() {
                            continue;
                        }
                        return Poll::Pending;
                    }
                    Poll::Ready(Some(frame)) => return Poll::Ready(Some(Event::Frame(frame))),
                    Poll::Ready(None) => this.state = State::Finishing,
                },
                State::Finishing => {
                    this.state = State::Ended;
                    return Poll::Ready(Some(Event::Done(this.id.clone())));
                }
                State::Ended => return Poll::Ready(None),
            }
        }
    }
}

/// The requests in flight: each runs as one future of the set until it
/// ends, and the events it yields on the way wait in a queue the loop
/// drains, in the order they came. (A set of streams would queue a
/// request again, a new allocation, for each event it yields.)
#[derive(Default)]
pub(super) struct Flights {
    set: FuturesUnordered<Flight>,
    events: Arc<Mutex<VecDeque<Event>>>,
}

impl Flights {
    /// Adds a request.
    pub(super) fn push(&mut self, frames: RequestFrames) {
        self.set.push(Flight {
            frames,
            events: Arc::clone(&self.events),
        });
    }

    /// How many requests are in flight.
    pub(super) fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether no request is in flight and no event waits in the queue.
    pub(super) fn is_empty(&self) -> bool {
        self.set.is_empty() && queue(&self.events).is_empty()
    }
}

impl Stream for Flights {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Event>> {
        loop {
            if let Some(event) = queue(&self.events).pop_front() {
                return Poll::Ready(Some(event));
            }
            match self.set.poll_next_unpin(cx) {
                // A request ended: its last events are queued.
                Poll::Ready(Some(())) => {}
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending if queue(&self.events).is_empty() => return Poll::Pending,
                Poll::Pending => {}
            }
        }
    }
}

/// The queue, whatever a panicking holder left in it.
fn queue(events: &Mutex<VecDeque<Event>>) -> std::sync::MutexGuard<'_, VecDeque<Event>> {
    events
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One request of the set: its frames, queued as they come.
struct Flight {
    frames: RequestFrames,
    events: Arc<Mutex<VecDeque<Event>>>,
}

impl Future for Flight {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let this = &mut *self;
        loop {
            match Pin::new(&mut this.frames).poll_next(cx) {
                Poll::Ready(Some(event)) => queue(&this.events).push_back(event),
                Poll::Ready(None) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures_util::FutureExt;
    use tokio::sync::{mpsc, oneshot};

    use super::*;
    use crate::server::Reply;

    /// What an event says, in a comparable form.
    fn seen(event: Event) -> String {
        match event {
            Event::Frame(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Event::Done(id) => format!("done {id:?}"),
        }
    }

    /// The next event, failing the test rather than waiting for ever.
    async fn next(flights: &mut Flights) -> Option<String> {
        tokio::time::timeout(Duration::from_secs(5), flights.next())
            .await
            .expect("an event within 5 s")
            .map(seen)
    }

    /// A request answered with `body` once `go` fires.
    fn answered(id: i64, body: &'static str) -> (RequestFrames, oneshot::Sender<()>) {
        let (go, wait) = oneshot::channel();
        let dispatching: Dispatching = Box::pin(async move {
            let _ = wait.await;
            Dispatched::Reply(Reply::ok(body.as_bytes().to_vec()))
        });
        let frames = RequestFrames::new(RequestId::Number(id), CancelSignal::new(), dispatching);
        (frames, go)
    }

    /// A request that streams what `notes` sends, then answers `final`
    /// once `go` fires.
    fn streaming(id: i64) -> (RequestFrames, mpsc::Sender<Vec<u8>>, oneshot::Sender<()>) {
        let (notes, rx) = mpsc::channel(4);
        let (go, wait) = oneshot::channel::<()>();
        let cancel = CancelSignal::new();
        let stream = ResponseStream::new(
            async move {
                let _ = wait.await;
                Some(b"final".to_vec())
            },
            rx,
            cancel.clone(),
            false,
        );
        let frames = RequestFrames::streaming(RequestId::Number(id), cancel, stream);
        (frames, notes, go)
    }

    #[tokio::test]
    async fn each_request_gives_its_frames_then_its_end_in_the_order_they_came() {
        let mut flights = Flights::default();
        let (first, go_first) = answered(1, "one");
        let (second, go_second) = answered(2, "two");
        flights.push(first);
        flights.push(second);
        assert_eq!(flights.len(), 2);
        assert!(
            flights.next().now_or_never().is_none(),
            "nothing is ready yet"
        );
        go_second.send(()).unwrap();
        assert_eq!(next(&mut flights).await.unwrap(), "two");
        assert_eq!(next(&mut flights).await.unwrap(), "done 2");
        assert_eq!(flights.len(), 1);
        go_first.send(()).unwrap();
        assert_eq!(next(&mut flights).await.unwrap(), "one");
        assert_eq!(next(&mut flights).await.unwrap(), "done 1");
        assert!(flights.is_empty());
        assert!(next(&mut flights).await.is_none());
    }

    #[tokio::test]
    async fn a_frame_queued_while_its_request_runs_on_is_given_in_the_same_poll() {
        let mut flights = Flights::default();
        let (idle, _never) = answered(1, "never");
        let (frames, notes, go) = streaming(7);
        flights.push(idle);
        flights.push(frames);
        // Both polled once, both pending.
        assert!(flights.next().now_or_never().is_none());
        notes.send(b"progress 1".to_vec()).await.unwrap();
        // The streaming request queues its frame and stays pending, as
        // does the idle one: the frame is given by this very poll.
        let event = flights.next().now_or_never().flatten().map(seen);
        assert_eq!(event.as_deref(), Some("progress 1"));
        notes.send(b"progress 2".to_vec()).await.unwrap();
        assert_eq!(next(&mut flights).await.unwrap(), "progress 2");
        assert!(!flights.is_empty(), "both requests still run");
        go.send(()).unwrap();
        assert_eq!(next(&mut flights).await.unwrap(), "final");
        assert_eq!(next(&mut flights).await.unwrap(), "done 7");
        assert_eq!(flights.len(), 1);
    }

    #[tokio::test]
    async fn a_request_cancelled_when_its_answer_is_ready_ends_without_it() {
        let mut flights = Flights::default();
        let (frames, go) = answered(3, "answer");
        let cancel = frames.cancel.clone();
        flights.push(frames);
        assert!(flights.next().now_or_never().is_none());
        go.send(()).unwrap();
        cancel.cancel();
        assert_eq!(next(&mut flights).await.unwrap(), "done 3");
        assert!(next(&mut flights).await.is_none());
    }

    #[tokio::test]
    async fn a_streaming_request_cancelled_while_it_waits_frees_its_slot() {
        let mut flights = Flights::default();
        let (frames, _notes, _go) = streaming(9);
        let cancel = frames.cancel.clone();
        flights.push(frames);
        assert!(flights.next().now_or_never().is_none());
        // Its handler ignores the signal and never answers: the request
        // ends anyway.
        cancel.cancel();
        assert_eq!(next(&mut flights).await.unwrap(), "done 9");
        assert!(flights.is_empty());
    }
}
