//! PKCE with S256 (RFC 7636) and the random values of a flow.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::RandomUnavailable;

/// `bytes` random bytes from the operating system, base64url-encoded.
pub(crate) fn random_token(bytes: usize) -> Result<String, RandomUnavailable> {
    let mut buf = vec![0u8; bytes];
    crate::random::fill(&mut buf)?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

/// A code verifier and its S256 challenge.
#[derive(Debug, Clone)]
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl Pkce {
    /// A fresh verifier of 32 random bytes (43 characters).
    pub(crate) fn new() -> Result<Self, RandomUnavailable> {
        let verifier = random_token(32)?;
        let challenge = challenge_of(&verifier);
        Ok(Self {
            verifier,
            challenge,
        })
    }
}

/// `BASE64URL(SHA256(verifier))`.
pub(crate) fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_7636_example() {
        // RFC 7636 appendix B.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let p = Pkce::new().unwrap();
        assert_eq!(p.verifier.len(), 43);
        assert_ne!(p.verifier, Pkce::new().unwrap().verifier);
    }

    #[test]
    fn no_verifier_or_token_without_the_random_source() {
        let _off = crate::random::failing();
        assert!(Pkce::new().is_err());
        let err = random_token(16).unwrap_err();
        assert!(err.to_string().contains("random source failed"), "{err}");
    }
}
