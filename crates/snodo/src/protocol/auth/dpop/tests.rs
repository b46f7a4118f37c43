use super::*;

/// The proof of RFC 9449 §5 (Figure 3), made by the key whose thumbprint
/// §6.1 gives.
const RFC_PROOF: &str = "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjYyNjE2fQ.2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg";
const RFC_JKT: &str = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";

fn at<'a>(method: &'a str, url: &'a str, now: u64) -> Expected<'a> {
    Expected {
        method,
        url,
        access_token: None,
        now,
        window: 300,
    }
}

#[test]
fn the_rfc_proof_verifies_and_names_its_key() {
    let ok = verify_proof(
        RFC_PROOF.as_bytes(),
        &at("POST", "https://server.example.com/token", 1_562_262_616),
    )
    .unwrap();
    assert_eq!(ok.jkt, RFC_JKT);
    assert_eq!(ok.jti, "-BwC3ESc6acc2lTc");
    assert_eq!((ok.iat, ok.nonce), (1_562_262_616, None));
    // The URI compared as RFC 3986 normalizes it.
    assert!(
        verify_proof(
            RFC_PROOF.as_bytes(),
            &at(
                "POST",
                "HTTPS://Server.Example.com:443/token?x=1",
                1_562_262_700
            ),
        )
        .is_ok()
    );
}

#[test]
fn the_rfc_proof_is_refused_where_it_does_not_belong() {
    let refused = |e: Expected<'_>| verify_proof(RFC_PROOF.as_bytes(), &e).unwrap_err().0;
    let url = "https://server.example.com/token";
    assert!(refused(at("GET", url, 1_562_262_616)).contains("htm"));
    assert!(refused(at("POST", "https://server.example.com/mcp", 1_562_262_616)).contains("htu"));
    assert!(refused(at("POST", url, 1_562_262_616 + 301)).contains("iat"));
    assert!(refused(at("POST", url, 1_562_262_616 - 301)).contains("iat"));
    let mut with_token = at("POST", url, 1_562_262_616);
    with_token.access_token = Some("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU");
    assert!(refused(with_token).contains("ath"));
    // One byte of the signature changed.
    let mut forged = RFC_PROOF.to_string();
    forged.pop();
    forged.push('h');
    assert!(
        verify_proof(forged.as_bytes(), &at("POST", url, 1_562_262_616))
            .unwrap_err()
            .0
            .contains("signature")
    );
}

#[test]
fn the_rfc_token_hash() {
    // RFC 9449 §7.1: the access token of Figure 7 and the ath of Figure 8.
    assert_eq!(
        token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
        "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
    );
}

#[test]
fn a_made_proof_verifies_with_its_token_and_nonce() {
    let key = DpopKey::generate().unwrap();
    let now = now_secs();
    let proof = key
        .proof(
            "POST",
            "http://127.0.0.1:9/mcp?q#f",
            Some("tok"),
            Some("n1"),
        )
        .unwrap();
    let ok = verify_proof(
        proof.as_bytes(),
        &Expected {
            method: "POST",
            url: "http://127.0.0.1:9/mcp",
            access_token: Some("tok"),
            now,
            window: 60,
        },
    )
    .unwrap();
    assert_eq!(ok.jkt, key.thumbprint());
    assert_eq!(ok.nonce.as_deref(), Some("n1"));
    // Two proofs never share a jti.
    let again = key
        .proof("POST", "http://127.0.0.1:9/mcp", None, None)
        .unwrap();
    let again = verify_proof(again.as_bytes(), &at("POST", "http://127.0.0.1:9/mcp", now)).unwrap();
    assert_ne!(again.jti, ok.jti);
    // The key survives a round trip through PKCS#8.
    let back = DpopKey::from_pkcs8(key.to_pkcs8()).unwrap();
    assert_eq!(back.thumbprint(), key.thumbprint());
}

#[test]
fn malformed_proofs_get_a_reason() {
    let e = at("POST", "https://server.example.com/token", 1_562_262_616);
    let why = |p: &[u8]| verify_proof(p, &e).unwrap_err().0;
    assert!(why(&[b'a'; MAX_PROOF_BYTES + 1]).contains("4 KiB"));
    assert!(why(b"\xff.a.b").contains("text"));
    assert!(why(b"a.b").contains("compact"));
    assert!(why(b"a.b.c.d").contains("compact"));
    assert!(why(b"!!.b.c").contains("base64url"));
    let header = |h: &str| format!("{}.e30.AA", URL_SAFE_NO_PAD.encode(h));
    assert!(why(header(r#"{"typ":"JWT","alg":"ES256"}"#).as_bytes()).contains("typ"));
    assert!(why(header(r#"{"typ":"dpop+jwt","alg":"none"}"#).as_bytes()).contains("alg"));
    assert!(why(header(r#"{"typ":"dpop+jwt","alg":"ES256"}"#).as_bytes()).contains("jwk"));
    assert!(
        why(
            header(r#"{"typ":"dpop+jwt","alg":"ES256","jwk":{"kty":"EC","crv":"P-256","d":"x"}}"#)
                .as_bytes()
        )
        .contains("private")
    );
    assert!(
        why(header(r#"{"typ":"dpop+jwt","alg":"ES256","jwk":{"kty":"RSA"}}"#).as_bytes())
            .contains("P-256")
    );
    assert!(
        why(header(
            r#"{"typ":"dpop+jwt","alg":"ES256","jwk":{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}}"#
        )
        .as_bytes())
        .contains("32 bytes")
    );
    assert!(why(header("[1]").as_bytes()).contains("header"));
}

#[test]
fn target_uris_are_normalized() {
    assert_eq!(target_uri("HTTP://A.b:80/x?y#z"), "http://a.b/x");
    assert_eq!(target_uri("https://a.b:8443/X"), "https://a.b:8443/X");
    assert_eq!(target_uri("https://a.b"), "https://a.b/");
    assert_eq!(target_uri("no scheme"), "no scheme");
}
