//! Running a request's future inside its span.

use std::future::Future;

use tracing::Span;

/// Polls `future` with `span` entered, as `tracing::Instrument` does, but
/// borrows the span instead of holding a clone, and does not enter it again
/// to drop a future that has finished (a future dropped before it finished
/// is dropped outside the span).
pub(crate) async fn in_span<F: Future>(span: &Span, future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|cx| {
        let _entered = span.enter();
        future.as_mut().poll(cx)
    })
    .await
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
