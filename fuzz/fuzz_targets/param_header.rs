//! `Mcp-Name` / `Mcp-Param-*` values: decoding any header text never panics,
//! and every string survives the shared encoder as a valid header value that
//! decodes back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::model::headers::{decode_value, encode_value};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // Whatever arrives in a header: decoded or refused with -32020.
    if let Err(e) = decode_value(&text) {
        assert_eq!(e.code(), -32020);
    }
    let encoded = encode_value(&text);
    assert!(
        http::HeaderValue::from_str(&encoded).is_ok(),
        "not a header value: {encoded:?}"
    );
    assert_eq!(
        decode_value(&encoded).expect("our own encoding decodes"),
        text
    );
});
