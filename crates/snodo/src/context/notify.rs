//! Request-scoped notifications: progress and log messages.
//!
//! A request gets a sink only when it asked for notifications (a
//! `progressToken` or an `io.modelcontextprotocol/logLevel` in `_meta`); without
//! one, reporting is a no-op and costs nothing.

use std::fmt;
use std::sync::Mutex;

use serde_json::{Map, Value, json};

/// Whole numbers go out as JSON integers, others as floats.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}
use tokio::sync::mpsc;

use crate::protocol::LogLevel;
use crate::wire::encode_notification;

/// Most progress notifications one request may send.
pub const MAX_PROGRESS_UPDATES: u32 = 1000;
/// Longest progress message, in bytes.
pub const MAX_PROGRESS_MESSAGE: usize = 4096;

/// Why a progress report was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgressError {
    /// The request carried no `progressToken`: reporting is a no-op.
    NotRequested,
    /// `progress` did not increase.
    NotIncreasing,
    /// The request already sent the maximum number of updates.
    LimitReached,
    /// The message is longer than 4 KiB.
    MessageTooLong,
    /// The request was cancelled or already answered.
    Closed,
}

impl fmt::Display for ProgressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProgressError::NotRequested => "the request did not ask for progress",
            ProgressError::NotIncreasing => "progress must strictly increase",
            ProgressError::LimitReached => "too many progress updates",
            ProgressError::MessageTooLong => "progress message too long",
            ProgressError::Closed => "the request is finished or cancelled",
        })
    }
}

impl std::error::Error for ProgressError {}

/// Where a streaming request's notifications go.
#[derive(Debug)]
pub(crate) struct Sink {
    pub(crate) tx: mpsc::Sender<Vec<u8>>,
    pub(crate) progress_token: Option<Value>,
    pub(crate) log_level: Option<LogLevel>,
    gate: ProgressGate,
}

/// The rules every progress report keeps, wherever it goes (a notification
/// or a task's status message): at most [`MAX_PROGRESS_UPDATES`] updates,
/// strictly increasing, messages of at most [`MAX_PROGRESS_MESSAGE`] bytes.
#[derive(Debug, Default)]
pub(crate) struct ProgressGate(Mutex<(u32, Option<f64>)>);

impl ProgressGate {
    /// Counts the update when it keeps the rules.
    pub(crate) fn admit(&self, progress: f64, message: Option<&str>) -> Result<(), ProgressError> {
        if message.is_some_and(|m| m.len() > MAX_PROGRESS_MESSAGE) {
            return Err(ProgressError::MessageTooLong);
        }
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (sent, last) = &mut *state;
        if *sent >= MAX_PROGRESS_UPDATES {
            return Err(ProgressError::LimitReached);
        }
        if !progress.is_finite() || last.is_some_and(|l| progress <= l) {
            return Err(ProgressError::NotIncreasing);
        }
        *sent += 1;
        *last = Some(progress);
        Ok(())
    }
}

impl Sink {
    pub(crate) fn new(
        tx: mpsc::Sender<Vec<u8>>,
        progress_token: Option<Value>,
        log_level: Option<LogLevel>,
    ) -> Self {
        Self {
            tx,
            progress_token,
            log_level,
            gate: ProgressGate::default(),
        }
    }

    pub(crate) async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        let Some(token) = &self.progress_token else {
            return Err(ProgressError::NotRequested);
        };
        self.gate.admit(progress, message)?;
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), number(progress));
        if let Some(total) = total {
            params.insert("total".into(), number(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), message.into());
        }
        let frame = encode_notification("notifications/progress", &params);
        self.tx.send(frame).await.map_err(|_| ProgressError::Closed)
    }

    pub(crate) async fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        match self.log_level {
            Some(min) if level >= min => {}
            _ => return false,
        }
        let mut params = Map::new();
        params.insert("level".into(), level.as_str().into());
        if let Some(logger) = logger {
            params.insert("logger".into(), logger.into());
        }
        params.insert("data".into(), data);
        let frame = encode_notification("notifications/message", &params);
        self.tx.send(frame).await.is_ok()
    }
}
