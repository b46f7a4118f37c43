//! What a handler running as a task holds of its task: the id, and a way to
//! report how far it got (the task's status message).

use std::sync::Arc;

use super::notify::{ProgressError, ProgressGate};
use crate::task::{Lease, TaskStore};

/// The task a handler runs for.
pub(crate) struct TaskLink {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) lease: Lease,
    gate: ProgressGate,
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
            gate: ProgressGate::default(),
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
        self.gate.admit(progress, message)?;
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
