//! The SERVER span and duration of one request, and the log lines about it.

use std::time::Instant;

use serde_json::{Map, Value};
use tracing::Span;
use tracing::field::Empty;

use super::Capture;
use super::attributes as attr;
use super::measure::Measure;
use super::metrics::{Gauge, Held, Side};
use super::names::{Names, span_name};
use super::outcome::Outcome;
use super::text::Text;
use crate::Error;
use crate::context::{ConnectionInfo, TransportInfo, TransportKind};
use crate::wire::{Request, RequestId};

/// Which era a request belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Era<'a> {
    /// 2026-07-28: the revision is in `_meta`.
    Modern,
    /// An initialize-era session: its revision and id (empty over stdio).
    Legacy {
        /// The negotiated revision.
        version: &'a str,
        /// The `Mcp-Session-Id` (empty when there is none).
        session: &'a str,
    },
}

/// One request being served: its span, its timer and its outcome. Dropping
/// it ends the span and records the duration.
pub(crate) struct ServerCall {
    span: Span,
    id: RequestId,
    /// Boxed: a request nobody observes (no subscriber, no metrics) carries
    /// one pointer in its future instead of the whole record.
    detail: Option<Box<Detail>>,
    _active: Held,
}

struct Detail {
    measure: Measure,
    /// Set through `&self`: the call is shared with the code that answers.
    outcome: std::sync::Mutex<Outcome>,
    capture_results: bool,
}

impl ServerCall {
    /// Starts observing a request that was just decoded.
    pub(crate) fn start(
        request: &Request,
        transport: &TransportInfo,
        era: Era<'_>,
        capture: &Capture,
    ) -> Self {
        let (method, id) = (request.method.as_str(), &request.id);
        let active = Gauge::ActiveRequests.hold();
        let metrics = super::metrics::recorder().is_some();
        let traced = tracing::enabled!(target: "snodo::server", tracing::Level::INFO);
        if !traced && !metrics {
            return Self {
                span: Span::none(),
                id: id.clone(),
                detail: None,
                _active: active,
            };
        }
        // The trace context is among the members other than the standard three.
        let meta = request.meta.rest();
        let names = Names::of(method, request.target.as_deref());
        let version = match era {
            Era::Modern => request.meta.protocol_version().unwrap_or(""),
            Era::Legacy { version, .. } => version,
        };
        let network = Network::of(transport);
        let started = Instant::now();
        let span = if traced {
            // Every attribute known now is set now: a field recorded later
            // costs each layer a visit.
            let session = match era {
                Era::Legacy { session, .. } if !session.is_empty() => Some(session),
                _ => None,
            };
            let arguments = capture
                .arguments
                .then(|| match &request.arguments {
                    Some(arguments) => serde_json::to_string(arguments).ok(),
                    // Arguments of another type stay in the params.
                    None => request.params.get("arguments").map(Value::to_string),
                })
                .flatten();
            let conn = network.connection;
            // Written on the stack and given as text: cheaper for a layer
            // than a `Display` value each.
            let name = span_name(method, names.target(capture));
            let request_id = Text::<24>::request_id(id);
            let client_address = conn.map(|c| Text::<46>::ip(c.peer.ip()));
            let server_address = conn.map(|c| Text::<46>::ip(c.local.ip()));
            // The span starts when the duration does: one clock read.
            let start = || {
                super::propagation::start_span(meta, || {
                    tracing::info_span!(
                    target: "snodo::server",
                    "mcp.server",
                    otel.name = name.as_ref().map_or(method, Text::as_str),
                    otel.kind = "server",
                    otel.status_code = Empty,
                    otel.status_description = Empty,
                    mcp.method.name = method,
                    mcp.protocol.version = version,
                    mcp.session.id = session,
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
                    network.transport = network.transport,
                    network.protocol.name = network.transport.filter(|t| *t == "tcp").map(|_| "http"),
                    network.protocol.version = network.http_version,
                    client.address = client_address.as_ref().map(Text::as_str),
                    client.port = conn.map(|c| i64::from(c.peer.port())),
                    server.address = server_address.as_ref().map(Text::as_str),
                    server.port = conn.map(|c| i64::from(c.local.port())),
                    )
                })
            };
            super::clock::offer(started, start)
        } else {
            Span::none()
        };
        let mut measure =
            Measure::start(started, method, version, &names, network.transport, metrics);
        if let Some(v) = network.http_version {
            measure.http_version(v);
        }
        Self {
            span,
            id: id.clone(),
            detail: Some(Box::new(Detail {
                measure,
                outcome: std::sync::Mutex::new(Outcome::Open),
                capture_results: capture.results,
            })),
            _active: active,
        }
    }

    /// The request's span, for instrumenting its future.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// The request was answered with a result object.
    pub(crate) fn result(&self, result: &Map<String, Value>) {
        self.answered(Outcome::of_result(result), result);
    }

    /// The request was answered with a tool's result.
    pub(crate) fn tool_result(&self, result: &crate::tool::ToolResult) {
        let outcome = if result.is_error() {
            Outcome::ToolError
        } else {
            Outcome::Ok
        };
        self.answered(outcome, result);
    }

    /// Records a result's outcome, and its JSON text when results are
    /// captured.
    fn answered(&self, outcome: Outcome, result: &impl serde::Serialize) {
        if let Some(d) = &self.detail {
            d.set(outcome);
            if d.capture_results && !self.span.is_disabled() {
                let text = serde_json::to_string(result).unwrap_or_default();
                self.span.record(attr::GEN_AI_TOOL_CALL_RESULT, text);
            }
        }
    }

    /// The request was answered with something other than a result object
    /// (an empty result, an encoded page, the end of a listen stream).
    pub(crate) fn ok(&self) {
        if let Some(d) = &self.detail {
            d.set(Outcome::Ok);
        }
    }

    /// The request failed with a JSON-RPC error.
    pub(crate) fn error(&self, error: &Error) {
        self.span.in_scope(|| log_error(&self.id, error));
        if let Some(d) = &self.detail {
            d.set(Outcome::Rpc {
                code: error.code(),
                message: error.message().to_owned(),
            });
        }
    }
}

impl Detail {
    fn set(&self, outcome: Outcome) {
        *self.outcome.lock().unwrap_or_else(|p| p.into_inner()) = outcome;
    }
}

impl Drop for ServerCall {
    fn drop(&mut self) {
        let Some(d) = &mut self.detail else { return };
        let outcome = d.outcome.get_mut().unwrap_or_else(|p| p.into_inner());
        // The duration ends when the span does: one clock read.
        let end = Instant::now();
        d.measure.end(&self.span, outcome, Side::Server, end);
        let span = std::mem::replace(&mut self.span, Span::none());
        super::clock::offer(end, || drop(span));
    }
}

/// Logs what a failed request teaches an operator: the internal cause of an
/// error (never sent to the peer) at error level, a refused request at
/// debug level. A limit reached (an error whose data says `retryable`) is a
/// refusal here: its summary is [`refusals`](super::refusals)'.
fn log_error(id: &RequestId, error: &Error) {
    let retryable = error
        .data()
        .and_then(|d| d.get("retryable"))
        .is_some_and(|r| r == true);
    if retryable {
        tracing::debug!(
            target: "snodo::server",
            request_id = %id,
            code = error.code(),
            "request refused: {}", error.message()
        );
    } else if let Some(cause) = error.cause() {
        tracing::error!(
            target: "snodo::server",
            request_id = %id,
            code = error.code(),
            cause = %crate::error::chain(cause),
            "{}", error.message()
        );
    } else if error.code() == crate::error::code::INTERNAL_ERROR {
        tracing::warn!(
            target: "snodo::server",
            request_id = %id,
            code = error.code(),
            "{}", error.message()
        );
    } else {
        tracing::debug!(
            target: "snodo::server",
            request_id = %id,
            code = error.code(),
            "request refused: {}", error.message()
        );
    }
}

/// The network attributes of a transport.
pub(crate) struct Network {
    transport: Option<&'static str>,
    http_version: Option<&'static str>,
    connection: Option<ConnectionInfo>,
}

impl Network {
    pub(crate) fn of(transport: &TransportInfo) -> Self {
        match transport.kind {
            TransportKind::Stdio => Network {
                transport: Some("pipe"),
                http_version: None,
                connection: None,
            },
            TransportKind::Http => {
                let connection = transport.extensions.get::<ConnectionInfo>().copied();
                Network {
                    transport: Some("tcp"),
                    http_version: connection.map(|c| http_version(c.http_version)),
                    connection,
                }
            }
            _ => Network {
                transport: None,
                http_version: None,
                connection: None,
            },
        }
    }
}

/// The `network.protocol.version` of an HTTP version.
pub(crate) fn http_version(v: http::Version) -> &'static str {
    match v {
        http::Version::HTTP_09 => "0.9",
        http::Version::HTTP_10 => "1.0",
        http::Version::HTTP_2 => "2",
        http::Version::HTTP_3 => "3",
        _ => "1.1",
    }
}
