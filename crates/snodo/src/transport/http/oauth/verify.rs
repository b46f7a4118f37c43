//! Token verification: the [`TokenVerifier`] trait and what every
//! verifier shares (audience comparison, claims to [`Principal`]).

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};

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

    /// After a [`VerifyError::Unavailable`], when the verifier will next
    /// try to reach what it needs (the `Retry-After` of the 503); five
    /// seconds unless the verifier knows better.
    fn retry_after(&self) -> Duration {
        Duration::from_secs(5)
    }
}

/// Verdicts on tokens that passed, by the token's SHA-256 (the token itself
/// is not kept): each for `ttl` at most and never past the token's `exp`,
/// `max` at most.
pub(crate) struct Verdicts {
    ttl: Duration,
    max: usize,
    map: Mutex<HashMap<[u8; 32], (Principal, Instant)>>,
}

impl fmt::Debug for Verdicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verdicts")
            .field("ttl", &self.ttl)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl Verdicts {
    pub(crate) fn new(ttl: Duration, max: usize) -> Self {
        Self {
            ttl,
            max,
            map: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn set_ttl(&mut self, ttl: Duration) {
        self.ttl = ttl;
    }

    /// Whether verdicts are kept at all.
    pub(crate) fn enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    pub(crate) fn digest(token: &str) -> [u8; 32] {
        Sha256::digest(token.as_bytes()).into()
    }

    /// The principal of a token that passed, while its verdict holds.
    pub(crate) fn get(&self, digest: &[u8; 32]) -> Option<Principal> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(digest) {
            Some((p, until)) if Instant::now() < *until => Some(p.clone()),
            Some(_) => {
                map.remove(digest);
                None
            }
            None => None,
        }
    }

    /// Keeps a verdict, for `ttl` and never past the principal's expiry.
    pub(crate) fn put(&self, digest: [u8; 32], principal: &Principal) {
        let now = crate::net::now_secs();
        let lives = principal
            .expires_at
            .map_or(self.ttl, |exp| Duration::from_secs(exp.saturating_sub(now)));
        let keep = self.ttl.min(lives);
        if keep.is_zero() {
            return;
        }
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= self.max {
            let at = Instant::now();
            map.retain(|_, (_, until)| *until > at);
            if map.len() >= self.max {
                map.clear();
            }
        }
        map.insert(digest, (principal.clone(), Instant::now() + keep));
    }

    /// Forgets every verdict.
    pub(crate) fn clear(&self) {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
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
