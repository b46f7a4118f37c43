//! The input-required shim: a handler written for multi round-trip requests
//! works unchanged for an initialize-era client.
//!
//! When a round returns `input_required`, each input request becomes a real
//! server-initiated request (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`) sent on the originating request's stream, all at once. The
//! answers, keyed as the handler keyed its requests, and the request state
//! (kept in process, never sent) go into the next round. How it ends:
//!
//! | what happens | `tools/call` | `prompts/get`, `resources/read` |
//! |---|---|---|
//! | the client did not declare the capability | `isError` result | -32603 |
//! | the client answers with an error | `isError` result | -32603 |
//! | no answer within the input timeout | `isError` result | -32603 |
//! | more than [`MAX_INPUT_ROUNDS`] rounds | -32603 | -32603 |
//! | `notifications/initialized` has not arrived | `isError` result | -32603 |
//! | the operating system's random source gives no request id | -32603 | -32603 |
//! | the request is cancelled | no response | no response |
//!
//! Every request of a round is shaped and registered (its id drawn) before
//! the first is sent: a round refused for one of its requests sends none.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::super::Server;
use super::super::dispatch::Routed;
use super::super::reply::Failure;
use super::dispatch::{Call, is_input_required};
use super::session::Unregistered;
use crate::context::Sink;
use crate::protocol::Revision;
use crate::{Error, RandomUnavailable};

/// Most rounds one request may take before it fails.
pub const MAX_INPUT_ROUNDS: usize = 8;

/// How long the server waits for the client to answer a server-initiated
/// request, by default (the builder's `input_timeout` changes it).
pub const DEFAULT_INPUT_TIMEOUT: Duration = Duration::from_secs(300);

use super::shape::CLIENT_FAILED;

fn client_failed(message: String) -> Failure {
    Failure::ok(Error::new(CLIENT_FAILED, message))
}

impl Server {
    /// Runs rounds until the handler returns something other than
    /// `input_required` (`first` is the outcome of a round already run).
    pub(super) async fn rounds(
        &self,
        call: &Call,
        first: Option<Map<String, Value>>,
        tx: &mpsc::Sender<Vec<u8>>,
        sink: Arc<Sink>,
    ) -> Result<Routed, Failure> {
        let mut outcome = match first {
            Some(map) => Ok(Routed::Object(map)),
            None => self.round(call, None, None, Some(sink.clone())).await,
        };
        for _ in 0..MAX_INPUT_ROUNDS {
            let map = match outcome {
                Ok(Routed::Object(map)) if is_input_required(&map) => map,
                other => return other,
            };
            let state = map
                .get("requestState")
                .and_then(Value::as_str)
                .map(str::to_string);
            let requests = match map.get("inputRequests") {
                Some(Value::Object(requests)) => requests.clone(),
                _ => Map::new(),
            };
            let answers = self.ask(call, &requests, tx).await?;
            outcome = self
                .round(call, Some(answers), state, Some(sink.clone()))
                .await;
        }
        match outcome {
            Ok(Routed::Object(map)) if is_input_required(&map) => {
                Err(Failure::ok(Error::internal(format!(
                    "The request needed more than {MAX_INPUT_ROUNDS} rounds of client input"
                ))))
            }
            other => other,
        }
    }

    /// Sends every input request to the client and collects the answers.
    async fn ask(
        &self,
        call: &Call,
        requests: &Map<String, Value>,
        tx: &mpsc::Sender<Vec<u8>>,
    ) -> Result<Map<String, Value>, Failure> {
        let session = &call.session;
        if !session.is_initialized() {
            // Before `notifications/initialized` a server sends no requests.
            return Err(client_failed(
                "The client has not finished initialization (notifications/initialized)".into(),
            ));
        }
        let mut adapted = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let params = adapt_params(method, request.get("params"), session.revision())?;
            adapted.push((key, method, params));
        }
        let mut registered = Vec::with_capacity(adapted.len());
        for (key, method, params) in adapted {
            let (id, answer) = match session.expect_answer() {
                Ok(registered) => registered,
                Err(why) => {
                    // Nothing was sent: forget what this round registered.
                    for (_, _, id, _, _) in &registered {
                        session.forget(id);
                    }
                    return Err(match why {
                        Unregistered::Crowded => client_failed(
                            "Too many requests to the client are awaiting an answer".into(),
                        ),
                        Unregistered::Random(e) => random_failed(e),
                    });
                }
            };
            registered.push((key.clone(), method.to_string(), id, answer, params));
        }
        let mut waiting = Vec::with_capacity(registered.len());
        for (key, method, id, answer, params) in registered {
            let frame =
                json!({"jsonrpc": "2.0", "id": id.to_value(), "method": method, "params": params});
            let frame = serde_json::to_vec(&frame).unwrap_or_default();
            if tx.send(frame).await.is_err() {
                session.forget(&id);
                return Err(client_failed("The request's stream closed".into()));
            }
            waiting.push((key, method, id, answer));
        }
        let timeout = self.inner.input_timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        let mut answers = Map::new();
        for (key, method, id, answer) in waiting {
            let outcome = tokio::select! {
                a = tokio::time::timeout_at(deadline, answer) => a,
                _ = call.cancel.cancelled() => {
                    session.forget(&id);
                    return Err(client_failed("The request was cancelled".into()));
                }
            };
            match outcome {
                Ok(Ok(Ok(result))) => {
                    answers.insert(key, result);
                }
                Ok(Ok(Err(error))) => {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message");
                    return Err(client_failed(format!(
                        "The client answered {method} with an error: {message}"
                    )));
                }
                Ok(Err(_)) => {
                    return Err(client_failed(format!(
                        "The session ended before the client answered {method}"
                    )));
                }
                Err(_) => {
                    session.forget(&id);
                    return Err(client_failed(format!(
                        "The client did not answer {method} within {} s",
                        timeout.as_secs()
                    )));
                }
            }
        }
        Ok(answers)
    }
}

/// A request to the client refused because the operating system's random
/// source gave it no id: -32603 whatever the method (the server failed, not
/// the client).
fn random_failed(e: RandomUnavailable) -> Failure {
    Failure::ok(Error::internal(format!(
        "No request to the client can be sent: {e}"
    )))
}

/// The params of a server-initiated request as the session's revision
/// expresses them; `Err` says why it cannot be sent at all.
fn adapt_params(
    method: &str,
    params: Option<&Value>,
    revision: Revision,
) -> Result<Value, Failure> {
    let mut params = params.cloned().unwrap_or_else(|| json!({}));
    if method == "elicitation/create"
        && let Value::Object(map) = &mut params
    {
        let mode = map.get("mode").and_then(Value::as_str).unwrap_or("form");
        if mode == "url" {
            if !revision.has_url_elicitation() {
                return Err(client_failed(format!(
                    "URL elicitation does not exist in protocol revision {revision}"
                )));
            }
            if !map.contains_key("elicitationId") {
                let id = crate::random::hex(16).map_err(random_failed)?;
                map.insert("elicitationId".into(), id.into());
            }
        } else if !revision.has_url_elicitation() {
            // 2025-06-18 has no `mode`: every elicitation is a form.
            map.remove("mode");
        }
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapted(method: &str, params: Option<&Value>, revision: Revision) -> Value {
        adapt_params(method, params, revision)
            .unwrap_or_else(|f| panic!("refused: {}", f.error.message()))
    }

    #[test]
    fn elicitations_follow_the_revision() {
        let form = json!({"mode": "form", "message": "m", "requestedSchema": {"type": "object", "properties": {}}});
        let old = adapted("elicitation/create", Some(&form), Revision::V2025_06_18);
        assert!(old.get("mode").is_none());
        let new = adapted("elicitation/create", Some(&form), Revision::V2025_11_25);
        assert_eq!(new["mode"], "form");
        let url = json!({"mode": "url", "message": "m", "url": "https://example.com/x"});
        assert!(adapt_params("elicitation/create", Some(&url), Revision::V2025_06_18).is_err());
        let sent = adapted("elicitation/create", Some(&url), Revision::V2025_11_25);
        assert_eq!(sent["elicitationId"].as_str().unwrap().len(), 32);
        assert_eq!(
            adapted("roots/list", None, Revision::V2025_06_18),
            json!({})
        );
    }

    #[test]
    fn a_url_elicitation_without_the_random_source_is_not_sent() {
        let url = json!({"mode": "url", "message": "m", "url": "https://example.com/x"});
        let _off = crate::random::failing();
        let Err(refused) = adapt_params("elicitation/create", Some(&url), Revision::V2025_11_25)
        else {
            panic!("an elicitation id was made without the random source");
        };
        assert_eq!(refused.error.code(), crate::error::code::INTERNAL_ERROR);
        assert!(refused.error.message().contains("random source failed"));
        // An id the handler gave needs no random source.
        let given = json!({"mode": "url", "message": "m", "url": "https://example.com/x", "elicitationId": "e1"});
        assert_eq!(
            adapted("elicitation/create", Some(&given), Revision::V2025_11_25)["elicitationId"],
            "e1"
        );
    }
}
