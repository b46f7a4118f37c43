//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`): the
//! decoders of untrusted bytes that have no public home of their own.
//!
//! Everything else the targets drive is public API (`wire::decode`,
//! `protocol::headers::decode_value`, `UriTemplate`, the validators, a
//! [`Server`](crate::Server) and its HTTP service). This module is not a
//! stable API: it exists so that the private parsers can be fuzzed as they
//! are, not as a copy.

/// What the client's `text/event-stream` parser made of a body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseOutcome {
    /// Every dispatched event: its `event:` field, its joined `data:` lines
    /// and its `id:`, in order.
    pub events: Vec<(Option<String>, String, Option<String>)>,
    /// The last event id seen (what `Last-Event-ID` would carry).
    pub last_id: Option<String>,
    /// The last `retry:` value, in milliseconds.
    pub retry_ms: Option<u64>,
    /// Whether an event grew past the bound (the client drops the stream).
    pub overflow: bool,
}

/// Feeds `chunks` in order to the client's SSE parser, bounded at
/// `max_event` bytes an event, as the HTTP client does with a response body.
///
/// ```
/// let out = snodo::fuzzing::sse_events(&[b"id: 1\ndata: {}\n", b"\n"], 1024);
/// assert_eq!(out.events, vec![(None, "{}".to_string(), Some("1".to_string()))]);
/// assert_eq!(out.last_id.as_deref(), Some("1"));
/// ```
#[cfg(feature = "client")]
pub fn sse_events(chunks: &[&[u8]], max_event: usize) -> SseOutcome {
    let mut parser = crate::client::transport::sse::Parser::new(max_event);
    let mut events = Vec::new();
    for chunk in chunks {
        for event in parser.push(chunk) {
            events.push((event.event, event.data, event.id));
        }
    }
    SseOutcome {
        events,
        last_id: parser.last_id,
        retry_ms: parser.retry_ms,
        overflow: parser.overflow,
    }
}
