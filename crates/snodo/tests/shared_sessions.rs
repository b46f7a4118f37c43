//! Initialize-era sessions shared by two services in one process (one
//! `MemoryBus`, one directory, one keyring), called through the tower
//! service with the principal a resource server would have verified: a
//! session serves its owner on every node and nobody else, the directory
//! holds neither the session id nor the owner, a change writes its own
//! bytes only, and a subscription the record cannot take is an error.

mod legacy_support;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use snodo::Principal;
use snodo::handler::BoxFuture;
use snodo::server::events::EventHub;
use snodo::server::events::bus::MemoryBus;
use snodo::server::keyring::Keyring;
use snodo::server::legacy::{
    Changed, Delta, DirectoryError, Loaded, MAX_RECORD_BYTES, MAX_SUBSCRIPTION_URI,
    MemoryDirectory, SessionDirectory, SessionRecords,
};
use snodo::transport::http::{HttpOptions, McpService};
use tower_service::Service;

/// A directory that keeps a copy of every byte written to it.
#[derive(Clone)]
struct Recording {
    inner: Arc<MemoryDirectory>,
    written: Arc<Mutex<Vec<u8>>>,
}

impl Recording {
    fn new() -> Self {
        Self {
            inner: Arc::new(MemoryDirectory::new(100, Duration::from_secs(60))),
            written: Arc::default(),
        }
    }

    fn note(&self, parts: &[&[u8]]) {
        let mut written = self.written.lock().unwrap();
        for part in parts {
            written.extend_from_slice(part);
        }
    }

    fn written(&self) -> Vec<u8> {
        self.written.lock().unwrap().clone()
    }
}

impl SessionDirectory for Recording {
    fn create<'a>(
        &'a self,
        key: &'a str,
        head: &'a [u8],
        state: &'a [u8],
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        self.note(&[key.as_bytes(), head, state]);
        self.inner.create(key, head, state)
    }
    fn load<'a>(
        &'a self,
        key: &'a str,
        known: Option<u64>,
    ) -> BoxFuture<'a, Result<Option<Loaded>, DirectoryError>> {
        self.inner.load(key, known)
    }
    fn change<'a>(
        &'a self,
        key: &'a str,
        delta: Delta<'a>,
    ) -> BoxFuture<'a, Result<Changed, DirectoryError>> {
        match delta {
            Delta::SetState(state) => self.note(&[key.as_bytes(), state]),
            Delta::Add { name, value } => self.note(&[key.as_bytes(), name.as_bytes(), value]),
            Delta::Remove { name } => self.note(&[key.as_bytes(), name.as_bytes()]),
            _ => {}
        }
        self.inner.change(key, delta)
    }
    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, DirectoryError>> {
        self.note(&[key.as_bytes()]);
        self.inner.remove(key)
    }
}

/// Two nodes of one service.
struct Nodes {
    a: McpService,
    b: McpService,
    directory: Recording,
    records: SessionRecords,
}

fn nodes() -> Nodes {
    let (bus, keys) = (MemoryBus::new(), Keyring::single("k1", [7u8; 32]).unwrap());
    let directory = Recording::new();
    let records = SessionRecords::new(directory.clone(), keys.clone());
    let node = || {
        let hub = EventHub::with_bus(16, bus.clone(), keys.clone()).unwrap();
        let server = legacy_support::builder(Duration::from_secs(5))
            .events(hub)
            .build()
            .unwrap();
        server.http_service_with(HttpOptions::new().shared_sessions(records.clone()))
    };
    Nodes {
        a: node(),
        b: node(),
        directory,
        records,
    }
}

async fn send(
    node: &McpService,
    method: Method,
    session: Option<&str>,
    principal: Option<&str>,
    body: &str,
) -> (StatusCode, Option<String>, Value) {
    let mut request = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(id) = session {
        request = request.header("mcp-session-id", id);
    }
    let mut request = request
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    if let Some(subject) = principal {
        request.extensions_mut().insert(Principal::new(subject));
    }
    let Ok::<_, Infallible>(response) = node.clone().call(request).await;
    let status = response.status();
    let id = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    (status, id, json)
}

async fn initialize(node: &McpService, principal: Option<&str>) -> String {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let (status, id, _) = send(node, Method::POST, None, principal, body).await;
    assert_eq!(status, StatusCode::OK);
    let id = id.expect("a session id");
    let done = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, _) = send(node, Method::POST, Some(&id), principal, done).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    id
}

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_serves_its_owner_on_every_node_and_nobody_else() {
    let nodes = nodes();
    let session = initialize(&nodes.a, Some("alice")).await;
    for (principal, expected) in [
        (Some("alice"), StatusCode::OK),
        (Some("bob"), StatusCode::NOT_FOUND),
        (None, StatusCode::NOT_FOUND),
    ] {
        for node in [&nodes.a, &nodes.b] {
            let (status, _, _) = send(node, Method::POST, Some(&session), principal, PING).await;
            assert_eq!(status, expected, "{principal:?}");
        }
    }
    // What the directory was given names neither the session nor its owner.
    let written = String::from_utf8_lossy(&nodes.directory.written()).into_owned();
    assert!(!written.contains(&session), "{written}");
    assert!(!written.contains("alice"), "{written}");
    // Bob cannot end it; Alice can, on any node, for every node.
    let (status, _, _) = send(&nodes.b, Method::DELETE, Some(&session), Some("bob"), "").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = send(&nodes.b, Method::DELETE, Some(&session), Some("alice"), "").await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = send(&nodes.a, Method::POST, Some(&session), Some("alice"), PING).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(nodes.records.refused(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_are_written_one_by_one_and_refused_past_the_record() {
    let nodes = nodes();
    let session = initialize(&nodes.a, None).await;
    let written = nodes.directory.written().len();
    let (mut accepted, mut refusal) = (0usize, None);
    for i in 0..(MAX_RECORD_BYTES / MAX_SUBSCRIPTION_URI + 8) {
        let mut uri = format!("test://watched/{i:04}-");
        uri.extend(std::iter::repeat_n('x', MAX_SUBSCRIPTION_URI - uri.len()));
        let body = json!({"jsonrpc": "2.0", "id": i + 10, "method": "resources/subscribe", "params": {"uri": uri}});
        let node = if i % 2 == 0 { &nodes.a } else { &nodes.b };
        let (status, _, answer) =
            send(node, Method::POST, Some(&session), None, &body.to_string()).await;
        assert_eq!(status, StatusCode::OK);
        if answer["result"] == json!({}) {
            assert!(refusal.is_none(), "nothing fits once the record is full");
            accepted += 1;
        } else {
            refusal = Some(answer);
        }
    }
    let refusal = refusal.expect("the record refused a subscription");
    assert_eq!(refusal["error"]["code"], -32602, "{refusal}");
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(message.contains("Too many subscriptions"), "{message}");
    assert!(
        accepted >= MAX_RECORD_BYTES / MAX_SUBSCRIPTION_URI - 2,
        "{accepted}"
    );
    // Each subscription wrote its URI and a stamp, never the whole record.
    let per_subscription =
        (nodes.directory.written().len() - written) as f64 / (accepted + 8) as f64;
    assert!(
        per_subscription < (MAX_SUBSCRIPTION_URI + 200) as f64,
        "{per_subscription} bytes written per subscription"
    );
    // The refused subscription is not held by either node's copy either: a
    // ping still works, and the next read agrees with the record.
    for node in [&nodes.a, &nodes.b] {
        let (status, _, _) = send(node, Method::POST, Some(&session), None, PING).await;
        assert_eq!(status, StatusCode::OK);
    }
}
