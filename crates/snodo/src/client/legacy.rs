//! The initialize-era wire (2025-11-25, 2025-06-18): the handshake, and the
//! answers to the requests such servers send the client (`ping`,
//! `sampling/createMessage`, `elicitation/create`, `roots/list`).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::ProtocolErrorKind;
use super::options::{
    ElicitMode, ElicitRequest, Handlers, LEGACY_VERSIONS, RequestOptions, TOLERATED_LEGACY,
    elicit_result,
};
use super::version::Negotiated;
use super::version::Wire;
use super::{ClientError, Shared};
use crate::Error;
use crate::protocol::legacy as protocol;
use crate::wire::{Request, encode_error, encode_result};

/// Runs `initialize` at `version`, then sends `notifications/initialized`.
pub(crate) async fn initialize(
    shared: &Arc<Shared>,
    version: &str,
) -> Result<Negotiated, ClientError> {
    shared.transport.set_legacy(true);
    let handshake = Wire {
        version: version.to_string(),
        legacy: true,
        handshake: true,
    };
    let mut params = Map::new();
    params.insert("protocolVersion".into(), version.into());
    params.insert("capabilities".into(), legacy_capabilities(shared, version));
    params.insert("clientInfo".into(), shared.config.client_info.clone());
    let opts = RequestOptions::new().timeout(shared.config.timeout);
    let result: Value = shared
        .call_on(&handshake, protocol::INITIALIZE, &params, &opts, Vec::new())
        .await?;
    let answered = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ClientError::protocol(
                ProtocolErrorKind::MalformedResult,
                "the initialize result has no protocolVersion",
            )
        })?
        .to_string();
    if !LEGACY_VERSIONS.contains(&answered.as_str())
        && !TOLERATED_LEGACY.contains(&answered.as_str())
    {
        return Err(ClientError::protocol(
            ProtocolErrorKind::Version,
            format!(
                "the server answered initialize with protocol version {answered}, which this client does not speak"
            ),
        ));
    }
    let wire = Wire {
        version: answered.clone(),
        legacy: true,
        handshake: false,
    };
    shared
        .notify_on(&wire, protocol::INITIALIZED, Map::new())
        .await?;
    // Over HTTP, servers send their own requests and notifications that
    // belong to no request on the standalone GET stream: open it now (a 405
    // is fine), waiting briefly so that it is in place before the next call.
    let opening = tokio::spawn(shared.transport.open_event_stream(Vec::new()));
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), opening).await;
    Ok(Negotiated::from_initialize(answered, result))
}

/// The capabilities declared in `initialize`, shaped for the revision.
fn legacy_capabilities(shared: &Shared, version: &str) -> Value {
    let mut caps = shared.config.capabilities(version);
    if let Some(roots) = caps.get_mut("roots").and_then(Value::as_object_mut) {
        roots.insert("listChanged".into(), false.into());
    }
    caps
}

/// The response (encoded) to an initialize-era server request.
pub(crate) async fn answer(handlers: &Handlers, version: &str, request: Request) -> Vec<u8> {
    let (id, method) = (request.id.clone(), request.method.clone());
    // The handlers see the params as sent, `_meta` included.
    let params = Value::Object(request.into_params());
    let outcome: Result<Value, Error> = match method.as_str() {
        "ping" => Ok(json!({})),
        "elicitation/create" => elicit(handlers, version, &params).await,
        "sampling/createMessage" => match &handlers.sampling {
            Some(h) => h(params).await.map_err(|e| Error::internal(format!("Sampling failed: {e}"))),
            None => Err(Error::method_not_found(&method)),
        },
        "roots/list" => match &handlers.roots {
            Some(h) => h()
                .await
                .map(|roots| json!({"roots": roots.iter().map(super::options::Root::to_json).collect::<Vec<_>>()}))
                .map_err(|e| Error::internal(format!("Listing roots failed: {e}"))),
            None => Err(Error::method_not_found(&method)),
        },
        other => Err(Error::method_not_found(other)),
    };
    match outcome {
        Ok(result) => encode_result(&id, &result),
        Err(error) => encode_error(Some(&id), &error),
    }
}

async fn elicit(handlers: &Handlers, version: &str, params: &Value) -> Result<Value, Error> {
    let Some(req) = ElicitRequest::from_params(params) else {
        return Err(Error::invalid_params("Invalid elicitation request"));
    };
    let handler = match &req.mode {
        ElicitMode::Form { .. } => handlers.form.as_ref(),
        ElicitMode::Url { .. } if version != "2025-06-18" => handlers.url.as_ref(),
        ElicitMode::Url { .. } => None,
    };
    let Some(handler) = handler else {
        return Err(Error::invalid_params("Unsupported elicitation mode"));
    };
    handler(req)
        .await
        .map(|answer| elicit_result(&answer))
        .map_err(|e| Error::internal(format!("Elicitation failed: {e}")))
}
