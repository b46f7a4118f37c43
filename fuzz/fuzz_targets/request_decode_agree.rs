//! The two request decoders: `wire::decode` (which reads the usual request
//! member by member, and leaves the rest to the `Value` path) and the
//! `Value` path alone answer any bytes alike, at the default and at tight
//! limits: the same message, or the same error with the same id. Input: the
//! bytes of one message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::fuzzing::decode_by_value;
use snodo::model::{Limits, decode};

fuzz_target!(|data: &[u8]| {
    let tight = Limits::default().max_bytes(4096).max_depth(4).max_digits(8);
    for limits in [Limits::default(), tight] {
        let (both, by_value) = (decode(data, &limits), decode_by_value(data, &limits));
        match (&both, &by_value) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "the two paths decode differently"),
            (Err(a), Err(b)) => {
                assert_eq!(a.id, b.id, "the two paths read different ids");
                assert_eq!(a.error.code(), b.error.code());
                assert_eq!(a.error.to_string(), b.error.to_string());
            }
            _ => panic!("one path decodes, the other refuses: {both:?} / {by_value:?}"),
        }
    }
});
