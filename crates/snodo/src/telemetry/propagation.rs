//! Trace context across MCP (SEP-414): `traceparent`, `tracestate` and
//! `baggage` in `params._meta`, read by the server on every revision and
//! written by the client.
//!
//! The OTLP exporter's layer keeps W3C trace contexts itself: the server's
//! span continues the remote trace, the client writes its span's
//! `traceparent` and the `tracestate` and `baggage` of the trace it
//! continues. Under another subscriber, with the `otel` feature, the global
//! OpenTelemetry text-map propagator reads and writes all three through
//! `tracing-opentelemetry`; otherwise nothing is read or written.

use serde_json::{Map, Value};

use super::context::{ContextHook, TraceContext, remote};

/// Creates a request's span with `make`, continuing the trace named in
/// `meta`. A layer that keeps trace contexts takes the remote parent as the
/// span is created, so that it samples the span from the start (a span it
/// does not export records nothing); otherwise (the `otel` feature) the
/// global propagator sets the parent on the new span.
pub fn start_span(
    meta: Option<&Map<String, Value>>,
    make: impl FnOnce() -> tracing::Span,
) -> tracing::Span {
    // Without the global propagator only a `traceparent` continues a trace.
    #[cfg(feature = "otel")]
    let carries = |m: &Map<String, Value>| {
        super::attributes::TRACE_CONTEXT_KEYS
            .iter()
            .any(|k| m.contains_key(*k))
    };
    #[cfg(not(feature = "otel"))]
    let carries = |m: &Map<String, Value>| m.contains_key("traceparent");
    let Some(meta) = meta.filter(|m| carries(m)) else {
        return make();
    };
    let parent = meta
        .get("traceparent")
        .and_then(Value::as_str)
        .and_then(|tp| {
            let text = |key: &str| meta.get(key).and_then(Value::as_str);
            TraceContext::parse(tp, text("tracestate"), text("baggage"))
        });
    let (span, taken) = match parent {
        Some(parent) => remote::with_parent(parent, make),
        None => (make(), false),
    };
    #[cfg(feature = "otel")]
    if !taken && !span.is_disabled() {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let parent =
            opentelemetry::global::get_text_map_propagator(|p| p.extract(&MetaCarrier(meta)));
        let _ = span.set_parent(parent);
    }
    #[cfg(not(feature = "otel"))]
    let _ = taken;
    span
}

/// Writes `span`'s trace context into `meta` (a request's `params._meta`):
/// `traceparent`, and the `tracestate` and `baggage` of the trace it
/// continues.
pub fn inject(span: &tracing::Span, meta: &mut Map<String, Value>) {
    if span.is_disabled() {
        return;
    }
    if let Some(cx) = ContextHook::context_of(span) {
        meta.insert("traceparent".into(), Value::String(cx.traceparent()));
        if let Some(state) = &cx.trace_state {
            meta.insert("tracestate".into(), Value::String(state.to_string()));
        }
        if let Some(baggage) = &cx.baggage {
            meta.insert("baggage".into(), Value::String(baggage.to_string()));
        }
    } else {
        #[cfg(feature = "otel")]
        inject_global(span, meta);
    }
}

/// Writes `span`'s context through the global OpenTelemetry propagator.
#[cfg(feature = "otel")]
fn inject_global(span: &tracing::Span, meta: &mut Map<String, Value>) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let cx = span.context();
    if !cx.span().span_context().is_valid() {
        return;
    }
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut MetaSink(meta)));
}

/// `_meta` read as a text-map carrier: string members only, and only the
/// trace-context keys (a request's other `_meta` members are not headers).
#[cfg(feature = "otel")]
struct MetaCarrier<'a>(&'a Map<String, Value>);

#[cfg(feature = "otel")]
impl opentelemetry::propagation::Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        if !super::attributes::TRACE_CONTEXT_KEYS.contains(&key) {
            return None;
        }
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        super::attributes::TRACE_CONTEXT_KEYS
            .iter()
            .copied()
            .filter(|k| self.0.get(*k).is_some_and(Value::is_string))
            .collect()
    }
}

/// `_meta` written as a text-map carrier.
#[cfg(feature = "otel")]
struct MetaSink<'a>(&'a mut Map<String, Value>);

#[cfg(feature = "otel")]
impl opentelemetry::propagation::Injector for MetaSink<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

#[cfg(all(test, feature = "otel"))]
mod tests {
    use super::*;
    use opentelemetry::propagation::Extractor;
    use serde_json::json;

    #[test]
    fn reads_only_the_trace_context_keys() {
        let meta = json!({
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "progressToken": "p1",
            "baggage": 7
        });
        let carrier = MetaCarrier(meta.as_object().unwrap());
        assert_eq!(
            carrier.get("traceparent"),
            Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        );
        assert_eq!(carrier.get("progressToken"), None);
        assert_eq!(carrier.get("baggage"), None, "not a string");
        assert_eq!(carrier.keys(), vec!["traceparent"]);
    }
}
