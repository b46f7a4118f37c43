//! What `snodo proxy --http` serves beside MCP on its listener: `/livez`,
//! `/readyz`, Prometheus text at `/metrics`, and the admin surface
//! (`/admin/backends`, `POST /admin/approve`, and `/admin`, a page over
//! them with no external assets).
//!
//! The admin surface takes `Authorization: Bearer <[auth] admin_token>`;
//! without `[auth]` (an open proxy) it answers loopback peers only, and
//! with `[auth]` but no `admin_token` it answers no one.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use serde_json::{Value, json};
use snodo::handler::ConnectionInfo;
use snodo::proxy::{PinStore, Proxy};
use snodo::transport::http::McpBody;

/// What the surface needs to know of the running configuration.
#[derive(Default)]
pub(crate) struct Setting {
    /// Each configured backend and whether `/readyz` waits for it.
    pub(crate) backends: BTreeMap<String, bool>,
    /// Who may use the admin surface.
    pub(crate) admin: Admin,
    /// Where pins are kept, if any backend is pinned.
    pub(crate) pins: Option<PinStore>,
    /// Set once the startup configuration is in.
    pub(crate) started: bool,
}

/// Who may use the admin surface.
#[derive(Default, Clone, PartialEq, Eq)]
pub(crate) enum Admin {
    /// Loopback peers (an open proxy).
    #[default]
    Loopback,
    /// Whoever shows this bearer token.
    Token(String),
    /// No one (`[auth]` without `admin_token`).
    Closed,
}

/// The surface: the proxy, the setting the watcher keeps current, and the
/// supervisors' last word on each backend.
#[derive(Clone)]
pub(crate) struct Ops {
    pub(crate) proxy: Proxy,
    pub(crate) setting: Arc<Mutex<Setting>>,
    pub(crate) notes: super::supervise::Notes,
    /// The virtual servers' endpoints.
    pub(crate) mounts: super::servers::Mounts,
}

fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<McpBody> {
    let mut response = Response::new(McpBody::full(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    response
}

/// The admin page: its data comes from `/admin/backends` with the token
/// the operator types in, kept in the page's memory only.
const ADMIN_PAGE: &str = include_str!("admin.html");

fn admin_page() -> Response<McpBody> {
    let mut response = respond(StatusCode::OK, "text/html; charset=utf-8", ADMIN_PAGE);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        header::HeaderValue::from_static("no-referrer"),
    );
    response
}

fn json_response(status: StatusCode, value: &Value) -> Response<McpBody> {
    respond(status, "application/json", value.to_string())
}

/// The names an approval's body gives: `{"names": ["a", ...]}`, or none
/// for `{"all": true}`.
fn approval(body: &[u8]) -> Result<Vec<String>, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let fields = v
        .as_object()
        .ok_or("give {\"names\": [...]} or {\"all\": true}")?;
    match (fields.get("names"), fields.get("all")) {
        (None, Some(Value::Bool(true))) if fields.len() == 1 => Ok(Vec::new()),
        (Some(Value::Array(names)), None) if !names.is_empty() && fields.len() == 1 => names
            .iter()
            .map(|n| {
                n.as_str()
                    .map(str::to_owned)
                    .ok_or("names are strings".to_string())
            })
            .collect(),
        _ => Err("give {\"names\": [\"NAME\", ...]} (at least one) or {\"all\": true}".into()),
    }
}

/// Compares without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Ops {
    /// The proxy it reports.
    pub(crate) fn proxy(&self) -> &Proxy {
        &self.proxy
    }

    fn setting(&self) -> std::sync::MutexGuard<'_, Setting> {
        self.setting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Answers one request to a path other than the MCP endpoint.
    pub(crate) async fn answer(self, request: Request<Bytes>) -> Response<McpBody> {
        if let Some(service) = self.mounts.find(request.uri().path()) {
            return super::servers::Mounts::answer(service, request).await;
        }
        let (method, path) = (request.method().clone(), request.uri().path().to_owned());
        match (method, path.as_str()) {
            (Method::GET, "/livez") => respond(StatusCode::OK, "text/plain", "ok\n"),
            (Method::GET, "/readyz") => self.ready(),
            (Method::GET, "/metrics") => respond(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                self.proxy.metrics(),
            ),
            (Method::GET, "/admin") => admin_page(),
            (_, p) if p.starts_with("/admin") => {
                if let Some(refusal) = self.refuse(&request) {
                    return refusal;
                }
                match (request.method().clone(), p) {
                    (Method::GET, "/admin/backends") => {
                        json_response(StatusCode::OK, &self.backends())
                    }
                    (Method::POST, "/admin/approve") => self.approve(request.body()).await,
                    _ => respond(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
                }
            }
            _ => respond(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
        }
    }

    /// Ready when every required backend's components are served.
    fn ready(&self) -> Response<McpBody> {
        let up: Vec<String> = self
            .proxy
            .status()
            .into_iter()
            .filter(|b| b.withdrawn.is_none())
            .map(|b| b.id)
            .collect();
        let waiting: Vec<String> = self
            .setting()
            .backends
            .iter()
            .filter(|(id, required)| **required && !up.contains(id))
            .map(|(id, _)| id.clone())
            .collect();
        let status = if waiting.is_empty() {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        json_response(
            status,
            &json!({"ready": waiting.is_empty(), "waiting": waiting}),
        )
    }

    /// Why the admin surface refuses `request`, if it does.
    fn refuse(&self, request: &Request<Bytes>) -> Option<Response<McpBody>> {
        let admin = self.setting().admin.clone();
        let denied = |status, why: &str| Some(json_response(status, &json!({"error": why})));
        match admin {
            Admin::Closed => denied(
                StatusCode::FORBIDDEN,
                "the admin surface is closed: set [auth] admin_token",
            ),
            Admin::Loopback => {
                let peer = request
                    .extensions()
                    .get::<ConnectionInfo>()
                    .map(|c| c.peer.ip());
                if peer.is_some_and(|ip| ip.is_loopback()) {
                    None
                } else {
                    denied(
                        StatusCode::FORBIDDEN,
                        "an open proxy's admin surface answers loopback peers only",
                    )
                }
            }
            Admin::Token(token) => {
                let shown = request
                    .headers()
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .unwrap_or_default();
                if same(shown.as_bytes(), token.as_bytes()) {
                    None
                } else {
                    let mut response = json_response(
                        StatusCode::UNAUTHORIZED,
                        &json!({"error": "show the admin token as a bearer token"}),
                    );
                    response.headers_mut().insert(
                        header::WWW_AUTHENTICATE,
                        header::HeaderValue::from_static("Bearer realm=\"snodo proxy admin\""),
                    );
                    Some(response)
                }
            }
        }
    }

    /// Each configured backend: its state, revision, counts, breaker,
    /// limits, pending pinned changes and the last error seen.
    pub(crate) fn backends(&self) -> Value {
        let served: BTreeMap<String, snodo::proxy::BackendStatus> = self
            .proxy
            .status()
            .into_iter()
            .map(|b| (b.id.clone(), b))
            .collect();
        let configured: Vec<(String, bool)> = self
            .setting()
            .backends
            .iter()
            .map(|(id, r)| (id.clone(), *r))
            .collect();
        let notes = self.notes.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let list: Vec<Value> = configured
            .into_iter()
            .map(|(id, required)| {
                let last = notes.get(&id).cloned();
                match served.get(&id) {
                    Some(b) => json!({
                        "id": id,
                        "state": if b.withdrawn.is_some() { "withdrawn" } else { "up" },
                        "required": required,
                        "revision": b.revision,
                        "tools": b.tools,
                        "resources": b.resources,
                        "prompts": b.prompts,
                        "breaker": b.breaker,
                        "limits": b.limits,
                        "pending": b.pending,
                        "callers": b.callers,
                        "lastError": b.withdrawn.clone().or(last),
                    }),
                    None => json!({
                        "id": id,
                        "state": "down",
                        "required": required,
                        "revision": null,
                        "tools": 0,
                        "resources": 0,
                        "prompts": 0,
                        "breaker": null,
                        "limits": "",
                        "pending": [],
                        "callers": null,
                        "lastError": last,
                    }),
                }
            })
            .collect();
        json!({"backends": list})
    }

    /// Approves pinned changes: `{"names": [...]}` (at least one name, all
    /// strings) or `{"all": true}`, then lists the backends again. Anything
    /// else is refused: a malformed body never approves everything.
    async fn approve(&self, body: &Bytes) -> Response<McpBody> {
        let Some(pins) = self.setting().pins.clone() else {
            return json_response(
                StatusCode::CONFLICT,
                &json!({"error": "no backend is pinned"}),
            );
        };
        let names = match approval(body) {
            Ok(names) => names,
            Err(why) => return json_response(StatusCode::BAD_REQUEST, &json!({"error": why})),
        };
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        match pins.approve(&names) {
            Ok(approved) => {
                for b in self.proxy.status() {
                    let _ = self.proxy.refresh(&b.id).await;
                }
                json_response(StatusCode::OK, &json!({"approved": approved}))
            }
            Err(e) => json_response(StatusCode::CONFLICT, &json!({"error": e.to_string()})),
        }
    }
}
