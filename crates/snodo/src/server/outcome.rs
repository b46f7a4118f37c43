//! Running a component's handler: panics contained, and input-required
//! results checked.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use super::reply::Failure;
use crate::Error;
use crate::error::HandlerError;
use crate::mrtr::InputRequired;

/// Runs a handler. A panic is -32603 `panic_message`; the handler's own
/// outcome is handed back, its error's type saying its shape.
pub(super) async fn run<T>(
    handler: impl Future<Output = Result<T, HandlerError>>,
    panic_message: &'static str,
) -> Result<Result<T, HandlerError>, Failure> {
    match AssertUnwindSafe(handler).catch_unwind().await {
        Ok(outcome) => Ok(outcome),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            // The cause is logged with the request id, never sent.
            Err(Error::internal(panic_message)
                .with_cause(format!("the handler panicked: {what}"))
                .into())
        }
    }
}

/// The wire form of an `input_required` result, after checking its input
/// requests against the client's capabilities.
pub(super) fn input_required(
    request: &InputRequired,
    client_capabilities: &Value,
) -> Result<Map<String, Value>, Failure> {
    crate::mrtr::check_input_required(request, client_capabilities)?;
    match request.to_wire() {
        Value::Object(map) => Ok(map),
        _ => Err(Error::internal("Invalid input required result").into()),
    }
}
