//! A span's W3C trace context (`traceparent`, `tracestate`) and the
//! `baggage` its trace carries, and the hook
//! through which a `tracing` layer that keeps one (the OTLP exporter's)
//! lets the rest of the crate read and set it.

use tracing::{Dispatch, Id};

/// The identity of a span in a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// The trace's id (never all zeros).
    pub trace_id: [u8; 16],
    /// The span's id (never all zeros).
    pub span_id: [u8; 8],
    /// Whether the trace is sampled (the `sampled` trace flag).
    pub sampled: bool,
    /// The vendors' `tracestate`, as received.
    pub trace_state: Option<Box<str>>,
    /// The W3C `baggage` the trace carries, as received (passed on to the
    /// requests made inside the span, never recorded).
    pub baggage: Option<Box<str>>,
}

/// The most of a `tracestate` kept (the W3C limit is 32 members of at most
/// 256 characters; longer values are dropped whole).
const MAX_TRACE_STATE: usize = 8_192;

/// The most of a `baggage` kept (the W3C limit); longer values are dropped
/// whole.
const MAX_BAGGAGE: usize = 8_192;

/// A header value kept as received: trimmed, ASCII, not empty, at most
/// `max` bytes.
fn header(value: Option<&str>, max: usize) -> Option<Box<str>> {
    value
        .map(str::trim)
        .filter(|s| !s.is_empty() && s.len() <= max && s.is_ascii())
        .map(Into::into)
}

impl TraceContext {
    /// Reads a `traceparent` (and its `tracestate`); `None` when the header
    /// is malformed, as the W3C rules define it.
    pub fn parse(
        traceparent: &str,
        tracestate: Option<&str>,
        baggage: Option<&str>,
    ) -> Option<Self> {
        let t = traceparent.trim().as_bytes();
        if t.len() < 55 || t[2] != b'-' || t[35] != b'-' || t[52] != b'-' {
            return None;
        }
        let version = hex_byte(&t[0..2])?;
        if version == 0xff || (version == 0 && t.len() != 55) || (t.len() > 55 && t[55] != b'-') {
            return None;
        }
        let mut trace_id = [0u8; 16];
        for (i, b) in trace_id.iter_mut().enumerate() {
            *b = hex_byte(&t[3 + 2 * i..5 + 2 * i])?;
        }
        let mut span_id = [0u8; 8];
        for (i, b) in span_id.iter_mut().enumerate() {
            *b = hex_byte(&t[36 + 2 * i..38 + 2 * i])?;
        }
        let flags = hex_byte(&t[53..55])?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(TraceContext {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
            trace_state: header(tracestate, MAX_TRACE_STATE),
            baggage: header(baggage, MAX_BAGGAGE),
        })
    }

    /// The `traceparent` header naming this span.
    pub fn traceparent(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::with_capacity(55);
        out.push_str("00-");
        for b in self.trace_id {
            let _ = write!(out, "{b:02x}");
        }
        out.push('-');
        for b in self.span_id {
            let _ = write!(out, "{b:02x}");
        }
        out.push_str(if self.sampled { "-01" } else { "-00" });
        out
    }
}

/// Two lowercase hex digits.
fn hex_byte(two: &[u8]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    Some(digit(two[0])? << 4 | digit(two[1])?)
}

/// Found with [`Dispatch::downcast_ref`] in a subscriber whose layer keeps
/// trace contexts: reads a span's context. Such a layer answers its
/// `downcast_raw` for this type with a hook of its own, so that the client
/// (and [`inject`](super::export::inject)) can write the context of the span
/// a request is sent in.
#[derive(Debug, Clone, Copy)]
pub struct ContextHook {
    /// The context of the span `id`, as the layer keeps it.
    pub get: fn(&Dispatch, &Id) -> Option<TraceContext>,
}

impl ContextHook {
    /// The context of `span`, when a layer keeps one.
    pub fn context_of(span: &tracing::Span) -> Option<TraceContext> {
        span.with_subscriber(|(id, dispatch)| {
            dispatch
                .downcast_ref::<ContextHook>()
                .and_then(|hook| (hook.get)(dispatch, id))
        })
        .flatten()
    }
}

/// The remote parent of the span about to be created on this thread,
/// handed to the layer that keeps contexts when it sees the span.
pub(crate) mod remote {
    use std::cell::RefCell;

    use super::TraceContext;

    thread_local! {
        static PENDING: RefCell<Option<TraceContext>> = const { RefCell::new(None) };
    }

    /// Runs `make` (which creates one span) with `parent` waiting for the
    /// layer; whether a layer took it.
    pub(crate) fn with_parent<R>(parent: TraceContext, make: impl FnOnce() -> R) -> (R, bool) {
        PENDING.with(|p| *p.borrow_mut() = Some(parent));
        let made = make();
        let left = PENDING.with(|p| p.borrow_mut().take());
        (made, left.is_none())
    }

    /// The remote parent waiting for the span being created, taken.
    pub fn take() -> Option<TraceContext> {
        PENDING
            .try_with(|p| p.try_borrow_mut().ok()?.take())
            .ok()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn reads_and_writes_a_traceparent() {
        let cx = TraceContext::parse(
            VALID,
            Some("rojo=00f067aa0ba902b7"),
            Some(" userId=alice,region=eu;p=1 "),
        )
        .unwrap();
        assert!(cx.sampled);
        assert_eq!(cx.baggage.as_deref(), Some("userId=alice,region=eu;p=1"));
        assert_eq!(cx.span_id, [0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31]);
        assert_eq!(cx.trace_state.as_deref(), Some("rojo=00f067aa0ba902b7"));
        assert_eq!(cx.traceparent(), VALID);
    }

    #[test]
    fn refuses_what_the_w3c_rules_refuse() {
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            "0x-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333é-1",
        ] {
            assert!(TraceContext::parse(bad, None, None).is_none(), "{bad:?}");
        }
        let future = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00-later";
        assert!(!TraceContext::parse(future, None, None).unwrap().sampled);
        // Vendor and baggage values past the W3C bounds, or not ASCII, are
        // dropped whole; the trace still continues.
        let long = "k=".to_string() + &"v".repeat(MAX_BAGGAGE);
        let cx = TraceContext::parse(VALID, Some(&long), Some(&long)).unwrap();
        assert_eq!((cx.trace_state, cx.baggage), (None, None));
        let cx = TraceContext::parse(VALID, Some("a=é"), Some("b=é")).unwrap();
        assert_eq!((cx.trace_state, cx.baggage), (None, None));
    }
}
