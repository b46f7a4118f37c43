//! Streamed responses: request-scoped notifications, then the final response.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use futures_util::{FutureExt, Stream};
use tokio::sync::mpsc;

use crate::CancelSignal;

/// The future that runs the request and yields its final frame.
type Handler = Pin<Box<dyn Future<Output = Option<Vec<u8>>> + Send>>;

/// The frames of one request that may emit notifications: zero or more
/// notifications, then the final response (absent when the request was
/// cancelled). Polling the stream drives the handler; dropping it cancels the
/// request.
pub struct ResponseStream {
    handler: Option<Handler>,
    /// Set when the handler runs on a task of its own: it outlives a dropped
    /// stream long enough to see the cancellation, then is aborted.
    task: Option<tokio::task::AbortHandle>,
    notifications: mpsc::Receiver<Vec<u8>>,
    /// A notification [`ResponseStream::first`] took, yielded first.
    front: Option<Bytes>,
    last: Option<Vec<u8>>,
    cancel: CancelSignal,
    long_lived: bool,
}

/// What a stream yields first.
#[cfg(feature = "http")]
#[derive(Debug)]
pub(crate) enum First {
    /// The final response, with no notification before it.
    Final(Bytes),
    /// A notification: the stream streams (it yields this one again first).
    Streaming,
    /// Nothing (the request was cancelled).
    Ended,
}

impl std::fmt::Debug for ResponseStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseStream")
            .field("running", &self.handler.is_some())
            .field("long_lived", &self.long_lived)
            .finish()
    }
}

impl ResponseStream {
    pub(crate) fn new(
        handler: impl Future<Output = Option<Vec<u8>>> + Send + 'static,
        notifications: mpsc::Receiver<Vec<u8>>,
        cancel: CancelSignal,
        long_lived: bool,
    ) -> Self {
        Self {
            handler: Some(Box::pin(handler)),
            task: None,
            notifications,
            front: None,
            last: None,
            cancel,
            long_lived,
        }
    }

    /// Runs `handler` on a task of its own, so that when the stream is
    /// dropped (the client went away) the handler still observes the
    /// cancellation signal; it is aborted if it has not finished
    /// [`ABANDON_GRACE`] later.
    ///
    /// The handler is polled once here first: one that answers at once
    /// (most do, even when the client asked for progress) needs no task,
    /// and its notifications, if it sent any, are still yielded before its
    /// response.
    pub(crate) fn spawned(
        handler: impl Future<Output = Option<Vec<u8>>> + Send + 'static,
        notifications: mpsc::Receiver<Vec<u8>>,
        cancel: CancelSignal,
    ) -> Self {
        let mut handler = Box::pin(handler);
        if let Some(last) = handler.as_mut().now_or_never() {
            return Self {
                handler: None,
                task: None,
                notifications,
                front: None,
                last,
                cancel,
                long_lived: false,
            };
        }
        let task = tokio::spawn(handler);
        let abort = task.abort_handle();
        let mut stream = Self::new(
            async move { task.await.ok().flatten() },
            notifications,
            cancel,
            false,
        );
        stream.task = Some(abort);
        stream
    }

    #[cfg(feature = "http")]
    /// Waits for what the stream yields first: the final response (the
    /// request sent no notification before it), a notification (kept, and
    /// yielded again first), or its end. A transport that may answer either
    /// way answers plainly when nothing came before the response.
    pub(crate) async fn first(&mut self) -> First {
        std::future::poll_fn(|cx| {
            if self.cancel.is_cancelled() {
                return Poll::Ready(First::Ended);
            }
            if let Some(handler) = self.handler.as_mut() {
                if let Poll::Ready(Some(frame)) = self.notifications.poll_recv(cx) {
                    self.front = Some(frame.into());
                    return Poll::Ready(First::Streaming);
                }
                match handler.as_mut().poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(last) => {
                        self.handler = None;
                        self.last = last;
                    }
                }
            }
            Poll::Ready(match self.notifications.try_recv() {
                Ok(frame) => {
                    self.front = Some(frame.into());
                    First::Streaming
                }
                Err(_) => match self.last.take() {
                    Some(last) => First::Final(last.into()),
                    None => First::Ended,
                },
            })
        })
        .await
    }

    /// Whether this stream stays open until it is cancelled (a subscription):
    /// transports send keep-alives on such streams.
    pub fn is_long_lived(&self) -> bool {
        self.long_lived
    }

    /// The request's cancellation signal.
    pub fn cancel_signal(&self) -> &CancelSignal {
        &self.cancel
    }
}

impl Stream for ResponseStream {
    type Item = Bytes;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Bytes>> {
        let this = &mut *self;
        if let Some(front) = this.front.take() {
            return Poll::Ready(Some(front));
        }
        if this.cancel.is_cancelled() {
            this.handler = None;
            this.last = None;
            return Poll::Ready(None);
        }
        if let Some(handler) = this.handler.as_mut() {
            if let Poll::Ready(Some(frame)) = this.notifications.poll_recv(cx) {
                return Poll::Ready(Some(frame.into()));
            }
            match handler.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(last) => {
                    this.handler = None;
                    this.last = last;
                }
            }
        }
        match this.notifications.try_recv() {
            Ok(frame) => Poll::Ready(Some(frame.into())),
            Err(_) => Poll::Ready(this.last.take().map(Bytes::from)),
        }
    }
}

/// How long a handler may run after its stream was dropped.
pub const ABANDON_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

impl Drop for ResponseStream {
    fn drop(&mut self) {
        if self.handler.is_none() {
            return;
        }
        self.cancel.cancel();
        if let (Some(task), Ok(runtime)) = (self.task.take(), tokio::runtime::Handle::try_current())
            && !task.is_finished()
        {
            runtime.spawn(async move {
                tokio::time::sleep(ABANDON_GRACE).await;
                task.abort();
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    fn frames(stream: ResponseStream) -> impl Future<Output = Vec<Vec<u8>>> {
        stream.map(|b| b.to_vec()).collect()
    }

    #[tokio::test]
    async fn a_handler_that_answers_at_once_needs_no_task() {
        let (_tx, rx) = mpsc::channel(4);
        let stream =
            ResponseStream::spawned(async { Some(b"final".to_vec()) }, rx, CancelSignal::new());
        assert!(stream.task.is_none() && stream.handler.is_none());
        assert_eq!(frames(stream).await, vec![b"final".to_vec()]);
    }

    #[tokio::test]
    async fn notifications_sent_before_an_answer_at_once_come_first() {
        let (tx, rx) = mpsc::channel(4);
        let mut stream = ResponseStream::spawned(
            async move {
                tx.try_send(b"progress".to_vec()).unwrap();
                Some(b"final".to_vec())
            },
            rx,
            CancelSignal::new(),
        );
        assert!(stream.task.is_none());
        #[cfg(feature = "http")]
        assert!(matches!(stream.first().await, First::Streaming));
        assert_eq!(
            frames(stream).await,
            vec![b"progress".to_vec(), b"final".to_vec()]
        );
    }

    #[tokio::test]
    async fn a_waiting_handler_runs_on_its_task_and_hears_a_dropped_stream() {
        let (_tx, rx) = mpsc::channel(4);
        let cancel = CancelSignal::new();
        let (heard, hears) = tokio::sync::oneshot::channel();
        let signal = cancel.clone();
        let stream = ResponseStream::spawned(
            async move {
                signal.cancelled().await;
                let _ = heard.send(());
                None
            },
            rx,
            cancel,
        );
        assert!(stream.task.is_some());
        drop(stream);
        tokio::time::timeout(std::time::Duration::from_secs(5), hears)
            .await
            .expect("the handler's task saw the cancellation")
            .unwrap();
    }
}
