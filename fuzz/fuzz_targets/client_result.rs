//! The client's reading of a server's response: any bytes give a response
//! or nothing, at the default and at a tight message bound; a result that
//! reads as a value decodes to the same value when read member by member
//! (as a proxy passes it on); it never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for max in [4 * 1024 * 1024, 256] {
        if let Some((Some(value), split)) = snodo::fuzzing::client_result(data, max) {
            assert_eq!(Some(value), split, "the two readings differ");
        }
    }
});
