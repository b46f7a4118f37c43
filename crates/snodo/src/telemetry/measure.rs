//! What both sides do when a request's observation ends: the outcome on its
//! span, its duration in the side's histogram.

use std::time::Instant;

use tracing::Span;

use super::attributes as attr;
use super::names::Names;
use super::outcome::Outcome;

/// Which side observed the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The server that answered it.
    Server,
    /// The client that sent it.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    Client,
}

/// A request's timer and the attributes its duration is recorded with.
pub(crate) struct Measure {
    start: Instant,
    #[cfg(feature = "otel")]
    attrs: Vec<opentelemetry::KeyValue>,
}

impl Measure {
    /// Starts the timer. With `metrics`, the attributes both sides share
    /// are made now, from closed sets where the client could make them up.
    #[cfg_attr(not(feature = "otel"), allow(unused_variables))]
    pub(crate) fn start(
        method: &str,
        version: &str,
        names: &Names<'_>,
        transport: Option<&'static str>,
        metrics: bool,
    ) -> Self {
        #[cfg(feature = "otel")]
        let attrs = if metrics {
            common_attributes(method, version, names, transport)
        } else {
            Vec::new()
        };
        Self {
            start: Instant::now(),
            #[cfg(feature = "otel")]
            attrs,
        }
    }

    /// Adds a side's own metric attribute.
    #[cfg(feature = "otel")]
    pub(crate) fn push(&mut self, kv: opentelemetry::KeyValue) {
        if !self.attrs.is_empty() {
            self.attrs.push(kv);
        }
    }

    /// Records `outcome` on `span` and the duration in `side`'s histogram.
    pub(crate) fn end(self, span: &Span, outcome: &Outcome, side: Side) {
        let error_type = outcome.error_type(side == Side::Server);
        let status = outcome.status_code();
        if !span.is_disabled() {
            if let Some(kind) = &error_type {
                span.record(attr::ERROR_TYPE, kind.as_str());
                span.record("otel.status_code", "error");
                if let Outcome::Rpc { message, .. } = outcome {
                    span.record("otel.status_description", message.as_str());
                }
            }
            if let Some(code) = status {
                span.record(attr::RPC_RESPONSE_STATUS_CODE, code.to_string());
            }
        }
        #[cfg(feature = "otel")]
        if let Some(i) = super::metrics::instruments() {
            let mut attrs = self.attrs;
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
            let histogram = match side {
                Side::Server => &i.server_duration,
                Side::Client => &i.client_duration,
            };
            histogram.record(self.start.elapsed().as_secs_f64(), &attrs);
        }
        #[cfg(not(feature = "otel"))]
        let _ = (error_type, status, self.start);
    }
}

/// The metric attributes both sides record.
#[cfg(feature = "otel")]
fn common_attributes(
    method: &str,
    version: &str,
    names: &Names<'_>,
    transport: Option<&'static str>,
) -> Vec<opentelemetry::KeyValue> {
    use crate::protocol::{Method, Revision};
    use opentelemetry::KeyValue;
    let mut attrs = Vec::with_capacity(10);
    attrs.push(KeyValue::new(
        attr::MCP_METHOD_NAME,
        closed_set(method, |m| Method::parse(m).map(Method::as_str)),
    ));
    if !version.is_empty() {
        attrs.push(KeyValue::new(
            attr::MCP_PROTOCOL_VERSION,
            closed_set(version, |v| Revision::parse(v).map(Revision::as_str)),
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
    if let Some(t) = transport {
        attrs.push(KeyValue::new(attr::NETWORK_TRANSPORT, t));
        if t == "tcp" {
            attrs.push(KeyValue::new(attr::NETWORK_PROTOCOL_NAME, "http"));
        }
    }
    attrs
}

/// A metric attribute value from a closed set: what `known` names, else
/// `_OTHER` (a method or revision the client made up must not open a new
/// series).
#[cfg(feature = "otel")]
fn closed_set(text: &str, known: impl Fn(&str) -> Option<&'static str>) -> opentelemetry::Value {
    opentelemetry::Value::from(known(text).unwrap_or("_OTHER"))
}
