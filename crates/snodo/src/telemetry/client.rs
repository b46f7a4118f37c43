//! The CLIENT span and duration of one request a client sends.

use std::time::Instant;

use serde_json::{Map, Value};
use tracing::Span;
use tracing::field::Empty;

use super::Capture;
use super::attributes as attr;
use super::outcome::Outcome;
#[cfg(feature = "otel")]
use super::server::static_or_owned;
use super::server::{Names, SpanName};
use crate::wire::RequestId;

/// Where a client's requests go.
#[derive(Debug, Clone, Default)]
pub(crate) struct Peer {
    /// `pipe`, `tcp`, or nothing in process.
    pub(crate) transport: Option<&'static str>,
    /// The server's host and port (HTTP).
    pub(crate) address: Option<(String, u16)>,
}

/// One request being sent: its span, timer and outcome. Dropping it ends
/// the span and records the duration.
pub(crate) struct ClientCall {
    span: Span,
    detail: Option<Box<Detail>>,
}

struct Detail {
    start: Instant,
    outcome: Outcome,
    capture_results: bool,
    #[cfg(feature = "otel")]
    attrs: Vec<opentelemetry::KeyValue>,
}

impl ClientCall {
    /// Starts observing a request about to be sent.
    pub(crate) fn start(
        method: &str,
        id: &RequestId,
        params: &Map<String, Value>,
        version: &str,
        session: Option<&str>,
        peer: &Peer,
        capture: &Capture,
    ) -> Self {
        let names = Names::of(method, params);
        #[cfg(feature = "otel")]
        let metrics = super::metrics::instruments().is_some();
        #[cfg(not(feature = "otel"))]
        let metrics = false;
        let traced = tracing::enabled!(target: "snodo::client", tracing::Level::INFO);
        if !traced && !metrics {
            return Self {
                span: Span::none(),
                detail: None,
            };
        }
        let span = if traced {
            let arguments = capture
                .arguments
                .then(|| params.get("arguments"))
                .flatten()
                .map(Value::to_string);
            tracing::info_span!(
                target: "snodo::client",
                "mcp.client",
                otel.name = %SpanName(method, names.target(capture)),
                otel.kind = "client",
                otel.status_code = Empty,
                otel.status_description = Empty,
                mcp.method.name = method,
                mcp.protocol.version = version,
                mcp.session.id = session.filter(|s| !s.is_empty()),
                mcp.resource.uri = names.uri,
                jsonrpc.request.id = %id,
                jsonrpc.protocol.version = "2.0",
                gen_ai.tool.name = names.tool,
                gen_ai.prompt.name = names.prompt,
                gen_ai.operation.name = names.tool.map(|_| attr::EXECUTE_TOOL),
                gen_ai.tool.call.arguments = arguments.as_deref(),
                gen_ai.tool.call.result = Empty,
                error.type = Empty,
                rpc.response.status_code = Empty,
                network.transport = peer.transport,
                network.protocol.name = peer.transport.filter(|t| *t == "tcp").map(|_| "http"),
                server.address = peer.address.as_ref().map(|(h, _)| h.as_str()),
                server.port = peer.address.as_ref().map(|(_, p)| i64::from(*p)),
            )
        } else {
            Span::none()
        };
        #[cfg(feature = "otel")]
        let attrs = if metrics {
            use opentelemetry::KeyValue;
            let mut attrs = vec![KeyValue::new(
                attr::MCP_METHOD_NAME,
                static_or_owned(method, |m| {
                    crate::protocol::Method::parse(m).map(crate::protocol::Method::as_str)
                }),
            )];
            if !version.is_empty() {
                attrs.push(KeyValue::new(
                    attr::MCP_PROTOCOL_VERSION,
                    version.to_owned(),
                ));
            }
            if let Some(tool) = names.tool {
                attrs.push(KeyValue::new(attr::GEN_AI_TOOL_NAME, tool.to_owned()));
                attrs.push(KeyValue::new(
                    attr::GEN_AI_OPERATION_NAME,
                    attr::EXECUTE_TOOL,
                ));
            }
            if let Some(prompt) = names.prompt {
                attrs.push(KeyValue::new(attr::GEN_AI_PROMPT_NAME, prompt.to_owned()));
            }
            if let Some(t) = peer.transport {
                attrs.push(KeyValue::new(attr::NETWORK_TRANSPORT, t));
            }
            if let Some((host, port)) = &peer.address {
                attrs.push(KeyValue::new(attr::SERVER_ADDRESS, host.clone()));
                attrs.push(KeyValue::new(attr::SERVER_PORT, i64::from(*port)));
            }
            attrs
        } else {
            Vec::new()
        };
        Self {
            span,
            detail: Some(Box::new(Detail {
                start: Instant::now(),
                outcome: Outcome::Open,
                capture_results: capture.results,
                #[cfg(feature = "otel")]
                attrs,
            })),
        }
    }

    /// The request's span: the trace context written into `_meta` is its.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Writes this request's trace context into `meta`.
    pub(crate) fn inject(&self, meta: &mut Map<String, Value>) {
        super::propagation::inject(&self.span, meta);
    }

    /// Records how the request ended.
    pub(crate) fn finish(&mut self, outcome: Outcome, result: Option<&Value>) {
        if let Some(d) = &mut self.detail {
            if d.capture_results
                && !self.span.is_disabled()
                && let Some(result) = result
            {
                self.span
                    .record(attr::GEN_AI_TOOL_CALL_RESULT, result.to_string());
            }
            d.outcome = outcome;
        }
    }
}

impl Drop for ClientCall {
    fn drop(&mut self) {
        let Some(d) = self.detail.take() else { return };
        let error_type = d.outcome.error_type(false);
        let status = d.outcome.status_code();
        if !self.span.is_disabled() {
            if let Some(kind) = &error_type {
                self.span.record(attr::ERROR_TYPE, kind.as_str());
                self.span.record("otel.status_code", "error");
                if let Outcome::Rpc { message, .. } = &d.outcome {
                    self.span
                        .record("otel.status_description", message.as_str());
                }
            }
            if let Some(code) = status {
                self.span
                    .record(attr::RPC_RESPONSE_STATUS_CODE, code.to_string());
            }
        }
        #[cfg(feature = "otel")]
        if let Some(i) = super::metrics::instruments() {
            let mut attrs = d.attrs;
            if let Some(kind) = error_type {
                attrs.push(opentelemetry::KeyValue::new(attr::ERROR_TYPE, kind));
            }
            if let Some(code) = status {
                attrs.push(opentelemetry::KeyValue::new(
                    attr::RPC_RESPONSE_STATUS_CODE,
                    code.to_string(),
                ));
            }
            i.client_duration
                .record(d.start.elapsed().as_secs_f64(), &attrs);
        }
        #[cfg(not(feature = "otel"))]
        let _ = (error_type, status, d.start);
    }
}
