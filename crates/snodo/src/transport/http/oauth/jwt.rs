//! JWT access tokens (RFC 9068) checked against the issuer's JWKS: keys
//! discovered from the issuer's metadata, cached, refreshed on an unknown
//! `kid` at most once per interval; asymmetric algorithms only.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Header, Validation};
use serde_json::Value;

use super::verify::{TokenVerifier, Verdicts, VerifyError, audience_contains, principal_of};
use crate::Principal;
use crate::future::BoxFuture;
use crate::net::OAuthHttp;
use crate::protocol::auth::metadata::{ServerMetadata, server_metadata_urls};

/// How long fetched keys are trusted before they are fetched again.
pub const DEFAULT_JWKS_TTL: Duration = Duration::from_secs(600);
/// The shortest time between two fetches of the keys.
pub const DEFAULT_REFRESH_INTERVAL: Duration = Duration::from_secs(30);
/// How long one fetch of the issuer's metadata and keys may take.
pub const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// Clock skew allowed on `exp`, `nbf` and `iat`.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);
/// How long the result of checking a token's signature and claims is
/// reused for the same token (never past its `exp`; dropped whenever the
/// keys are fetched again).
pub const DEFAULT_VERIFIED_TTL: Duration = Duration::from_secs(60);
/// Most verified tokens remembered.
pub const MAX_VERIFIED: usize = 10_000;

/// Verifies JWT access tokens of one issuer for one audience.
///
/// A token passes when it is signed with an asymmetric algorithm (RS, PS,
/// ES or EdDSA; never `none` or HMAC) by a key of the issuer's JWKS, its
/// `iss` is the issuer exactly, its `aud` contains the resource, it has an
/// `exp` that has not passed and an `nbf` (if any) that has (each with
/// [`DEFAULT_LEEWAY`]), and its `typ` (if any) is `at+jwt` or `JWT`.
///
/// A token that passed is remembered by its SHA-256 for
/// [`DEFAULT_VERIFIED_TTL`] at most (and never past its `exp`): a client
/// that sends the same token on every call pays the signature check once,
/// not on every call. Fetching the keys again forgets every remembered
/// token; [`verified_ttl`](Self::verified_ttl)`(Duration::ZERO)` turns the
/// memory off.
#[derive(Debug, Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    issuer: String,
    audience: String,
    jwks_uri: RwLock<Option<String>>,
    ttl: Duration,
    refresh_interval: Duration,
    fetch_timeout: Duration,
    leeway: Duration,
    keys: RwLock<Option<Cached>>,
    /// Held while the keys are fetched (one fetch at a time); the last
    /// attempt.
    fetching: tokio::sync::Mutex<Option<Attempt>>,
    /// The last attempt, readable without waiting for a fetch in flight.
    last_attempt: RwLock<Option<Attempt>>,
    http: OAuthHttp,
    /// Tokens that passed.
    verified: Verdicts,
}

/// A fetch of the keys: when it began, and whether it brought them.
#[derive(Debug, Clone, Copy)]
struct Attempt {
    at: Instant,
    ok: bool,
}

#[derive(Debug)]
struct Cached {
    keys: Vec<Jwk>,
    at: Instant,
}

impl JwtVerifier {
    /// Tokens of `issuer` for `audience` (the resource's canonical URI).
    /// The JWKS URL is read from the issuer's metadata on first use.
    pub fn new(issuer: &str, audience: &str) -> Self {
        Self {
            inner: Arc::new(Inner {
                issuer: issuer.to_string(),
                audience: audience.to_string(),
                jwks_uri: RwLock::new(None),
                ttl: DEFAULT_JWKS_TTL,
                refresh_interval: DEFAULT_REFRESH_INTERVAL,
                fetch_timeout: DEFAULT_FETCH_TIMEOUT,
                leeway: DEFAULT_LEEWAY,
                keys: RwLock::new(None),
                fetching: tokio::sync::Mutex::new(None),
                last_attempt: RwLock::new(None),
                http: OAuthHttp::new(false).expect("the TLS configuration of the HTTP client"),
                verified: Verdicts::new(DEFAULT_VERIFIED_TTL, MAX_VERIFIED),
            }),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            f(inner);
        }
        self
    }

    /// Uses this JWKS URL instead of the one in the issuer's metadata.
    pub fn jwks_uri(self, url: &str) -> Self {
        let url = url.to_string();
        self.edit(|i| i.jwks_uri = RwLock::new(Some(url)))
    }

    /// How long keys are trusted ([`DEFAULT_JWKS_TTL`]).
    pub fn cache_ttl(self, ttl: Duration) -> Self {
        self.edit(|i| i.ttl = ttl)
    }

    /// The shortest time between fetches ([`DEFAULT_REFRESH_INTERVAL`]).
    pub fn refresh_interval(self, interval: Duration) -> Self {
        self.edit(|i| i.refresh_interval = interval)
    }

    /// How long one fetch of the issuer's metadata and keys may take
    /// ([`DEFAULT_FETCH_TIMEOUT`]): an issuer that hangs costs a token-bearing
    /// request this long at most, once per refresh interval.
    pub fn fetch_timeout(self, timeout: Duration) -> Self {
        self.edit(|i| i.fetch_timeout = timeout)
    }

    /// How long a verified token is remembered ([`DEFAULT_VERIFIED_TTL`];
    /// zero: every call checks the signature).
    pub fn verified_ttl(self, ttl: Duration) -> Self {
        self.edit(|i| i.verified.set_ttl(ttl))
    }

    /// Clock skew allowed ([`DEFAULT_LEEWAY`]).
    pub fn leeway(self, leeway: Duration) -> Self {
        self.edit(|i| i.leeway = leeway)
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }
}

/// The header of a JWT access token, when its algorithm is asymmetric and
/// its `typ`, if any, names an access token or a JWT.
pub(crate) fn check_header(token: &str) -> Result<Header, VerifyError> {
    let header = jsonwebtoken::decode_header(token)
        .map_err(|_| VerifyError::Invalid("not a JWT with a supported algorithm".into()))?;
    if !asymmetric(header.alg) {
        return Err(VerifyError::Invalid(
            "symmetric algorithms are not accepted".into(),
        ));
    }
    if let Some(typ) = &header.typ
        && !typ.eq_ignore_ascii_case("at+jwt")
        && !typ.eq_ignore_ascii_case("application/at+jwt")
        && !typ.eq_ignore_ascii_case("jwt")
    {
        return Err(VerifyError::Invalid(format!("unexpected typ {typ:?}")));
    }
    Ok(header)
}

/// Whether `key` may verify `alg`: the same family (and curve), never a
/// symmetric key.
pub(crate) fn key_fits(key: &Jwk, alg: Algorithm) -> bool {
    use Algorithm::*;
    match &key.algorithm {
        AlgorithmParameters::RSA(_) => matches!(alg, RS256 | RS384 | RS512 | PS256 | PS384 | PS512),
        AlgorithmParameters::EllipticCurve(ec) => matches!(
            (alg, &ec.curve),
            (ES256, EllipticCurve::P256) | (ES384, EllipticCurve::P384)
        ),
        AlgorithmParameters::OctetKeyPair(_) => alg == EdDSA,
        _ => false,
    }
}

fn asymmetric(alg: Algorithm) -> bool {
    !matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

impl Inner {
    /// The key for `kid` and `alg` among the cached keys.
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> (Option<Jwk>, bool) {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        let Some(cached) = keys.as_ref() else {
            return (None, false);
        };
        let fresh = cached.at.elapsed() < self.ttl;
        let fits = |k: &&Jwk| key_fits(k, alg);
        let found = match kid {
            Some(kid) => cached
                .keys
                .iter()
                .filter(fits)
                .find(|k| k.common.key_id.as_deref() == Some(kid)),
            None => {
                let mut candidates = cached.keys.iter().filter(fits);
                match (candidates.next(), candidates.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                }
            }
        };
        (found.cloned(), fresh)
    }

    async fn jwks_uri(&self) -> Result<String, VerifyError> {
        if let Some(u) = self
            .jwks_uri
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Ok(u);
        }
        for url in server_metadata_urls(&self.issuer) {
            let Ok(answer) = self.http.get(&url).await else {
                continue;
            };
            if !answer.status.is_success() {
                continue;
            }
            let Some(meta) = answer.json::<ServerMetadata>() else {
                continue;
            };
            if meta.issuer != self.issuer {
                return Err(VerifyError::Unavailable(format!(
                    "the metadata at {url} names another issuer"
                )));
            }
            if let Some(uri) = meta.jwks_uri {
                *self.jwks_uri.write().unwrap_or_else(|e| e.into_inner()) = Some(uri.clone());
                return Ok(uri);
            }
        }
        Err(VerifyError::Unavailable(format!(
            "no jwks_uri in the metadata of {}",
            self.issuer
        )))
    }

    /// Fetches the keys unless that was tried within the interval (`Ok(false)`:
    /// not tried); a failed fetch keeps the keys there were. One fetch takes
    /// [`JwtVerifier::fetch_timeout`] at most.
    async fn refresh(
        &self,
        mut last: tokio::sync::MutexGuard<'_, Option<Attempt>>,
    ) -> Result<bool, VerifyError> {
        if last.is_some_and(|a| a.at.elapsed() < self.refresh_interval) {
            return Ok(false);
        }
        let mut attempt = Attempt {
            at: Instant::now(),
            ok: false,
        };
        let fetched = tokio::time::timeout(self.fetch_timeout, self.fetch())
            .await
            .unwrap_or_else(|_| {
                Err(VerifyError::Unavailable(format!(
                    "the issuer {} did not answer within {} ms",
                    self.issuer,
                    self.fetch_timeout.as_millis()
                )))
            });
        attempt.ok = fetched.is_ok();
        *last = Some(attempt);
        *self.last_attempt.write().unwrap_or_else(|e| e.into_inner()) = Some(attempt);
        let keys = fetched?;
        *self.keys.write().unwrap_or_else(|e| e.into_inner()) = Some(Cached {
            keys,
            at: Instant::now(),
        });
        // A key may have gone: what it verified is checked again.
        self.verified.clear();
        Ok(true)
    }

    /// Reads the issuer's keys.
    async fn fetch(&self) -> Result<Vec<Jwk>, VerifyError> {
        let uri = self.jwks_uri().await?;
        let answer = self
            .http
            .get(&uri)
            .await
            .map_err(|e| VerifyError::Unavailable(e.to_string()))?;
        if !answer.status.is_success() {
            return Err(VerifyError::Unavailable(format!(
                "the JWKS at {uri} answered {}",
                answer.status.as_u16()
            )));
        }
        let set: JwkSet = answer
            .json()
            .ok_or_else(|| VerifyError::Unavailable(format!("the JWKS at {uri} does not parse")))?;
        Ok(set.keys)
    }

    /// When the keys will next be fetched, from now (at least a second).
    fn next_attempt(&self) -> Duration {
        let last = *self.last_attempt.read().unwrap_or_else(|e| e.into_inner());
        last.map_or(Duration::ZERO, |a| {
            self.refresh_interval.saturating_sub(a.at.elapsed())
        })
        .max(Duration::from_secs(1))
    }

    /// Whether the last fetch of the keys failed.
    fn issuer_down(&self) -> bool {
        self.last_attempt
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|a| !a.ok)
    }

    fn has_keys(&self) -> bool {
        self.keys.read().map(|k| k.is_some()).unwrap_or(false)
    }

    /// The key for `kid`: a fresh cached one at once; otherwise after a
    /// refresh (stale keys keep serving while another request refreshes,
    /// and when the issuer cannot be reached; a key the issuer no longer
    /// publishes does not). One request fetches at a time; the others do
    /// not wait for it: nothing cached decides for them, so they are
    /// answered [`VerifyError::Unavailable`] at once, as is a key unknown
    /// while the issuer cannot be reached (it may be a new key).
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<Jwk, VerifyError> {
        let (found, fresh) = self.find(kid, alg);
        if let (Some(key), true) = (&found, fresh) {
            return Ok(key.clone());
        }
        let refreshed = match self.fetching.try_lock() {
            Ok(last) => self.refresh(last).await,
            Err(_) => {
                return found.ok_or_else(|| {
                    VerifyError::Unavailable("the issuer's keys are being fetched".into())
                });
            }
        };
        let unknown = || VerifyError::Invalid("signed by an unknown key".into());
        let unreachable =
            || VerifyError::Unavailable("the issuer's keys could not be fetched".into());
        match refreshed {
            // Fetched just now: only what the issuer publishes counts.
            Ok(true) => self.find(kid, alg).0.ok_or_else(unknown),
            // Not fetched (too soon): whatever is cached, stale or not.
            Ok(false) => match self.find(kid, alg).0 {
                Some(key) => Ok(key),
                None if !self.has_keys() || self.issuer_down() => Err(unreachable()),
                None => Err(unknown()),
            },
            Err(e) => found.ok_or(e),
        }
    }

    async fn verify(&self, token: &str) -> Result<Principal, VerifyError> {
        if !self.verified.enabled() {
            return self.check(token).await;
        }
        let digest = Verdicts::digest(token);
        if let Some(p) = self.verified.get(&digest) {
            return Ok(p);
        }
        let principal = self.check(token).await?;
        self.verified.put(digest, &principal);
        Ok(principal)
    }

    /// The signature and claims check.
    async fn check(&self, token: &str) -> Result<Principal, VerifyError> {
        let header = check_header(token)?;
        let jwk = self.key(header.kid.as_deref(), header.alg).await?;
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|_| VerifyError::Invalid("the issuer's key does not load".into()))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.validate_aud = false;
        validation.validate_nbf = true;
        validation.leeway = self.leeway.as_secs();
        validation.set_required_spec_claims(&["exp", "iss"]);
        let data = jsonwebtoken::decode::<Value>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            VerifyError::Invalid(
                match e.kind() {
                    K::ExpiredSignature => "expired",
                    K::ImmatureSignature => "not yet valid",
                    K::InvalidIssuer => "issued by another issuer",
                    K::MissingRequiredClaim(c) if c == "exp" => "has no expiry",
                    K::MissingRequiredClaim(_) => "lacks a required claim",
                    K::InvalidSignature => "bad signature",
                    _ => "malformed or not verifiable",
                }
                .into(),
            )
        })?;
        if !audience_contains(data.claims.get("aud"), &self.audience) {
            return Err(VerifyError::Invalid("issued for another audience".into()));
        }
        principal_of(data.claims)
    }
}

impl TokenVerifier for JwtVerifier {
    fn retry_after(&self) -> Duration {
        self.inner.next_attempt()
    }

    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>> {
        Box::pin(self.inner.verify(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound on remembered tokens, measured on the verifier's own memory
    /// (10 000 signature checks through the public API take minutes in a
    /// debug build): 10 000 tokens are all remembered, and one more leaves
    /// at most 10 000, the newest among them.
    #[test]
    fn at_most_ten_thousand_verified_tokens_are_remembered() {
        let verifier = JwtVerifier::new("https://issuer.example", "https://mcp.example/mcp");
        let verified = &verifier.inner.verified;
        let principal = Principal::new("ada");
        let digest = |n: usize| Verdicts::digest(&format!("token-{n}"));
        for n in 0..10_000 {
            verified.put(digest(n), &principal);
        }
        assert!((0..10_000).all(|n| verified.get(&digest(n)).is_some()));
        verified.put(digest(10_000), &principal);
        assert!(verified.get(&digest(10_000)).is_some());
        let remembered = (0..=10_000)
            .filter(|n| verified.get(&digest(*n)).is_some())
            .count();
        assert!(remembered <= 10_000, "{remembered} remembered");
    }
}
