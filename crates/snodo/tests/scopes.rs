//! Required scopes: what a request needs (component, builder, defaults), the
//! build-time checks, lists that hide what a grant does not cover, and the
//! HTTP answers of a resource server with a verifier of the application's
//! own (the provider-backed checks are in `oauth_provider.rs`).
#![cfg(all(feature = "auth", feature = "http"))]

use http::StatusCode;
use serde_json::{Map, Value, json};
use snodo::handler::BoxFuture;
use snodo::server::ScopePolicy;
use snodo::transport::http::oauth::{ResourceServer, TokenVerifier, VerifyError};
use snodo::transport::http::{HttpListener, HttpOptions};
use snodo::{Principal, Server, ServerBuilder, ToolResult, TransportInfo, tool::from_fn};

fn tool(name: &'static str) -> impl snodo::Tool {
    from_fn(name, move |_, _| async move { Ok(ToolResult::text(name)) })
}

fn builder() -> ServerBuilder {
    Server::builder("scopes", "1")
        .tool(tool("read"))
        .tool(tool("write"))
        .tool(tool("admin"))
        .default_scopes(["demo:read"])
        .tool_scopes("write", ["files:write"])
        .tool_scopes("admin", ["files:write", "admin"])
}

fn params(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[test]
fn requests_need_their_components_scopes_else_the_defaults() {
    let server = builder().build().unwrap();
    let need = |m: &str, p: Value| server.required_scopes(m, &params(p));
    assert_eq!(need("tools/call", json!({"name": "read"})), ["demo:read"]);
    assert_eq!(
        need("tools/call", json!({"name": "write"})),
        ["files:write"]
    );
    assert_eq!(
        need("tools/call", json!({"name": "admin"})),
        ["files:write", "admin"]
    );
    assert_eq!(need("tools/call", json!({"name": "nope"})), ["demo:read"]);
    assert_eq!(need("tools/list", json!({})), ["demo:read"]);
    assert_eq!(need("server/discover", json!({})), ["demo:read"]);

    let reader = Principal::new("r").with_scopes(["demo:read"]);
    let writer = Principal::new("w").with_scopes(["files:write"]);
    let check = |p: &Principal, name: &str| {
        server.check_scopes(p, "tools/call", &params(json!({"name": name})))
    };
    assert_eq!(check(&reader, "read"), Ok(()));
    assert_eq!(
        check(&reader, "write"),
        Err(vec!["files:write".to_string()])
    );
    assert_eq!(check(&writer, "write"), Ok(()));
    assert_eq!(
        check(&writer, "admin"),
        Err(vec!["files:write".to_string(), "admin".to_string()])
    );
}

#[test]
fn scope_mistakes_are_build_errors() {
    let e = builder().tool_scopes("typo", ["x"]).build().unwrap_err();
    assert!(
        e.to_string().contains("\"typo\", which is not registered"),
        "{e}"
    );
    let e = builder().default_scopes(["two words"]).build().unwrap_err();
    assert!(e.to_string().contains("default scopes"), "{e}");
    let e = builder().tool_scopes("read", [""]).build().unwrap_err();
    assert!(e.to_string().contains("must not be empty"), "{e}");
}

/// `files:admin` implies every `files:*` scope.
struct Hierarchy;

impl ScopePolicy for Hierarchy {
    fn satisfies(&self, granted: &[String], required: &str) -> bool {
        granted
            .iter()
            .any(|g| g == required || (g == "files:admin" && required.starts_with("files:")))
    }
}

#[test]
fn a_scope_policy_can_let_broad_scopes_imply_narrow_ones() {
    let server = builder().scope_policy(Hierarchy).build().unwrap();
    let admin = Principal::new("a").with_scopes(["files:admin", "admin"]);
    let call = params(json!({"name": "admin"}));
    assert_eq!(server.check_scopes(&admin, "tools/call", &call), Ok(()));
    let exact = builder().build().unwrap();
    assert!(exact.check_scopes(&admin, "tools/call", &call).is_err());
}

async fn list(server: &Server, principal: Option<Principal>) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let transport = TransportInfo {
        principal,
        ..Default::default()
    };
    let snodo::Dispatched::Reply(reply) = server
        .dispatch(&serde_json::to_vec(&body).unwrap(), transport)
        .await
    else {
        panic!("a reply");
    };
    let v: Value = serde_json::from_slice(&reply.body).unwrap();
    v["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn lists_can_hide_what_the_grant_does_not_cover() {
    let hiding = builder().hide_unauthorized(true).build().unwrap();
    let reader = Principal::new("r").with_scopes(["demo:read"]);
    assert_eq!(list(&hiding, Some(reader.clone())).await, ["read"]);
    let writer = Principal::new("w").with_scopes(["demo:read", "files:write"]);
    assert_eq!(list(&hiding, Some(writer)).await, ["read", "write"]);
    // Without a principal (stdio, no resource server) nothing is hidden;
    // by default nothing is hidden either.
    assert_eq!(list(&hiding, None).await, ["admin", "read", "write"]);
    let showing = builder().build().unwrap();
    assert_eq!(
        list(&showing, Some(reader)).await,
        ["admin", "read", "write"]
    );
}

/// Accepts `reader-token` (demo:read), `writer-token` (both scopes),
/// `guest-token` (no scope) and any token of more than 1 000 `a`s
/// (demo:read).
#[derive(Debug)]
struct Fixed;

impl TokenVerifier for Fixed {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, VerifyError>> {
        Box::pin(async move {
            match token {
                "reader-token" => Ok(Principal::new("r").with_scopes(["demo:read"])),
                "writer-token" => Ok(Principal::new("w").with_scopes(["demo:read", "files:write"])),
                "guest-token" => Ok(Principal::new("g")),
                t if t.len() > 1000 && t.bytes().all(|b| b == b'a') => {
                    Ok(Principal::new("long").with_scopes(["demo:read"]))
                }
                _ => Err(VerifyError::Invalid("unknown".into())),
            }
        })
    }
}

async fn post(url: &str, auth: Option<&str>, name: &str) -> (StatusCode, String, String) {
    use http_body_util::BodyExt;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let mut req = http::Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name);
    if let Some(a) = auth {
        req = req.header("authorization", a);
    }
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let resp = client
        .request(req.body(body.into()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let challenge = resp
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        challenge,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

/// Serves `builder()` on loopback behind a resource server with the
/// [`Fixed`] verifier (and `challenge` in its 401 challenges): the origin,
/// and the sender whose drop stops the listener.
async fn serve(challenge: &[&str]) -> (String, tokio::sync::oneshot::Sender<()>) {
    let bound = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", bound.local_addr().unwrap());
    let rs = ResourceServer::builder(&format!("{origin}/mcp"))
        .authorization_server("http://127.0.0.1:1")
        .challenge_scopes(challenge.iter().copied())
        .verifier(Fixed)
        .build()
        .unwrap();
    let listener = HttpListener::from_listener(
        &builder().build().unwrap(),
        bound,
        HttpOptions::new().oauth(rs),
    )
    .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(listener.run(async move {
        let _ = stopped.await;
    }));
    (origin, stop)
}

#[tokio::test]
async fn the_listener_answers_401_403_and_serves_the_metadata() {
    let (origin, stop) = serve(&["demo:read"]).await;
    let url = format!("{origin}/mcp");
    let prm = format!("{origin}/.well-known/oauth-protected-resource/mcp");

    let (status, challenge, _) = post(&url, None, "read").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge,
        format!(r#"Bearer resource_metadata="{prm}", scope="demo:read""#)
    );
    let (status, challenge, _) = post(&url, Some("Bearer other"), "read").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        challenge.contains(r#"error="invalid_token""#),
        "{challenge}"
    );
    let (status, _, body) = post(&url, Some("Bearer reader-token"), "read").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, challenge, body) = post(&url, Some("Bearer reader-token"), "write").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        challenge.starts_with(&format!(
            r#"Bearer resource_metadata="{prm}", error="insufficient_scope", scope="files:write""#
        )),
        "{challenge}"
    );
    let (status, _, _) = post(&url, Some("Bearer writer-token"), "write").await;
    assert_eq!(status, StatusCode::OK);
    let (status, challenge, _) = post(&url, Some("Bearer a b"), "read").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        challenge.contains(r#"error="invalid_request""#),
        "{challenge}"
    );
    drop(stop);
}

#[tokio::test]
async fn an_authorization_header_of_8192_bytes_is_served_and_one_of_8193_is_400_invalid_request() {
    use snodo::transport::http::oauth::MAX_AUTHORIZATION_BYTES;
    assert_eq!(MAX_AUTHORIZATION_BYTES, 8192);
    let (origin, stop) = serve(&[]).await;
    let url = format!("{origin}/mcp");

    // "Bearer " is 7 bytes: 8 185 `a`s make a header value of 8 192 bytes.
    let longest = format!("Bearer {}", "a".repeat(8185));
    assert_eq!(longest.len(), 8192);
    let (status, _, body) = post(&url, Some(&longest), "read").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "read", "{body}");

    let over = format!("Bearer {}", "a".repeat(8186));
    assert_eq!(over.len(), 8193);
    let (status, challenge, body) = post(&url, Some(&over), "read").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({
            "error": "invalid_request",
            "error_description": "the Authorization header is too long"
        })
    );
    assert!(
        challenge.contains(r#"error="invalid_request""#),
        "{challenge}"
    );
    drop(stop);
}

/// One POST of `body` with `token` and `headers`: the status, the
/// `WWW-Authenticate` challenge, the body and the session id the answer
/// carries.
async fn post_raw(
    url: &str,
    token: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, String, String, Option<String>) {
    use http_body_util::BodyExt;
    let mut req = http::Request::post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let resp = client
        .request(req.body(body.to_string().into()).unwrap())
        .await
        .unwrap();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let (status, challenge, session) = (
        resp.status(),
        header("www-authenticate").unwrap_or_default(),
        header("mcp-session-id"),
    );
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        challenge,
        String::from_utf8_lossy(&body).into_owned(),
        session,
    )
}

#[tokio::test]
async fn admission_refuses_what_the_grant_does_not_cover_in_both_eras() {
    let (origin, stop) = serve(&[]).await;
    let url = format!("{origin}/mcp");
    let forbidden = |challenge: &str, scope: &str| {
        assert!(
            challenge.contains(r#"error="insufficient_scope""#)
                && challenge.contains(&format!(r#"scope="{scope}""#)),
            "{challenge}"
        );
    };

    // 2026-07-28: a request that names no component needs the defaults.
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let modern = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/list"),
    ];
    let (status, challenge, body, _) = post_raw(&url, "guest-token", &modern, list).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    forbidden(&challenge, "demo:read");
    let (status, _, body, _) = post_raw(&url, "reader-token", &modern, list).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The initialize era: the handshake needs the defaults, and a session's
    // call the tool's own scopes, refused as a 2026-07-28 call is.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let (status, challenge, body, _) = post_raw(&url, "guest-token", &[], init).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    forbidden(&challenge, "demo:read");
    let (status, _, body, session) = post_raw(&url, "reader-token", &[], init).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let session = session.expect("a session id");
    let session = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, _, _) = post_raw(&url, "reader-token", &session, initialized).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let write = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"admin"}}"#;
    let (status, challenge, body, _) = post_raw(&url, "reader-token", &session, write).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    forbidden(&challenge, "files:write admin");
    let read = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read"}}"#;
    let (status, _, body, _) = post_raw(&url, "reader-token", &session, read).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["result"]["content"][0]["text"],
        "read"
    );
    let ping = r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#;
    let (status, _, body, _) = post_raw(&url, "reader-token", &session, ping).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    drop(stop);
}
