//! W3C trace context in `_meta`: a `traceparent` that is read writes out as
//! the same ids and `sampled` flag (exactly itself for a version-00 value
//! with flags 00 or 01) and reads back to itself; the `tracestate` and
//! `baggage` kept are the values trimmed, ASCII and bounded. Input: the
//! `traceparent`, `tracestate` and `baggage`, separated by `\n`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::fuzzing::trace_context;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\n');
    let traceparent = parts.next().unwrap_or_default();
    let (state, baggage) = (parts.next(), parts.next());
    let Some((again, sampled, kept_state, kept_baggage)) =
        trace_context(traceparent, state, baggage)
    else {
        return;
    };
    let read = traceparent.trim();
    assert_eq!(again.len(), 55);
    assert_eq!(
        again[3..52],
        read[3..52],
        "the ids changed: {read:?} -> {again:?}"
    );
    assert_eq!(sampled, again.ends_with("-01"));
    if read.starts_with("00-") && matches!(&read[53..55], "00" | "01") {
        assert_eq!(
            again, read,
            "a version-00 traceparent writes out as another"
        );
    }
    let (twice, sampled_twice, _, _) =
        trace_context(&again, None, None).expect("a written traceparent reads back");
    assert_eq!((twice, sampled_twice), (again, sampled));
    for (kept, given) in [(kept_state, state), (kept_baggage, baggage)] {
        if let Some(kept) = kept {
            assert_eq!(Some(kept.as_str()), given.map(str::trim));
            assert!(!kept.is_empty() && kept.is_ascii() && kept.len() <= 8192);
        }
    }
});
