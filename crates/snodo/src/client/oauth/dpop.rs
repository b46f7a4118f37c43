//! The client's side of DPoP (RFC 9449, as the MCP authorization extension
//! drafts it): a proof on every token request to an issuer that lists
//! ES256, a proof on every request that carries a bound token, and the
//! nonces servers hand out.

use std::collections::HashMap;
use std::sync::Mutex;

use ::http::{HeaderMap, HeaderValue};

use super::OAuthError;
use crate::protocol::auth::dpop::{DpopKey, NONCE_HEADER, target_uri};

/// Longest nonce kept from a server.
const MAX_NONCE_BYTES: usize = 256;
/// Most servers whose nonces are kept (the oldest forgotten past it).
const MAX_NONCES: usize = 64;

/// A DPoP key and the nonces servers gave for it, by target URI.
#[derive(Debug)]
pub(crate) struct Prover {
    key: DpopKey,
    nonces: Mutex<HashMap<String, String>>,
}

impl Prover {
    pub(crate) fn new(key: DpopKey) -> Self {
        Self {
            key,
            nonces: Mutex::new(HashMap::new()),
        }
    }

    /// The key's thumbprint (the `jkt` of the tokens bound to it).
    pub(crate) fn thumbprint(&self) -> &str {
        self.key.thumbprint()
    }

    /// A fresh proof for `method` `url`, with the token it goes with and
    /// the last nonce `url`'s server gave.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<HeaderValue, OAuthError> {
        let nonce = self
            .nonces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&target_uri(url))
            .cloned();
        let proof = self
            .key
            .proof(method, url, access_token, nonce.as_deref())
            .map_err(|e| OAuthError::Token(e.to_string()))?;
        HeaderValue::from_str(&proof)
            .map_err(|_| OAuthError::Token("a DPoP proof is not a header".into()))
    }

    /// Keeps the nonce `url`'s server sent in `headers`, if any; whether it
    /// is one not held before (a request refused for want of it can then be
    /// sent again).
    pub(crate) fn remember(&self, url: &str, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers
            .get(NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|n| !n.is_empty() && n.len() <= MAX_NONCE_BYTES)
        else {
            return false;
        };
        let mut nonces = self.nonces.lock().unwrap_or_else(|e| e.into_inner());
        let target = target_uri(url);
        if nonces.get(&target).map(String::as_str) == Some(nonce) {
            return false;
        }
        if nonces.len() >= MAX_NONCES && !nonces.contains_key(&target) {
            nonces.clear();
        }
        nonces.insert(target, nonce.to_string());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_kept_per_target_and_bounded() {
        let prover = Prover::new(DpopKey::generate().unwrap());
        let mut headers = HeaderMap::new();
        assert!(!prover.remember("http://127.0.0.1/t", &headers));
        headers.insert(NONCE_HEADER, HeaderValue::from_static("n1"));
        assert!(prover.remember("http://127.0.0.1/t?x", &headers));
        assert!(!prover.remember("http://127.0.0.1/t", &headers));
        headers.insert(NONCE_HEADER, HeaderValue::from_static("n2"));
        assert!(prover.remember("http://127.0.0.1/t", &headers));
        let long = "n".repeat(MAX_NONCE_BYTES + 1);
        headers.insert(NONCE_HEADER, HeaderValue::from_str(&long).unwrap());
        assert!(!prover.remember("http://127.0.0.1/t", &headers));
        for i in 0..MAX_NONCES * 2 {
            headers.insert(NONCE_HEADER, HeaderValue::from_static("m"));
            prover.remember(&format!("http://127.0.0.1/{i}"), &headers);
        }
        assert!(prover.nonces.lock().unwrap().len() <= MAX_NONCES);
    }
}
