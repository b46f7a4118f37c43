//! Running a request's future inside its span.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tracing::Span;

/// Polls `future` with `span` entered, as `tracing::Instrument` does, but
/// borrows the span instead of holding a clone, and does not enter it again
/// to drop a future that has finished (a future dropped before it finished
/// is dropped outside the span).
///
/// A plain future rather than an `async fn`: an `async fn` would keep the
/// future it was given beside the one it polls, doubling its size inside
/// every request's state.
pub(crate) fn in_span<F: Future>(span: &Span, future: F) -> InSpan<'_, F> {
    InSpan { span, future }
}

pin_project_lite::pin_project! {
    /// The future of [`in_span`].
    pub(crate) struct InSpan<'a, F> {
        span: &'a Span,
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for InSpan<'_, F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        this.future.poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_is_current_while_the_future_runs() {
        use tracing_subscriber::layer::SubscriberExt;
        let subscriber = tracing_subscriber::registry().with(tracing_subscriber::fmt::layer());
        let _guard = tracing::subscriber::set_default(subscriber);
        let span = tracing::info_span!("request");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let inside = runtime.block_on(in_span(&span, async {
            tokio::task::yield_now().await;
            Span::current().id()
        }));
        assert_eq!(inside, span.id());
        assert_eq!(Span::current().id(), None);
    }
}
