//! Sending one request: ids, per-request `_meta`, the standard headers,
//! timeouts (reset on progress, capped in total), cancellation on drop, and
//! the notifications and server requests that arrive before the response.

use super::error::{ClientErrorKind, Repr};
use std::sync::Arc;
use std::time::Duration;

use ::http::{HeaderName, HeaderValue};
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::answer::FromResult;
use super::encode::{self, Meta, Tail};
use super::options::{LogMessage, Progress, RequestOptions};
use super::transport::{Exchange, Incoming, Outgoing, Response, Transport, TransportKind};
use super::version::Wire;
use super::{ClientError, Shared, TimeoutKind, legacy};
use crate::Error;
use crate::protocol::Method;
use crate::protocol::headers as protocol_headers;
use crate::telemetry::client::ClientCall;
use crate::telemetry::entered::in_span;
use crate::telemetry::outcome::Outcome;
use crate::wire::{Notification, Request, RequestId};

/// Why a request failed when its response stream ended early.
const STREAM_LOST: &str = "the connection closed before the response arrived";

/// Cancels a request when dropped before its response arrived.
pub(crate) struct CancelGuard {
    transport: Arc<dyn Transport>,
    id: RequestId,
    armed: bool,
    reason: &'static str,
    /// A subscription's span, ended when the subscription is.
    observed: Option<ClientCall>,
}

impl CancelGuard {
    pub(crate) fn new(transport: Arc<dyn Transport>, id: RequestId) -> Self {
        Self {
            transport,
            id,
            armed: true,
            reason: "The request was cancelled by the client",
            observed: None,
        }
    }

    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if self.armed {
            self.transport.cancel(&self.id, self.reason);
        }
    }
}

/// Encodes a header value with the protocol's one encoder (the base64
/// sentinel for anything that is not plain visible ASCII). A method name or
/// revision this library knows is its static value: no copy.
pub(crate) fn header_value(text: &str) -> HeaderValue {
    let known = Method::parse(text)
        .map(Method::as_str)
        .or_else(|| crate::protocol::Revision::parse(text).map(|r| r.as_str()));
    if let Some(text) = known {
        return HeaderValue::from_static(text);
    }
    let encoded = crate::protocol::headers::encoded(text);
    HeaderValue::from_str(&encoded).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// Reads a JSON-RPC response: the result's JSON text, or the peer's error.
pub(crate) fn parse_response(
    response: Response,
    status: Option<u16>,
) -> Result<Box<str>, ClientError> {
    match response.body {
        Ok(text) => Ok(text),
        Err(error) => Err(ClientError::rpc(Error::from_json(&error), status)),
    }
}

impl Shared {
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(
            self.next_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// The wire negotiated at connect time.
    pub(crate) fn wire(&self) -> Wire {
        let state = self.state();
        Wire {
            version: state.version.clone(),
            legacy: state.legacy,
            handshake: false,
        }
    }

    /// Builds a request (or, without `id`, a notification) for `wire`.
    pub(crate) fn outgoing(
        &self,
        wire: &Wire,
        id: Option<&RequestId>,
        method: &str,
        params: &Map<String, Value>,
        opts: &RequestOptions,
        extra: Vec<(HeaderName, HeaderValue)>,
    ) -> Outgoing {
        let tail = (!wire.legacy).then(|| {
            self.tails.get(&wire.version, opts.allow_tasks, || {
                let mut caps = self.config.capabilities(&wire.version);
                if opts.allow_tasks
                    && let Value::Object(caps) = &mut caps
                {
                    let extensions = caps
                        .entry("extensions")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(extensions) = extensions {
                        extensions.insert(crate::task::EXTENSION.into(), Value::Object(Map::new()));
                    }
                }
                Tail::new(
                    &wire.version,
                    opts.allow_tasks,
                    &caps,
                    &self.config.client_info,
                )
            })
        });
        let log_level = match (wire.legacy, id) {
            (false, Some(_)) => opts.log_level.or(self.config.log_level),
            _ => None,
        };
        let meta = Meta {
            params: params.get("_meta").and_then(Value::as_object),
            options: &opts.meta,
            tail: tail.as_deref(),
            log_level: log_level.map(|l| l.as_str()),
            progress: id.filter(|_| opts.progress.is_some()),
        };
        let body = encode::message(id, method, params, &meta);
        let mut headers = Vec::new();
        if self.transport.kind() == TransportKind::Http {
            if !wire.handshake {
                headers.push((
                    HeaderName::from_static(protocol_headers::PROTOCOL_VERSION),
                    header_value(&wire.version),
                ));
            }
            if !wire.legacy {
                headers.push((
                    HeaderName::from_static(protocol_headers::METHOD),
                    header_value(method),
                ));
                // The server's own table says where `Mcp-Name` comes from.
                let name = Method::parse(method)
                    .and_then(Method::name_param)
                    .and_then(|param| params.get(param));
                if let Some(Value::String(name)) = name {
                    headers.push((
                        HeaderName::from_static(protocol_headers::NAME),
                        header_value(name),
                    ));
                }
                headers.extend(extra);
            }
            headers.extend(opts.headers.iter().cloned());
        }
        Outgoing {
            id: id.cloned(),
            body,
            headers,
            long_lived: false,
        }
    }

    /// Sends a request on the negotiated wire and waits for its result,
    /// read as `A`.
    pub(crate) async fn call<A: FromResult>(
        self: &Arc<Self>,
        method: &str,
        params: &Map<String, Value>,
        opts: &RequestOptions,
        extra: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<A, ClientError> {
        let wire = self.wire();
        self.call_on(&wire, method, params, opts, extra).await
    }

    /// Starts the CLIENT span of a request (its trace context is written
    /// into `params._meta` by [`ClientCall::inject`]).
    fn observe(
        &self,
        wire: &Wire,
        method: &str,
        id: &RequestId,
        params: &Map<String, Value>,
    ) -> ClientCall {
        ClientCall::start(
            method,
            id,
            params,
            &wire.version,
            self.transport.session_id().as_deref(),
            &self.peer,
            &self.config.capture,
        )
    }

    /// Sends a request on `wire` and waits for its result, read as `A`, in
    /// a CLIENT span whose trace context travels in `_meta`.
    pub(crate) async fn call_on<A: FromResult>(
        self: &Arc<Self>,
        wire: &Wire,
        method: &str,
        params: &Map<String, Value>,
        opts: &RequestOptions,
        extra: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<A, ClientError> {
        let id = self.next_id();
        let mut observed = self.observe(wire, method, &id, params);
        // Copied only when a trace context is written into them.
        let traced;
        let params = if observed.injects() {
            let mut copy = params.clone();
            observed.inject(&mut copy);
            traced = copy;
            &traced
        } else {
            params
        };
        let call = self.call_with_id(wire, id, method, params, opts, extra);
        let (result, text) = match in_span(observed.span(), call).await {
            Ok(text) => (A::read(&text), Some(text)),
            Err(e) => (Err(e), None),
        };
        let outcome = match &result {
            Ok(read) => read.outcome(),
            Err(e) => outcome_of_error(e),
        };
        observed.finish(outcome, text.as_deref());
        result
    }

    async fn call_with_id(
        self: &Arc<Self>,
        wire: &Wire,
        id: RequestId,
        method: &str,
        params: &Map<String, Value>,
        opts: &RequestOptions,
        extra: Vec<(HeaderName, HeaderValue)>,
    ) -> Result<Box<str>, ClientError> {
        let out = self.outgoing(wire, Some(&id), method, params, opts, extra.clone());
        match self.drive(out, opts).await {
            // On 2026-07-28 HTTP a broken response stream loses the request
            // (there is no resumption): it is re-issued once, under a new id.
            Err(e)
                if matches!(e.repr(), Repr::Transport { message, .. } if message == STREAM_LOST)
                    && !wire.legacy
                    && self.transport.kind() == TransportKind::Http =>
            {
                let id = self.next_id();
                let out = self.outgoing(wire, Some(&id), method, params, opts, extra);
                self.drive(out, opts).await
            }
            other => other,
        }
    }

    /// Sends a notification on the negotiated wire.
    pub(crate) async fn notify_on(
        &self,
        wire: &Wire,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<(), ClientError> {
        let mut out = self.outgoing(
            wire,
            None,
            method,
            &params,
            &RequestOptions::new(),
            Vec::new(),
        );
        if self.transport.kind() == TransportKind::Http && !wire.legacy {
            out.headers
                .retain(|(n, _)| n.as_str() != protocol_headers::NAME);
        }
        self.transport.send(out).await
    }

    /// Opens a request whose exchange the caller reads (subscriptions).
    pub(crate) async fn open(
        self: &Arc<Self>,
        method: &str,
        params: Map<String, Value>,
        opts: &RequestOptions,
    ) -> Result<(RequestId, Exchange, CancelGuard), ClientError> {
        let mut params = params;
        let wire = self.wire();
        let id = self.next_id();
        let mut observed = self.observe(&wire, method, &id, &params);
        observed.inject(&mut params);
        let mut out = self.outgoing(&wire, Some(&id), method, &params, opts, Vec::new());
        out.long_lived = true;
        let sent = tokio::time::timeout(self.config.timeout, self.transport.request(out))
            .await
            .map_err(|_| ClientError::timeout(TimeoutKind::Request, self.config.timeout))
            .and_then(|r| r);
        let exchange = match sent {
            Ok(exchange) => exchange,
            Err(e) => {
                observed.finish(outcome_of_error(&e), None);
                return Err(e);
            }
        };
        observed.finish(Outcome::Ok, None);
        let mut guard = CancelGuard::new(self.transport.clone(), id.clone());
        guard.observed = Some(observed);
        Ok((id, exchange, guard))
    }

    /// Sends `out` and reads its exchange until the response, applying the
    /// timeouts of `opts`.
    pub(crate) async fn drive(
        self: &Arc<Self>,
        out: Outgoing,
        opts: &RequestOptions,
    ) -> Result<Box<str>, ClientError> {
        let id = out
            .id
            .clone()
            .ok_or_else(|| ClientError::transport("a request needs an id"))?;
        let start = Instant::now();
        let timeout = opts.timeout.unwrap_or(self.config.timeout);
        let max_total = opts.max_total.unwrap_or(self.config.max_total);
        let reset = opts
            .reset_on_progress
            .unwrap_or(self.config.reset_on_progress);
        let total_deadline = start + max_total;
        let mut deadline = (start + timeout).min(total_deadline);
        let expired = |deadline: Instant| {
            let kind = if deadline >= total_deadline {
                TimeoutKind::MaxTotal
            } else {
                TimeoutKind::Request
            };
            ClientError::timeout(kind, start.elapsed())
        };
        // Armed before sending: a call dropped (or timed out) while waiting
        // for the response headers is cancelled too.
        let mut guard = CancelGuard::new(self.transport.clone(), id.clone());
        let sent = tokio::time::timeout_at(deadline, self.transport.request(out)).await;
        let mut exchange = match sent {
            Ok(Ok(exchange)) => exchange,
            Ok(Err(e)) => {
                guard.disarm();
                return Err(e);
            }
            Err(_) => {
                guard.reason = "The request timed out";
                if opts.silent_timeout {
                    guard.disarm();
                }
                return Err(expired(deadline));
            }
        };
        loop {
            let msg = tokio::select! {
                m = exchange.recv() => m,
                _ = tokio::time::sleep_until(deadline) => {
                    guard.reason = "The request timed out";
                    if opts.silent_timeout {
                        guard.disarm();
                    }
                    return Err(expired(deadline));
                }
            };
            match msg {
                None => {
                    guard.disarm();
                    return Err(ClientError::transport(STREAM_LOST));
                }
                Some(Incoming::Response { message, status }) => {
                    if message.id.as_ref().is_some_and(|rid| *rid != id) {
                        continue;
                    }
                    guard.disarm();
                    return parse_response(message, status);
                }
                Some(Incoming::Oversized { max, carrier }) => {
                    guard.disarm();
                    return Err(Incoming::oversized(max, carrier));
                }
                Some(Incoming::Notification(n)) if n.method == "notifications/progress" => {
                    if let Some(p) = Progress::from_params(&n.params) {
                        if let Some(callback) = &opts.progress {
                            callback(p);
                        }
                        if reset {
                            deadline = (Instant::now() + timeout).min(total_deadline);
                        }
                    }
                }
                Some(Incoming::Notification(n)) => self.on_notification(n),
                Some(Incoming::Request(r)) => self.answer_later(r),
            }
        }
    }

    /// A notification that belongs to no subscription.
    pub(crate) fn on_notification(&self, n: Notification) {
        dispatch_notification(&self.config.handlers, &self.events, n);
    }

    /// Answers an initialize-era server request in the background.
    pub(crate) fn answer_later(&self, request: Request) {
        let transport = self.transport.clone();
        let handlers = self.config.handlers.clone();
        let version = self.state().version.clone();
        tokio::spawn(async move {
            let body = legacy::answer(&handlers, &version, request).await;
            let out = Outgoing {
                id: None,
                body,
                headers: Vec::new(),
                long_lived: false,
            };
            if let Err(e) = transport.send(out).await {
                tracing::warn!("snodo client: cannot answer a server request: {e}");
            }
        });
    }
}

/// Routes a notification to the log handler, the legacy event hub and the
/// catch-all handler.
pub(crate) fn dispatch_notification(
    handlers: &super::options::Handlers,
    events: &tokio::sync::broadcast::Sender<Notification>,
    n: Notification,
) {
    match n.method.as_str() {
        "notifications/message" => {
            if let Some(log) = &handlers.log {
                log(LogMessage::from_params(&n.params));
            }
        }
        "notifications/progress" => {}
        _ => {
            if let Some(callback) = &handlers.notification {
                callback(&n.method, &Value::Object(n.params.clone()));
            }
            let _ = events.send(n);
        }
    }
}

/// The longest a state-only retry waits before re-sending.
pub(crate) const STATE_ONLY_PAUSE: Duration = Duration::from_millis(250);

/// How a failed request ended, as the request span records it.
fn outcome_of_error(error: &ClientError) -> Outcome {
    if let Some(error) = error.rpc_error() {
        return Outcome::Rpc {
            code: error.code(),
            message: error.message().to_owned(),
        };
    }
    match error.kind() {
        ClientErrorKind::Timeout => Outcome::Failed("timeout"),
        ClientErrorKind::Transport => Outcome::Failed("transport"),
        ClientErrorKind::Protocol => Outcome::Failed("protocol"),
        ClientErrorKind::LimitExceeded => Outcome::Failed("limit"),
        ClientErrorKind::ToolFailed => Outcome::ToolError,
        _ => Outcome::Failed("client"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_the_protocol_encoding() {
        for (text, sent) in [
            ("tools/call", "tools/call"),
            ("2026-07-28", "2026-07-28"),
            ("2024-11-05", "2024-11-05"),
            ("echo", "echo"),
            ("a b", "a b"),
            (" padded", "=?base64?IHBhZGRlZA==?="),
            ("héllo", "=?base64?aMOpbGxv?="),
        ] {
            assert_eq!(header_value(text), sent, "{text}");
            assert_eq!(sent, crate::protocol::headers::encode_value(text));
        }
    }
}
