//! What a handler running as a task holds of its task: the id, and a way to
//! report how far it got (the task's status message).

use std::sync::{Arc, Mutex};

use super::notify::{MAX_PROGRESS_MESSAGE, MAX_PROGRESS_UPDATES, ProgressError};
use crate::task::{Lease, TaskStore};

/// The task a handler runs for.
pub(crate) struct TaskLink {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) lease: Lease,
    /// Updates sent and the last progress value.
    state: Mutex<(u32, Option<f64>)>,
}

impl std::fmt::Debug for TaskLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskLink")
            .field("task_id", &self.lease.task_id)
            .finish_non_exhaustive()
    }
}

impl TaskLink {
    pub(crate) fn new(store: Arc<dyn TaskStore>, lease: Lease) -> Self {
        Self {
            store,
            lease,
            state: Mutex::new((0, None)),
        }
    }

    /// Progress of a task: its status message becomes `message (3/10)`, under
    /// the rules of progress notifications (strictly increasing, at most
    /// 1 000 updates of at most 4 KiB).
    pub(crate) async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        if message.is_some_and(|m| m.len() > MAX_PROGRESS_MESSAGE) {
            return Err(ProgressError::MessageTooLong);
        }
        {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.0 >= MAX_PROGRESS_UPDATES {
                return Err(ProgressError::LimitReached);
            }
            if !progress.is_finite() || state.1.is_some_and(|last| progress <= last) {
                return Err(ProgressError::NotIncreasing);
            }
            state.0 += 1;
            state.1 = Some(progress);
        }
        let count = match total {
            Some(total) => format!("{progress}/{total}"),
            None => format!("{progress}"),
        };
        let text = match message {
            Some(m) => format!("{m} ({count})"),
            None => count,
        };
        match self.store.note(&self.lease, text).await {
            Ok(true) => Ok(()),
            _ => Err(ProgressError::Closed),
        }
    }
}
