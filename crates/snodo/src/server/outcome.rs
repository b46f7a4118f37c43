//! Running a component's handler: panics contained, typed errors kept apart
//! from every other error, and input-required results checked.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use super::reply::Failure;
use crate::Error;
use crate::error::BoxError;
use crate::mrtr::InputRequired;

/// Runs a handler. Our typed [`Error`] fails the request as is, a panic is
/// -32603 `panic_message`, and any other error is handed back to the caller,
/// which decides its shape (an `isError` result for tools, -32603 elsewhere).
pub(super) async fn run<T>(
    handler: impl Future<Output = Result<T, BoxError>>,
    panic_message: &'static str,
) -> Result<Result<T, BoxError>, Failure> {
    match AssertUnwindSafe(handler).catch_unwind().await {
        Ok(Ok(value)) => Ok(Ok(value)),
        Ok(Err(err)) => match err.downcast::<Error>() {
            Ok(typed) => Err(Failure::ok(*typed)),
            Err(other) => Ok(Err(other)),
        },
        Err(_) => Err(Error::internal(panic_message).into()),
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
