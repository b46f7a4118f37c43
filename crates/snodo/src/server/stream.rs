//! Streamed responses: request-scoped notifications, then the final response.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use bytes::Bytes;
use futures_util::Stream;
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
    last: Option<Vec<u8>>,
    cancel: CancelSignal,
    long_lived: bool,
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
            last: None,
            cancel,
            long_lived,
        }
    }

    /// Runs `handler` on a task of its own, so that when the stream is
    /// dropped (the client went away) the handler still observes the
    /// cancellation signal; it is aborted if it has not finished
    /// [`ABANDON_GRACE`] later.
    pub(crate) fn spawned(
        handler: impl Future<Output = Option<Vec<u8>>> + Send + 'static,
        notifications: mpsc::Receiver<Vec<u8>>,
        cancel: CancelSignal,
    ) -> Self {
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
