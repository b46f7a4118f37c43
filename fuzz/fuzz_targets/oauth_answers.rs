//! The OAuth client's readings of what authorization servers answer:
//! authorization server and protected resource metadata (a document that
//! parses writes out and reads back to itself), token answers (a token is
//! a Bearer token with the answer's access token and scopes, and an error
//! status never gives one), registration answers (the client id is the
//! answer's, and an error status never gives one) and JWKS answers (never
//! more usable keys than keys). Input: a mode byte, then the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use snodo::fuzzing::{jwks_answer, registration_answer, token_answer};
use snodo::model::auth::metadata::{ResourceMetadata, ServerMetadata};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    match mode % 6 {
        0 => round_trip::<ServerMetadata>(body),
        1 => round_trip::<ResourceMetadata>(body),
        2 => token(body),
        3 => registration(body),
        4 => {
            // An error status never yields a token or a client.
            assert!(token_answer(400, body, &[]).is_some_and(|r| r.is_err()));
            assert!(registration_answer(400, body).is_some_and(|r| r.is_err()));
        }
        _ => {
            if let Some(usable) = jwks_answer(body) {
                let json = json(body);
                let keys = json["keys"].as_array().map_or(0, Vec::len);
                assert!(usable <= keys, "{usable} usable keys of {keys}");
            }
        }
    }
});

/// The answer as JSON. The typed readings skip unknown members without
/// checking their strings are UTF-8, so the text is read leniently: a member
/// the reading took is valid either way.
fn json(body: &[u8]) -> Value {
    serde_json::from_str(&String::from_utf8_lossy(body)).expect("an accepted answer is JSON")
}

fn round_trip<T>(body: &[u8])
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let Ok(doc) = serde_json::from_slice::<T>(body) else {
        return;
    };
    let written = serde_json::to_vec(&doc).expect("a document writes");
    let again: T = serde_json::from_slice(&written).expect("a written document reads back");
    assert_eq!(again, doc, "{}", String::from_utf8_lossy(&written));
}

fn token(body: &[u8]) {
    let requested = ["files:read".to_string(), "files:write".to_string()];
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // 201 reads the answer as one to a request that carried a DPoP proof.
    if let Some(Ok(set)) = token_answer(201, body, &requested) {
        let named = json(body)["token_type"]
            .as_str()
            .map(str::to_ascii_lowercase);
        let bound = named.as_deref() == Some("dpop");
        assert_eq!(set.dpop_jkt.is_some(), bound);
        assert_eq!(set.token_type, if bound { "DPoP" } else { "Bearer" });
    }
    let Some(Ok(set)) = token_answer(200, body, &requested) else {
        return;
    };
    let json = json(body);
    assert_eq!(set.token_type, "Bearer");
    assert_eq!(set.dpop_jkt, None);
    assert_eq!(
        json["access_token"].as_str(),
        Some(set.access_token.as_str())
    );
    match json.get("scope").and_then(Value::as_str) {
        Some(scope) => {
            let want: Vec<&str> = scope.split(' ').filter(|s| !s.is_empty()).collect();
            assert_eq!(set.scopes, want);
        }
        None => assert_eq!(set.scopes, requested),
    }
    if let Some(at) = set.expires_at {
        assert!(at >= before, "expires before it was issued");
    }
}

fn registration(body: &[u8]) {
    let Some(Ok(reg)) = registration_answer(201, body) else {
        return;
    };
    let json = json(body);
    assert_eq!(json["client_id"].as_str(), Some(reg.client_id.as_str()));
    assert_eq!(
        json.get("client_secret").and_then(Value::as_str),
        reg.client_secret.as_deref()
    );
}
