//! `WWW-Authenticate` values: parsing any text never panics and stays
//! within its bounds, and every challenge it yields survives being built
//! back into a header value and parsed again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::model::auth::challenge::{self, MAX_CHALLENGES, MAX_PARAMS};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(found) = challenge::parse(&text) else {
        return;
    };
    assert!(found.len() <= MAX_CHALLENGES);
    for c in &found {
        assert!(c.params.len() <= MAX_PARAMS);
        assert!(!c.scheme.is_empty());
        let built = c.to_string();
        assert!(
            http::HeaderValue::from_str(&built).is_ok(),
            "not a header value: {built:?}"
        );
        let again = challenge::parse(&built).expect("what was built parses");
        assert_eq!(again.len(), 1, "{built:?}");
        assert!(again[0].scheme.eq_ignore_ascii_case(&c.scheme));
        if c.token68.is_none() && c.params.iter().all(|(_, v)| !v.chars().any(char::is_control)) {
            assert_eq!(again[0].params, c.params, "{built:?}");
        }
    }
});
