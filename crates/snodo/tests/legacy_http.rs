//! The initialize-era Streamable HTTP transport on a real loopback socket:
//! sessions, their errors and limits, requests to the client on a call's own
//! stream, resumption with `Last-Event-ID`, and the standalone GET stream.

mod common;
mod legacy_support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use snodo::transport::http::{HttpListener, HttpOptions, MemorySessions, SessionStore};
use tokio::sync::oneshot;

use common::{assert_legacy_response, assert_valid_in};

const V: &str = "2025-11-25";

struct Running {
    url: String,
    server: snodo::Server,
    client: Client<HttpConnector, Full<Bytes>>,
    _stop: oneshot::Sender<()>,
}

async fn start(options: HttpOptions) -> Running {
    let server = legacy_support::server(Duration::from_secs(5));
    let listener = HttpListener::bind(&server, "127.0.0.1:0".parse().unwrap(), options)
        .await
        .expect("bind 127.0.0.1:0");
    let url = listener.url();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(listener.run(async {
        let _ = stopped.await;
    }));
    Running {
        url,
        server,
        client: Client::builder(TokioExecutor::new()).build_http(),
        _stop: stop,
    }
}

impl Running {
    async fn send(
        &self,
        method: Method,
        headers: &[(&str, &str)],
        body: &str,
    ) -> http::Response<Incoming> {
        let mut request = Request::builder()
            .method(method)
            .uri(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap();
        tokio::time::timeout(Duration::from_secs(10), self.client.request(request))
            .await
            .expect("an answer within 10 s")
            .expect("the request goes through")
    }

    async fn post(&self, session: Option<&str>, body: &str) -> (StatusCode, HeaderMap, Value) {
        let mut headers = vec![("mcp-protocol-version", V)];
        if let Some(id) = session {
            headers.push(("mcp-session-id", id));
        }
        let response = self.send(Method::POST, &headers, body).await;
        read_json(response).await
    }

    /// POSTs a request of session `sid` that answers with a stream.
    async fn stream(&self, sid: &str, body: &str) -> Events {
        let headers = [("mcp-session-id", sid), ("mcp-protocol-version", V)];
        Events::new(self.send(Method::POST, &headers, body).await)
    }

    async fn initialize(&self, capabilities: Value) -> String {
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": V, "capabilities": capabilities,
            "clientInfo": {"name": "vectors", "version": "1.0.0"}}});
        let response = self.send(Method::POST, &[], &body.to_string()).await;
        let (status, headers, reply) = read_json(response).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        assert_legacy_response(V, &reply, "InitializeResult");
        let id = headers["mcp-session-id"].to_str().unwrap().to_string();
        let (status, _, _) = self
            .post(
                Some(&id),
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED);
        id
    }
}

async fn read_json(response: http::Response<Incoming>) -> (StatusCode, HeaderMap, Value) {
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    let value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{:?} is not JSON: {e}", String::from_utf8_lossy(&bytes)))
    };
    (parts.status, parts.headers, value)
}

/// Reads server-sent events one at a time.
struct Events {
    body: Incoming,
    buffer: String,
}

/// One event: its id (if any), whether it carried `retry`, and its data.
#[derive(Debug)]
struct Event {
    id: Option<String>,
    retry: bool,
    data: String,
}

impl Events {
    fn new(response: http::Response<Incoming>) -> Events {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Events {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if block.starts_with(':') {
                    continue;
                }
                let mut event = Event {
                    id: None,
                    retry: false,
                    data: String::new(),
                };
                for line in block.lines() {
                    if let Some(id) = line.strip_prefix("id: ") {
                        event.id = Some(id.to_string());
                    } else if line.starts_with("retry: ") {
                        event.retry = true;
                    } else if let Some(data) = line.strip_prefix("data: ") {
                        event.data = data.to_string();
                    }
                }
                return Some(event);
            }
            let frame = tokio::time::timeout(Duration::from_secs(5), self.body.frame())
                .await
                .expect("an event within 5 s")?
                .unwrap();
            if let Ok(data) = frame.into_data() {
                self.buffer.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    }

    async fn json(&mut self) -> Value {
        let event = self.next().await.expect("another event");
        serde_json::from_str(&event.data).unwrap_or_else(|e| panic!("{event:?}: {e}"))
    }
}

#[tokio::test]
async fn sessions_are_issued_required_and_ended() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    assert_eq!(sid.len(), 32);
    assert!(sid.bytes().all(|b| (0x21..=0x7e).contains(&b)));

    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let (status, _, body) = run.post(None, list).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], -32600);
    let (status, _, _) = run
        .post(Some("0123456789abcdef0123456789abcdef"), list)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a forged id");
    let (status, _, body) = run.post(Some(&sid), list).await;
    assert_eq!(status, StatusCode::OK);
    assert_legacy_response(V, &body, "ListToolsResult");

    // JSON-RPC errors of a live session travel on 200: a 404 would end it.
    let (status, _, body) = run
        .post(
            Some(&sid),
            r#"{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{}}"#,
        )
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (StatusCode::OK, Some(-32601))
    );
    let (status, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#)
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_i64()),
        (StatusCode::BAD_REQUEST, Some(-32600))
    );
    let response = run
        .send(
            Method::POST,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            list,
        )
        .await;
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "an unsupported version header"
    );
    let response = run
        .send(Method::POST, &[("mcp-session-id", &sid)], "[{}]")
        .await;
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "batches do not exist"
    );

    let response = run.send(Method::GET, &[], "").await;
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "GET needs a session"
    );
    let response = run
        .send(Method::DELETE, &[("mcp-session-id", "nope")], "")
        .await;
    assert_eq!(
        response.status(),
        StatusCode::NOT_FOUND,
        "DELETE of an unknown session"
    );
    let response = run
        .send(Method::DELETE, &[("mcp-session-id", &sid)], "")
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let (status, _, _) = run.post(Some(&sid), list).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "an ended session");
    let response = run.send(Method::GET, &[("mcp-session-id", &sid)], "").await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_2026_request_stays_stateless_beside_sessions() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let modern = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let response = run
        .send(
            Method::POST,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
            ],
            &modern.to_string(),
        )
        .await;
    let (status, _, body) = read_json(response).await;
    assert_eq!(
        (status, body["result"]["resultType"].as_str()),
        (StatusCode::OK, Some("complete"))
    );
    let response = run
        .send(
            Method::POST,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
                ("mcp-session-id", &sid),
            ],
            &modern.to_string(),
        )
        .await;
    let (_, _, body) = read_json(response).await;
    assert_eq!(
        body["result"]["resultType"], "complete",
        "the _meta claim wins over the session id"
    );
}

#[tokio::test]
async fn a_handler_that_needs_input_asks_on_its_own_stream() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({"elicitation": {}})).await;
    let mut events = run
        .stream(
            &sid,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask"}}"#,
        )
        .await;
    let priming = events.next().await.unwrap();
    assert!(
        priming.retry && priming.data.is_empty() && priming.id.is_some(),
        "{priming:?}"
    );
    let request = events.json().await;
    assert_valid_in(V, "ElicitRequest", &request);
    assert_eq!(request["method"], "elicitation/create");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Grace"}}});
    let (status, _, _) = run.post(Some(&sid), &answer.to_string()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let reply = events.json().await;
    assert_legacy_response(V, &reply, "CallToolResult");
    assert_eq!(reply["id"], 7);
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "name=Grace state=kept-in-process"
    );
    assert!(
        events.next().await.is_none(),
        "the stream ends with the response"
    );
}

#[tokio::test]
async fn a_broken_stream_resumes_from_last_event_id() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let mut events = run.stream(&sid, r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"p"}}}"#).await;
    let _priming = events.next().await.unwrap();
    let first = events.next().await.unwrap();
    let progress: Value = serde_json::from_str(&first.data).unwrap();
    assert_eq!(progress["params"]["progress"], 1);
    let last_id = first.id.clone().unwrap();
    drop(events); // the connection breaks; the call goes on

    let response = run
        .send(
            Method::GET,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", V),
                ("last-event-id", &last_id),
            ],
            "",
        )
        .await;
    let mut resumed = Events::new(response);
    let mut seen = Vec::new();
    while let Some(event) = resumed.next().await {
        assert!(event.id.is_some() && event.id.as_deref() != Some(last_id.as_str()));
        seen.push(serde_json::from_str::<Value>(&event.data).unwrap());
    }
    let progress: Vec<&Value> = seen
        .iter()
        .filter_map(|f| f["params"].get("progress"))
        .collect();
    assert_eq!(progress, [&json!(2), &json!(3)], "{seen:?}");
    let reply = seen.last().unwrap();
    assert_legacy_response(V, reply, "CallToolResult");
    assert_eq!(reply["result"]["content"][0]["text"], "stepped");

    let response = run
        .send(
            Method::GET,
            &[("mcp-session-id", &sid), ("last-event-id", "999-1")],
            "",
        )
        .await;
    assert_eq!(
        response.status(),
        StatusCode::BAD_REQUEST,
        "an id no stream has"
    );

    // An id that is not visible ASCII is refused too: it does not open the
    // standalone stream instead.
    let request = Request::builder()
        .method(Method::GET)
        .uri(&run.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", V)
        .header(
            "last-event-id",
            http::HeaderValue::from_bytes(b"1-\xe91").unwrap(),
        )
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = run.client.request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_last_event_id_of_64_visible_characters_resumes_and_one_of_65_or_none_is_400() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let mut events = run.stream(&sid, r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"p"}}}"#).await;
    let _priming = events.next().await.unwrap();
    let first = events.next().await.unwrap();
    let last_id = first.id.clone().unwrap();
    drop(events);

    // `<stream>-<seq>` with the stream number padded by zeros to a given
    // length names the same event.
    let (stream, seq) = last_id.split_once('-').unwrap();
    let padded = |len: usize| format!("{stream:0>width$}-{seq}", width = len - seq.len() - 1);
    let longest = padded(64);
    assert_eq!(longest.len(), 64);
    let response = run
        .send(
            Method::GET,
            &[
                ("mcp-session-id", &sid),
                ("mcp-protocol-version", V),
                ("last-event-id", &longest),
            ],
            "",
        )
        .await;
    let mut resumed = Events::new(response);
    let mut seen = Vec::new();
    while let Some(event) = resumed.next().await {
        seen.push(serde_json::from_str::<Value>(&event.data).unwrap());
    }
    let progress: Vec<&Value> = seen
        .iter()
        .filter_map(|f| f["params"].get("progress"))
        .collect();
    assert_eq!(progress, [&json!(2), &json!(3)], "{seen:?}");

    let refusal = json!({"jsonrpc": "2.0", "error": {"code": -32600,
        "message": "Bad Request: Last-Event-ID must be 1 to 64 visible ASCII characters"}});
    for id in [padded(65), String::new()] {
        let response = run
            .send(
                Method::GET,
                &[
                    ("mcp-session-id", &sid),
                    ("mcp-protocol-version", V),
                    ("last-event-id", &id),
                ],
                "",
            )
            .await;
        let (status, _, body) = read_json(response).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{id:?}");
        assert_eq!(body, refusal, "{id:?}");
    }
}

#[tokio::test]
async fn the_standalone_stream_carries_updates_and_list_changes() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", V),
    ];
    let mut stream = Events::new(run.send(Method::GET, &headers, "").await);
    let second = run.send(Method::GET, &headers, "").await;
    assert_eq!(
        second.status(),
        StatusCode::CONFLICT,
        "one standalone stream per session"
    );
    let (_, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched"}}"#)
        .await;
    assert_eq!(body["result"], json!({}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    run.server.events().resource_updated("test://other");
    run.server.events().resource_updated("test://watched");
    let update = stream.json().await;
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://watched"}})
    );
    assert!(run.server.remove_tool("wait"));
    assert_eq!(
        stream.json().await["method"],
        "notifications/tools/list_changed"
    );
    let response = run.send(Method::DELETE, &headers, "").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        stream.next().await.is_none(),
        "ending the session ends its stream"
    );
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;

#[tokio::test]
async fn ten_thousand_sessions_meet_a_clear_limit() {
    // One client may take the whole store here: the global bound is tested.
    let store = Arc::new(MemorySessions::new(1000, Duration::from_secs(600)).max_per_share(2000));
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    for _ in 0..1000 {
        run.initialize(json!({})).await;
    }
    let mut refused = 0;
    for _ in 0..9000 {
        let response = run.send(Method::POST, &[], INIT).await;
        let (status, headers, body) = read_json(response).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        // Every session is finished and active: the first gives way after
        // two idle minutes.
        let after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((60..=120).contains(&after), "Retry-After: {after}");
        assert_eq!(body["id"], 1);
        assert_eq!(
            body["error"]["message"],
            "Service unavailable: too many open sessions (at most 1000)"
        );
        refused += 1;
    }
    assert_eq!(refused, 9000);
    assert_eq!(store.len(), 1000, "memory stays bounded");
}

#[tokio::test]
async fn unfinished_handshakes_give_way_to_new_clients() {
    let store = Arc::new(
        MemorySessions::new(3, Duration::from_secs(600))
            .unfinished_grace(Duration::from_millis(200)),
    );
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    let finished = run.initialize(json!({})).await;
    for _ in 0..2 {
        let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "within the grace period"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    for _ in 0..2 {
        let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "an unfinished handshake was evicted"
        );
    }
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(
        status,
        StatusCode::SERVICE_UNAVAILABLE,
        "the new ones are in their grace period"
    );
    let (status, _, _) = run
        .post(
            Some(&finished),
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        )
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "a finished session is never evicted"
    );
    assert_eq!(store.len(), 3);
}

#[tokio::test]
async fn idle_sessions_expire_and_make_room() {
    let store = Arc::new(MemorySessions::new(10, Duration::from_millis(300)));
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    let mut ids = Vec::new();
    for _ in 0..10 {
        let (status, headers, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
        assert_eq!(status, StatusCode::OK);
        ids.push(headers["mcp-session-id"].to_str().unwrap().to_string());
    }
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (status, _, _) = run
        .post(Some(&ids[0]), r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "an expired session");
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(status, StatusCode::OK, "the expired session made room");
    assert_eq!(store.len(), 10, "idle sessions wait for a sweep");
    let (status, _, _) = read_json(run.send(Method::POST, &[], INIT).await).await;
    assert_eq!(status, StatusCode::OK, "a full store sweeps idle sessions");
    assert_eq!(store.len(), 2, "the sweep dropped every idle session");
}

#[tokio::test]
async fn notifications_cancelled_ends_a_streamed_call_without_a_response() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let mut events = run.stream(&sid, r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait","_meta":{"progressToken":1}}}"#).await;
    let _priming = events.next().await.unwrap();
    let (status, _, _) = run
        .post(
            Some(&sid),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert!(
        events.next().await.is_none(),
        "the stream ends with no response"
    );
    let (status, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#)
        .await;
    assert_eq!(
        (status, body["result"].clone()),
        (StatusCode::OK, json!({}))
    );
}

#[tokio::test]
async fn a_session_that_only_listens_does_not_expire() {
    let store = Arc::new(MemorySessions::new(10, Duration::from_millis(200)));
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    let sid = run.initialize(json!({})).await;
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", V),
    ];
    let stream = Events::new(run.send(Method::GET, &headers, "").await);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (status, _, _) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(status, StatusCode::OK, "the open stream kept the session");
    drop(stream);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (status, _, _) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "idle once the stream closed");
}

#[tokio::test]
async fn waiting_for_the_client_does_not_count_against_the_request_timeout() {
    let run = start(HttpOptions::default().request_timeout(Duration::from_millis(300))).await;
    let sid = run.initialize(json!({"elicitation": {}})).await;
    let mut events = run
        .stream(
            &sid,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ask"}}"#,
        )
        .await;
    let _priming = events.next().await.unwrap();
    let request = events.json().await;
    tokio::time::sleep(Duration::from_millis(700)).await; // a human, thinking
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Edsger"}}});
    let (status, _, _) = run.post(Some(&sid), &answer.to_string()).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let reply = events.json().await;
    assert_eq!(
        reply["result"]["content"][0]["text"], "name=Edsger state=kept-in-process",
        "{reply}"
    );
}

#[tokio::test]
async fn a_session_stream_queues_256_notifications_and_drops_the_rest() {
    assert_eq!(snodo::server::legacy::OUTBOX_QUEUE, 256, "README's queue");
    let store = Arc::new(MemorySessions::default());
    let run = start(HttpOptions::default().sessions(store.clone())).await;
    let sid = run.initialize(json!({"elicitation": {"url": {}}})).await;
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", V),
    ];
    let mut stream = Events::new(run.send(Method::GET, &headers, "").await);
    let session = store.get(&sid).expect("the session");
    let complete = |n: usize| {
        let mut params = serde_json::Map::new();
        params.insert("elicitationId".into(), format!("e-{n}").into());
        params
    };
    // The test and the server share one thread: nothing drains the queue
    // while these are sent, as if the client had stopped reading.
    let queued: Vec<bool> = (0..300)
        .map(|n| session.send_notification("notifications/elicitation/complete", complete(n)))
        .collect();
    assert!(queued[..256].iter().all(|q| *q), "the first 256 are queued");
    assert!(
        queued[256..].iter().all(|q| !*q),
        "the rest are dropped, and the sender told so"
    );
    for n in 0..256 {
        let notification = stream.json().await;
        assert_eq!(
            notification,
            json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                "params": {"elicitationId": format!("e-{n}")}})
        );
    }
    // The session and its stream live on: the next one is queued and is
    // the next event.
    assert!(session.send_notification("notifications/elicitation/complete", complete(300)));
    assert_eq!(stream.json().await["params"]["elicitationId"], "e-300");
    let (status, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(
        (status, body["result"].clone()),
        (StatusCode::OK, json!({}))
    );
}

#[tokio::test]
async fn a_session_stream_that_falls_behind_on_changes_hears_of_each_once() {
    let run = start(HttpOptions::default()).await;
    let sid = run.initialize(json!({})).await;
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", V),
    ];
    let (_, _, body) = run
        .post(Some(&sid), r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched"}}"#)
        .await;
    assert_eq!(body["result"], json!({}));
    let mut stream = Events::new(run.send(Method::GET, &headers, "").await);
    // One more change than the listener queue holds, with nothing reading
    // (the test and the server share one thread): the oldest is lost, and
    // the stream hears once of every list and subscribed resource instead.
    for _ in 0..=snodo::server::LISTENER_QUEUE {
        run.server.events().resource_updated("test://watched/part");
    }
    let notification = |method: &str| json!({"jsonrpc": "2.0", "method": method, "params": {}});
    assert_eq!(
        stream.json().await,
        notification("notifications/tools/list_changed")
    );
    assert_eq!(
        stream.json().await,
        notification("notifications/prompts/list_changed")
    );
    assert_eq!(
        stream.json().await,
        notification("notifications/resources/list_changed")
    );
    let watched = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
        "params": {"uri": "test://watched"}});
    assert_eq!(stream.json().await, watched);
    let part = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
        "params": {"uri": "test://watched/part"}});
    for _ in 0..snodo::server::LISTENER_QUEUE {
        assert_eq!(stream.json().await, part);
    }
    run.server.events().resource_updated("test://watched");
    assert_eq!(stream.json().await, watched, "nothing else was pending");
}
