//! The default store: tasks in this process's memory, bounded and expiring.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value};

use super::model::{Lease, NewTask, TaskRecord, now_ms};
use super::store::{Answered, Cancelled, Renewal, Settle, StoreError, TaskStore};
use super::transition::{self, Orphan};
use crate::future::BoxFuture;

/// How many tasks a [`MemoryTaskStore`] holds by default.
pub const DEFAULT_MAX_TASKS: usize = 10_000;

/// Tasks in memory: lost when the process ends, seen by this process only.
///
/// Holds at most [`DEFAULT_MAX_TASKS`] tasks (see
/// [`MemoryTaskStore::with_capacity`]); when full, expired tasks are purged,
/// and if none was, creation fails with [`StoreError::Full`]: no task is
/// dropped before its time to live.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::time::Duration;
/// use snodo::task::{MemoryTaskStore, NewTask, TaskStore};
/// let store = MemoryTaskStore::new();
/// let task = NewTask::new("", "report", serde_json::json!({})).unwrap();
/// let id = task.task_id.clone();
/// store.create(task, "node-1", Duration::from_secs(30)).await.unwrap();
/// assert!(store.get(&id).await.unwrap().is_some());
/// # });
/// ```
#[derive(Debug)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
    capacity: usize,
    changes: tokio::sync::broadcast::Sender<String>,
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryTaskStore {
    /// A store of at most [`DEFAULT_MAX_TASKS`] tasks.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_MAX_TASKS)
    }

    /// A store of at most `capacity` tasks (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            tasks: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
            changes: tokio::sync::broadcast::channel(1024).0,
        }
    }

    /// How many tasks it holds, expired ones included until purged.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Changes a task under a current lease, and announces it; whether the
    /// lease was current.
    fn change_held(&self, lease: &Lease, change: impl FnOnce(&mut TaskRecord, u64)) -> bool {
        let now = now_ms();
        let mut tasks = self.lock();
        let Some(record) = tasks
            .get_mut(&lease.task_id)
            .filter(|t| t.holds(lease, now))
        else {
            return false;
        };
        change(record, now);
        drop(tasks);
        self.changed(&lease.task_id);
        true
    }

    fn changed(&self, task_id: &str) {
        let _ = self.changes.send(task_id.to_string());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(
        &self,
        task: NewTask,
        holder: &str,
        lease: Duration,
    ) -> BoxFuture<'_, Result<Lease, StoreError>> {
        let holder = holder.to_string();
        Box::pin(async move {
            transition::check_new(&task)?;
            let now = now_ms();
            let mut tasks = self.lock();
            if tasks.contains_key(&task.task_id) {
                return Err(StoreError::Duplicate);
            }
            if tasks.len() >= self.capacity {
                tasks.retain(|_, t| !t.is_expired(now));
            }
            // A finished task's result is kept until its time to live, never
            // evicted to make room: a full store refuses the new task.
            if tasks.len() >= self.capacity {
                return Err(StoreError::Full {
                    limit: self.capacity,
                });
            }
            let mut record = TaskRecord::from_new(task);
            let lease = transition::lease(&mut record, &holder, lease, now)?;
            tasks.insert(record.task_id.clone(), record);
            Ok(lease)
        })
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(async move {
            let now = now_ms();
            Ok(self
                .lock()
                .get(task_id)
                .filter(|t| !t.is_expired(now))
                .cloned())
        })
    }

    fn claim<'a>(
        &'a self,
        task_id: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> BoxFuture<'a, Result<Option<(TaskRecord, Lease)>, StoreError>> {
        Box::pin(async move {
            let now = now_ms();
            let mut tasks = self.lock();
            let Some(record) = tasks
                .get_mut(task_id)
                .filter(|t| t.lease.is_none() && transition::claimable(t, now))
            else {
                return Ok(None);
            };
            let lease = transition::lease(record, holder, lease, now)?;
            Ok(Some((record.clone(), lease)))
        })
    }

    fn claim_orphans<'a>(
        &'a self,
        holder: &'a str,
        lease: Duration,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<(TaskRecord, Lease)>, StoreError>> {
        Box::pin(async move {
            let now = now_ms();
            let mut tasks = self.lock();
            let mut ids: Vec<(u64, String)> = tasks
                .values()
                .filter(|t| transition::claimable(t, now))
                .map(|t| (t.created_at_ms, t.task_id.clone()))
                .collect();
            ids.sort();
            let mut out = Vec::new();
            for (_, id) in ids {
                if out.len() >= limit {
                    break;
                }
                let Some(record) = tasks.get_mut(&id) else {
                    continue;
                };
                // Changed on a copy: a lease that cannot be drawn leaves the
                // task as it was (no retry used), for the next sweep.
                let mut recovered = record.clone();
                if transition::recover(&mut recovered, now) == Orphan::Run {
                    match transition::lease(&mut recovered, holder, lease, now) {
                        Ok(lease) => {
                            *record = recovered.clone();
                            out.push((recovered, lease));
                        }
                        // The tasks claimed so far run; the error is kept
                        // for a sweep that claims nothing.
                        Err(e) if out.is_empty() => return Err(e.into()),
                        Err(_) => break,
                    }
                } else {
                    *record = recovered;
                    let _ = self.changes.send(id);
                }
            }
            Ok(out)
        })
    }

    fn renew<'a>(
        &'a self,
        lease: &'a Lease,
        extend: Duration,
    ) -> BoxFuture<'a, Result<Renewal, StoreError>> {
        Box::pin(async move {
            let now = now_ms();
            let mut tasks = self.lock();
            let Some(record) = tasks
                .get_mut(&lease.task_id)
                .filter(|t| t.holds(lease, now) && !t.is_expired(now))
            else {
                return Ok(Renewal::Lost);
            };
            if let Some(current) = &mut record.lease {
                current.expires_at_ms = now.saturating_add(extend.as_millis() as u64);
            }
            Ok(Renewal::Held {
                cancel_requested: record.cancel_requested,
            })
        })
    }

    fn settle<'a>(
        &'a self,
        lease: &'a Lease,
        outcome: Settle,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            Ok(self.change_held(lease, |record, now| {
                transition::settle(record, outcome, now)
            }))
        })
    }

    fn note<'a>(
        &'a self,
        lease: &'a Lease,
        message: String,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            Ok(self.change_held(lease, |record, now| transition::note(record, message, now)))
        })
    }

    fn fail<'a>(
        &'a self,
        task_id: &'a str,
        error: Value,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let now = now_ms();
            let mut tasks = self.lock();
            let Some(record) = tasks.get_mut(task_id).filter(|t| !t.status.is_terminal()) else {
                return Ok(false);
            };
            transition::settle(record, Settle::Failed(error), now);
            drop(tasks);
            self.changed(task_id);
            Ok(true)
        })
    }

    fn answer<'a>(
        &'a self,
        task_id: &'a str,
        responses: Map<String, Value>,
    ) -> BoxFuture<'a, Result<Answered, StoreError>> {
        Box::pin(async move {
            let now = now_ms();
            let mut tasks = self.lock();
            Ok(
                match tasks.get_mut(task_id).filter(|t| !t.is_expired(now)) {
                    None => Answered::NotFound,
                    Some(record) => transition::answer(record, responses, now),
                },
            )
        })
    }

    fn cancel<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Cancelled, StoreError>> {
        Box::pin(async move {
            let now = now_ms();
            let mut tasks = self.lock();
            Ok(
                match tasks.get_mut(task_id).filter(|t| !t.is_expired(now)) {
                    None => Cancelled::NotFound,
                    Some(record) => transition::cancel(record, now),
                },
            )
        })
    }

    fn changes(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        Some(self.changes.subscribe())
    }

    fn purge(&self, now_ms: u64, limit: usize) -> BoxFuture<'_, Result<usize, StoreError>> {
        Box::pin(async move {
            let mut tasks = self.lock();
            let expired: Vec<String> = tasks
                .values()
                .filter(|t| t.is_expired(now_ms))
                .take(limit)
                .map(|t| t.task_id.clone())
                .collect();
            for id in &expired {
                tasks.remove(id);
            }
            Ok(expired.len())
        })
    }
}
