//! Change notifications: `subscriptions/listen` (2026-07-28), or the
//! notifications an initialize-era server pushes.
//!
//! A [`Subscription`] is a [`Stream`] of the notifications that belong to it
//! (matched by `_meta["io.modelcontextprotocol/subscriptionId"]`), held in a
//! bounded buffer. Dropping it ends the subscription: the HTTP stream closes,
//! or stdio sends `notifications/cancelled` for the listen request.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use futures_util::Stream;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};

use super::ProtocolErrorKind;
use super::request::{CancelGuard, parse_response};
use super::transport::{Incoming, subscription_id};
use super::{ClientError, RequestOptions, Shared, TimeoutKind};
use crate::wire::{Notification, RequestId};

/// What a subscription asks for: the protocol's `SubscriptionFilter`, the
/// same type the server reads.
///
/// ```
/// use snodo::client::ListenFilter;
/// let filter = ListenFilter::new().tools().resource("file:///log.txt").task("t-1");
/// assert_eq!(filter.to_json()["toolsListChanged"], true);
/// assert_eq!(filter.to_json()["taskIds"][0], "t-1");
/// ```
pub use crate::protocol::SubscriptionFilter as ListenFilter;

/// One change notification.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeNotification {
    /// The method, e.g. `notifications/tools/list_changed`.
    pub method: String,
    /// The params (with `_meta`).
    pub params: Value,
}

/// An open subscription: a stream of [`ChangeNotification`]s that ends when
/// the server ends the subscription or the connection closes.
pub struct Subscription {
    id: Option<RequestId>,
    acknowledged: Value,
    rx: mpsc::Receiver<ChangeNotification>,
    dropped: Arc<AtomicU64>,
    _task: TaskGuard,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("acknowledged", &self.acknowledged)
            .finish_non_exhaustive()
    }
}

/// Aborts the forwarding task when the subscription is dropped.
struct TaskGuard(tokio::task::AbortHandle);

impl Drop for TaskGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Subscription {
    /// The listen request's id (the `subscriptionId`); `None` on the
    /// initialize-era wire.
    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// The notification types the server agreed to send.
    pub fn acknowledged(&self) -> &Value {
        &self.acknowledged
    }

    /// How many notifications were dropped because the buffer was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The next notification; `None` once the subscription has ended.
    pub async fn next(&mut self) -> Option<ChangeNotification> {
        self.rx.recv().await
    }
}

impl Stream for Subscription {
    type Item = ChangeNotification;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_recv(cx)
    }
}

fn deliver(tx: &mpsc::Sender<ChangeNotification>, dropped: &AtomicU64, n: Notification) {
    let item = ChangeNotification {
        method: n.method,
        params: Value::Object(n.params),
    };
    if tx.try_send(item).is_err() {
        dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// Opens a modern subscription and waits for its acknowledgment.
pub(crate) async fn listen(
    shared: &Arc<Shared>,
    filter: ListenFilter,
) -> Result<Subscription, ClientError> {
    if shared.state().legacy {
        return listen_legacy(shared, filter).await;
    }
    let mut params = Map::new();
    params.insert("notifications".into(), filter.to_json());
    // Watching tasks needs the Tasks extension declared.
    let opts = RequestOptions::new().allow_tasks(!filter.task_ids.is_empty());
    let (id, mut exchange, mut guard) = shared.open("subscriptions/listen", params, &opts).await?;
    let timeout = shared.config.timeout;
    let acknowledged = loop {
        let msg = tokio::time::timeout(timeout, exchange.recv())
            .await
            .map_err(|_| ClientError::timeout(TimeoutKind::Request, timeout))?;
        match msg {
            None => {
                guard.disarm();
                return Err(ClientError::transport(
                    "the subscription closed before it was acknowledged",
                ));
            }
            Some(Incoming::Response { message, status }) => {
                guard.disarm();
                parse_response(message, status)?;
                return Err(ClientError::protocol(
                    ProtocolErrorKind::Subscription,
                    "the server ended the subscription before acknowledging it",
                ));
            }
            Some(Incoming::Notification(n))
                if n.method == "notifications/subscriptions/acknowledged" =>
            {
                if subscription_id(&n).is_some_and(|sid| sid != id) {
                    continue;
                }
                break n
                    .params
                    .get("notifications")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
            }
            Some(Incoming::Notification(n)) => shared.on_notification(n),
            Some(Incoming::Request(r)) => shared.answer_later(r),
            Some(Incoming::Oversized { max, carrier }) => {
                guard.disarm();
                return Err(Incoming::oversized(max, carrier));
            }
        }
    };
    let (tx, rx) = mpsc::channel(shared.config.listen_buffer);
    let dropped = Arc::new(AtomicU64::new(0));
    let counter = dropped.clone();
    let sid = id.clone();
    let task = tokio::spawn(async move {
        let mut guard: CancelGuard = guard;
        loop {
            let msg = tokio::select! {
                m = exchange.recv() => m,
                _ = tx.closed() => return,
            };
            match msg {
                None | Some(Incoming::Response { .. }) | Some(Incoming::Oversized { .. }) => {
                    guard.disarm();
                    return;
                }
                Some(Incoming::Notification(n)) if n.method == "notifications/cancelled" => {
                    let target = n.params.get("requestId").and_then(RequestId::from_value);
                    if target.as_ref() == Some(&sid) {
                        guard.disarm();
                        return;
                    }
                }
                Some(Incoming::Notification(n)) => {
                    if subscription_id(&n).as_ref() == Some(&sid) {
                        deliver(&tx, &counter, n);
                    }
                }
                Some(Incoming::Request(_)) => {}
            }
        }
    });
    Ok(Subscription {
        id: Some(id),
        acknowledged,
        rx,
        dropped,
        _task: TaskGuard(task.abort_handle()),
    })
}

/// An initialize-era subscription: the change notifications the server
/// pushes (on stdio, or on the HTTP GET stream, which is opened for it);
/// resource updates are asked for with `resources/subscribe`.
async fn listen_legacy(
    shared: &Arc<Shared>,
    filter: ListenFilter,
) -> Result<Subscription, ClientError> {
    let mut events = shared.events.subscribe();
    let _ = shared.transport.open_event_stream(Vec::new()).await;
    for uri in &filter.resource_subscriptions {
        let mut params = Map::new();
        params.insert("uri".into(), uri.clone().into());
        shared
            .call::<Value>(
                "resources/subscribe",
                &params,
                &Default::default(),
                Vec::new(),
            )
            .await?;
    }
    let (tx, rx) = mpsc::channel(shared.config.listen_buffer);
    let dropped = Arc::new(AtomicU64::new(0));
    let counter = dropped.clone();
    let acknowledged = filter.to_json();
    let task = tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                e = events.recv() => e,
                _ = tx.closed() => return,
            };
            match event {
                Ok(n) if filter.accepts(&n.method, &n.params) => deliver(&tx, &counter, n),
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(n)) => {
                    counter.fetch_add(n, Ordering::Relaxed);
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    Ok(Subscription {
        id: None,
        acknowledged,
        rx,
        dropped,
        _task: TaskGuard(task.abort_handle()),
    })
}
