//! Bus envelopes, as a hub opens what the bus brings: bytes nobody sealed
//! never open, and whatever JSON is sealed opens to an envelope that opens
//! again to itself (or is refused), never a panic. Input: a mode byte, then
//! the bytes as they arrive (even) or the JSON to seal (odd).
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::fuzzing::{open_envelope, seal_envelope};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        assert!(
            open_envelope(rest).is_none(),
            "an envelope nobody sealed opened: {:?}",
            String::from_utf8_lossy(rest)
        );
        return;
    }
    let sealed = seal_envelope(rest);
    if let Some(again) = open_envelope(&sealed) {
        assert_eq!(
            open_envelope(&again).as_deref(),
            Some(&again[..]),
            "an envelope opened to something else"
        );
    }
});
