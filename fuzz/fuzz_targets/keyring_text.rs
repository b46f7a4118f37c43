//! Keyring text (a file or a variable of `KEY_ID=BASE64_SECRET` lines): a
//! keyring that parses holds 1 to `MAX_KEYS` keys with distinct ids of 1 to
//! 32 characters of `[A-Za-z0-9_-]` and secrets of `MIN_SECRET` to
//! `MAX_SECRET` bytes, and its keys written out again parse to the same
//! keys. Input: the text.
#![no_main]

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use libfuzzer_sys::fuzz_target;
use snodo::fuzzing::keyring_keys;
use snodo::server::keyring::{MAX_KEYRING_BYTES, MAX_KEYS, MAX_SECRET, MIN_SECRET};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(keys) = keyring_keys(text) else {
        return;
    };
    assert!(text.len() <= MAX_KEYRING_BYTES);
    assert!((1..=MAX_KEYS).contains(&keys.len()), "{} keys", keys.len());
    for (i, (id, secret)) in keys.iter().enumerate() {
        assert!((1..=32).contains(&id.len()), "id {id:?}");
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "id {id:?}"
        );
        assert!(
            (MIN_SECRET..=MAX_SECRET).contains(&secret.len()),
            "a secret of {} bytes",
            secret.len()
        );
        assert!(
            keys[..i].iter().all(|(other, _)| other != id),
            "{id:?} twice"
        );
    }
    let written: String = keys
        .iter()
        .map(|(id, secret)| format!("{id}={}\n", STANDARD.encode(secret)))
        .collect();
    assert_eq!(keyring_keys(&written), Ok(keys));
});
