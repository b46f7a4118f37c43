//! Multi round-trip requests: answering `input_required` results.
//!
//! `tools/call`, `resources/read` and `prompts/get` may answer with
//! `{"resultType": "input_required", "inputRequests"?, "requestState"?}`. The
//! client fulfils every input request through the application's handlers and
//! retries under a new id with `inputResponses` and the `requestState` echoed
//! byte for byte (omitted when none was given), up to a bounded number of
//! rounds. When a request has no handler, or answering is off, the
//! `input_required` result is returned to the caller as is.

use std::sync::Arc;

use ::http::{HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::ProtocolErrorKind;
use super::answer::FromResult;
use super::options::{ElicitMode, ElicitRequest, Handlers, RequestOptions, Root, elicit_result};
use super::request::STATE_ONLY_PAUSE;
use super::{ClientError, Shared};

/// Whether every input request of `result` has a handler.
fn answerable(handlers: &Handlers, requests: &Map<String, Value>) -> bool {
    requests.values().all(|req| {
        let params = req.get("params").cloned().unwrap_or_else(|| json!({}));
        match req.get("method").and_then(Value::as_str) {
            Some("elicitation/create") => match ElicitRequest::from_params(&params).map(|r| r.mode)
            {
                Some(ElicitMode::Form { .. }) => handlers.form.is_some(),
                Some(ElicitMode::Url { .. }) => handlers.url.is_some(),
                None => false,
            },
            Some("sampling/createMessage") => handlers.sampling.is_some(),
            Some("roots/list") => handlers.roots.is_some(),
            _ => false,
        }
    })
}

/// Answers one input request.
async fn fulfil(handlers: &Handlers, request: &Value) -> Result<Value, ClientError> {
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    let failed =
        |what: &str, e: crate::BoxError| ClientError::handler(format!("{what}: {e}"), Some(e));
    match request.get("method").and_then(Value::as_str) {
        Some("elicitation/create") => {
            let req = ElicitRequest::from_params(&params).ok_or_else(|| {
                ClientError::protocol(
                    ProtocolErrorKind::InputRequest,
                    "a malformed elicitation request",
                )
            })?;
            let handler = match req.mode {
                ElicitMode::Form { .. } => handlers.form.clone(),
                ElicitMode::Url { .. } => handlers.url.clone(),
            }
            .ok_or_else(|| ClientError::handler("no elicitation handler for this mode", None))?;
            let answer = handler(req).await.map_err(|e| failed("elicitation", e))?;
            Ok(elicit_result(&answer))
        }
        Some("sampling/createMessage") => {
            let handler = handlers
                .sampling
                .clone()
                .ok_or_else(|| ClientError::handler("no sampling handler", None))?;
            handler(params).await.map_err(|e| failed("sampling", e))
        }
        Some("roots/list") => {
            let handler = handlers
                .roots
                .clone()
                .ok_or_else(|| ClientError::handler("no roots handler", None))?;
            let roots = handler().await.map_err(|e| failed("roots", e))?;
            Ok(json!({"roots": roots.iter().map(Root::to_json).collect::<Vec<_>>()}))
        }
        other => Err(ClientError::protocol(
            ProtocolErrorKind::InputRequest,
            format!("an input request with an unknown method {other:?}"),
        )),
    }
}

/// Sends `method` and answers `input_required` results until the request
/// completes, the caller must answer, or the rounds run out.
/// Answers every request of a task's `inputRequests` through the handlers;
/// `None` when one of them has no handler.
pub(crate) async fn answer_all(
    handlers: &Handlers,
    requests: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, ClientError> {
    if !answerable(handlers, requests) {
        return Ok(None);
    }
    let mut answers = Map::new();
    for (key, request) in requests {
        answers.insert(key.clone(), fulfil(handlers, request).await?);
    }
    Ok(Some(answers))
}

pub(crate) async fn run<A: FromResult>(
    shared: &Arc<Shared>,
    method: &str,
    params: &Map<String, Value>,
    opts: &RequestOptions,
    headers: Vec<(HeaderName, HeaderValue)>,
) -> Result<A, ClientError> {
    let answer = opts.answer_input.unwrap_or(true);
    let max_rounds = opts
        .max_input_rounds
        .unwrap_or(shared.config.max_input_rounds);
    let mut responses = opts.input_responses.clone();
    let mut state = opts.request_state.clone();
    let mut round = 0usize;
    loop {
        // Copied only for a round that adds answers.
        let answered;
        let attempt = if responses.is_none() && state.is_none() {
            params
        } else {
            let mut copy = params.clone();
            if let Some(r) = responses.take() {
                copy.insert("inputResponses".into(), Value::Object(r));
            }
            if let Some(s) = state.take() {
                copy.insert("requestState".into(), Value::String(s));
            }
            answered = copy;
            &answered
        };
        let result: A = shared.call(method, attempt, opts, headers.clone()).await?;
        if !result.is_input_required() || !answer {
            return Ok(result);
        }
        let members = result.members();
        let requests = match members.get("inputRequests") {
            Some(Value::Object(map)) => map.clone(),
            None | Some(Value::Null) => Map::new(),
            Some(_) => {
                return Err(ClientError::protocol(
                    ProtocolErrorKind::InputRequest,
                    "inputRequests must be an object",
                ));
            }
        };
        let next_state = match members.get("requestState") {
            Some(Value::String(s)) => Some(s.clone()),
            None | Some(Value::Null) => None,
            Some(_) => {
                return Err(ClientError::protocol(
                    ProtocolErrorKind::InputRequest,
                    "requestState must be a string",
                ));
            }
        };
        if requests.is_empty() && next_state.is_none() {
            return Err(ClientError::protocol(
                ProtocolErrorKind::InputRequest,
                "an input_required result with neither inputRequests nor requestState",
            ));
        }
        if !answerable(&shared.config.handlers, &requests) {
            return Ok(result);
        }
        if round >= max_rounds {
            return Err(ClientError::protocol(
                ProtocolErrorKind::InputRequest,
                format!("the server still asks for input after {max_rounds} rounds"),
            ));
        }
        round += 1;
        if requests.is_empty() {
            tokio::time::sleep(STATE_ONLY_PAUSE).await;
        } else {
            let mut answers = Map::new();
            for (key, request) in &requests {
                answers.insert(key.clone(), fulfil(&shared.config.handlers, request).await?);
            }
            responses = Some(answers);
        }
        state = next_state;
    }
}
