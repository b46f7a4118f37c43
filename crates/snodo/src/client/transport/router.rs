//! Attribution of the messages of one shared channel (a child's stdout, a
//! 2024-11-05 event stream) to the requests waiting for them: by request id,
//! progress token, cancelled request id and subscription id; the rest goes
//! to the client's unsolicited queue.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use tokio::sync::mpsc;

use super::{Incoming, subscription_id};
use crate::wire::RequestId;

/// Requests waiting for their response.
pub(crate) struct Router {
    pending: Mutex<HashMap<RequestId, mpsc::Sender<Incoming>>>,
    unsolicited: mpsc::Sender<Incoming>,
    /// Set once the channel has ended.
    pub(crate) closed: AtomicBool,
}

impl Router {
    /// A router whose unattributed messages go to `unsolicited`.
    pub(crate) fn new(unsolicited: mpsc::Sender<Incoming>) -> Self {
        Self {
            pending: Mutex::new(HashMap::new()),
            unsolicited,
            closed: AtomicBool::new(false),
        }
    }

    /// Hands `msg` to the request it belongs to, or to the unsolicited queue.
    pub(crate) fn route(&self, msg: Incoming) {
        let target = match &msg {
            Incoming::Response { message, .. } => {
                let tx = message.id.as_ref().and_then(|id| self.lock().remove(id));
                match tx {
                    Some(tx) => {
                        if let Err(mpsc::error::TrySendError::Full(msg)) = tx.try_send(msg) {
                            tokio::spawn(async move {
                                let _ = tx.send(msg).await;
                            });
                        }
                    }
                    None => tracing::debug!("snodo client: a response for no pending request"),
                }
                return;
            }
            Incoming::Notification(n) => {
                let by_token = (n.method == "notifications/progress")
                    .then(|| {
                        n.params
                            .get("progressToken")
                            .and_then(RequestId::from_value)
                    })
                    .flatten();
                let by_cancel = (n.method == "notifications/cancelled")
                    .then(|| n.params.get("requestId").and_then(RequestId::from_value))
                    .flatten();
                by_token.or(by_cancel).or_else(|| subscription_id(n))
            }
            Incoming::Request(_) | Incoming::Oversized { .. } => None,
        };
        if let Some(id) = target {
            let tx = self.lock().get(&id).cloned();
            if let Some(tx) = tx {
                if tx.try_send(msg).is_err() {
                    tracing::debug!(
                        "snodo client: a slow consumer lost a notification for request {id}"
                    );
                }
                return;
            }
        }
        if self.unsolicited.try_send(msg).is_err() {
            tracing::debug!("snodo client: dropped an unsolicited message");
        }
    }

    /// Fails request `id` with an answer over `max` bytes carried by
    /// `carrier`; whether it was waiting.
    pub(crate) fn oversized(&self, id: &RequestId, max: usize, carrier: &'static str) -> bool {
        let Some(tx) = self.lock().remove(id) else {
            return false;
        };
        let msg = Incoming::Oversized { max, carrier };
        if let Err(mpsc::error::TrySendError::Full(msg)) = tx.try_send(msg) {
            tokio::spawn(async move {
                let _ = tx.send(msg).await;
            });
        }
        true
    }

    /// The requests waiting, by id.
    pub(crate) fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<RequestId, mpsc::Sender<Incoming>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}
