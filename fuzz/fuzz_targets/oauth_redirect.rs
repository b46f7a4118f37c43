//! The OAuth client's loopback listener: what it reads of a connection's
//! first bytes (the target of a `GET` request line, which holds no space
//! and no line break), and the code it takes from a redirect (only with the
//! state it waits for, the issuer's `iss` when there is one or was
//! promised, and no `error`). Input: the bytes a connection sends.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::client::oauth::CallbackParams;
use snodo::fuzzing::{redirect_code, redirect_target};

const STATE: &str = "st4te";
const ISSUER: &str = "https://as.example";

fuzz_target!(|data: &[u8]| {
    let Some(target) = redirect_target(data) else {
        return;
    };
    assert!(data.starts_with(b"GET "), "not a GET, yet read");
    assert!(
        !target.contains([' ', '\n']),
        "the target runs past the request line: {target:?}"
    );
    for promised in [false, true] {
        let Ok(code) = redirect_code(&target, STATE, ISSUER, promised) else {
            continue;
        };
        let params = CallbackParams::from_url(&target);
        assert_eq!(params.state.as_deref(), Some(STATE));
        assert_eq!(params.code.as_deref(), Some(code.as_str()));
        assert!(params.error.is_none(), "an error redirect gave a code");
        match params.iss.as_deref() {
            Some(iss) => assert_eq!(iss, ISSUER),
            None => assert!(!promised, "the promised iss is missing"),
        }
    }
});
