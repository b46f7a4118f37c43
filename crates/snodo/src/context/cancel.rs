//! A cancellation signal that a transport fires and a handler observes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// A cloneable cancellation signal.
///
/// The transport fires it (stdio `notifications/cancelled`, an HTTP response
/// stream closed by the client, a request timeout). After it fires, nothing
/// more is sent for the request.
///
/// ```
/// # tokio_test_block(async {
/// let signal = snodo::CancelSignal::new();
/// let seen = signal.clone();
/// signal.cancel();
/// seen.cancelled().await;
/// assert!(seen.is_cancelled());
/// # });
/// # fn tokio_test_block<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelSignal {
    inner: Arc<Inner>,
    /// A signal whose firing fires this one too (see [`CancelSignal::child`]).
    parent: Option<Arc<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    fired: AtomicBool,
    notify: Notify,
}

impl CancelSignal {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the signal; idempotent.
    pub fn cancel(&self) {
        if !self.inner.fired.swap(true, Ordering::AcqRel) {
            self.inner.notify.notify_waiters();
        }
    }

    /// Whether the signal has fired.
    pub fn is_cancelled(&self) -> bool {
        self.inner.fired.load(Ordering::Acquire)
            || self
                .parent
                .as_ref()
                .is_some_and(|p| p.fired.load(Ordering::Acquire))
    }

    /// A signal that fires when this one does, and that may also be fired on
    /// its own without firing this one: the server hands handlers a child of
    /// the transport's signal, so that a request timeout cancels the handler
    /// while the transport still answers the request.
    pub fn child(&self) -> Self {
        Self {
            inner: Arc::default(),
            parent: Some(self.inner.clone()),
        }
    }

    /// Completes once the signal fires.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let Some(parent) = &self.parent else {
                if self.is_cancelled() {
                    return;
                }
                notified.await;
                continue;
            };
            let from_parent = parent.notify.notified();
            tokio::pin!(from_parent);
            from_parent.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            tokio::select! {
                _ = notified => {}
                _ = from_parent => {}
            }
        }
    }
}

#[cfg(test)]
mod child_tests {
    use super::*;

    #[tokio::test]
    async fn a_child_hears_its_parent_but_not_the_other_way_round() {
        let parent = CancelSignal::new();
        let child = parent.child();
        child.cancel();
        assert!(child.is_cancelled() && !parent.is_cancelled());

        let parent = CancelSignal::new();
        let child = parent.child();
        let waiting = tokio::spawn({
            let child = child.clone();
            async move { child.cancelled().await }
        });
        tokio::task::yield_now().await;
        assert!(!child.is_cancelled());
        parent.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("the child's waiter wakes")
            .unwrap();
        assert!(child.is_cancelled());
    }
}
