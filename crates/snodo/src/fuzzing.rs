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

/// The keyring the bus and record entry points seal and open with: one key,
/// `fuzz`, of 32 bytes of 7.
fn fuzz_keys() -> Vec<crate::keyring::Key> {
    vec![crate::keyring::Key::new("fuzz", [7u8; 32])]
}

/// Seals `json` as a hub seals an envelope's JSON with the fuzzing key: the
/// bytes a hub would publish.
///
/// ```
/// let sealed = snodo::fuzzing::seal_envelope(br#"{"o":"n","s":1,"t":5,"e":{"k":"tools"}}"#);
/// assert!(snodo::fuzzing::open_envelope(&sealed).is_some());
/// assert!(snodo::fuzzing::open_envelope(&sealed[1..]).is_none());
/// ```
pub fn seal_envelope(json: &[u8]) -> Vec<u8> {
    use crate::keyring::tag::{self, Purpose};
    let mut out = b"b1.".to_vec();
    out.extend_from_slice(&tag::seal(&fuzz_keys(), Purpose::Envelope, &[], json));
    out
}

/// What a hub makes of `bytes` from the bus, opened with the fuzzing key:
/// the envelope sealed again (same origin, number, time and content) when
/// it opens, `None` when it is refused.
pub fn open_envelope(bytes: &[u8]) -> Option<Vec<u8>> {
    use crate::events::envelope;
    let keys = fuzz_keys();
    let opened = envelope::decode(&keys, bytes).ok()?;
    envelope::encode(&keys, &opened.origin, opened.seq, opened.time, &opened.body)
        .map(|b| b.to_vec())
}

/// Seals the JSON of a part (`h` head, `s` state) of the record of the
/// session `id` with the fuzzing key, as a node stores it.
pub fn seal_record_part(id: &str, part: &str, json: &[u8]) -> Vec<u8> {
    crate::server::legacy::seal_record_part(&fuzz_keys(), id, part, json)
}

/// The stamp that makes `uri` a subscription of the record of the session
/// `id`, with the fuzzing key.
pub fn seal_record_member(id: &str, uri: &str) -> Vec<u8> {
    crate::server::legacy::seal_record_member(&fuzz_keys(), id, uri)
}

/// What a node makes of a stored record of the session `id` (its head, its
/// state, its members' names and values), opened with the fuzzing key: the
/// record when every part opens, `None` when it is refused.
///
/// ```
/// use snodo::fuzzing::{open_record, seal_record_part};
/// let head = seal_record_part("s", "h", br#"{"r":"2025-11-25","c":{}}"#);
/// let state = seal_record_part("s", "s", br#"{"n":true}"#);
/// assert!(open_record("s", &head, &state, &[]).is_some_and(|r| r.initialized));
/// assert!(open_record("t", &head, &state, &[]).is_none());
/// ```
pub fn open_record(
    id: &str,
    head: &[u8],
    state: &[u8],
    members: &[(String, Vec<u8>)],
) -> Option<crate::server::legacy::SessionRecord> {
    crate::server::legacy::open_stored_record(&fuzz_keys(), id, head, state, members)
}
