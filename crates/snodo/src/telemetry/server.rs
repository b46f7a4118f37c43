//! The SERVER span and duration of one request, and the log lines about it.

use std::fmt;
use std::time::Instant;

use serde_json::{Map, Value};
use tracing::Span;
use tracing::field::Empty;

use super::Capture;
use super::attributes as attr;
use super::metrics::{Gauge, Held};
use super::outcome::Outcome;
use crate::Error;
use crate::context::{ConnectionInfo, TransportInfo, TransportKind};
use crate::wire::RequestId;

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

/// The span name `{mcp.method.name} {target}`, formatted only when a
/// subscriber wants the span.
pub(crate) struct SpanName<'a>(pub(crate) &'a str, pub(crate) Option<&'a str>);

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {}", self.0, target),
            None => f.write_str(self.0),
        }
    }
}

/// What a request names: the tool, the prompt or the resource URI.
pub(crate) struct Names<'a> {
    pub(crate) tool: Option<&'a str>,
    pub(crate) prompt: Option<&'a str>,
    pub(crate) uri: Option<&'a str>,
}

impl<'a> Names<'a> {
    pub(crate) fn of(method: &str, params: &'a Map<String, Value>) -> Self {
        let get = |key: &str| params.get(key).and_then(Value::as_str);
        match method {
            "tools/call" => Names {
                tool: get("name"),
                prompt: None,
                uri: None,
            },
            "prompts/get" => Names {
                tool: None,
                prompt: get("name"),
                uri: None,
            },
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Names {
                tool: None,
                prompt: None,
                uri: get("uri"),
            },
            _ => Names {
                tool: None,
                prompt: None,
                uri: None,
            },
        }
    }

    /// The span name's target: the tool or prompt, the URI only if opted in.
    pub(crate) fn target(&self, capture: &Capture) -> Option<&'a str> {
        self.tool
            .or(self.prompt)
            .or(self.uri.filter(|_| capture.uri_in_span_name))
    }
}

/// One request being served: its span, its timer and its outcome. Dropping
/// it ends the span and records the duration.
pub(crate) struct ServerCall {
    span: Span,
    id: RequestId,
    detail: Option<Box<Detail>>,
    _active: Held,
}

struct Detail {
    start: Instant,
    /// Set through `&self`: the call is shared with the code that answers.
    outcome: std::sync::Mutex<Outcome>,
    capture_results: bool,
    #[cfg(feature = "otel")]
    attrs: Vec<opentelemetry::KeyValue>,
}

impl ServerCall {
    /// Starts observing a request that was just decoded.
    pub(crate) fn start(
        method: &str,
        id: &RequestId,
        params: &Map<String, Value>,
        transport: &TransportInfo,
        era: Era<'_>,
        capture: &Capture,
    ) -> Self {
        let active = Gauge::ActiveRequests.hold();
        #[cfg(feature = "otel")]
        let metrics = super::metrics::instruments().is_some();
        #[cfg(not(feature = "otel"))]
        let metrics = false;
        let traced = tracing::enabled!(target: "snodo::server", tracing::Level::INFO);
        if !traced && !metrics {
            return Self {
                span: Span::none(),
                id: id.clone(),
                detail: None,
                _active: active,
            };
        }
        let meta = match params.get("_meta") {
            Some(Value::Object(m)) => Some(m),
            _ => None,
        };
        let names = Names::of(method, params);
        let version = match era {
            Era::Modern => meta
                .and_then(|m| m.get(crate::protocol::keys::PROTOCOL_VERSION))
                .and_then(Value::as_str)
                .unwrap_or(""),
            Era::Legacy { version, .. } => version,
        };
        let network = Network::of(transport);
        let span = if traced {
            // Every attribute known now is set now: a field recorded later
            // costs each layer a visit.
            let session = match era {
                Era::Legacy { session, .. } if !session.is_empty() => Some(session),
                _ => None,
            };
            let arguments = capture
                .arguments
                .then(|| params.get("arguments"))
                .flatten()
                .map(Value::to_string);
            let conn = network.connection;
            let span = tracing::info_span!(
                target: "snodo::server",
                "mcp.server",
                otel.name = %SpanName(method, names.target(capture)),
                otel.kind = "server",
                otel.status_code = Empty,
                otel.status_description = Empty,
                mcp.method.name = method,
                mcp.protocol.version = version,
                mcp.session.id = session,
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
                network.transport = network.transport,
                network.protocol.name = network.transport.filter(|t| *t == "tcp").map(|_| "http"),
                network.protocol.version = network.http_version,
                client.address = conn.map(|c| tracing::field::display(c.peer.ip())),
                client.port = conn.map(|c| i64::from(c.peer.port())),
                server.address = conn.map(|c| tracing::field::display(c.local.ip())),
                server.port = conn.map(|c| i64::from(c.local.port())),
            );
            super::propagation::continue_trace(&span, meta);
            span
        } else {
            Span::none()
        };
        Self {
            span,
            id: id.clone(),
            detail: Some(Box::new(Detail {
                start: Instant::now(),
                outcome: std::sync::Mutex::new(Outcome::Open),
                capture_results: capture.results,
                #[cfg(feature = "otel")]
                attrs: if metrics {
                    metric_attributes(method, version, &names, &network)
                } else {
                    Vec::new()
                },
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
        if let Some(d) = &self.detail {
            d.set(Outcome::of_result(result));
            if d.capture_results && !self.span.is_disabled() {
                self.span.record(
                    attr::GEN_AI_TOOL_CALL_RESULT,
                    Value::Object(result.clone()).to_string(),
                );
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
        let Some(d) = self.detail.take() else { return };
        let d = *d;
        let outcome = d.outcome.into_inner().unwrap_or_else(|p| p.into_inner());
        let error_type = outcome.error_type(true);
        let status = outcome.status_code();
        if !self.span.is_disabled() {
            if let Some(kind) = &error_type {
                self.span.record(attr::ERROR_TYPE, kind.as_str());
                self.span.record("otel.status_code", "error");
                if let Outcome::Rpc { message, .. } = &outcome {
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
            if status.is_some_and(|c| super::outcome::CLIENT_FAULT_CODES.contains(&c)) {
                // A name the client made up (an unknown tool, say) would be
                // a new series for every request: it is not recorded.
                attrs.retain(|kv| {
                    kv.key.as_str() != attr::GEN_AI_TOOL_NAME
                        && kv.key.as_str() != attr::GEN_AI_PROMPT_NAME
                });
            }
            if let Some(kind) = error_type {
                attrs.push(opentelemetry::KeyValue::new(attr::ERROR_TYPE, kind));
            }
            if let Some(code) = status {
                attrs.push(opentelemetry::KeyValue::new(
                    attr::RPC_RESPONSE_STATUS_CODE,
                    code.to_string(),
                ));
            }
            i.server_duration
                .record(d.start.elapsed().as_secs_f64(), &attrs);
        }
        #[cfg(not(feature = "otel"))]
        let _ = (error_type, status, d.start);
    }
}

/// Logs what a failed request teaches an operator: the internal cause of an
/// error (never sent to the peer) at error level, a refused request at
/// debug level.
fn log_error(id: &RequestId, error: &Error) {
    use std::error::Error as _;
    if let Some(cause) = error.source() {
        tracing::error!(
            target: "snodo::server",
            request_id = %id,
            code = error.code(),
            cause = %cause,
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

#[cfg(feature = "otel")]
fn metric_attributes(
    method: &str,
    version: &str,
    names: &Names<'_>,
    network: &Network,
) -> Vec<opentelemetry::KeyValue> {
    use opentelemetry::KeyValue;
    let mut attrs = Vec::with_capacity(8);
    attrs.push(KeyValue::new(
        attr::MCP_METHOD_NAME,
        static_or_owned(method, |m| {
            crate::protocol::Method::parse(m).map(crate::protocol::Method::as_str)
        }),
    ));
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
    if let Some(t) = network.transport {
        attrs.push(KeyValue::new(attr::NETWORK_TRANSPORT, t));
        if t == "tcp" {
            attrs.push(KeyValue::new(attr::NETWORK_PROTOCOL_NAME, "http"));
        }
    }
    if let Some(v) = network.http_version {
        attrs.push(KeyValue::new(attr::NETWORK_PROTOCOL_VERSION, v));
    }
    attrs
}

/// A metric attribute value from a closed set: what `known` names, else
/// `_OTHER` (a method or revision the client made up must not open a new
/// series).
#[cfg(feature = "otel")]
pub(crate) fn static_or_owned(
    text: &str,
    known: impl Fn(&str) -> Option<&'static str>,
) -> opentelemetry::Value {
    opentelemetry::Value::from(known(text).unwrap_or("_OTHER"))
}
