//! The resource server's readings of untrusted authorization data: the
//! `Authorization` header (an accepted Bearer token is token68 and taken
//! from the value), a JWT's header (accepted only with an asymmetric
//! algorithm and an access-token `typ`), verified claims (the principal is
//! the `sub`, else the client, with the claims' scopes and expiry) and an
//! introspection answer (a principal only for an active token of the
//! issuer, meant for the audience, not expired). Input: a mode byte, then
//! the header value, the JWT header JSON, the claims or the answer.
#![no_main]

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use snodo::fuzzing::{bearer_token, introspection_answer, jwt_claims, jwt_header};

const ISSUER: &str = "https://as.example";
const AUDIENCE: &str = "https://mcp.example/mcp";
const NOW: u64 = 1_800_000_000;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 4 {
        0 => authorization(rest),
        1 => header(rest),
        2 => claims(rest),
        _ => introspection(rest),
    }
});

fn authorization(value: &[u8]) {
    let Ok(Some(token)) = bearer_token(value) else {
        return;
    };
    assert!(value.len() <= snodo::transport::http::oauth::MAX_AUTHORIZATION_BYTES);
    let text = std::str::from_utf8(value).expect("an accepted value is text");
    let (scheme, _) = text.split_once(' ').expect("a scheme and a token");
    assert!(scheme.eq_ignore_ascii_case("bearer"), "{text:?}");
    assert!(
        text.trim_end_matches(' ').ends_with(token),
        "the token is not the value's"
    );
    let body = token.trim_end_matches('=');
    assert!(!body.is_empty(), "an empty token: {token:?}");
    assert!(
        body.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)),
        "not token68: {token:?}"
    );
    if let Ok(alg) = jwt_header(token) {
        assert!(!alg.starts_with("HS"), "a symmetric algorithm: {alg}");
    }
}

fn header(json: &[u8]) {
    let token = format!("{}.e30.c2ln", URL_SAFE_NO_PAD.encode(json));
    let Ok(alg) = jwt_header(&token) else {
        return;
    };
    assert!(!alg.starts_with("HS"), "a symmetric algorithm: {alg}");
    let header: Value = serde_json::from_slice(json).expect("an accepted header is JSON");
    if let Some(typ) = header.get("typ").and_then(Value::as_str) {
        let typ = typ.to_ascii_lowercase();
        assert!(
            ["at+jwt", "application/at+jwt", "jwt"].contains(&typ.as_str()),
            "typ {typ:?} accepted"
        );
    }
}

fn text(claims: &Value, key: &str) -> Option<String> {
    claims.get(key).and_then(Value::as_str).map(str::to_string)
}

/// What holds of any principal read from `claims`.
fn check_principal(principal: &snodo::Principal, claims: &Value) {
    assert!(
        !principal.subject.is_empty(),
        "a principal without a subject"
    );
    let client = text(claims, "client_id").or_else(|| text(claims, "azp"));
    let subject = text(claims, "sub").or_else(|| client.clone());
    assert_eq!(Some(&principal.subject), subject.as_ref());
    assert_eq!(principal.client_id, client);
    assert_eq!(
        principal.expires_at,
        claims.get("exp").and_then(Value::as_u64)
    );
    assert_eq!(principal.issuer, text(claims, "iss"));
    if let Some(scope) = claims.get("scope").and_then(Value::as_str) {
        let want: Vec<&str> = scope.split(' ').filter(|s| !s.is_empty()).collect();
        assert_eq!(principal.scopes, want);
    }
}

fn claims(json: &[u8]) {
    let Some(read) = jwt_claims(json, AUDIENCE) else {
        return;
    };
    let claims: Value = serde_json::from_slice(json).expect("JSON");
    assert!(claims.get("aud").is_some(), "no audience, yet accepted");
    match read {
        Ok(principal) => check_principal(&principal, &claims),
        // The subject is the `sub`, else the client: refused only when that
        // is missing or empty.
        Err(_) => assert!(
            text(&claims, "sub")
                .or_else(|| text(&claims, "client_id"))
                .or_else(|| text(&claims, "azp"))
                .is_none_or(|s| s.is_empty()),
            "refused though it names a subject"
        ),
    }
}

fn introspection(json: &[u8]) {
    let Ok(principal) = introspection_answer(json, ISSUER, AUDIENCE, NOW) else {
        return;
    };
    let claims: Value = serde_json::from_slice(json).expect("JSON");
    assert_eq!(claims.get("active"), Some(&Value::Bool(true)));
    if let Some(exp) = claims.get("exp") {
        assert!(exp.as_u64().is_some_and(|exp| exp > NOW), "expired: {exp}");
    }
    if let Some(iss) = claims.get("iss") {
        assert_eq!(iss.as_str(), Some(ISSUER));
    }
    assert!(claims.get("aud").is_some(), "no audience, yet accepted");
    check_principal(&principal, &claims);
}
