//! What a server that runs tasks holds, and the rules every part of the
//! server applies to tasks: whom a task belongs to, and the error that
//! names the extension.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use serde_json::json;

use crate::context::CancelSignal;
use crate::task::TaskOptions;
use crate::{Context, Error};

/// What a server that runs tasks holds: its settings and the cancellation
/// signals of the tasks this node runs.
pub(crate) struct Engine {
    pub(crate) options: TaskOptions,
    running: Mutex<HashMap<String, CancelSignal>>,
    pub(super) sweeping: AtomicBool,
}

impl Engine {
    pub(crate) fn new(options: TaskOptions) -> Self {
        Self {
            options,
            running: Mutex::new(HashMap::new()),
            sweeping: AtomicBool::new(false),
        }
    }

    pub(super) fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancelSignal>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The error that names the extension a request must declare.
pub(crate) fn missing_extension() -> Error {
    Error::missing_client_capability(json!({"extensions": {crate::task::EXTENSION: {}}}))
}

/// Whom a task belongs to: the principal's issuer and subject (`""` for an
/// anonymous client).
pub(crate) fn owner_of(cx: &Context) -> String {
    owner_of_principal(cx.principal())
}

/// [`owner_of`] for a principal.
pub(crate) fn owner_of_principal(principal: Option<&crate::Principal>) -> String {
    match principal {
        None => String::new(),
        Some(p) => match &p.issuer {
            Some(issuer) => format!("{issuer} {}", p.subject),
            None => p.subject.clone(),
        },
    }
}
