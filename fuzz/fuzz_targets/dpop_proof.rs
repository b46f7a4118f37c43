//! A DPoP proof as a resource server or an authorization server reads it
//! from a `DPoP` header: any bytes are refused with a reason or accepted,
//! never a panic; an accepted proof was at most 4 KiB, names the method and
//! the URI it was checked against, lies within the window, and its `jti`
//! is a short non-empty text. Input: the proof.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snodo::model::auth::dpop::{Expected, MAX_CLAIM_BYTES, MAX_PROOF_BYTES, verify_proof};

/// The instant of the proof in RFC 9449 §5 (the seed).
const NOW: u64 = 1_562_262_616;

fuzz_target!(|data: &[u8]| {
    // Half the inputs as a resource request's proof, with a token for `ath`.
    let token = (data.len() % 2 == 1).then_some("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU");
    let expected = Expected {
        method: "POST",
        url: "https://server.example.com/token",
        access_token: token,
        now: NOW,
        window: 300,
    };
    let Ok(proof) = verify_proof(data, &expected) else {
        return;
    };
    assert!(data.len() <= MAX_PROOF_BYTES);
    assert!(!proof.jti.is_empty() && proof.jti.len() <= MAX_CLAIM_BYTES);
    assert!(proof.iat.abs_diff(NOW) <= 300, "iat {}", proof.iat);
    assert_eq!(proof.jkt.len(), 43, "a SHA-256 thumbprint: {}", proof.jkt);
    if let Some(nonce) = &proof.nonce {
        assert!(!nonce.is_empty() && nonce.len() <= MAX_CLAIM_BYTES);
    }
});
