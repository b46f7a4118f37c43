use super::*;

#[test]
fn bearer_credentials() {
    assert_eq!(
        bearer_token(b"Bearer abc.def-_~+/=="),
        Ok(Some("abc.def-_~+/=="))
    );
    assert_eq!(bearer_token(b"bearer   tok  "), Ok(Some("tok")));
    assert_eq!(bearer_token(b"Basic dXNlcjpwYXNz"), Ok(None));
    assert_eq!(bearer_token(b"Token"), Ok(None));
    for bad in [
        &b"Bearer"[..],
        b"Bearer ",
        b"Bearer a b",
        b"Bearer \"x\"",
        b"Bearer ==",
        b"Bearer \xff",
    ] {
        assert!(bearer_token(bad).is_err(), "{bad:?}");
    }
    assert!(bearer_token(&[b'a'; MAX_AUTHORIZATION_BYTES + 1]).is_err());
    assert!(query_has_token("a=1&access_token=x"));
    assert!(!query_has_token("a=1&token=x"));
}

#[test]
fn dpop_credentials() {
    assert_eq!(
        credential(b"DPoP abc.def"),
        Ok(Some((Scheme::Dpop, "abc.def")))
    );
    assert_eq!(credential(b"dpop  t "), Ok(Some((Scheme::Dpop, "t"))));
    assert_eq!(credential(b"Bearer t"), Ok(Some((Scheme::Bearer, "t"))));
    // A DPoP credential is not a bearer one.
    assert_eq!(bearer_token(b"DPoP t"), Ok(None));
    assert!(credential(b"DPoP").is_err());
    assert!(credential(b"DPoP a,b").is_err());
}
