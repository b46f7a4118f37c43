//! The client's `text/event-stream` parser: any body gives events within the
//! bound or flags an overflow, and how the body is cut into chunks never
//! changes what it makes of it; an `endpoint` event (HTTP+SSE, 2024-11-05)
//! never resolves off the stream's origin. Input: a byte giving the chunk size, then
//! the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::fuzzing::{sse_endpoint, sse_events};

const MAX_EVENT: usize = 512;
const STREAM: &str = "http://127.0.0.1:8000/app/sse";

fuzz_target!(|data: &[u8]| {
    let Some((&size, body)) = data.split_first() else {
        return;
    };
    let whole = sse_events(&[body], MAX_EVENT);
    let chunked: Vec<&[u8]> = body.chunks(usize::from(size).max(1)).collect();
    assert_eq!(sse_events(&chunked, MAX_EVENT), whole, "chunks of {size}");
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(sse_events(&bytes, MAX_EVENT), whole, "byte by byte");
    for (event, data, _) in &whole.events {
        if event.as_deref() == Some("endpoint")
            && let Some(endpoint) = sse_endpoint(STREAM, data.trim())
        {
            assert!(
                endpoint.starts_with("http://127.0.0.1:8000/"),
                "{data:?} resolved to {endpoint}"
            );
        }
        // The bound counts bytes as they arrive; invalid UTF-8 becomes U+FFFD
        // (three bytes for one) in the text handed on.
        assert!(data.len() <= 3 * MAX_EVENT, "an event past the bound");
    }
});
