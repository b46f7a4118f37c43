//! Token verification: the [`TokenVerifier`] trait and what every
//! verifier shares (audience comparison, claims to [`Principal`]).

use std::fmt;

use serde_json::Value;

use crate::Principal;
use crate::future::BoxFuture;

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// The token is not valid for this resource: a bad signature, expired,
    /// not yet valid, another issuer or audience, an unknown key, no
    /// expiry, inactive. Answered `401 invalid_token`; the text never
    /// contains the token.
    Invalid(String),
    /// The token could not be checked now (the issuer's keys or its
    /// introspection endpoint are unreachable). Answered `503`.
    Unavailable(String),
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::Invalid(m) => write!(f, "invalid token: {m}"),
            VerifyError::Unavailable(m) => write!(f, "token verification unavailable: {m}"),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Checks a bearer token and says who it stands for.
///
/// snodo ships [`JwtVerifier`](super::JwtVerifier) (JWT access tokens
/// against the issuer's JWKS) and [`Introspection`](super::Introspection)
/// (RFC 7662, for opaque tokens). A verifier of your own must check at least
/// signature or activity, expiry, issuer and audience.
pub trait TokenVerifier: Send + Sync + fmt::Debug + 'static {
    /// The principal of a valid `token`.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>>;
}

/// Whether `aud` (a string or an array of strings) names `resource`,
/// ignoring a fragment and one trailing slash on either side.
pub(crate) fn audience_contains(aud: Option<&Value>, resource: &str) -> bool {
    fn norm(s: &str) -> &str {
        let s = s.split('#').next().unwrap_or(s);
        s.strip_suffix('/').unwrap_or(s)
    }
    let want = norm(resource);
    match aud {
        Some(Value::String(s)) => norm(s) == want,
        Some(Value::Array(items)) => items
            .iter()
            .any(|v| v.as_str().is_some_and(|s| norm(s) == want)),
        _ => false,
    }
}

/// The scopes of a claims set: `scope` (space-separated) or `scp` (an
/// array, or a string).
pub(crate) fn scopes_of(claims: &Value) -> Vec<String> {
    let split = |s: &str| -> Vec<String> {
        s.split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) => split(s),
        (_, Some(Value::Array(items))) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        (_, Some(Value::String(s))) => split(s),
        _ => Vec::new(),
    }
}

/// A principal from verified claims; refused when they name no subject
/// (no `sub`, no `client_id`): principals are told apart by subject.
pub(crate) fn principal_of(claims: Value) -> Result<Principal, VerifyError> {
    let text = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_string);
    let client_id = text("client_id").or_else(|| text("azp"));
    let mut p = Principal::new(
        text("sub")
            .or_else(|| client_id.clone())
            .unwrap_or_default(),
    );
    p.client_id = client_id;
    p.scopes = scopes_of(&claims);
    p.expires_at = claims.get("exp").and_then(Value::as_u64);
    p.issuer = text("iss");
    p.claims = claims;
    if p.subject.is_empty() {
        return Err(VerifyError::Invalid("without a subject".into()));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn audience_comparison() {
        let r = "http://127.0.0.1:8080/mcp";
        assert!(audience_contains(Some(&json!(r)), r));
        assert!(audience_contains(
            Some(&json!("http://127.0.0.1:8080/mcp/")),
            r
        ));
        assert!(audience_contains(
            Some(&json!(["x", "http://127.0.0.1:8080/mcp#f"])),
            r
        ));
        assert!(!audience_contains(
            Some(&json!("http://127.0.0.1:8080/mcp2")),
            r
        ));
        assert!(!audience_contains(
            Some(&json!("HTTP://127.0.0.1:8080/mcp")),
            r
        ));
        assert!(!audience_contains(None, r));
        assert!(!audience_contains(Some(&json!(5)), r));
    }

    #[test]
    fn claims_become_a_principal() {
        let p =
            principal_of(json!({"sub": "u", "azp": "c", "scope": "a  b", "exp": 9, "iss": "i"}))
                .unwrap();
        assert_eq!(
            (p.subject.as_str(), p.client_id.as_deref()),
            ("u", Some("c"))
        );
        assert_eq!(p.scopes, ["a", "b"]);
        assert_eq!((p.expires_at, p.issuer.as_deref()), (Some(9), Some("i")));
        let p = principal_of(json!({"client_id": "svc", "scp": ["x"]})).unwrap();
        assert_eq!(
            (p.subject.as_str(), p.scopes.clone()),
            ("svc", vec!["x".to_string()])
        );
    }
}
