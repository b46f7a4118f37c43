//! DPoP (RFC 9449, as the MCP authorization extension drafts it): the proof
//! a client signs for each request with its own key, and the check a
//! resource server makes of it. Both ends use ES256 (P-256) only, the
//! algorithm every DPoP deployment supports.
//!
//! The draft is followed as published; it may still change.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _,
    UnparsedPublicKey,
};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// The request header that carries a proof.
pub const DPOP_HEADER: &str = "dpop";
/// The response header that carries a server's nonce.
pub const NONCE_HEADER: &str = "dpop-nonce";
/// The one signing algorithm snodo makes and accepts proofs with.
pub const ALGORITHM: &str = "ES256";
/// Longest proof read (a P-256 proof is well under 1 KiB).
pub const MAX_PROOF_BYTES: usize = 4 * 1024;
/// Longest `jti` or `nonce` accepted in a proof.
pub const MAX_CLAIM_BYTES: usize = 256;

/// Why a proof could not be made or was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpopError(pub(crate) String);

impl DpopError {
    fn new(why: impl Into<String>) -> Self {
        Self(why.into())
    }
}

impl fmt::Display for DpopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DPoP proof: {}", self.0)
    }
}

impl std::error::Error for DpopError {}

/// A client's DPoP key: an ES256 (P-256) key pair. Cheap to clone; the
/// private key is never printed or sent.
#[derive(Clone)]
pub struct DpopKey {
    inner: Arc<KeyInner>,
}

struct KeyInner {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    jwk: Value,
    thumbprint: String,
    rng: SystemRandom,
}

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.inner.thumbprint)
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new random key.
    pub fn generate() -> Result<Self, DpopError> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| DpopError::new("no random source to make a key"))?;
        Self::from_pkcs8(pkcs8.as_ref())
    }

    /// The key in `der` (an unencrypted PKCS#8 P-256 private key, as
    /// [`to_pkcs8`](Self::to_pkcs8) gives it), so that tokens bound to it
    /// stay usable across runs.
    pub fn from_pkcs8(der: &[u8]) -> Result<Self, DpopError> {
        let rng = SystemRandom::new();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
            .map_err(|e| DpopError::new(format!("not a P-256 PKCS#8 key: {e}")))?;
        let point = pair.public_key().as_ref();
        // An uncompressed point: 0x04, then x and y (32 bytes each).
        let (x, y) = (&point[1..33], &point[33..65]);
        let (x, y) = (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y));
        let thumbprint = thumbprint(&x, &y);
        Ok(Self {
            inner: Arc::new(KeyInner {
                pair,
                pkcs8: der.to_vec(),
                jwk: json!({"kty": "EC", "crv": "P-256", "x": x, "y": y}),
                thumbprint,
                rng,
            }),
        })
    }

    /// The private key as PKCS#8 DER, to keep it (as secret as a token).
    pub fn to_pkcs8(&self) -> &[u8] {
        &self.inner.pkcs8
    }

    /// The public key's JWK SHA-256 thumbprint (RFC 7638): the `jkt` a
    /// bound token's `cnf` names.
    pub fn thumbprint(&self) -> &str {
        &self.inner.thumbprint
    }

    /// A fresh proof for one request: `method` and `url` (its query and
    /// fragment left out), the access token it goes with (`ath`), and the
    /// server's nonce if it gave one.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, DpopError> {
        let mut jti = [0u8; 16];
        crate::random::fill(&mut jti).map_err(|e| DpopError::new(e.to_string()))?;
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.inner.jwk});
        let mut claims = json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method,
            "htu": target_uri(url),
            "iat": now_secs(),
        });
        if let Some(token) = access_token {
            claims["ath"] = Value::String(token_hash(token));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = Value::String(nonce.to_string());
        }
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .inner
            .pair
            .sign(&self.inner.rng, signing_input.as_bytes())
            .map_err(|_| DpopError::new("signing failed"))?;
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

/// Seconds since the Unix epoch (0 before it).
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The RFC 7638 thumbprint of a P-256 public key given by its coordinates.
fn thumbprint(x: &str, y: &str) -> String {
    // The required members in lexicographic order, no whitespace.
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// The `ath` of an access token: its SHA-256, base64url.
pub fn token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// `url` as a proof's `htu` names it: without query and fragment, scheme
/// and host in lower case, a default port left out.
pub fn target_uri(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    let mut authority = authority.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => ":443",
        "http" => ":80",
        _ => "",
    };
    if !default_port.is_empty() && authority.ends_with(default_port) {
        authority.truncate(authority.len() - default_port.len());
    }
    format!("{scheme}://{authority}{path}")
}

/// What a proof must match.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The request's method.
    pub method: &'a str,
    /// The request's URL (compared as [`target_uri`] gives it).
    pub url: &'a str,
    /// The access token the proof goes with, for `ath`.
    pub access_token: Option<&'a str>,
    /// Now, in seconds since the Unix epoch.
    pub now: u64,
    /// How far `iat` may be from `now`, either way, in seconds.
    pub window: u64,
}

/// A proof that passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedProof {
    /// The thumbprint of the key that signed it.
    pub jkt: String,
    /// Its unique identifier.
    pub jti: String,
    /// When it was made.
    pub iat: u64,
    /// The nonce it carries, if any.
    pub nonce: Option<String>,
}

#[derive(Deserialize)]
struct ProofHeader {
    typ: Option<String>,
    alg: Option<String>,
    jwk: Option<ProofJwk>,
}

#[derive(Deserialize)]
struct ProofJwk {
    kty: Option<String>,
    crv: Option<String>,
    x: Option<String>,
    y: Option<String>,
    d: Option<Value>,
}

#[derive(Deserialize)]
struct ProofClaims {
    jti: Option<Value>,
    htm: Option<Value>,
    htu: Option<Value>,
    iat: Option<Value>,
    ath: Option<Value>,
    nonce: Option<Value>,
}

/// Checks `proof` (the `DPoP` header's value) against `expected`: the
/// shape RFC 9449 §4.2 gives it (`typ` `dpop+jwt`, `alg` ES256, a public
/// P-256 `jwk`), its signature by that key, `htm`, `htu`, `iat` within the
/// window, and `ath` when a token goes with it. Replay (`jti`) and the
/// nonce are the caller's to check. Never panics; reads at most
/// [`MAX_PROOF_BYTES`].
pub fn verify_proof(proof: &[u8], expected: &Expected<'_>) -> Result<VerifiedProof, DpopError> {
    if proof.len() > MAX_PROOF_BYTES {
        return Err(DpopError::new("longer than 4 KiB"));
    }
    let text = std::str::from_utf8(proof).map_err(|_| DpopError::new("not text"))?;
    let mut parts = text.split('.');
    let (Some(h), Some(c), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(DpopError::new("not a compact JWS"));
    };
    let decode = |part: &str, what: &str| {
        URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|_| DpopError::new(format!("its {what} is not base64url")))
    };
    let header: ProofHeader = serde_json::from_slice(&decode(h, "header")?)
        .map_err(|_| DpopError::new("its header is not a JSON object of the right shape"))?;
    if header.typ.as_deref() != Some("dpop+jwt") {
        return Err(DpopError::new("typ is not dpop+jwt"));
    }
    if header.alg.as_deref() != Some(ALGORITHM) {
        return Err(DpopError::new("alg is not ES256"));
    }
    let jwk = header
        .jwk
        .ok_or_else(|| DpopError::new("no jwk in the header"))?;
    if jwk.d.is_some() {
        return Err(DpopError::new("the jwk holds a private key"));
    }
    if jwk.kty.as_deref() != Some("EC") || jwk.crv.as_deref() != Some("P-256") {
        return Err(DpopError::new("the jwk is not a P-256 key"));
    }
    let (Some(x), Some(y)) = (jwk.x, jwk.y) else {
        return Err(DpopError::new("the jwk has no coordinates"));
    };
    let (xb, yb) = (decode(&x, "jwk x")?, decode(&y, "jwk y")?);
    if xb.len() != 32 || yb.len() != 32 {
        return Err(DpopError::new("the jwk's coordinates are not 32 bytes"));
    }
    let mut point = Vec::with_capacity(65);
    point.push(4);
    point.extend_from_slice(&xb);
    point.extend_from_slice(&yb);
    let signature = decode(s, "signature")?;
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &point)
        .verify(&text.as_bytes()[..h.len() + 1 + c.len()], &signature)
        .map_err(|_| DpopError::new("the signature does not verify"))?;
    let claims: ProofClaims = serde_json::from_slice(&decode(c, "claims")?)
        .map_err(|_| DpopError::new("its claims are not a JSON object"))?;
    let text_claim = |v: Option<Value>, name: &str| match v {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_CLAIM_BYTES => Ok(s),
        Some(Value::String(_)) => Err(DpopError::new(format!(
            "{name} is empty or longer than {MAX_CLAIM_BYTES} bytes"
        ))),
        _ => Err(DpopError::new(format!("no {name} claim"))),
    };
    let jti = text_claim(claims.jti, "jti")?;
    match claims.htm {
        Some(Value::String(m)) if m == expected.method => {}
        _ => return Err(DpopError::new("htm is not the request's method")),
    }
    match claims.htu {
        Some(Value::String(u))
            if !u.contains(['?', '#']) && target_uri(&u) == target_uri(expected.url) => {}
        _ => return Err(DpopError::new("htu is not the request's URI")),
    }
    let iat = claims
        .iat
        .as_ref()
        .and_then(Value::as_u64)
        .ok_or_else(|| DpopError::new("no iat claim"))?;
    if iat.abs_diff(expected.now) > expected.window {
        return Err(DpopError::new("iat is outside the accepted window"));
    }
    if let Some(token) = expected.access_token {
        match claims.ath {
            Some(Value::String(a)) if a == token_hash(token) => {}
            _ => return Err(DpopError::new("ath is not the access token's hash")),
        }
    }
    let nonce = match claims.nonce {
        None => None,
        some => Some(text_claim(some, "nonce")?),
    };
    Ok(VerifiedProof {
        jkt: thumbprint(&x, &y),
        jti,
        iat,
        nonce,
    })
}

#[cfg(test)]
mod tests;
