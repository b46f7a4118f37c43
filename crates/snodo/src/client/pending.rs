//! A request built, then sent when awaited: one builder for every request
//! method of the client, where its options are set, instead of a twin of
//! each method that takes them.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::time::Duration;

use super::{ClientError, RequestOptions};
use crate::future::BoxFuture;

type Sender<'a, T> =
    Box<dyn FnOnce(RequestOptions) -> BoxFuture<'a, Result<T, ClientError>> + Send + 'a>;

/// A request of a [`Client`](super::Client), not sent yet: awaiting it sends
/// it with the options set on it (the client's defaults otherwise).
///
/// ```no_run
/// # async fn run(client: snodo::Client) -> Result<(), snodo::client::ClientError> {
/// use std::time::Duration;
/// use snodo::client::RequestOptions;
///
/// let quick = client.call_tool("add", serde_json::json!({"a": 1, "b": 2})).await?;
/// let slow = client
///     .call_tool("report", serde_json::json!({}))
///     .options(RequestOptions::new().on_progress(|p| println!("{}", p.progress)))
///     .timeout(Duration::from_secs(300))
///     .await?;
/// # let _ = (quick, slow);
/// # Ok(()) }
/// ```
#[must_use = "a request is sent when it is awaited"]
pub struct Pending<'a, T> {
    send: Sender<'a, T>,
    opts: RequestOptions,
}

impl<'a, T> Pending<'a, T> {
    /// A request that `send` makes with the options set on it.
    pub(crate) fn new<F>(send: impl FnOnce(RequestOptions) -> F + Send + 'a) -> Self
    where
        F: Future<Output = Result<T, ClientError>> + Send + 'a,
    {
        Self {
            send: Box::new(move |opts| Box::pin(send(opts))),
            opts: RequestOptions::new(),
        }
    }

    /// Sends the request with `opts` (replacing any set before).
    pub fn options(mut self, opts: RequestOptions) -> Self {
        self.opts = opts;
        self
    }

    /// The timeout of this request (as [`RequestOptions::timeout`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.opts = self.opts.timeout(timeout);
        self
    }
}

impl<'a, T: 'a> IntoFuture for Pending<'a, T> {
    type Output = Result<T, ClientError>;
    type IntoFuture = BoxFuture<'a, Result<T, ClientError>>;

    fn into_future(self) -> Self::IntoFuture {
        (self.send)(self.opts)
    }
}

impl<T> fmt::Debug for Pending<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pending")
            .field("options", &self.opts)
            .finish_non_exhaustive()
    }
}
