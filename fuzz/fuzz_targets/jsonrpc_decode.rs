//! The JSON-RPC decoder every transport shares: any bytes give a message or
//! a -32700/-32600 error (with the id when one could be read), within the
//! default limits and within tight ones; it never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::{fuzzing::encode_error, model::{Limits, Message, decode}};

fn check(data: &[u8], limits: &Limits) {
    match decode(data, limits) {
        Ok(Message::Request(request)) => {
            // The decoded id can always be written back into a response.
            let reply = encode_error(Some(&request.id), &snodo::Error::internal("x"));
            let _: serde_json::Value = serde_json::from_slice(&reply).expect("a response is JSON");
        }
        Ok(Message::Notification(_) | Message::Response(_)) => {}
        Err(e) => {
            let code = e.error.code();
            assert!(code == -32700 || code == -32600, "unexpected code {code}");
            let reply = encode_error(e.id.as_ref(), &e.error);
            let _: serde_json::Value =
                serde_json::from_slice(&reply).expect("an error response is JSON");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data, &Limits::default());
    check(
        data,
        &Limits::new().max_bytes(256).max_depth(4).max_digits(8),
    );
});
