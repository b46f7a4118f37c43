//! The resource server when its issuer hangs or is down, against an issuer
//! played on 127.0.0.1 by the test: one request at a time waits for the
//! issuer (a bounded fetch), the others are answered 503 at once, every 503
//! says when the next fetch will be tried, and a key never seen while the
//! issuer is down is 503, not 401.
#![cfg(all(feature = "auth", feature = "http", feature = "client"))]

mod issuer_support;
mod oauth_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::StatusCode;
use issuer_support::{Answer, DOWN, HANGING, Issuer, UP, serve};
use oauth_support::mcp;
use serde_json::{Value, json};
use snodo::transport::http::oauth::{
    DEFAULT_FETCH_TIMEOUT, Introspection, JwtVerifier, ResourceServer, TokenVerifier,
};
use snodo::transport::http::{HttpListener, HttpOptions};
use snodo::{Server, ToolResult, tool::from_fn};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// One P-256 public key (the example key of RFC 7515, appendix A.3), as `k1`.
fn jwks() -> Value {
    json!([{
        "kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    }])
}

/// A token that names key `kid` (its signature never verifies: what is
/// tested is what happens before).
fn token(kid: &str) -> String {
    let head =
        URL_SAFE_NO_PAD.encode(json!({"alg": "ES256", "typ": "at+jwt", "kid": kid}).to_string());
    let body = URL_SAFE_NO_PAD.encode(r#"{"sub":"x","exp":4000000000}"#);
    format!("Bearer {head}.{body}.AAAA")
}

/// An MCP endpoint protected by `verifier`; its URL.
async fn protected<V: TokenVerifier>(
    issuer: &str,
    verifier: impl FnOnce(&str) -> V,
) -> (String, oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let rs = ResourceServer::builder(&url)
        .authorization_server(issuer)
        .verifier(verifier(&url))
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
    (url, stop)
}

fn retry_after(headers: &http::HeaderMap) -> u64 {
    headers["retry-after"].to_str().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_issuer_holds_one_request_for_one_fetch_and_the_others_not_at_all() {
    let issuer = Issuer::start(HANGING, jwks()).await;
    let (url, _stop) = protected(&issuer.url, |url| {
        JwtVerifier::new(&issuer.url, url).fetch_timeout(Duration::from_millis(800))
    })
    .await;
    let first = {
        let url = url.clone();
        tokio::spawn(async move { mcp(&url, Some(&token("k1")), "tools/list", json!({})).await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    // While the first request's fetch hangs, nothing cached decides for the
    // others: they are answered at once, before it.
    for _ in 0..5 {
        let (status, headers, _) = mcp(&url, Some(&token("k1")), "tools/list", json!({})).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            !first.is_finished(),
            "answered before the fetch in flight ended"
        );
        assert!(retry_after(&headers) >= 1);
    }
    let (status, headers, _) = tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .expect("the fetch is bounded")
        .unwrap();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    // The next fetch is tried a refresh interval (30 s) after this one.
    let after = retry_after(&headers);
    assert!((29..=30).contains(&after), "Retry-After: {after}");
    // Until then, no request waits for the issuer.
    let (status, headers, _) = tokio::time::timeout(
        Duration::from_millis(500),
        mcp(&url, Some(&token("k1")), "tools/list", json!({})),
    )
    .await
    .expect("no second fetch within the interval");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!((28..=30).contains(&retry_after(&headers)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_never_seen_while_the_issuer_is_down_is_503_not_401() {
    let issuer = Issuer::start(UP, jwks()).await;
    let (url, _stop) = protected(&issuer.url, |url| {
        JwtVerifier::new(&issuer.url, url).refresh_interval(Duration::from_millis(100))
    })
    .await;
    // The keys are fetched; this token's signature is not good: 401.
    let (status, _, _) = mcp(&url, Some(&token("k1")), "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // A key the issuer does not publish, the issuer up: 401.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (status, _, _) = mcp(&url, Some(&token("k2")), "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // The same while the issuer is down: it may be a new key; 503.
    issuer.set(DOWN);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (status, headers, _) = mcp(&url, Some(&token("k2")), "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(retry_after(&headers), 1, "the next fetch is within 100 ms");
    // Within the interval too, once the fetch failed.
    let (status, _, _) = mcp(&url, Some(&token("k2")), "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    // A known key still verifies from the keys held (its signature is bad
    // here: 401, decided without the issuer).
    let (status, _, _) = mcp(&url, Some(&token("k1")), "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_introspection_endpoint_holds_a_request_5_s_then_it_is_503() {
    assert_eq!(DEFAULT_FETCH_TIMEOUT, Duration::from_secs(5));
    let asked = Arc::new(AtomicUsize::new(0));
    let counted = asked.clone();
    let issuer = serve(move |seen| {
        if seen.path == "/introspect" {
            counted.fetch_add(1, Ordering::SeqCst);
        }
        Answer::Hang
    })
    .await;
    let endpoint = format!("{issuer}/introspect");
    let (url, _stop) = protected(&issuer, |url| {
        Introspection::new(&endpoint, &issuer, url, "rs", "secret")
    })
    .await;
    let started = Instant::now();
    let (status, headers, _) = mcp(&url, Some("Bearer opaque"), "tools/list", json!({})).await;
    let took = started.elapsed();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(retry_after(&headers) >= 1);
    assert_eq!(asked.load(Ordering::SeqCst), 1, "the endpoint was asked");
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_millis(6500),
        "answered after {took:?}"
    );
}

/// A JWKS document holding [`jwks`] and padding, exactly `size` bytes.
fn jwks_of(size: usize) -> String {
    let mut doc = json!({"keys": jwks(), "x_padding": ""});
    let bare = doc.to_string().len();
    doc["x_padding"] = json!("a".repeat(size - bare));
    let text = doc.to_string();
    assert_eq!(text.len(), size);
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jwks_answer_over_256_kib_is_not_read_and_the_request_is_503() {
    for (size, expected) in [
        (256 * 1024, StatusCode::UNAUTHORIZED),
        (256 * 1024 + 1, StatusCode::SERVICE_UNAVAILABLE),
    ] {
        let named = Arc::new(std::sync::Mutex::new(String::new()));
        let base = named.clone();
        let issuer = serve(move |seen| {
            let issuer = base.lock().unwrap().clone();
            if seen.path == "/jwks" {
                Answer::Json("200 OK", jwks_of(size))
            } else {
                let meta = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")});
                Answer::Json("200 OK", meta.to_string())
            }
        })
        .await;
        *named.lock().unwrap() = issuer.clone();
        let (url, _stop) = protected(&issuer, |url| JwtVerifier::new(&issuer, url)).await;
        // Read whole, the keys hold `k1` and the token's bad signature is
        // 401; past the bound, nothing is read and the key is unknown: 503.
        let (status, _, _) = mcp(&url, Some(&token("k1")), "tools/list", json!({})).await;
        assert_eq!(status, expected, "a JWKS of {size} bytes");
    }
}
