//! The OAuth client against an MCP endpoint and its authorization server
//! played by the test on 127.0.0.1 with literal answers: how much of an
//! answer it reads, what every grant carries, and how many authorizations
//! one request may cause.
#![cfg(all(feature = "auth", feature = "http", feature = "client"))]

mod issuer_support;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use issuer_support::{Answer, Seen, serve};
use serde_json::{Value, json};
use snodo::client::oauth::{ClientCredentials, MAX_AUTHORIZATIONS, OAuth};
use snodo::client::{Client, ClientError};

/// The endpoint's Protected Resource Metadata.
const PRM: &str = "/.well-known/oauth-protected-resource/mcp";
/// The authorization server's metadata (RFC 8414, first of the spec's URLs).
const AS_METADATA: &str = "/.well-known/oauth-authorization-server";

/// What the MCP endpoint does with a request that carries a token.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    /// Answers it, unless the token was revoked (then `401 invalid_token`).
    Serves,
    /// Answers `403 insufficient_scope`, naming a scope never asked before.
    StepsUp,
}

/// An MCP endpoint (`/mcp`) and its authorization server (the same origin
/// is the issuer) on one loopback port; every request is recorded.
struct Played {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    revoked: Arc<Mutex<HashSet<String>>>,
}

impl Played {
    /// Starts them; the answer at `bloated` (a path) is padded to that many
    /// bytes.
    async fn start(endpoint: Endpoint, bloated: Option<(&'static str, usize)>) -> Played {
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let revoked: Arc<Mutex<HashSet<String>>> = Arc::default();
        let base: Arc<Mutex<String>> = Arc::default();
        let tokens = Arc::new(AtomicUsize::new(0));
        let steps = Arc::new(AtomicUsize::new(0));
        let (log, gone, named) = (seen.clone(), revoked.clone(), base.clone());
        let url = serve(move |request| {
            log.lock().unwrap().push(request.clone());
            let base = named.lock().unwrap().clone();
            let path = request.path.split('?').next().unwrap_or_default();
            let pad = |value: Value| match bloated {
                Some((at, size)) if at == path => padded(value, size),
                _ => value.to_string(),
            };
            match path {
                PRM => Answer::Json(
                    "200 OK",
                    pad(json!({
                        "resource": format!("{base}/mcp"),
                        "authorization_servers": [base],
                    })),
                ),
                AS_METADATA => Answer::Json(
                    "200 OK",
                    pad(json!({
                        "issuer": base,
                        "authorization_endpoint": format!("{base}/authorize"),
                        "token_endpoint": format!("{base}/token"),
                        "registration_endpoint": format!("{base}/register"),
                        "response_types_supported": ["code"],
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
                        "authorization_response_iss_parameter_supported": true,
                    })),
                ),
                "/register" => Answer::Json(
                    "201 Created",
                    pad(json!({"client_id": "registered", "token_endpoint_auth_method": "none"})),
                ),
                "/authorize" => {
                    let query = request.path.split_once('?').map(|(_, q)| q).unwrap_or("");
                    let param = |name: &str| {
                        form_urlencoded::parse(query.as_bytes())
                            .find(|(k, _)| k == name)
                            .map(|(_, v)| v.into_owned())
                            .unwrap_or_default()
                    };
                    let back = form_urlencoded::Serializer::new(String::new())
                        .append_pair("code", "the-code")
                        .append_pair("state", &param("state"))
                        .append_pair("iss", &base)
                        .finish();
                    let location = format!("{}?{back}", param("redirect_uri"));
                    Answer::With(
                        "302 Found",
                        vec![("location".into(), location)],
                        String::new(),
                    )
                }
                "/token" => {
                    let n = tokens.fetch_add(1, Ordering::SeqCst) + 1;
                    Answer::Json(
                        "200 OK",
                        pad(json!({
                            "access_token": format!("at-{n}"),
                            "token_type": "Bearer",
                            "expires_in": 3600,
                            "refresh_token": format!("rt-{n}"),
                        })),
                    )
                }
                "/mcp" => {
                    let challenge = |extra: String| {
                        vec![(
                            "www-authenticate".to_string(),
                            format!("Bearer {extra}resource_metadata=\"{base}{PRM}\""),
                        )]
                    };
                    let token = request
                        .header("authorization")
                        .and_then(|v| v.strip_prefix("Bearer "));
                    match token {
                        None => Answer::With(
                            "401 Unauthorized",
                            challenge(String::new()),
                            String::new(),
                        ),
                        Some(t) if gone.lock().unwrap().contains(t) => Answer::With(
                            "401 Unauthorized",
                            challenge("error=\"invalid_token\", ".into()),
                            String::new(),
                        ),
                        Some(_) if endpoint == Endpoint::StepsUp => {
                            let n = steps.fetch_add(1, Ordering::SeqCst) + 1;
                            Answer::With(
                                "403 Forbidden",
                                challenge(format!(
                                    "error=\"insufficient_scope\", scope=\"s{n}\", "
                                )),
                                String::new(),
                            )
                        }
                        Some(_) => Answer::Json("200 OK", mcp_answer(&request.body)),
                    }
                }
                _ => Answer::Json("404 Not Found", "{}".into()),
            }
        })
        .await;
        *base.lock().unwrap() = url.clone();
        Played {
            base: url,
            seen,
            revoked,
        }
    }

    fn mcp(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// The requests made so far to `path` (without its query).
    fn asked(&self, path: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.path.split('?').next() == Some(path))
            .cloned()
            .collect()
    }

    /// The path of the last request made.
    fn last_path(&self) -> String {
        let seen = self.seen.lock().unwrap();
        let last = seen.last().map(|s| s.path.clone()).unwrap_or_default();
        last.split('?').next().unwrap_or_default().to_string()
    }
}

/// `value` with a padding member making its JSON exactly `size` bytes.
fn padded(mut value: Value, size: usize) -> String {
    value["x_padding"] = json!("");
    let bare = value.to_string().len();
    assert!(size >= bare, "{size} bytes cannot hold {value}");
    value["x_padding"] = json!("a".repeat(size - bare));
    let text = value.to_string();
    assert_eq!(text.len(), size);
    text
}

/// The endpoint's literal 2026-07-28 answer to the request in `body`.
fn mcp_answer(body: &str) -> String {
    let request: Value = serde_json::from_str(body).unwrap_or_default();
    let result = match request["method"].as_str() {
        Some("server/discover") => json!({
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "played", "version": "1"}},
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
        }),
        _ => json!({"resultType": "complete", "tools": []}),
    };
    json!({"jsonrpc": "2.0", "id": request["id"], "result": result}).to_string()
}

/// Connects to the played endpoint with `oauth` (within 20 s).
async fn connect(played: &Played, oauth: OAuth) -> Result<Client, ClientError> {
    tokio::time::timeout(
        Duration::from_secs(20),
        Client::builder().oauth(oauth).connect(played.mcp()),
    )
    .await
    .expect("the client gives up by itself")
}

/// The value of `name` in the form or query `text`.
fn param(text: &str, name: &str) -> Option<String> {
    form_urlencoded::parse(text.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

const LIMIT: usize = 256 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_answers_are_read_up_to_256_kib_and_a_larger_one_fails_naming_it() {
    // Each answer the flow reads at exactly 256 KiB: the flow completes.
    for part in [PRM, AS_METADATA, "/register", "/token"] {
        let played = Played::start(Endpoint::Serves, Some((part, LIMIT))).await;
        let client = connect(&played, OAuth::builder().build()).await;
        assert!(client.is_ok(), "{part} at 256 KiB: {:?}", client.err());
        assert_eq!(played.asked(part).len(), 1, "{part}");
    }
    // One byte more, or 300 KiB: that answer fails the request, naming
    // where it came from and the bound, and the flow goes no further.
    for (part, size) in [
        (PRM, LIMIT + 1),
        (PRM, 300 * 1024),
        (AS_METADATA, LIMIT + 1),
        ("/register", LIMIT + 1),
        ("/token", LIMIT + 1),
    ] {
        let played = Played::start(Endpoint::Serves, Some((part, size))).await;
        let e = connect(&played, OAuth::builder().build())
            .await
            .expect_err(part);
        let said = e.to_string();
        let expected = format!("the answer of {}{part} is larger than 256 KiB", played.base);
        assert!(said.contains(&expected), "{part} at {size} bytes: {said}");
        assert!(e.is_auth(), "{said}");
        assert_eq!(played.last_path(), part, "nothing was asked after it");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_is_sent_with_the_authorization_request_and_every_grant() {
    let played = Played::start(Endpoint::Serves, None).await;
    let resource = played.mcp();
    // The authorization-code flow: the authorization request, then the
    // code exchange.
    let client = connect(&played, OAuth::builder().build()).await.unwrap();
    // The token is revoked: the next request refreshes it.
    played.revoked.lock().unwrap().insert("at-1".into());
    client.list_tools().await.unwrap();
    // The client-credentials grant, by another client.
    connect(
        &played,
        OAuth::builder()
            .client_credentials(ClientCredentials::secret("svc", "secret"))
            .build(),
    )
    .await
    .unwrap();

    let authorizations = played.asked("/authorize");
    assert_eq!(authorizations.len(), 1);
    let query = authorizations[0].path.split_once('?').unwrap().1;
    assert_eq!(param(query, "resource").as_deref(), Some(resource.as_str()));
    let grants = played.asked("/token");
    let kinds: Vec<String> = grants
        .iter()
        .map(|g| param(&g.body, "grant_type").unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        ["authorization_code", "refresh_token", "client_credentials"]
    );
    for grant in &grants {
        assert_eq!(
            param(&grant.body, "resource").as_deref(),
            Some(resource.as_str()),
            "{}",
            grant.body
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_refused_for_scope_forever_stops_after_three_authorizations() {
    assert_eq!(MAX_AUTHORIZATIONS, 3);
    let played = Played::start(Endpoint::StepsUp, None).await;
    let oauth = OAuth::builder()
        .client_credentials(ClientCredentials::secret("svc", "secret"))
        .build();
    let e = connect(&played, oauth).await.expect_err("never authorized");
    assert!(e.is_auth(), "not an authorization failure: {e}");
    assert_eq!(e.status(), Some(403));
    assert_eq!(
        e.to_string(),
        "not authorized (HTTP 403): still refused after 3 authorizations"
    );
    // The first try and one after each authorization.
    assert_eq!(played.asked("/mcp").len(), 4);
    let grants = played.asked("/token");
    assert_eq!(grants.len(), 3);
    // Each step-up asked for every scope asked before.
    let scopes: Vec<String> = grants
        .iter()
        .map(|g| param(&g.body, "scope").unwrap_or_default())
        .collect();
    assert_eq!(scopes, ["", "s1", "s1 s2"]);
}
