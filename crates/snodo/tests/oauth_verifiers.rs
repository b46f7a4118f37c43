//! The JWT and introspection verifiers against an authorization server
//! played on 127.0.0.1 by the test, with tokens signed here by test keys:
//! every forged token is refused `401 invalid_token` for its own reason,
//! RS256, ES256 and EdDSA tokens pass, a verified token is remembered (never
//! past its `exp`, forgotten when the keys are fetched again), an unknown
//! `kid` fetches the keys at most once per refresh interval, and
//! introspection answers are cached per token, never past its `exp`.
//!
//! Whether a JWT was checked again is told by the issuer's count of JWKS
//! fetches: with a key cache that is always stale and no refresh interval,
//! every signature check fetches the keys, and a remembered token does not.
#![cfg(all(feature = "auth", feature = "http", feature = "client"))]

mod issuer_support;
mod jwt_keys;
mod oauth_support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::StatusCode;
use issuer_support::{Answer, Issuer, UP, serve};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use jwt_keys::*;
use oauth_support::mcp;
use serde_json::{Value, json};
use snodo::Principal;
use snodo::transport::http::oauth::{
    Introspection, JwtVerifier, ResourceServer, TokenVerifier, VerifyError,
};
use snodo::transport::http::{HttpListener, HttpOptions};
use snodo::{Server, ToolResult, tool::from_fn};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Waits until the clock's second is past `exp`.
async fn until_past(exp: u64) {
    while now() <= exp {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Serves an MCP endpoint at `url` on `listener`, protected by `verifier`
/// for tokens of `issuer`; it stops when the sender is dropped.
fn protect(
    listener: TcpListener,
    url: &str,
    issuer: &str,
    verifier: impl TokenVerifier,
) -> oneshot::Sender<()> {
    let rs = ResourceServer::builder(url)
        .authorization_server(issuer)
        .verifier(verifier)
        .build()
        .unwrap();
    let server = Server::builder("protected", "1.0.0")
        .tool(from_fn("echo", |_, _| async { Ok(ToolResult::text("ok")) }))
        .build()
        .unwrap();
    let running =
        HttpListener::from_listener(&server, listener, HttpOptions::new().oauth(rs)).unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(running.run(async move {
        let _ = stopped.await;
    }));
    stop
}

async fn bind() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    (listener, url)
}

/// The endpoint's answer to `tools/list` with `token`, and its challenge.
async fn list_with(url: &str, token: &str) -> (StatusCode, String) {
    let (status, headers, _) = mcp(
        url,
        Some(&format!("Bearer {token}")),
        "tools/list",
        json!({}),
    )
    .await;
    let challenge = headers
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, challenge)
}

/// Asserts that `verdict` refuses the token as invalid for `reason`.
fn assert_invalid(verdict: Result<Principal, VerifyError>, reason: &str) {
    match verdict {
        Err(VerifyError::Invalid(why)) => assert_eq!(why, reason),
        other => panic!("expected an invalid token ({reason}), got {other:?}"),
    }
}

/// Asserts that the endpoint at `url` answers `401 invalid_token`.
async fn assert_401_invalid_token(url: &str, token: &str) {
    let (status, challenge) = list_with(url, token).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{challenge}");
    assert!(
        challenge.starts_with("Bearer ") && challenge.contains(r#"error="invalid_token""#),
        "{challenge}"
    );
}

// ---------------------------------------------------------------- JWT

/// What the issuer publishes: one key of each algorithm.
fn published() -> Value {
    json!([rs256_jwk("rsa"), es256_jwk("ec"), ed25519_jwk("ed")])
}

/// An issuer, a verifier of its tokens, and an endpoint protected by it
/// (the verifier's audience).
struct Jwt {
    issuer: Issuer,
    verifier: JwtVerifier,
    url: String,
    _stop: oneshot::Sender<()>,
}

impl Jwt {
    /// The verifier as `configure` sets it up.
    async fn start(configure: impl FnOnce(JwtVerifier) -> JwtVerifier) -> Jwt {
        let issuer = Issuer::start(UP, published()).await;
        let (listener, url) = bind().await;
        let verifier = configure(JwtVerifier::new(&issuer.url, &url));
        let stop = protect(listener, &url, &issuer.url, verifier.clone());
        Jwt {
            issuer,
            verifier,
            url,
            _stop: stop,
        }
    }

    /// Claims that pass: this issuer, this resource, ten minutes to live.
    fn claims(&self) -> Value {
        json!({
            "iss": self.issuer.url, "aud": self.url, "sub": "ada",
            "client_id": "app", "scope": "files:read", "exp": now() + 600
        })
    }

    /// `claims` with `changes` made (a `null` removes the claim).
    fn claims_with(&self, changes: Value) -> Value {
        let mut claims = self.claims();
        for (k, v) in changes.as_object().unwrap() {
            if v.is_null() {
                claims.as_object_mut().unwrap().remove(k);
            } else {
                claims[k] = v.clone();
            }
        }
        claims
    }

    async fn verify(&self, token: &str) -> Result<Principal, VerifyError> {
        self.verifier.verify(token).await
    }

    /// The token is refused for `reason`, and the endpoint answers it `401
    /// invalid_token`.
    async fn refuses(&self, token: &str, reason: &str) {
        assert_invalid(self.verify(token).await, reason);
        assert_401_invalid_token(&self.url, token).await;
    }

    /// The token passes, and the endpoint serves it.
    async fn accepts(&self, token: &str) -> Principal {
        let principal = self.verify(token).await.expect("the token passes");
        let (status, challenge) = list_with(&self.url, token).await;
        assert_eq!(status, StatusCode::OK, "{challenge}");
        principal
    }
}

fn key(alg: Algorithm) -> EncodingKey {
    match alg {
        Algorithm::RS256 => EncodingKey::from_rsa_pem(RS256_KEY.as_bytes()),
        Algorithm::ES256 => EncodingKey::from_ec_pem(ES256_KEY.as_bytes()),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(ED25519_KEY.as_bytes()),
        other => panic!("no test key for {other:?}"),
    }
    .unwrap()
}

/// An access-token header (`typ: at+jwt`) for `alg` naming `kid`.
fn header(alg: Algorithm, kid: &str) -> Header {
    let mut header = Header::new(alg);
    header.typ = Some("at+jwt".into());
    header.kid = Some(kid.into());
    header
}

/// `claims` signed by the published key `kid` of algorithm `alg`.
fn sign(alg: Algorithm, kid: &str, claims: &Value) -> String {
    jsonwebtoken::encode(&header(alg, kid), claims, &key(alg)).unwrap()
}

/// `claims` signed by the issuer's Ed25519 key, as `ed`.
fn signed(claims: &Value) -> String {
    sign(Algorithm::EdDSA, "ed", claims)
}

#[tokio::test]
async fn rs256_es256_and_eddsa_tokens_pass_with_their_claims() {
    let jwt = Jwt::start(|v| v).await;
    for (alg, kid) in [
        (Algorithm::RS256, "rsa"),
        (Algorithm::ES256, "ec"),
        (Algorithm::EdDSA, "ed"),
    ] {
        let claims = jwt.claims();
        let p = jwt.accepts(&sign(alg, kid, &claims)).await;
        assert_eq!(p.subject, "ada", "{alg:?}");
        assert_eq!(p.client_id.as_deref(), Some("app"));
        assert_eq!(p.scopes, ["files:read"]);
        assert_eq!(p.issuer.as_deref(), Some(jwt.issuer.url.as_str()));
        assert_eq!(p.expires_at, claims["exp"].as_u64());
    }
    // `typ: JWT`, and no `typ` at all, pass too.
    let mut plain = header(Algorithm::EdDSA, "ed");
    plain.typ = Some("JWT".into());
    let claims = jwt.claims_with(json!({"sub": "plain"}));
    let token = jsonwebtoken::encode(&plain, &claims, &key(Algorithm::EdDSA)).unwrap();
    assert_eq!(jwt.accepts(&token).await.subject, "plain");
    plain.typ = None;
    let claims = jwt.claims_with(json!({"sub": "untyped"}));
    let token = jsonwebtoken::encode(&plain, &claims, &key(Algorithm::EdDSA)).unwrap();
    assert_eq!(jwt.accepts(&token).await.subject, "untyped");
}

#[tokio::test]
async fn a_token_signed_by_a_key_other_than_the_one_it_names_is_refused() {
    let jwt = Jwt::start(|v| v).await;
    let other = EncodingKey::from_ed_pem(ED25519_OTHER_KEY.as_bytes()).unwrap();
    let token =
        jsonwebtoken::encode(&header(Algorithm::EdDSA, "ed"), &jwt.claims(), &other).unwrap();
    jwt.refuses(&token, "bad signature").await;
}

#[tokio::test]
async fn a_tampered_token_is_refused() {
    let jwt = Jwt::start(|v| v).await;
    let token = signed(&jwt.claims());
    let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
    let forged = jwt.claims_with(json!({"sub": "root"}));
    parts[1] = URL_SAFE_NO_PAD.encode(forged.to_string());
    jwt.refuses(&parts.join("."), "bad signature").await;
}

#[tokio::test]
async fn an_unsigned_token_alg_none_is_refused() {
    let jwt = Jwt::start(|v| v).await;
    let head = URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"at+jwt","kid":"ed"}"#);
    let body = URL_SAFE_NO_PAD.encode(jwt.claims().to_string());
    jwt.refuses(
        &format!("{head}.{body}."),
        "not a JWT with a supported algorithm",
    )
    .await;
}

#[tokio::test]
async fn an_hs256_token_keyed_with_the_issuers_public_key_is_refused() {
    let jwt = Jwt::start(|v| v).await;
    let secret = EncodingKey::from_secret(RS256_PUBLIC_PEM.as_bytes()).unwrap();
    for kid in [Some("rsa"), None] {
        let mut head = Header::new(Algorithm::HS256);
        head.kid = kid.map(str::to_string);
        let token = jsonwebtoken::encode(&head, &jwt.claims(), &secret).unwrap();
        jwt.refuses(&token, "symmetric algorithms are not accepted")
            .await;
    }
    assert_eq!(
        jwt.issuer.fetches(),
        0,
        "refused before any key is looked up"
    );
}

#[tokio::test]
async fn a_token_of_another_issuer_is_refused() {
    let jwt = Jwt::start(|v| v).await;
    let elsewhere = format!("{}/other", jwt.issuer.url);
    let claims = jwt.claims_with(json!({ "iss": elsewhere }));
    jwt.refuses(&signed(&claims), "issued by another issuer")
        .await;
    let claims = jwt.claims_with(json!({"iss": null}));
    jwt.refuses(&signed(&claims), "lacks a required claim")
        .await;
}

#[tokio::test]
async fn a_token_whose_audience_lacks_the_resource_is_refused() {
    let jwt = Jwt::start(|v| v).await;
    for aud in [
        json!("https://other.example/mcp"),
        json!(["https://other.example/mcp", format!("{}2", jwt.url)]),
        Value::Null,
    ] {
        let claims = jwt.claims_with(json!({ "aud": aud }));
        jwt.refuses(&signed(&claims), "issued for another audience")
            .await;
    }
    // Among others, the resource is enough.
    let claims = jwt.claims_with(json!({"aud": ["https://other.example/mcp", jwt.url]}));
    jwt.accepts(&signed(&claims)).await;
}

#[tokio::test]
async fn an_expired_token_passes_within_the_leeway_and_not_beyond() {
    let jwt = Jwt::start(|v| v).await;
    // The default leeway is 30 s.
    let claims = jwt.claims_with(json!({"exp": now() - 10}));
    jwt.accepts(&signed(&claims)).await;
    let claims = jwt.claims_with(json!({"exp": now() - 45}));
    jwt.refuses(&signed(&claims), "expired").await;
}

#[tokio::test]
async fn the_leeway_is_what_the_verifier_is_given() {
    let jwt = Jwt::start(|v| v.leeway(Duration::ZERO)).await;
    let claims = jwt.claims_with(json!({"exp": now() - 10}));
    jwt.refuses(&signed(&claims), "expired").await;
    let claims = jwt.claims_with(json!({"nbf": now() + 10}));
    jwt.refuses(&signed(&claims), "not yet valid").await;
}

#[tokio::test]
async fn a_token_without_exp_is_refused() {
    let jwt = Jwt::start(|v| v).await;
    let claims = jwt.claims_with(json!({"exp": null}));
    jwt.refuses(&signed(&claims), "has no expiry").await;
}

#[tokio::test]
async fn a_token_not_yet_valid_is_refused_beyond_the_leeway() {
    let jwt = Jwt::start(|v| v).await;
    let claims = jwt.claims_with(json!({"nbf": now() + 10}));
    jwt.accepts(&signed(&claims)).await;
    let claims = jwt.claims_with(json!({"nbf": now() + 120}));
    jwt.refuses(&signed(&claims), "not yet valid").await;
}

#[tokio::test]
async fn a_token_of_an_unexpected_typ_is_refused() {
    let jwt = Jwt::start(|v| v).await;
    let mut head = header(Algorithm::EdDSA, "ed");
    head.typ = Some("dpop+jwt".into());
    let token = jsonwebtoken::encode(&head, &jwt.claims(), &key(Algorithm::EdDSA)).unwrap();
    jwt.refuses(&token, r#"unexpected typ "dpop+jwt""#).await;
}

#[tokio::test]
async fn a_token_naming_a_key_the_issuer_does_not_publish_is_refused() {
    let jwt = Jwt::start(|v| v).await;
    let token = sign(Algorithm::EdDSA, "retired", &jwt.claims());
    jwt.refuses(&token, "signed by an unknown key").await;
    // A key of another algorithm than the token's is no key for it.
    let token = sign(Algorithm::ES256, "ed", &jwt.claims());
    jwt.refuses(&token, "signed by an unknown key").await;
}

#[tokio::test]
async fn a_token_that_passed_is_not_checked_again() {
    // Every signature check fetches the keys here; a remembered token does not.
    let jwt = Jwt::start(|v| v.cache_ttl(Duration::ZERO).refresh_interval(Duration::ZERO)).await;
    let token = signed(&jwt.claims());
    assert_eq!(jwt.verify(&token).await.unwrap().subject, "ada");
    assert_eq!(jwt.issuer.fetches(), 1);
    for _ in 0..3 {
        assert_eq!(jwt.verify(&token).await.unwrap().subject, "ada");
    }
    assert_eq!(jwt.issuer.fetches(), 1, "remembered, not checked again");
    // Another token is checked: this set-up does fetch for a check.
    let other = signed(&jwt.claims_with(json!({"sub": "bob"})));
    assert_eq!(jwt.verify(&other).await.unwrap().subject, "bob");
    assert_eq!(jwt.issuer.fetches(), 2);
}

#[tokio::test]
async fn with_no_verified_ttl_every_call_checks_the_token() {
    let jwt = Jwt::start(|v| {
        v.cache_ttl(Duration::ZERO)
            .refresh_interval(Duration::ZERO)
            .verified_ttl(Duration::ZERO)
    })
    .await;
    let token = signed(&jwt.claims());
    for n in 1..=3 {
        jwt.verify(&token).await.unwrap();
        assert_eq!(jwt.issuer.fetches(), n);
    }
}

#[tokio::test]
async fn a_remembered_token_is_checked_again_once_its_exp_has_passed() {
    // A long leeway: past its `exp` the token still passes a check, so only
    // the count of fetches tells a check from a remembered verdict.
    let jwt = Jwt::start(|v| {
        v.cache_ttl(Duration::ZERO)
            .refresh_interval(Duration::ZERO)
            .leeway(Duration::from_secs(300))
    })
    .await;
    let exp = now() + 2;
    let token = signed(&jwt.claims_with(json!({ "exp": exp })));
    jwt.verify(&token).await.unwrap();
    jwt.verify(&token).await.unwrap();
    assert_eq!(jwt.issuer.fetches(), 1, "remembered before its exp");
    until_past(exp).await;
    jwt.verify(&token).await.unwrap();
    assert_eq!(jwt.issuer.fetches(), 2, "checked again after its exp");
}

#[tokio::test]
async fn fetching_the_keys_again_forgets_the_tokens_that_passed() {
    let jwt = Jwt::start(|v| v.refresh_interval(Duration::ZERO)).await;
    let token = signed(&jwt.claims());
    jwt.verify(&token).await.unwrap();
    // The issuer stops publishing the key; until the keys are fetched
    // again, the token passes.
    jwt.issuer
        .publish(json!([rs256_jwk("rsa"), es256_jwk("ec")]));
    jwt.verify(&token).await.unwrap();
    assert_eq!(jwt.issuer.fetches(), 1);
    // An unknown `kid` has the keys fetched again...
    let unknown = sign(Algorithm::EdDSA, "new", &jwt.claims());
    assert_invalid(jwt.verify(&unknown).await, "signed by an unknown key");
    assert_eq!(jwt.issuer.fetches(), 2);
    // ...and the token is checked against what the issuer publishes now.
    assert_invalid(jwt.verify(&token).await, "signed by an unknown key");
    assert_401_invalid_token(&jwt.url, &token).await;
}

#[tokio::test]
async fn unknown_kids_fetch_the_keys_at_most_once_per_refresh_interval() {
    let jwt = Jwt::start(|v| v.refresh_interval(Duration::from_secs(2))).await;
    // Signed before any check: what follows takes no time to speak of.
    let unknown: Vec<String> = (0..40)
        .map(|n| sign(Algorithm::EdDSA, &format!("unknown-{n}"), &jwt.claims()))
        .collect();
    let other = EncodingKey::from_ed_pem(ED25519_OTHER_KEY.as_bytes()).unwrap();
    let claims = jwt.claims_with(json!({"sub": "bob"}));
    let new = jsonwebtoken::encode(&header(Algorithm::EdDSA, "ed-2"), &claims, &other).unwrap();
    // A burst of unknown kids: the keys are fetched for the first only.
    for token in &unknown[..20] {
        assert_invalid(jwt.verify(token).await, "signed by an unknown key");
    }
    assert_eq!(jwt.issuer.fetches(), 1);
    // The issuer adds a key: within the interval it is not fetched.
    let mut keys = published();
    keys.as_array_mut().unwrap().push(ed25519_other_jwk("ed-2"));
    jwt.issuer.publish(keys);
    assert_invalid(jwt.verify(&new).await, "signed by an unknown key");
    assert_eq!(jwt.issuer.fetches(), 1);
    // Past the interval, its kid has the keys fetched once, and it passes;
    // the next burst finds them fetched within the interval.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(jwt.verify(&new).await.unwrap().subject, "bob");
    assert_eq!(jwt.issuer.fetches(), 2);
    for token in &unknown[20..] {
        assert_invalid(jwt.verify(token).await, "signed by an unknown key");
    }
    assert_eq!(jwt.issuer.fetches(), 2);
}

// ------------------------------------------------------ introspection

/// An introspection endpoint that counts the calls per token, a verifier
/// that asks it, and an endpoint protected by that verifier.
struct Introspected {
    calls: Arc<Mutex<HashMap<String, usize>>>,
    verifier: Introspection,
    url: String,
    /// The `exp` of the token `short`.
    short_exp: u64,
    _stop: oneshot::Sender<()>,
}

impl Introspected {
    async fn start(configure: impl FnOnce(Introspection) -> Introspection) -> Introspected {
        let (listener, url) = bind().await;
        let calls = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
        let counted = calls.clone();
        let audience = url.clone();
        let short_exp = now() + 2;
        let endpoint = serve(move |seen| {
            let form: HashMap<String, String> = form_urlencoded::parse(seen.body.as_bytes())
                .into_owned()
                .collect();
            let token = form.get("token").cloned().unwrap_or_default();
            *counted.lock().unwrap().entry(token.clone()).or_default() += 1;
            let answer = |active: bool, sub: &str, exp: u64| {
                json!({"active": active, "sub": sub, "aud": audience, "exp": exp,
                    "client_id": "app", "scope": "files:read"})
            };
            // A revoked token's answer says who it was for: only `active`
            // refuses it.
            let answer = match token.as_str() {
                "ada" | "bob" => answer(true, &token, now() + 600),
                "short" => answer(true, "ada", short_exp),
                _ => answer(false, "ada", now() + 600),
            };
            Answer::Json("200 OK", answer.to_string())
        })
        .await;
        let introspect = format!("{endpoint}/introspect");
        let verifier = configure(Introspection::new(
            &introspect,
            &endpoint,
            &url,
            "rs",
            "rs-secret",
        ));
        let stop = protect(listener, &url, &endpoint, verifier.clone());
        Introspected {
            calls,
            verifier,
            url,
            short_exp,
            _stop: stop,
        }
    }

    /// How many times `token` was introspected.
    fn calls(&self, token: &str) -> usize {
        self.calls
            .lock()
            .unwrap()
            .get(token)
            .copied()
            .unwrap_or_default()
    }
}

#[tokio::test]
async fn the_same_token_is_introspected_once_within_the_cache_ttl() {
    let it = Introspected::start(|v| v).await;
    for _ in 0..3 {
        assert_eq!(it.verifier.verify("ada").await.unwrap().subject, "ada");
    }
    let (status, _) = list_with(&it.url, "ada").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(it.calls("ada"), 1);
}

#[tokio::test]
async fn different_tokens_are_introspected_separately() {
    let it = Introspected::start(|v| v).await;
    assert_eq!(it.verifier.verify("ada").await.unwrap().subject, "ada");
    assert_eq!(it.verifier.verify("bob").await.unwrap().subject, "bob");
    assert_eq!(it.verifier.verify("ada").await.unwrap().subject, "ada");
    assert_eq!(it.verifier.verify("bob").await.unwrap().subject, "bob");
    assert_eq!((it.calls("ada"), it.calls("bob")), (1, 1));
}

#[tokio::test]
async fn an_inactive_token_is_refused_401_and_not_remembered() {
    let it = Introspected::start(|v| v).await;
    assert_invalid(it.verifier.verify("revoked").await, "not active");
    assert_401_invalid_token(&it.url, "revoked").await;
    assert_eq!(it.calls("revoked"), 2, "each call asks again");
}

#[tokio::test]
async fn an_introspection_answer_is_not_reused_past_the_tokens_exp() {
    let it = Introspected::start(|v| v).await;
    it.verifier.verify("short").await.unwrap();
    it.verifier.verify("short").await.unwrap();
    assert_eq!(it.calls("short"), 1);
    until_past(it.short_exp).await;
    assert_invalid(it.verifier.verify("short").await, "expired");
    assert_eq!(it.calls("short"), 2, "asked again once its exp passed");
}

#[tokio::test]
async fn an_introspection_answer_is_not_reused_past_the_cache_ttl() {
    let it = Introspected::start(|v| v.cache_ttl(Duration::from_millis(100))).await;
    it.verifier.verify("ada").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    it.verifier.verify("ada").await.unwrap();
    assert_eq!(it.calls("ada"), 2);
    let none = Introspected::start(|v| v.cache_ttl(Duration::ZERO)).await;
    none.verifier.verify("ada").await.unwrap();
    none.verifier.verify("ada").await.unwrap();
    assert_eq!(none.calls("ada"), 2, "no cache at all");
}
