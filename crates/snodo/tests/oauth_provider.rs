//! The resource server and the client against a real OpenID Connect provider
//! (oidc-provider, started on 127.0.0.1 by `oauth_support`).
//!
//! Ignored by a plain `cargo test`: they need Node 22 and oidc-provider,
//! which `interop/oauth/run.sh` installs before running them with
//! `--ignored` (as `scripts/test.sh` does).
#![cfg(all(feature = "auth", feature = "http", feature = "client"))]

#[allow(unreachable_pub, dead_code)]
#[path = "../examples/oauth_axum.rs"]
mod example;
mod oauth_support;

use std::time::Duration;

use http::{StatusCode, header};
use oauth_support::{Provider, browse, mcp, mcp_with, send};
use serde_json::{Value, json};
use snodo::client::Client;
use snodo::client::oauth::{
    Assertion, AuthorizationSession, Authorizer, CallbackParams, ClientCredentials, DpopKey,
    EnterpriseIdp, LoopbackBrowser, OAuth,
};
use snodo::handler::BoxFuture;
use snodo::transport::http::oauth::{Introspection, JwtVerifier, ResourceServer, TokenVerifier};
use snodo::transport::http::{HttpListener, HttpOptions};
use snodo::{Context, Server, ToolResult, tool::from_fn};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// The demo's shape: `echo` needs the default `demo:read`, `delete` needs
/// `files:write`, and `whoami` reports the principal.
fn server() -> Server {
    Server::builder("protected", "1")
        .tool(from_fn("echo", |args, _| async move {
            Ok(ToolResult::text(args.str("text").unwrap_or_default()))
        }))
        .tool(from_fn("delete", |_, _| async move {
            Ok(ToolResult::text("deleted"))
        }))
        .tool(from_fn("whoami", |_, cx: Context| async move {
            let p = cx.principal().cloned().unwrap_or_default();
            Ok(ToolResult::text(format!(
                "{} {} {}",
                p.subject,
                p.client_id.unwrap_or_default(),
                p.scopes.join(",")
            )))
        }))
        .default_scopes(["demo:read"])
        .tool_scopes("delete", ["files:write"])
        .build()
        .unwrap()
}

struct Running {
    url: String,
    _stop: oneshot::Sender<()>,
}

/// A bound loopback port and the endpoint URL it will serve.
async fn reserve() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    (listener, url)
}

fn resource_server(url: &str, issuer: &str, verifier: impl TokenVerifier) -> ResourceServer {
    ResourceServer::builder(url)
        .authorization_server(issuer)
        .scopes_supported(["demo:read", "files:write"])
        .challenge_scopes(["demo:read"])
        .verifier(verifier)
        .build()
        .unwrap()
}

/// The built-in listener with `HttpOptions::oauth`.
async fn listen(listener: TcpListener, url: &str, rs: ResourceServer) -> Running {
    let running =
        HttpListener::from_listener(&server(), listener, HttpOptions::new().oauth(rs)).unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(running.run(async move {
        let _ = stopped.await;
    }));
    Running {
        url: url.to_string(),
        _stop: stop,
    }
}

/// The same server as an axum app, built by `examples/oauth_axum.rs`: the
/// tower layer in front of `http_service()`, the metadata routes beside it.
async fn axum_app(listener: TcpListener, url: &str, rs: ResourceServer) -> Running {
    let app = example::app(&server(), &rs);
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    Running {
        url: url.to_string(),
        _stop: stop,
    }
}

fn challenge(headers: &http::HeaderMap) -> String {
    headers
        .get(header::WWW_AUTHENTICATE)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default()
}

fn text_of(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or_default();
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Asserts a refusal: the status, the challenge's `error` (or none), and
/// that `secret` shows up nowhere in the answer.
fn refused(
    answer: &(StatusCode, http::HeaderMap, bytes::Bytes),
    status: StatusCode,
    error: Option<&str>,
    secret: &str,
    what: &str,
) {
    let (got, headers, body) = answer;
    assert_eq!(*got, status, "{what}: {}", String::from_utf8_lossy(body));
    let c = challenge(headers);
    assert!(c.starts_with("Bearer "), "{what}: {c}");
    assert!(c.contains("resource_metadata=\""), "{what}: {c}");
    match error {
        Some(e) => assert!(c.contains(&format!("error=\"{e}\"")), "{what}: {c}"),
        None => assert!(!c.contains("error="), "{what}: {c}"),
    }
    if !secret.is_empty() {
        let all = format!("{headers:?}{}", String::from_utf8_lossy(body));
        assert!(
            !all.contains(secret),
            "{what}: the token leaked into the answer"
        );
    }
}

fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Every check of the resource server against the provider's tokens, over
/// whichever server `url` is.
async fn check_resource_server(p: &Provider, url: &str) {
    let echo = json!({"name": "echo", "arguments": {"text": "hi"}});
    // A valid token passes, and its principal reaches the handler.
    let good = p
        .token("svc", "svc-secret", url, "demo:read files:write")
        .await
        .unwrap();
    let bearer = format!("Bearer {good}");
    let (status, _, body) = mcp(url, Some(&bearer), "tools/call", echo.clone()).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert_eq!(text_of(&body), "hi");
    let (_, _, body) = mcp(url, Some(&bearer), "tools/call", json!({"name": "whoami"})).await;
    assert_eq!(text_of(&body), "svc svc demo:read,files:write");
    let (status, _, _) = mcp(url, Some(&bearer), "tools/call", json!({"name": "delete"})).await;
    assert_eq!(status, StatusCode::OK);

    // No token: 401 with the metadata URL and the scopes, no error.
    let answer = mcp(url, None, "tools/list", json!({})).await;
    refused(&answer, StatusCode::UNAUTHORIZED, None, "", "no token");
    assert!(challenge(&answer.1).contains("scope=\"demo:read\""));

    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = |extra: Value| {
        let mut c = json!({"iss": p.issuer, "aud": url, "sub": "forged", "scope": "demo:read files:write",
            "iat": now, "exp": now + 300, "client_id": "svc"});
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                c.as_object_mut().unwrap().remove(k);
            } else {
                c[k] = v.clone();
            }
        }
        c
    };
    // The provider's own key signing the right claims passes: the forged
    // tokens below differ in one thing each.
    let (control, jwk) = p.sign(claims(json!({})), json!({}), false).await;
    let (status, _, _) = mcp(
        url,
        Some(&format!("Bearer {control}")),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "the control token");

    let mut cases: Vec<(&str, String)> = Vec::new();
    cases.push((
        "expired",
        p.sign(
            claims(json!({"exp": now - 3600, "iat": now - 7200})),
            json!({}),
            false,
        )
        .await
        .0,
    ));
    cases.push((
        "not yet valid",
        p.sign(claims(json!({"nbf": now + 3600})), json!({}), false)
            .await
            .0,
    ));
    cases.push((
        "wrong issuer",
        p.sign(
            claims(json!({"iss": "http://127.0.0.1:1"})),
            json!({}),
            false,
        )
        .await
        .0,
    ));
    cases.push((
        "no expiry",
        p.sign(claims(json!({"exp": null})), json!({}), false)
            .await
            .0,
    ));
    cases.push((
        "unknown kid",
        p.sign(claims(json!({})), json!({}), true).await.0,
    ));
    // A real token of the provider, for another resource.
    let other = p
        .token("svc", "svc-secret", "http://127.0.0.1:1/mcp", "demo:read")
        .await
        .unwrap();
    cases.push(("wrong audience", other));
    // alg none.
    let payload = b64(claims(json!({})).to_string().as_bytes());
    cases.push((
        "alg none",
        format!("{}.{payload}.", b64(br#"{"alg":"none","typ":"at+jwt"}"#)),
    ));
    // HS256 with the provider's public key as the HMAC secret.
    {
        use hmac::Mac;
        let head = b64(br#"{"alg":"HS256","typ":"at+jwt","kid":"es-1"}"#);
        let input = format!("{head}.{payload}");
        let mut mac =
            hmac::Hmac::<sha2::Sha256>::new_from_slice(jwk.to_string().as_bytes()).unwrap();
        mac.update(input.as_bytes());
        cases.push((
            "HS256 with the public key",
            format!("{input}.{}", b64(&mac.finalize().into_bytes())),
        ));
    }
    // Tampered: the control token with another payload.
    {
        let parts: Vec<&str> = control.split('.').collect();
        let bigger = b64(claims(json!({"sub": "admin"})).to_string().as_bytes());
        cases.push(("tampered", format!("{}.{bigger}.{}", parts[0], parts[2])));
    }
    for (what, token) in &cases {
        let answer = mcp(
            url,
            Some(&format!("Bearer {token}")),
            "tools/call",
            echo.clone(),
        )
        .await;
        refused(
            &answer,
            StatusCode::UNAUTHORIZED,
            Some("invalid_token"),
            token,
            what,
        );
    }

    // A missing scope: 403 naming it (the step-up challenge).
    let reader = p
        .token("reader", "reader-secret", url, "demo:read")
        .await
        .unwrap();
    let rb = format!("Bearer {reader}");
    let (status, _, _) = mcp(url, Some(&rb), "tools/call", echo.clone()).await;
    assert_eq!(status, StatusCode::OK);
    let answer = mcp(url, Some(&rb), "tools/call", json!({"name": "delete"})).await;
    refused(
        &answer,
        StatusCode::FORBIDDEN,
        Some("insufficient_scope"),
        &reader,
        "missing scope",
    );
    assert!(
        challenge(&answer.1).contains("scope=\"files:write\""),
        "{}",
        challenge(&answer.1)
    );

    // A hundred malformed Authorization headers: 400 or 401, never 5xx;
    // one longer than 8 KiB is exactly 400 `invalid_request`.
    let mut malformed: Vec<String> = vec![
        "Bearer".into(),
        "Bearer ".into(),
        "Bearer  ".into(),
        "Bearer a b".into(),
        "Bearer \"x\"".into(),
        "Bearer ====".into(),
        "Bearer a,b".into(),
        "Basic dXNlcjpwYXNz".into(),
        "bearer".into(),
        "Token x".into(),
        "Bearer ..".into(),
        "Bearer a.b".into(),
        "Bearer a.b.c.d".into(),
        format!("Bearer {}", "A".repeat(9000)),
        "Bearer é".into(),
        "Bearer \t".into(),
        "Digest x".into(),
        "Bearer%20x".into(),
        "=".into(),
        ",".into(),
    ];
    for i in 0..80 {
        let junk: String = (0..(i % 17 + 1))
            .map(|k| (b'!' + ((i * 7 + k * 13) % 90) as u8) as char)
            .collect();
        malformed.push(match i % 4 {
            0 => format!("Bearer {junk}"),
            1 => format!("{junk} {junk}"),
            2 => format!("Bearer {}.{}.{}", junk, b64(junk.as_bytes()), junk),
            _ => format!("Bearer {}", b64(junk.as_bytes())),
        });
    }
    assert_eq!(malformed.len(), 100);
    for value in &malformed {
        let Ok(_) = http::HeaderValue::from_str(value) else {
            continue;
        };
        let (status, _, body) = mcp(url, Some(value), "tools/list", json!({})).await;
        if value.len() > snodo::transport::http::oauth::MAX_AUTHORIZATION_BYTES {
            assert_eq!(status, StatusCode::BAD_REQUEST, "{value:.20}");
            let error: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(error["error"], "invalid_request");
            continue;
        }
        assert!(
            status == StatusCode::BAD_REQUEST || status == StatusCode::UNAUTHORIZED,
            "{value:?}: {status} {}",
            String::from_utf8_lossy(&body)
        );
    }
    // Two Authorization headers, and a token in the query string: 400.
    let (status, _, _) = oauth_support::send(
        http::Method::POST,
        url,
        &[
            ("authorization", &bearer),
            ("authorization", &bearer),
            ("content-type", "application/json"),
        ],
        "{}".into(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _, _) = oauth_support::send(
        http::Method::POST,
        &format!("{url}?access_token={good}"),
        &[("content-type", "application/json")],
        "{}".into(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // The metadata, at the path-inserted and root well-known URLs.
    let origin = url.trim_end_matches("/mcp");
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let (status, h, body) = oauth_support::send(
            http::Method::GET,
            &format!("{origin}{path}"),
            &[],
            Default::default(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(h["access-control-allow-origin"], "*");
        let doc: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(doc["resource"], url);
        assert_eq!(doc["authorization_servers"], json!([p.issuer]));
        assert_eq!(doc["scopes_supported"], json!(["demo:read", "files:write"]));
        let (status, _, body) = oauth_support::send(
            http::Method::HEAD,
            &format!("{origin}{path}"),
            &[],
            Default::default(),
        )
        .await;
        assert_eq!((status, body.len()), (StatusCode::OK, 0));
        let (status, h, _) = oauth_support::send(
            http::Method::OPTIONS,
            &format!("{origin}{path}"),
            &[],
            Default::default(),
        )
        .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert_eq!(h["access-control-allow-origin"], "*");
        let (status, _, _) = oauth_support::send(
            http::Method::POST,
            &format!("{origin}{path}"),
            &[],
            Default::default(),
        )
        .await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn the_listener_checks_the_providers_jwts() {
    let p = Provider::start(&[]).await;
    let (listener, url) = reserve().await;
    let rs = resource_server(&url, &p.issuer, JwtVerifier::new(&p.issuer, &url));
    let running = listen(listener, &url, rs).await;
    check_resource_server(&p, &running.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn the_tower_layer_in_an_axum_app_checks_the_same() {
    let p = Provider::start(&[]).await;
    let (listener, url) = reserve().await;
    let rs = resource_server(&url, &p.issuer, JwtVerifier::new(&p.issuer, &url));
    let running = axum_app(listener, &url, rs).await;
    check_resource_server(&p, &running.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn opaque_tokens_are_introspected() {
    let (listener, url) = reserve().await;
    let p = Provider::start(&[&url]).await;
    let verifier = Introspection::new(
        &format!("{}/token/introspection", p.issuer),
        &p.issuer,
        &url,
        "rs",
        "rs-secret",
    );
    let running = listen(listener, &url, resource_server(&url, &p.issuer, verifier)).await;
    let token = p
        .token("svc", "svc-secret", &url, "demo:read")
        .await
        .unwrap();
    assert_eq!(token.split('.').count(), 1, "an opaque token");
    let bearer = format!("Bearer {token}");
    for _ in 0..2 {
        let (status, _, body) = mcp(
            &running.url,
            Some(&bearer),
            "tools/call",
            json!({"name": "whoami"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(text_of(&body), "svc svc demo:read");
    }
    let answer = mcp(
        &running.url,
        Some(&bearer),
        "tools/call",
        json!({"name": "delete"}),
    )
    .await;
    refused(
        &answer,
        StatusCode::FORBIDDEN,
        Some("insufficient_scope"),
        &token,
        "opaque, missing scope",
    );
    let forged = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let answer = mcp(
        &running.url,
        Some(&format!("Bearer {forged}")),
        "tools/list",
        json!({}),
    )
    .await;
    refused(
        &answer,
        StatusCode::UNAUTHORIZED,
        Some("invalid_token"),
        forged,
        "unknown opaque token",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn the_jwks_going_away_and_coming_back_is_survived() {
    let p = Provider::start(&[]).await;
    let (listener, url) = reserve().await;
    let verifier = JwtVerifier::new(&p.issuer, &url)
        .cache_ttl(Duration::from_millis(300))
        .refresh_interval(Duration::from_millis(100))
        // Every call checks the signature: what is tested is the keys.
        .verified_ttl(Duration::ZERO);
    let running = listen(listener, &url, resource_server(&url, &p.issuer, verifier)).await;
    let token = p
        .token("svc", "svc-secret", &url, "demo:read")
        .await
        .unwrap();
    let bearer = format!("Bearer {token}");
    let ok = |answer: (StatusCode, _, _)| answer.0 == StatusCode::OK;
    assert!(ok(mcp(
        &running.url,
        Some(&bearer),
        "tools/list",
        json!({})
    )
    .await));
    p.jwks(false).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The keys are stale and cannot be fetched: the ones held still verify.
    assert!(ok(mcp(
        &running.url,
        Some(&bearer),
        "tools/list",
        json!({})
    )
    .await));
    // A key the server never saw, while the keys cannot be fetched: it may
    // be the issuer's new key, so nothing decides yet: 503, with the time
    // of the next fetch.
    let rogue = p
        .sign(
            json!({"iss": p.issuer, "aud": url, "exp": 4_000_000_000u64, "sub": "x"}),
            json!({}),
            true,
        )
        .await
        .0;
    let (status, headers, _) = mcp(
        &running.url,
        Some(&format!("Bearer {rogue}")),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        headers["retry-after"], "1",
        "the next fetch is within 100 ms"
    );
    p.jwks(true).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let fresh = p
        .token("svc", "svc-secret", &url, "demo:read")
        .await
        .unwrap();
    assert!(ok(mcp(
        &running.url,
        Some(&format!("Bearer {fresh}")),
        "tools/list",
        json!({})
    )
    .await));
}

/// A [`LoopbackBrowser`] whose "person" is [`browse`].
#[derive(Debug)]
struct TestUser(&'static str);

struct TestSession {
    inner: Box<dyn AuthorizationSession>,
    login: &'static str,
}

impl Authorizer for TestUser {
    fn start(
        &self,
    ) -> BoxFuture<'_, Result<Box<dyn AuthorizationSession>, snodo::client::oauth::OAuthError>>
    {
        Box::pin(async move {
            let inner = LoopbackBrowser::new().open_browser(false).start().await?;
            Ok(Box::new(TestSession {
                inner,
                login: self.0,
            }) as Box<dyn AuthorizationSession>)
        })
    }
}

impl AuthorizationSession for TestSession {
    fn redirect_uri(&self) -> &str {
        self.inner.redirect_uri()
    }

    fn complete(
        self: Box<Self>,
        url: String,
    ) -> BoxFuture<'static, Result<CallbackParams, snodo::client::oauth::OAuthError>> {
        let login = self.login;
        tokio::spawn(browse_later(url.clone(), login));
        self.inner.complete(url)
    }
}

async fn browse_later(url: String, login: &'static str) {
    tokio::time::sleep(Duration::from_millis(50)).await;
    browse(&url, login).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn the_client_completes_the_authorization_code_flow_against_the_provider() {
    let p = Provider::start(&[]).await;
    let (listener, url) = reserve().await;
    let rs = resource_server(&url, &p.issuer, JwtVerifier::new(&p.issuer, &url));
    let running = listen(listener, &url, rs).await;
    let oauth = OAuth::builder().authorizer(TestUser("ada")).build();
    let client = Client::builder()
        .oauth(oauth.clone())
        .connect(running.url.as_str())
        .await
        .unwrap();
    // The challenge names demo:read, so that is what is asked for first.
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    let text = who.text_content();
    assert!(
        text.starts_with("ada ") && text.ends_with(" demo:read"),
        "{text}"
    );
    // `delete` needs files:write: the 403 leads to a second authorization
    // for both scopes (step-up), then the call goes through.
    let deleted = client.call_tool("delete", json!({})).await.unwrap();
    assert_eq!(deleted.text_content(), "deleted");
    let text = client
        .call_tool("whoami", json!({}))
        .await
        .unwrap()
        .text_content();
    assert!(
        text.contains("demo:read") && text.contains("files:write"),
        "{text}"
    );
    // Registered dynamically, bound to the issuer; refresh token issued
    // because offline_access was asked with consent.
    let state = oauth.store().load(&p.issuer).expect("kept for the issuer");
    assert!(state.registration.is_some());
    let tokens = state.tokens.expect("tokens");
    assert!(tokens.refresh_token.is_some(), "{tokens:?}");
    assert_eq!(state.resource.as_deref(), Some(running.url.as_str()));
    client.close().await;

    // Client credentials against the same server.
    let cc = OAuth::builder()
        .client_credentials(ClientCredentials::secret("reader", "reader-secret"))
        .build();
    let client = Client::builder()
        .oauth(cc)
        .connect(running.url.as_str())
        .await
        .unwrap();
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(who.text_content(), "reader reader demo:read");
    // `delete` needs files:write, which reader may not get: the step-up
    // fails at the provider and the call reports why.
    let err = client.call_tool("delete", json!({})).await.unwrap_err();
    assert!(err.is_auth(), "{err}");
    client.close().await;
}

/// The payload of a JWT, read without checking it.
fn payload(jwt: &str) -> Value {
    use base64::Engine as _;
    let part = jwt.split('.').nth(1).unwrap();
    serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .unwrap(),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn dpop_bound_tokens_of_the_provider_are_checked_proof_by_proof() {
    let p = Provider::start(&[]).await;
    let (listener, url) = reserve().await;
    let rs = ResourceServer::builder(&url)
        .authorization_server(&p.issuer)
        .challenge_scopes(["demo:read"])
        .verifier(JwtVerifier::new(&p.issuer, &url))
        .dpop()
        .build()
        .unwrap();
    let running = listen(listener, &url, rs).await;
    let metadata = send(
        http::Method::GET,
        &url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"),
        &[],
        bytes::Bytes::new(),
    )
    .await
    .2;
    let metadata: Value = serde_json::from_slice(&metadata).unwrap();
    assert_eq!(
        metadata["dpop_signing_alg_values_supported"],
        json!(["ES256"])
    );
    assert_eq!(metadata["dpop_bound_access_tokens_required"], json!(false));

    // The client with a DPoP key: the provider lists ES256, so the token it
    // gets is bound, and every call carries a proof.
    let key = DpopKey::generate().unwrap();
    let oauth = OAuth::builder()
        .client_credentials(ClientCredentials::secret("svc", "svc-secret"))
        .dpop(key.clone())
        .build();
    let client = Client::builder()
        .oauth(oauth.clone())
        .connect(running.url.as_str())
        .await
        .unwrap();
    for _ in 0..3 {
        let who = client.call_tool("whoami", json!({})).await.unwrap();
        assert_eq!(who.text_content(), "svc svc demo:read");
    }
    let held = oauth.store().load(&p.issuer).unwrap().tokens.unwrap();
    assert_eq!(held.token_type, "DPoP");
    assert_eq!(held.dpop_jkt.as_deref(), Some(key.thumbprint()));
    assert_eq!(
        payload(&held.access_token)["cnf"]["jkt"],
        json!(key.thumbprint())
    );
    client.close().await;

    // The same by hand: a token bound to `key` by the provider.
    let token_endpoint = format!("{}/token", p.issuer);
    let proof = key.proof("POST", &token_endpoint, None, None).unwrap();
    let (token, kind) = p
        .token_with("svc", "svc-secret", &url, "demo:read", Some(&proof))
        .await
        .unwrap();
    assert_eq!(kind, "DPoP");
    let dpop = format!("DPoP {token}");
    let call = |authorization: String, proof: Option<String>| {
        let url = url.clone();
        async move {
            let extra: Vec<(&str, &str)> = proof.iter().map(|p| ("dpop", p.as_str())).collect();
            mcp_with(&url, Some(&authorization), &extra, "tools/list", json!({})).await
        }
    };
    let good = key.proof("POST", &url, Some(&token), None).unwrap();
    let (status, _, body) = call(dpop.clone(), Some(good.clone())).await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let proof_refused = |answer: (StatusCode, http::HeaderMap, bytes::Bytes), what: &str| {
        assert_eq!(answer.0, StatusCode::UNAUTHORIZED, "{what}");
        let c = challenge(&answer.1);
        assert!(
            c.starts_with("DPoP ") && c.contains("error=\"invalid_dpop_proof\""),
            "{what}: {c}"
        );
    };
    proof_refused(call(dpop.clone(), Some(good)).await, "a replayed proof");
    proof_refused(call(dpop.clone(), None).await, "no proof");
    let other = DpopKey::generate().unwrap();
    proof_refused(
        call(
            dpop.clone(),
            Some(other.proof("POST", &url, Some(&token), None).unwrap()),
        )
        .await,
        "another key's proof",
    );
    proof_refused(
        call(
            dpop.clone(),
            Some(key.proof("GET", &url, Some(&token), None).unwrap()),
        )
        .await,
        "another method",
    );
    proof_refused(
        call(
            dpop.clone(),
            Some(
                key.proof("POST", &url.replace("/mcp", "/other"), Some(&token), None)
                    .unwrap(),
            ),
        )
        .await,
        "another URI",
    );
    proof_refused(
        call(
            dpop.clone(),
            Some(key.proof("POST", &url, None, None).unwrap()),
        )
        .await,
        "no ath",
    );
    // A bound token presented as a bearer one is refused as a token.
    let answer = call(format!("Bearer {token}"), None).await;
    assert_eq!(answer.0, StatusCode::UNAUTHORIZED);
    assert!(challenge(&answer.1).contains("error=\"invalid_token\""));
    // A bearer token of the same provider still goes through here.
    let plain = p
        .token("svc", "svc-secret", &url, "demo:read")
        .await
        .unwrap();
    assert!(payload(&plain).get("cnf").is_none());
    let (status, _, _) = call(format!("Bearer {plain}"), None).await;
    assert_eq!(status, StatusCode::OK);
    // ... and is refused under the DPoP scheme.
    let answer = call(
        format!("DPoP {plain}"),
        Some(key.proof("POST", &url, Some(&plain), None).unwrap()),
    )
    .await;
    assert_eq!(answer.0, StatusCode::UNAUTHORIZED);

    // A server that takes bound tokens only refuses the bearer one, and
    // challenges with the DPoP scheme.
    let (listener, url2) = reserve().await;
    let rs = ResourceServer::builder(&url2)
        .authorization_server(&p.issuer)
        .verifier(JwtVerifier::new(&p.issuer, &url2))
        .dpop_required()
        .build()
        .unwrap();
    let _strict = listen(listener, &url2, rs).await;
    let plain = p
        .token("svc", "svc-secret", &url2, "demo:read")
        .await
        .unwrap();
    let answer = mcp(
        &url2,
        Some(&format!("Bearer {plain}")),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(answer.0, StatusCode::UNAUTHORIZED);
    assert!(challenge(&answer.1).starts_with("DPoP "), "{:?}", answer.1);
    let key2 = DpopKey::generate().unwrap();
    let oauth = OAuth::builder()
        .client_credentials(ClientCredentials::secret("svc", "svc-secret"))
        .dpop(key2)
        .build();
    let client = Client::builder().oauth(oauth).connect(&url2).await.unwrap();
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(who.text_content(), "svc svc demo:read");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs oidc-provider: run interop/oauth/run.sh"]
async fn enterprise_managed_authorization_through_an_identity_provider_and_the_servers_issuer() {
    // Two providers: the enterprise's identity provider, and the MCP
    // server's authorization server, which trusts it.
    let idp = Provider::start_with(&["--idp"]).await;
    let issuer = Provider::start_with(&["--trust-idp", &idp.issuer]).await;
    let (listener, url) = reserve().await;
    let rs = resource_server(&url, &issuer.issuer, JwtVerifier::new(&issuer.issuer, &url));
    let running = listen(listener, &url, rs).await;

    // The user's ID token, as the identity provider signs them for "app".
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let (id_token, _) = idp
        .sign(
            json!({"iss": idp.issuer, "aud": "app", "sub": "ada", "iat": now, "exp": now + 300}),
            json!({"typ": "JWT"}),
            false,
        )
        .await;
    let enterprise = |id_token: &str| {
        OAuth::builder()
            .client_credentials(ClientCredentials::Enterprise {
                client_id: "app".into(),
                client_secret: "app-secret".into(),
                idp: EnterpriseIdp::new(
                    &format!("{}/token", idp.issuer),
                    "app",
                    Assertion::text(id_token),
                )
                .with_secret("idp-secret"),
            })
            .build()
    };
    let client = Client::builder()
        .oauth(enterprise(&id_token))
        .connect(running.url.as_str())
        .await
        .unwrap();
    // The access token names the user of the ID token, the client, and the
    // scope the challenge asked for.
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(who.text_content(), "ada app demo:read");
    client.close().await;

    // An ID token the identity provider did not sign gets no ID-JAG, so no
    // access token: the call fails, naming the refusal.
    let (forged, _) = idp
        .sign(
            json!({"iss": idp.issuer, "aud": "app", "sub": "mallory", "iat": now, "exp": now + 300}),
            json!({"typ": "JWT"}),
            true,
        )
        .await;
    let err = match Client::builder()
        .oauth(enterprise(&forged))
        .connect(running.url.as_str())
        .await
    {
        Ok(client) => client.call_tool("whoami", json!({})).await.unwrap_err(),
        Err(e) => e,
    };
    assert!(err.is_auth(), "{err}");
    assert!(err.to_string().contains("invalid_grant"), "{err}");
}
