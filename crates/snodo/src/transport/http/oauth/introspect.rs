//! Opaque tokens, checked with the issuer's introspection endpoint (RFC
//! 7662) and cached no longer than they live.

use std::sync::Arc;
use std::time::Duration;

use ::http::{HeaderValue, header};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use super::verify::{TokenVerifier, Verdicts, VerifyError, audience_contains, principal_of};
use crate::Principal;
use crate::future::BoxFuture;
use crate::net::OAuthHttp;

/// The longest an introspection answer is reused.
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(60);
/// Most answers cached.
pub const MAX_CACHED: usize = 10_000;

/// Verifies tokens by asking the issuer (RFC 7662), authenticating with a
/// client id and secret (`client_secret_basic`).
///
/// A token passes when the answer says `active: true`, its `exp` (if any)
/// has not passed, its `iss` (if any) is the issuer, and its `aud` contains
/// the resource. Answers are cached by the token's SHA-256 for
/// [`DEFAULT_CACHE_TTL`] at most, and never past the token's `exp`.
#[derive(Debug, Clone)]
pub struct Introspection {
    inner: Arc<Inner>,
}

struct Inner {
    endpoint: String,
    issuer: String,
    audience: String,
    authorization: HeaderValue,
    cache: Verdicts,
    http: OAuthHttp,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl Introspection {
    /// Introspects at `endpoint` tokens of `issuer` for `audience`, as
    /// client `client_id` with `client_secret`.
    pub fn new(
        endpoint: &str,
        issuer: &str,
        audience: &str,
        client_id: &str,
        client_secret: &str,
    ) -> Self {
        let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let basic = STANDARD.encode(format!("{}:{}", enc(client_id), enc(client_secret)));
        let mut authorization = HeaderValue::from_str(&format!("Basic {basic}"))
            .unwrap_or_else(|_| HeaderValue::from_static("Basic"));
        authorization.set_sensitive(true);
        Self {
            inner: Arc::new(Inner {
                endpoint: endpoint.to_string(),
                issuer: issuer.to_string(),
                audience: audience.to_string(),
                authorization,
                cache: Verdicts::new(DEFAULT_CACHE_TTL, MAX_CACHED),
                http: OAuthHttp::new(false).expect("the TLS configuration of the HTTP client"),
            }),
        }
    }

    /// How long an answer may be reused ([`DEFAULT_CACHE_TTL`]; zero: never).
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.cache.set_ttl(ttl);
        }
        self
    }
}

impl Inner {
    async fn verify(&self, token: &str) -> Result<Principal, VerifyError> {
        let key = Verdicts::digest(token);
        if let Some(p) = self.cache.get(&key) {
            return Ok(p);
        }
        let form = [("token", token), ("token_type_hint", "access_token")];
        let asked = self.http.post_form(
            &self.endpoint,
            &form,
            vec![(header::AUTHORIZATION, self.authorization.clone())],
        );
        // Bounded like a fetch of a JWT issuer's keys: a hanging endpoint
        // costs a request this long at most.
        let answer = tokio::time::timeout(super::DEFAULT_FETCH_TIMEOUT, asked)
            .await
            .map_err(|_| {
                VerifyError::Unavailable(format!(
                    "the introspection endpoint did not answer within {} s",
                    super::DEFAULT_FETCH_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|e| VerifyError::Unavailable(e.to_string()))?;
        if !answer.status.is_success() {
            return Err(VerifyError::Unavailable(format!(
                "the introspection endpoint answered {}",
                answer.status.as_u16()
            )));
        }
        let claims: Value = answer.json().ok_or_else(|| {
            VerifyError::Unavailable("the introspection answer is not JSON".into())
        })?;
        let now = crate::net::now_secs();
        let principal = judge(claims, &self.issuer, &self.audience, now)?;
        self.cache.put(key, &principal);
        Ok(principal)
    }
}

/// The principal an introspection answer's `claims` name, at `now` (seconds
/// since the Unix epoch), for a token of `issuer` meant for `audience`;
/// refused when the token is not active, expired, or another's.
pub(crate) fn judge(
    claims: Value,
    issuer: &str,
    audience: &str,
    now: u64,
) -> Result<Principal, VerifyError> {
    if claims.get("active") != Some(&Value::Bool(true)) {
        return Err(VerifyError::Invalid("not active".into()));
    }
    match claims.get("exp") {
        Some(exp) if exp.as_u64().is_none_or(|exp| exp <= now) => {
            return Err(VerifyError::Invalid("expired".into()));
        }
        _ => {}
    }
    if let Some(iss) = claims.get("iss")
        && iss.as_str() != Some(issuer)
    {
        return Err(VerifyError::Invalid("issued by another issuer".into()));
    }
    if !audience_contains(claims.get("aud"), audience) {
        return Err(VerifyError::Invalid("issued for another audience".into()));
    }
    principal_of(claims)
}

impl TokenVerifier for Introspection {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>> {
        Box::pin(self.inner.verify(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 000 answers are all cached, and one more leaves at most 10 000,
    /// the newest among them.
    #[test]
    fn at_most_ten_thousand_answers_are_cached() {
        let verifier = Introspection::new(
            "https://issuer.example/introspect",
            "https://issuer.example",
            "https://mcp.example/mcp",
            "rs",
            "secret",
        );
        let cache = &verifier.inner.cache;
        let principal = Principal::new("ada");
        let digest = |n: usize| Verdicts::digest(&format!("token-{n}"));
        for n in 0..10_000 {
            cache.put(digest(n), &principal);
        }
        assert!((0..10_000).all(|n| cache.get(&digest(n)).is_some()));
        cache.put(digest(10_000), &principal);
        assert!(cache.get(&digest(10_000)).is_some());
        let cached = (0..=10_000)
            .filter(|n| cache.get(&digest(*n)).is_some())
            .count();
        assert!(cached <= 10_000, "{cached} cached");
    }
}
