//! `subscriptions/listen`: an acknowledgment, then the requested change
//! notifications, each tagged with the subscription id, until the client
//! goes away or the server shuts down.

use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};

use super::Server;
use super::dispatch::Admitted;
use super::reply::Failure;
use crate::events::{Event, Slot};
use crate::protocol::{SubscriptionFilter, keys};
use crate::wire::{RequestId, encode_notification};
use crate::{CancelSignal, Error};

/// Most URIs one subscription may watch.
pub const MAX_RESOURCE_SUBSCRIPTIONS: usize = 1000;

/// Most tasks one subscription may watch.
pub const MAX_TASK_SUBSCRIPTIONS: usize = 100;

/// The honoured subset of a `SubscriptionFilter`, whose tasks it may
/// watch, and who listens (the policy decides which resources' updates
/// they hear of, as it decides what they see listed).
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Filter {
    wanted: SubscriptionFilter,
    owner: String,
    principal: Option<crate::Principal>,
}

/// An admitted subscription: its filter, its slot and its event queue.
pub(super) struct Opened {
    filter: Filter,
    slot: Slot,
    share_slot: super::shares::ShareSlot,
    events: broadcast::Receiver<Event>,
}

impl Server {
    /// Checks the filter (narrowed to what the server advertises) and takes a
    /// subscription slot: a full server answers 503.
    pub(super) fn open_listen(
        &self,
        admitted: &Admitted,
        transport: &crate::TransportInfo,
    ) -> Result<Opened, Failure> {
        let principal = transport.principal.as_ref();
        let invalid = |m: &str| -> Failure { Error::invalid_params(m.to_string()).into() };
        let requested = admitted
            .params
            .get("notifications")
            .and_then(Value::as_object)
            .ok_or_else(|| invalid("notifications must be an object"))?;
        let flag = |key: &str| -> Result<bool, Failure> {
            match requested.get(key) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(invalid(&format!("{key} must be a boolean"))),
            }
        };
        let caps = &admitted.catalog.capabilities;
        let mut uris = Vec::new();
        match requested.get("resourceSubscriptions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) if list.len() <= MAX_RESOURCE_SUBSCRIPTIONS => {
                for uri in list {
                    match uri.as_str() {
                        Some(u) if u.contains(':') => uris.push(u.to_string()),
                        _ => return Err(invalid("resourceSubscriptions must hold absolute URIs")),
                    }
                }
            }
            Some(_) => {
                return Err(invalid(
                    "resourceSubscriptions must be an array of at most 1000 URIs",
                ));
            }
        }
        let mut task_ids = Vec::new();
        match requested.get("taskIds") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) if list.len() <= MAX_TASK_SUBSCRIPTIONS => {
                for id in list {
                    match id.as_str() {
                        Some(i) if !i.is_empty() && i.len() <= crate::task::MAX_TASK_ID => {
                            task_ids.push(i.to_string())
                        }
                        _ => return Err(invalid("taskIds must hold task ids")),
                    }
                }
            }
            Some(_) => {
                return Err(invalid("taskIds must be an array of at most 100 task ids"));
            }
        }
        if !task_ids.is_empty() && !crate::task::declared(admitted.meta.client_capabilities.get()) {
            return Err(Failure::bad_request(
                super::tasks::engine::missing_extension(),
            ));
        }
        if self.task_engine().is_none() {
            task_ids.clear();
        }
        let has = |cap: &str| caps.get(cap).is_some();
        let mut wanted = SubscriptionFilter::new();
        wanted.tools_list_changed = flag("toolsListChanged")? && has("tools");
        wanted.prompts_list_changed = flag("promptsListChanged")? && has("prompts");
        wanted.resources_list_changed = flag("resourcesListChanged")? && has("resources");
        wanted.resource_subscriptions = if has("resources") { uris } else { Vec::new() };
        wanted.task_ids = task_ids;
        let filter = Filter {
            wanted,
            owner: super::tasks::engine::owner_of_principal(principal),
            principal: principal.cloned(),
        };
        let share = transport.share();
        let shares = &self.inner.listen_shares;
        let share_slot = shares.try_take(&share).ok_or_else(|| {
            let max = shares.max();
            crate::telemetry::refusals::note(
                "listen",
                &format_args!(
                    "too many open subscriptions for one client (at most {max} each; 503)"
                ),
            );
            Failure::with_status(
                http::StatusCode::SERVICE_UNAVAILABLE,
                Error::internal("Too many open subscriptions for one client")
                    .with_data(json!({"retryable": true, "limit": max})),
            )
        })?;
        let (slot, events) = self.inner.events.try_open().ok_or_else(|| {
            crate::telemetry::refusals::note("listen", &"too many open subscriptions (503)");
            Failure::with_status(
                http::StatusCode::SERVICE_UNAVAILABLE,
                Error::internal("Too many open subscriptions")
                    .with_data(json!({"retryable": true})),
            )
        })?;
        Ok(Opened {
            filter,
            slot,
            share_slot,
            events,
        })
    }

    pub(super) async fn listen(
        &self,
        id: RequestId,
        opened: Opened,
        tx: mpsc::Sender<Vec<u8>>,
        cancel: CancelSignal,
    ) -> Option<Vec<u8>> {
        let Opened {
            filter,
            slot: _slot,
            share_slot: _share_slot,
            mut events,
        } = opened;
        let tag = json!({ keys::SUBSCRIPTION_ID: id.to_value() });
        let send = |method: &str, mut params: Map<String, Value>| {
            params.insert("_meta".into(), tag.clone());
            encode_notification(method, &params)
        };
        let mut ack = Map::new();
        ack.insert("notifications".into(), filter.wanted.to_json());
        tx.send(send("notifications/subscriptions/acknowledged", ack))
            .await
            .ok()?;
        loop {
            let event = tokio::select! {
                _ = cancel.cancelled() => return None,
                event = events.recv() => event,
            };
            let frames: Vec<Vec<u8>> = match event {
                Ok(Event::ToolsListChanged) if filter.wanted.tools_list_changed => {
                    vec![send("notifications/tools/list_changed", Map::new())]
                }
                Ok(Event::PromptsListChanged) if filter.wanted.prompts_list_changed => {
                    vec![send("notifications/prompts/list_changed", Map::new())]
                }
                Ok(Event::ResourcesListChanged) if filter.wanted.resources_list_changed => {
                    vec![send("notifications/resources/list_changed", Map::new())]
                }
                Ok(Event::TaskChanged { owner, task })
                    if *owner == *filter.owner
                        && task
                            .get("taskId")
                            .and_then(Value::as_str)
                            .is_some_and(|id| filter.wanted.task_ids.iter().any(|t| t == id)) =>
                {
                    vec![send("notifications/tasks", (*task).clone())]
                }
                Ok(Event::ResourceUpdated(uri))
                    if filter.wanted.covers_uri(&uri)
                        && self.hears_of(filter.principal.as_ref(), &uri) =>
                {
                    let mut params = Map::new();
                    params.insert("uri".into(), uri.to_string().into());
                    vec![send("notifications/resources/updated", params)]
                }
                Ok(Event::Shutdown) | Err(broadcast::error::RecvError::Closed) => {
                    let mut params = Map::new();
                    params.insert("requestId".into(), id.to_value());
                    params.insert("reason".into(), "Server shutting down".into());
                    let _ = tx.send(send("notifications/cancelled", params)).await;
                    let mut result = Map::new();
                    result.insert("_meta".into(), tag.clone());
                    return Some(
                        self.finish(&id, Ok(super::dispatch::Routed::Object(result)))
                            .body
                            .to_vec(),
                    );
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        target: "snodo::server",
                        missed,
                        "limit reached: a listen stream fell behind; it gets one notification of each kind"
                    );
                    self.everything(&filter, &send)
                }
                Ok(Event::Resync) => self.everything(&filter, &send),
                Ok(_) => Vec::new(),
            };
            for frame in frames {
                tx.send(frame).await.ok()?;
            }
        }
    }
}

/// Encodes one tagged notification.
type Frame<'a> = dyn Fn(&str, Map<String, Value>) -> Vec<u8> + 'a;

impl Server {
    /// Whether `principal` may hear that the resource `uri` changed: a
    /// resource the policy hides from it is one it cannot read, and so one it
    /// is not told about either (every listen stream and initialize-era
    /// session feed asks this before it sends `notifications/resources/updated`).
    pub(crate) fn hears_of(&self, principal: Option<&crate::Principal>, uri: &str) -> bool {
        self.policy()
            .is_none_or(|policy| policy.can_see(principal, super::Item::Resource(uri)))
    }

    /// After an overflow: one notification of every subscribed type (of the
    /// subscribed resources, those the listener hears of).
    fn everything(&self, filter: &Filter, send: &Frame<'_>) -> Vec<Vec<u8>> {
        let mut frames = Vec::new();
        for (on, method) in [
            (
                filter.wanted.tools_list_changed,
                "notifications/tools/list_changed",
            ),
            (
                filter.wanted.prompts_list_changed,
                "notifications/prompts/list_changed",
            ),
            (
                filter.wanted.resources_list_changed,
                "notifications/resources/list_changed",
            ),
        ] {
            if on {
                frames.push(send(method, Map::new()));
            }
        }
        for uri in &filter.wanted.resource_subscriptions {
            if !self.hears_of(filter.principal.as_ref(), uri) {
                continue;
            }
            let mut params = Map::new();
            params.insert("uri".into(), uri.clone().into());
            frames.push(send("notifications/resources/updated", params));
        }
        frames
    }
}
