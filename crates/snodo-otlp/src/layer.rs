//! The `tracing` layer that turns spans at `INFO` and above into OTLP
//! spans: each span's attributes are encoded as they are recorded, so
//! closing it only appends its ids, times and status and queues the bytes.
//!
//! Fields named `otel.name`, `otel.kind`, `otel.status_code` and
//! `otel.status_description` set the span's name, kind and status; every
//! other field is an attribute under its own name.

use std::fmt::{self, Write as _};

use std::marker::PhantomData;
use std::sync::Arc;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record as Values};
use tracing::{Dispatch, Level, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use super::export::Spans;
use super::ids;
use super::proto::{self, AnyValue};
use snodo::telemetry::export::{ContextHook, TraceContext, offered_or_now_ns, take_remote_parent};

/// OTLP's span kinds.
const KIND_INTERNAL: u8 = 1;
const KIND_SERVER: u8 = 2;
const KIND_CLIENT: u8 = 3;
const KIND_PRODUCER: u8 = 4;
const KIND_CONSUMER: u8 = 5;
/// OTLP's status codes.
const STATUS_UNSET: u8 = 0;
const STATUS_OK: u8 = 1;
const STATUS_ERROR: u8 = 2;
/// `SpanFlags`: the parent's remoteness is known, and it is remote.
const HAS_IS_REMOTE: u32 = 0x100;
const IS_REMOTE: u32 = 0x200;

/// The most attribute bytes one span keeps; attributes past it are
/// dropped (and counted in `dropped_attributes_count`).
const MAX_ATTRIBUTE_BYTES: usize = 64 * 1024;

/// A span being recorded.
struct Record {
    cx: TraceContext,
    parent: Option<[u8; 8]>,
    remote_parent: bool,
    kind: u8,
    status: u8,
    status_message: Option<String>,
    /// Whether `otel.name` was written (as field 5) into `attrs`.
    named: bool,
    start_ns: u64,
    /// The encoded `attributes` fields (9) of the `Span` message, and its
    /// name once `otel.name` is recorded.
    attrs: Vec<u8>,
    dropped: u32,
}

impl Record {
    /// A record with no context yet (all zeros, not sampled), started now.
    fn new() -> Self {
        Record {
            cx: TraceContext {
                trace_id: [0; 16],
                span_id: [0; 8],
                sampled: false,
                trace_state: None,
                baggage: None,
            },
            parent: None,
            remote_parent: false,
            kind: KIND_INTERNAL,
            status: STATUS_UNSET,
            status_message: None,
            named: false,
            start_ns: offered_or_now_ns(),
            attrs: Vec::new(),
            dropped: 0,
        }
    }
}

/// Exports spans to the exporter's queue.
pub(crate) struct SpanLayer<S> {
    spans: Arc<Spans>,
    hook: ContextHook,
    _subscriber: PhantomData<fn(S)>,
}

impl<S> SpanLayer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    pub(crate) fn new(spans: Arc<Spans>) -> Self {
        Self {
            spans,
            hook: ContextHook { get: context::<S> },
            _subscriber: PhantomData,
        }
    }
}

impl<S> SpanLayer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    /// Records the new span's fields (when it is sampled: a span not
    /// exported keeps only its context, for its children) and keeps it.
    fn start(
        &self,
        mut record: Record,
        attrs: &Attributes<'_>,
        span: &tracing_subscriber::registry::SpanRef<'_, S>,
    ) {
        if record.cx.sampled {
            record.attrs = buffers::take();
            attrs.record(&mut Visitor(&mut record));
        }
        span.extensions_mut().insert(record);
    }
}

fn context<S>(dispatch: &Dispatch, id: &Id) -> Option<TraceContext>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let subscriber = dispatch.downcast_ref::<S>()?;
    let span = subscriber.span(id)?;
    let ext = span.extensions();
    ext.get::<Record>().map(|r| r.cx.clone())
}

impl<S> tracing_subscriber::Layer<S> for SpanLayer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if *attrs.metadata().level() > Level::INFO {
            return;
        }
        // A remote parent handed over for this span wins over a local one.
        let remote = take_remote_parent();
        let Some(span) = ctx.span(id) else { return };
        if let Some(remote) = remote {
            let record = Record {
                cx: TraceContext {
                    trace_id: remote.trace_id,
                    span_id: ids::span_id(),
                    sampled: self
                        .spans
                        .sampler
                        .sampled(&remote.trace_id, Some(remote.sampled)),
                    trace_state: remote.trace_state,
                    baggage: remote.baggage,
                },
                parent: Some(remote.span_id),
                remote_parent: true,
                ..Record::new()
            };
            return self.start(record, attrs, &span);
        }
        let parent = match attrs.parent() {
            Some(p) => ctx.span(p),
            None if attrs.is_contextual() => ctx.lookup_current(),
            None => None,
        };
        let inherited = parent.and_then(|p| {
            p.extensions().get::<Record>().map(|r| {
                (
                    r.cx.trace_id,
                    r.cx.span_id,
                    r.cx.sampled,
                    r.cx.trace_state.clone(),
                    r.cx.baggage.clone(),
                )
            })
        });
        let (trace_id, parent_id, parent_sampled, trace_state, baggage) = match inherited {
            Some((t, s, sampled, state, baggage)) => (t, Some(s), Some(sampled), state, baggage),
            None => (ids::trace_id(), None, None, None, None),
        };
        let record = Record {
            cx: TraceContext {
                trace_id,
                span_id: ids::span_id(),
                sampled: self.spans.sampler.sampled(&trace_id, parent_sampled),
                trace_state,
                baggage,
            },
            parent: parent_id,
            ..Record::new()
        };
        self.start(record, attrs, &span);
    }

    fn on_record(&self, id: &Id, values: &Values<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut ext = span.extensions_mut();
        if let Some(record) = ext.get_mut::<Record>().filter(|r| r.cx.sampled) {
            values.record(&mut Visitor(record));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(r) = span.extensions_mut().remove::<Record>() else {
            return;
        };
        if !r.cx.sampled {
            return;
        }
        let end = offered_or_now_ns();
        let mut buf = r.attrs;
        proto::bytes(&mut buf, 1, &r.cx.trace_id);
        proto::bytes(&mut buf, 2, &r.cx.span_id);
        if let Some(state) = &r.cx.trace_state {
            proto::string(&mut buf, 3, state);
        }
        if let Some(parent) = &r.parent {
            proto::bytes(&mut buf, 4, parent);
        }
        if !r.named {
            proto::string(&mut buf, 5, span.name());
        }
        proto::uint(&mut buf, 6, u64::from(r.kind));
        proto::fixed64(&mut buf, 7, r.start_ns);
        proto::fixed64(&mut buf, 8, end.max(r.start_ns));
        if r.dropped > 0 {
            proto::uint(&mut buf, 10, u64::from(r.dropped));
        }
        if r.status != STATUS_UNSET {
            proto::message(&mut buf, 15, |b| {
                if let Some(m) = &r.status_message {
                    proto::string(b, 2, m);
                }
                proto::uint(b, 3, u64::from(r.status));
            });
        }
        let remote = if r.remote_parent { IS_REMOTE } else { 0 };
        proto::fixed32(&mut buf, 16, 1 | HAS_IS_REMOTE | remote);
        if let Some(spare) = self.spans.push(buf) {
            buffers::give(spare);
        }
    }

    // SAFETY: the contract of `downcast_raw` is that the pointer returned
    // for a `TypeId` points to a live value of that type; it is `self` for
    // `Self` and `self.hook` for `ContextHook`, both borrowed from `self`.
    #[allow(unsafe_code)]
    unsafe fn downcast_raw(&self, id: std::any::TypeId) -> Option<*const ()> {
        if id == std::any::TypeId::of::<Self>() {
            Some(self as *const Self as *const ())
        } else if id == std::any::TypeId::of::<ContextHook>() {
            Some(&self.hook as *const ContextHook as *const ())
        } else {
            None
        }
    }
}

/// Writes fields into a [`Record`].
struct Visitor<'a>(&'a mut Record);

impl Visitor<'_> {
    /// Whether one more attribute fits.
    fn room(&mut self) -> bool {
        if self.0.attrs.len() < MAX_ATTRIBUTE_BYTES {
            true
        } else {
            self.0.dropped += 1;
            false
        }
    }

    fn special(&mut self, field: &Field, text: &str) -> bool {
        let name = field.name();
        if !name.starts_with("otel.") {
            return false;
        }
        let r = &mut *self.0;
        match name {
            "otel.name" => {
                if !r.named {
                    proto::string(&mut r.attrs, 5, text);
                    r.named = true;
                }
            }
            "otel.kind" => {
                r.kind = match text {
                    "server" | "SERVER" => KIND_SERVER,
                    "client" | "CLIENT" => KIND_CLIENT,
                    "producer" | "PRODUCER" => KIND_PRODUCER,
                    "consumer" | "CONSUMER" => KIND_CONSUMER,
                    _ => KIND_INTERNAL,
                }
            }
            "otel.status_code" => {
                r.status = match text {
                    "error" | "ERROR" => STATUS_ERROR,
                    "ok" | "OK" => STATUS_OK,
                    _ => STATUS_UNSET,
                }
            }
            "otel.status_description" => r.status_message = Some(text.to_owned()),
            _ => return false,
        }
        true
    }

    fn value(&mut self, field: &Field, value: AnyValue<'_>) {
        if self.room() {
            proto::key_value(&mut self.0.attrs, 9, field.name(), value);
        }
    }
}

thread_local! {
    /// Where `record_debug` formats a value.
    static SCRATCH: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.special(field, value) {
            self.value(field, AnyValue::Str(value));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // Formatted once into this thread's scratch text, then written
        // like any other string.
        SCRATCH.with(|scratch| {
            let Ok(mut text) = scratch.try_borrow_mut() else {
                // Formatting the value recorded a span: no scratch for it.
                return self.record_str(field, &format!("{value:?}"));
            };
            text.clear();
            let _ = write!(text, "{value:?}");
            self.record_str(field, &text);
            if text.capacity() > 4096 {
                *text = String::new();
            }
        });
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.value(field, AnyValue::Int(value));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match i64::try_from(value) {
            Ok(v) => self.value(field, AnyValue::Int(v)),
            Err(_) => self.value(field, AnyValue::Str(&value.to_string())),
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.value(field, AnyValue::Bool(value));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.value(field, AnyValue::Double(value));
    }
}

/// The spans' buffers, kept per thread for the next span: a closed span's
/// buffer goes to the export queue, and the queue hands back one the export
/// thread emptied.
mod buffers {
    use std::cell::RefCell;

    /// A buffer's starting size: a request span with the conventions'
    /// attributes takes about 400 bytes.
    const START: usize = 512;
    /// The most buffers a thread keeps, and the largest it keeps.
    const KEEP: usize = 32;
    const KEEP_BYTES: usize = 8 * 1024;

    thread_local! {
        static FREE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    }

    pub(super) fn take() -> Vec<u8> {
        FREE.with(|f| f.borrow_mut().pop())
            .unwrap_or_else(|| Vec::with_capacity(START))
    }

    pub(super) fn give(mut buf: Vec<u8>) {
        if buf.capacity() > KEEP_BYTES {
            return;
        }
        buf.clear();
        FREE.with(|f| {
            let mut f = f.borrow_mut();
            if f.len() < KEEP {
                f.push(buf);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use opentelemetry_proto::tonic::trace::v1::ScopeSpans;
    use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
    use prost::Message as _;
    use serde_json::{Map, Value, json};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::registry::Registry;

    use super::*;
    use snodo::telemetry::export::{inject, start_span};

    use crate::sampler::{self, Sampler};

    fn recorded(sampler: Sampler, f: impl FnOnce()) -> ScopeSpans {
        let spans = Spans::unattended(64, sampler);
        let layer = SpanLayer::<Registry>::new(spans.clone());
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), f);
        ScopeSpans::decode(spans.take_open().as_slice()).unwrap()
    }

    #[test]
    fn fields_become_the_name_kind_status_and_attributes() {
        let out = recorded(Sampler::AlwaysOn, || {
            let outer = tracing::info_span!(
                "outer",
                otel.name = "tools/call add",
                otel.kind = "server",
                otel.status_code = tracing::field::Empty,
                n = 7_i64,
                big = u64::MAX,
                ok = true,
                ratio = 0.5,
                shown = ?("a", 1),
            );
            outer.in_scope(|| {
                let _inner = tracing::info_span!("inner");
                let _skipped = tracing::debug_span!("skipped");
            });
            outer.record("otel.status_code", "error");
        });
        assert_eq!(out.spans.len(), 2, "the DEBUG span is not exported");
        let (inner, outer) = (&out.spans[0], &out.spans[1]);
        assert_eq!(outer.name, "tools/call add");
        assert_eq!(outer.kind, SpanKind::Server as i32);
        assert_eq!(outer.status.as_ref().unwrap().code, 2);
        assert_eq!(inner.name, "inner");
        assert_eq!(inner.kind, SpanKind::Internal as i32);
        assert_eq!(inner.trace_id, outer.trace_id);
        assert_eq!(inner.parent_span_id, outer.span_id);
        assert!(outer.parent_span_id.is_empty());
        assert!(outer.end_time_unix_nano >= outer.start_time_unix_nano);
        let value = |key: &str| {
            outer
                .attributes
                .iter()
                .find(|kv| kv.key == key)
                .and_then(|kv| kv.value.clone()?.value)
        };
        assert_eq!(value("n"), Some(Any::IntValue(7)));
        assert_eq!(value("big"), Some(Any::StringValue(u64::MAX.to_string())));
        assert_eq!(value("ok"), Some(Any::BoolValue(true)));
        assert_eq!(value("ratio"), Some(Any::DoubleValue(0.5)));
        assert_eq!(value("shown"), Some(Any::StringValue("(\"a\", 1)".into())));
        assert_eq!(
            value("otel.kind"),
            None,
            "the special fields are no attributes"
        );
    }

    #[test]
    fn attributes_past_the_bound_are_dropped_and_counted() {
        let big = "x".repeat(MAX_ATTRIBUTE_BYTES / 2 + 1);
        let out = recorded(Sampler::AlwaysOn, || {
            let _span = tracing::info_span!("big", a = big.as_str(), b = big.as_str(), c = "c");
        });
        let span = &out.spans[0];
        let keys: Vec<&str> = span.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(span.dropped_attributes_count, 1);
    }

    #[test]
    fn a_remote_context_continues_into_the_requests_made_inside() {
        let received = meta(json!({
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "tracestate": "rojo=00f067aa0ba902b7",
            "baggage": "userId=alice,region=eu",
        }));
        let mut sent = Map::new();
        let out = recorded(Sampler::ParentBased(sampler::Root::AlwaysOff), || {
            let server = start_span(Some(&received), || tracing::info_span!("server", n = 1));
            server.in_scope(|| {
                let client = tracing::info_span!("client");
                inject(&client, &mut sent);
            });
        });
        // Sampled because the remote parent was, though roots are not.
        assert_eq!(out.spans.len(), 2);
        let (client, server) = (&out.spans[0], &out.spans[1]);
        assert_eq!(hex(&server.trace_id), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(hex(&server.parent_span_id), "b7ad6b7169203331");
        assert_eq!(server.flags, 1 | HAS_IS_REMOTE | IS_REMOTE);
        assert_eq!(client.parent_span_id, server.span_id);
        assert_eq!(
            sent["traceparent"],
            format!(
                "00-0af7651916cd43dd8448eb211c80319c-{}-01",
                hex(&client.span_id)
            )
        );
        assert_eq!(sent["tracestate"], received["tracestate"]);
        assert_eq!(sent["baggage"], received["baggage"]);
        assert_eq!(server.trace_state, "rojo=00f067aa0ba902b7");
        let keys: Vec<&str> = server.attributes.iter().map(|kv| kv.key.as_str()).collect();
        assert!(keys == ["n"], "baggage is carried, not recorded: {keys:?}");
    }

    #[test]
    fn a_sampled_out_remote_parent_exports_nothing_but_still_propagates() {
        let received = meta(json!({
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
        }));
        let mut sent = Map::new();
        let out = recorded(Sampler::ParentBased(sampler::Root::AlwaysOn), || {
            let server = start_span(Some(&received), || tracing::info_span!("server", n = 1));
            server.in_scope(|| {
                let client = tracing::info_span!("client", n = tracing::field::Empty);
                client.record("n", 2);
                inject(&client, &mut sent);
            });
        });
        assert!(out.spans.is_empty());
        let tp = sent["traceparent"].as_str().unwrap();
        assert!(
            tp.starts_with("00-0af7651916cd43dd8448eb211c80319c-"),
            "{tp}"
        );
        assert!(tp.ends_with("-00"), "{tp}");
    }

    /// A request's `_meta` object.
    fn meta(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn sampled_out_spans_are_not_queued() {
        let out = recorded(Sampler::AlwaysOff, || {
            let _span = tracing::info_span!("nothing");
        });
        assert!(out.spans.is_empty());
    }
}
