//! What a server that runs tasks holds, and the rules every part of the
//! server applies to tasks: whom a task belongs to, and the error that
//! names the extension.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use serde_json::json;

use crate::context::{CancelSignal, ConnectionInfo, Share};
use crate::task::TaskOptions;
use crate::{Context, Error, RandomUnavailable};

/// What a server that runs tasks holds: its settings, the cancellation
/// signals of the tasks this node runs, and what each share created.
pub(crate) struct Engine {
    pub(crate) options: TaskOptions,
    /// This node's name in the leases it takes.
    pub(crate) node: String,
    running: Mutex<HashMap<String, CancelSignal>>,
    quotas: Mutex<Quotas>,
    pub(super) sweeping: AtomicBool,
}

/// The tasks each share created on this node and that have not expired: the
/// time each expires (milliseconds since the Unix epoch, `u64::MAX` for
/// never), oldest first.
#[derive(Default)]
struct Quotas(HashMap<Share, VecDeque<u64>>);

/// A share holds all the tasks it may: when the next one may be created, in
/// milliseconds from now (`None`: not before one of its tasks is gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverQuota {
    pub(crate) max: usize,
    pub(crate) retry_after_ms: Option<u64>,
}

impl Engine {
    /// The engine of `options`; a node without a name set gets a random
    /// one.
    pub(crate) fn new(options: TaskOptions) -> Result<Self, RandomUnavailable> {
        let node = match &options.node {
            Some(node) => node.clone(),
            None => crate::task::new_task_id()?,
        };
        Ok(Self {
            options,
            node,
            running: Mutex::new(HashMap::new()),
            quotas: Mutex::default(),
            sweeping: AtomicBool::new(false),
        })
    }

    pub(super) fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancelSignal>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a task `share` creates now, expiring at `expires_ms`, unless
    /// the share holds its maximum already. A slot taken is given back with
    /// [`Engine::unreserve`] when the store refuses the task.
    pub(super) fn reserve(
        &self,
        share: &Share,
        now_ms: u64,
        expires_ms: u64,
    ) -> Result<(), OverQuota> {
        let max = self.options.max_per_share;
        let mut quotas = self.quotas.lock().unwrap_or_else(|e| e.into_inner());
        quotas.0.retain(|_, held| {
            while held.front().is_some_and(|e| *e <= now_ms) {
                held.pop_front();
            }
            !held.is_empty()
        });
        let held = quotas.0.entry(share.clone()).or_default();
        if held.len() >= max {
            let retry_after_ms = held.front().filter(|e| **e != u64::MAX).map(|e| e - now_ms);
            return Err(OverQuota {
                max,
                retry_after_ms,
            });
        }
        // Expiry times come in order for one TTL; keep the deque sorted
        // should the TTL have changed.
        let at = held.partition_point(|e| *e <= expires_ms);
        held.insert(at, expires_ms);
        Ok(())
    }

    /// How many tasks `share` holds on this node.
    #[cfg(test)]
    pub(super) fn held(&self, share: &Share) -> usize {
        let quotas = self.quotas.lock().unwrap_or_else(|e| e.into_inner());
        quotas.0.get(share).map_or(0, VecDeque::len)
    }

    /// Gives back a slot [`Engine::reserve`] took.
    pub(super) fn unreserve(&self, share: &Share, expires_ms: u64) {
        let mut quotas = self.quotas.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(held) = quotas.0.get_mut(share)
            && let Some(at) = held.iter().position(|e| *e == expires_ms)
        {
            held.remove(at);
        }
    }
}

/// Whose share of the task store a request counts against: its principal,
/// or its remote address when anonymous.
pub(crate) fn share_of(cx: &Context) -> Share {
    Share::of(
        cx.principal().map(crate::Principal::key).as_deref(),
        cx.extension::<ConnectionInfo>().map(|c| c.peer.ip()),
    )
}

/// The error that names the extension a request must declare.
pub(crate) fn missing_extension() -> Error {
    Error::missing_client_capability(json!({"extensions": {crate::task::EXTENSION: {}}}))
}

/// Whom a task belongs to: the principal's [`key`](crate::Principal::key)
/// (`""` for an anonymous client).
pub(crate) fn owner_of(cx: &Context) -> String {
    owner_of_principal(cx.principal())
}

/// [`owner_of`] for a principal.
pub(crate) fn owner_of_principal(principal: Option<&crate::Principal>) -> String {
    principal.map_or_else(String::new, crate::Principal::key)
}
