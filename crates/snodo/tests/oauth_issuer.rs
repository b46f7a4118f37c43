//! The resource server when its issuer hangs or is down, against an issuer
//! played on 127.0.0.1 by the test: one request at a time waits for the
//! issuer (a bounded fetch), the others are answered 503 at once, every 503
//! says when the next fetch will be tried, and a key never seen while the
//! issuer is down is 503, not 401.
#![cfg(all(feature = "auth", feature = "http", feature = "client"))]

mod oauth_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::StatusCode;
use oauth_support::mcp;
use serde_json::json;
use snodo::transport::http::oauth::{JwtVerifier, ResourceServer};
use snodo::transport::http::{HttpListener, HttpOptions};
use snodo::{Server, ToolResult, tool::from_fn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// The issuer answers.
const UP: u8 = 0;
/// The issuer accepts connections and never answers.
const HANGING: u8 = 1;
/// The issuer answers 503 to everything.
const DOWN: u8 = 2;

/// An issuer on 127.0.0.1 whose behaviour the test switches.
struct Issuer {
    url: String,
    mode: Arc<AtomicU8>,
}

impl Issuer {
    async fn start(mode: u8) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let mode = Arc::new(AtomicU8::new(mode));
        let (issuer, state) = (url.clone(), mode.clone());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (issuer, state) = (issuer.clone(), state.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let (status, body) = match state.load(Ordering::SeqCst) {
                        HANGING => {
                            // Bounded: the test is over long before.
                            tokio::time::sleep(Duration::from_secs(60)).await;
                            return;
                        }
                        DOWN => ("503 Service Unavailable", String::new()),
                        _ => {
                            let path = String::from_utf8_lossy(&head);
                            if path.starts_with("GET /jwks ") {
                                ("200 OK", jwks())
                            } else {
                                let meta =
                                    json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks")});
                                ("200 OK", meta.to_string())
                            }
                        }
                    };
                    let answer = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        Self { url, mode }
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }
}

/// One P-256 public key (the example key of RFC 7515, appendix A.3), as `k1`.
fn jwks() -> String {
    json!({"keys": [{
        "kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
        "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    }]})
    .to_string()
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
async fn protected(
    issuer: &str,
    verifier: impl FnOnce(&str) -> JwtVerifier,
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
    let issuer = Issuer::start(HANGING).await;
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
    let issuer = Issuer::start(UP).await;
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
