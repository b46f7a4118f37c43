//! A real OpenID Connect provider (`interop/oauth/provider.mjs`, oidc-provider
//! from the npm registry) started on 127.0.0.1, plain HTTP helpers, and a
//! headless "browser" that signs in and consents on the provider's own pages.
//!
//! The provider is found through `SNODO_OIDC_DIR` (the folder with its
//! `node_modules`) and `SNODO_NODE` (a Node 22 binary), both set by
//! `interop/oauth/run.sh`, which installs them with `scripts/tools.sh`.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A running provider; stops when dropped (its stdin closes).
pub struct Provider {
    pub issuer: String,
    _child: Child,
}

/// Where the provider lives; panics with how to set it up.
fn setup() -> (String, String) {
    let dir = std::env::var("SNODO_OIDC_DIR").expect(
        "SNODO_OIDC_DIR is not set: run these tests through interop/oauth/run.sh, which installs oidc-provider",
    );
    let node = std::env::var("SNODO_NODE").unwrap_or_else(|_| "node".into());
    (dir, node)
}

impl Provider {
    /// Starts a provider; tokens for `opaque` resources are opaque.
    pub async fn start(opaque: &[&str]) -> Provider {
        let args: Vec<&str> = opaque.iter().flat_map(|r| ["--opaque", r]).collect();
        Self::start_with(&args).await
    }

    /// Starts a provider with these arguments of `provider.mjs`.
    pub async fn start_with(args: &[&str]) -> Provider {
        let (dir, node) = setup();
        let mut cmd = Command::new(node);
        cmd.arg(format!("{dir}/provider.mjs")).args(args);
        let mut child = cmd
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if std::env::var_os("SNODO_OAUTH_TRACE").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .kill_on_drop(true)
            .spawn()
            .expect("node starts");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        tokio::time::timeout(
            Duration::from_secs(30),
            BufReader::new(stdout).read_line(&mut line),
        )
        .await
        .expect("the provider starts in time")
        .unwrap();
        let v: Value = serde_json::from_str(&line).expect("the provider's first line");
        Provider {
            issuer: v["issuer"].as_str().unwrap().to_string(),
            _child: child,
        }
    }

    /// A client-credentials token (`Err` carries the error answer).
    pub async fn token(
        &self,
        client: &str,
        secret: &str,
        resource: &str,
        scope: &str,
    ) -> Result<String, String> {
        self.token_with(client, secret, resource, scope, None)
            .await
            .map(|(token, _)| token)
    }

    /// A client-credentials token asked for with a DPoP `proof` (when
    /// given), and its `token_type`.
    pub async fn token_with(
        &self,
        client: &str,
        secret: &str,
        resource: &str,
        scope: &str,
        proof: Option<&str>,
    ) -> Result<(String, String), String> {
        let form = form(&[
            ("grant_type", "client_credentials"),
            ("resource", resource),
            ("scope", scope),
        ]);
        let basic = base64_basic(client, secret);
        let mut headers = vec![
            ("authorization", basic.as_str()),
            ("content-type", "application/x-www-form-urlencoded"),
        ];
        if let Some(proof) = proof {
            headers.push(("dpop", proof));
        }
        let (status, _, body) = send(
            Method::POST,
            &format!("{}/token", self.issuer),
            &headers,
            form,
        )
        .await;
        let v: Value = serde_json::from_slice(&body).unwrap_or_default();
        match (v["access_token"].as_str(), v["token_type"].as_str()) {
            (Some(t), Some(kind)) if status == StatusCode::OK => {
                Ok((t.to_string(), kind.to_string()))
            }
            _ => Err(String::from_utf8_lossy(&body).into_owned()),
        }
    }

    /// A JWT with `claims` signed by the provider's access-token key (or a
    /// key it does not publish), and the provider's public key.
    pub async fn sign(&self, claims: Value, header: Value, rogue: bool) -> (String, Value) {
        let body = json!({"claims": claims, "header": header, "rogue": rogue}).to_string();
        let (_, _, body) = send(
            Method::POST,
            &format!("{}/__test/sign", self.issuer),
            &[("content-type", "application/json")],
            body.into(),
        )
        .await;
        let v: Value = serde_json::from_slice(&body).unwrap();
        (v["token"].as_str().unwrap().to_string(), v["jwk"].clone())
    }

    /// Takes the JWKS endpoint down (503) or brings it back.
    pub async fn jwks(&self, up: bool) {
        let path = if up { "up" } else { "down" };
        send(
            Method::POST,
            &format!("{}/__test/jwks/{path}", self.issuer),
            &[],
            Bytes::new(),
        )
        .await;
    }
}

pub fn form(pairs: &[(&str, &str)]) -> Bytes {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish().into()
}

pub fn base64_basic(id: &str, secret: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
    )
}

fn client() -> Client<HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http()
}

/// One request; the status, headers and whole body.
pub async fn send(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Bytes,
) -> (StatusCode, HeaderMap, Bytes) {
    let mut req = Request::builder().method(method).uri(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = tokio::time::timeout(
        Duration::from_secs(30),
        client().request(req.body(Full::new(body)).unwrap()),
    )
    .await
    .expect("answered in time")
    .expect("the request goes through");
    let (parts, body) = resp.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (parts.status, parts.headers, body)
}

/// The 2026-07-28 `_meta` of a request.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// POSTs one 2026-07-28 request to an MCP endpoint, with `authorization`
/// as the header value when given.
pub async fn mcp(
    url: &str,
    authorization: Option<&str>,
    method: &str,
    params: Value,
) -> (StatusCode, HeaderMap, Bytes) {
    mcp_with(url, authorization, &[], method, params).await
}

/// [`mcp`] with more headers (a DPoP proof).
pub async fn mcp_with(
    url: &str,
    authorization: Option<&str>,
    extra: &[(&str, &str)],
    method: &str,
    params: Value,
) -> (StatusCode, HeaderMap, Bytes) {
    let mut params = params;
    params["_meta"] = meta();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut headers = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if method == "tools/call" || method == "prompts/get" {
        headers.push(("mcp-name", name.as_str()));
    }
    if let Some(a) = authorization {
        headers.push(("authorization", a));
    }
    headers.extend_from_slice(extra);
    send(Method::POST, url, &headers, body.into()).await
}

/// Plays the user at the provider's pages: follows redirects keeping
/// cookies, signs in as `login` and consents, until a redirect leaves for
/// 127.0.0.1 (the client's loopback listener), which it then visits.
pub async fn browse(start: &str, login: &str) {
    let mut cookies: HashMap<String, String> = HashMap::new();
    let mut url = start.to_string();
    let mut post: Option<Bytes> = None;
    for _ in 0..30 {
        let cookie = cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let mut headers = vec![("cookie", cookie.as_str())];
        let method = if post.is_some() {
            headers.push(("content-type", "application/x-www-form-urlencoded"));
            Method::POST
        } else {
            Method::GET
        };
        if std::env::var_os("SNODO_OAUTH_TRACE").is_some() {
            eprintln!("browse: {method} {url}");
        }
        let (status, h, body) = send(method, &url, &headers, post.take().unwrap_or_default()).await;
        for v in h.get_all(header::SET_COOKIE) {
            let v = v.to_str().unwrap_or_default();
            if let Some((pair, _)) = v.split_once(';').or(Some((v, "")))
                && let Some((k, val)) = pair.split_once('=')
            {
                cookies.insert(k.trim().to_string(), val.to_string());
            }
        }
        if status.is_redirection() {
            let loc = h[header::LOCATION].to_str().unwrap().to_string();
            url = if loc.starts_with("http") {
                loc
            } else {
                let origin: String = url.splitn(4, '/').take(3).collect::<Vec<_>>().join("/");
                format!("{origin}{loc}")
            };
            if url.contains("/callback") {
                // The client's own listener: deliver the redirect and stop.
                let (status, _, _) = send(Method::GET, &url, &[], Bytes::new()).await;
                assert_eq!(status, StatusCode::OK, "the loopback listener answers");
                return;
            }
            continue;
        }
        let html = String::from_utf8_lossy(&body).into_owned();
        assert_eq!(status, StatusCode::OK, "{url}: {html}");
        let action = between(&html, "action=\"", "\"").expect("a form on the page");
        let prompt = between(&html, "name=\"prompt\" value=\"", "\"").unwrap_or_default();
        let origin: String = url.splitn(4, '/').take(3).collect::<Vec<_>>().join("/");
        url = if action.starts_with("http") {
            action
        } else {
            format!("{origin}{action}")
        };
        post = Some(if prompt == "login" {
            form(&[("prompt", "login"), ("login", login), ("password", "pw")])
        } else {
            form(&[("prompt", &prompt)])
        });
    }
    panic!("the provider's pages did not lead back to the client");
}

fn between(text: &str, start: &str, end: &str) -> Option<String> {
    let i = text.find(start)? + start.len();
    let j = text[i..].find(end)? + i;
    Some(text[i..j].replace("&amp;", "&"))
}
