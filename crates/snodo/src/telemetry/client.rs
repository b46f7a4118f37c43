//! The CLIENT span and duration of one request a client sends.

use std::sync::Arc;

use serde_json::{Map, Value};
use tracing::Span;
use tracing::field::Empty;

use super::Capture;
use super::attributes as attr;
use super::measure::Measure;
use super::metrics::Side;
use super::names::{Names, span_name};
use super::outcome::Outcome;
use super::text::Text;
use crate::wire::RequestId;

/// Where a client's requests go.
#[derive(Debug, Clone, Default)]
pub(crate) struct Peer {
    /// `pipe`, `tcp`, or nothing in process.
    pub(crate) transport: Option<&'static str>,
    /// The server's host and port (HTTP), the host shared by every
    /// request's attributes.
    pub(crate) address: Option<(Arc<str>, u16)>,
}

/// One request being sent: its span, timer and outcome. Dropping it ends
/// the span and records the duration.
pub(crate) struct ClientCall {
    span: Span,
    detail: Option<Box<Detail>>,
}

struct Detail {
    measure: Measure,
    outcome: Outcome,
    capture_results: bool,
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
        let names = Names::in_params(method, params);
        let metrics = super::metrics::recorder().is_some();
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
            let name = span_name(method, names.target(capture));
            let request_id = Text::<24>::request_id(id);
            tracing::info_span!(
                target: "snodo::client",
                "mcp.client",
                otel.name = name.as_ref().map_or(method, Text::as_str),
                otel.kind = "client",
                otel.status_code = Empty,
                otel.status_description = Empty,
                mcp.method.name = method,
                mcp.protocol.version = version,
                mcp.session.id = session.filter(|s| !s.is_empty()),
                mcp.resource.uri = names.uri,
                jsonrpc.request.id = request_id.as_str(),
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
                server.address = peer.address.as_ref().map(|(h, _)| &**h),
                server.port = peer.address.as_ref().map(|(_, p)| i64::from(*p)),
            )
        } else {
            Span::none()
        };
        let mut measure = Measure::start(
            std::time::Instant::now(),
            method,
            version,
            &names,
            peer.transport,
            metrics,
        );
        if let Some((host, port)) = &peer.address {
            measure.server(host, *port);
        }
        Self {
            span,
            detail: Some(Box::new(Detail {
                measure,
                outcome: Outcome::Open,
                capture_results: capture.results,
            })),
        }
    }

    /// The request's span: the trace context written into `_meta` is its.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Whether [`ClientCall::inject`] writes anything.
    pub(crate) fn injects(&self) -> bool {
        !self.span.is_disabled()
    }

    /// Writes this request's trace context into `params._meta` (nothing
    /// when no subscriber wants the span).
    pub(crate) fn inject(&self, params: &mut Map<String, Value>) {
        if !self.injects() {
            return;
        }
        if let Value::Object(meta) = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()))
        {
            super::propagation::inject(&self.span, meta);
        }
    }

    /// Records how the request ended.
    pub(crate) fn finish(&mut self, outcome: Outcome, result: Option<&str>) {
        if let Some(d) = &mut self.detail {
            if d.capture_results
                && !self.span.is_disabled()
                && let Some(result) = result
            {
                self.span.record(attr::GEN_AI_TOOL_CALL_RESULT, result);
            }
            d.outcome = outcome;
        }
    }
}

impl Drop for ClientCall {
    fn drop(&mut self) {
        if let Some(d) = &mut self.detail {
            d.measure.end(
                &self.span,
                &d.outcome,
                Side::Client,
                std::time::Instant::now(),
            );
        }
    }
}
