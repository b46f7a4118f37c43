//! The initialize-era dialect over stdio, with literal JSON vectors: every
//! line the server writes is checked against the official schema of the
//! negotiated revision.

mod common;
mod legacy_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::tool::from_fn;
use snodo::transport::StdioOptions;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf};

use common::{assert_legacy_response, assert_valid_in};

/// One end of a stdio connection to a server running `serve_lines`.
struct Pipe {
    input: tokio::io::WriteHalf<DuplexStream>,
    output: Lines<BufReader<ReadHalf<DuplexStream>>>,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Pipe {
    fn start(server: snodo::Server) -> Pipe {
        Pipe::start_with(server, StdioOptions::default())
    }

    fn start_with(server: snodo::Server, options: StdioOptions) -> Pipe {
        let (client, server_side) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server_side);
        let serving =
            tokio::spawn(async move { server.serve_lines(server_in, server_out, options).await });
        let (read, write) = tokio::io::split(client);
        Pipe {
            input: write,
            output: BufReader::new(read).lines(),
            serving,
        }
    }

    async fn send(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).await.unwrap();
        self.input.write_all(b"\n").await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.output.next_line())
            .await
            .expect("a line within 5 s")
            .unwrap()
            .expect("the server is still writing");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?} is not JSON: {e}"))
    }

    /// Sends `ping` and expects its empty result.
    async fn ping(&mut self, id: u32) {
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))
            .await;
        assert_eq!(
            self.recv().await,
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        );
    }

    /// Nothing arrives within `ms`.
    async fn silent(&mut self, ms: u64) {
        let next = tokio::time::timeout(Duration::from_millis(ms), self.output.next_line()).await;
        assert!(next.is_err(), "unexpected line: {next:?}");
    }

    async fn close(self) {
        // Both halves: the duplex reports end of input once its client end is gone.
        drop(self.input);
        drop(self.output);
        tokio::time::timeout(Duration::from_secs(10), self.serving)
            .await
            .expect("the server stops at end of input")
            .unwrap()
            .unwrap();
    }
}

fn server() -> snodo::Server {
    legacy_support::server(Duration::from_millis(300))
}

async fn initialized(version: &str, capabilities: Value) -> Pipe {
    initialized_on(server(), version, capabilities).await
}

async fn initialized_on(server: snodo::Server, version: &str, capabilities: Value) -> Pipe {
    let mut pipe = Pipe::start(server);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities,
        "clientInfo": {"name": "vectors", "version": "1.0.0"}}});
    pipe.send(&init.to_string()).await;
    let reply = pipe.recv().await;
    assert_eq!(reply["result"]["protocolVersion"], version, "{reply}");
    pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    pipe
}

#[tokio::test]
async fn the_handshake_negotiates_and_shapes_the_result_per_revision() {
    for (asked, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2024-11-05", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let mut pipe = Pipe::start(server());
        pipe.send(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{asked}","capabilities":{{}},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
        ))
        .await;
        let reply = pipe.recv().await;
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": 1, "result": {
                "protocolVersion": answered,
                "capabilities": {
                    "logging": {},
                    "prompts": {"listChanged": true},
                    "resources": {"listChanged": true, "subscribe": true},
                    "tools": {"listChanged": true}
                },
                "serverInfo": {"name": "legacy-tests", "version": "1.0.0"}
            }}),
            "asked {asked}"
        );
        assert_legacy_response(answered, &reply, "InitializeResult");
        pipe.close().await;
    }
}

#[tokio::test]
async fn requests_before_initialize_are_refused_except_ping() {
    let mut pipe = Pipe::start(server());
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32600,
            "message": "Invalid Request: the session is not initialized; send initialize first"}})
    );
    pipe.ping(2).await;
    pipe.close().await;
}

#[tokio::test]
async fn the_initialize_era_surface_answers_in_its_own_shapes() {
    for rev in ["2025-11-25", "2025-06-18"] {
        let mut pipe = initialized(rev, json!({})).await;
        let exchanges: Vec<(&str, &str, Value)> = vec![
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
                "EmptyResult",
                json!({}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}"#,
                "EmptyResult",
                json!({}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
                "CallToolResult",
                json!({"content": [{"type": "text", "text": "hi"}]}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sum","arguments":{"a":2,"b":3}}}"#,
                "CallToolResult",
                json!({"content": [{"type": "text", "text": "{\"sum\":5}"}], "structuredContent": {"sum": 5}}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#,
                "CallToolResult",
                json!({"content": [{"type": "text", "text": "Missing required arguments: text"}], "isError": true}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"test://watched"}}"#,
                "ReadResourceResult",
                json!({"contents": [{"uri": "test://watched", "text": "watched content"}]}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"test://watched"}}"#,
                "EmptyResult",
                json!({}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"hello","arguments":{"who":"Ada"}}}"#,
                "GetPromptResult",
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}]}),
            ),
            (
                r#"{"jsonrpc":"2.0","id":9,"method":"resources/unsubscribe","params":{"uri":"test://watched"}}"#,
                "EmptyResult",
                json!({}),
            ),
        ];
        for (line, def, result) in exchanges {
            pipe.send(line).await;
            let reply = pipe.recv().await;
            assert_legacy_response(rev, &reply, def);
            assert_eq!(reply["result"], result, "{rev}: {line}");
        }
        for (line, code) in [
            (
                r#"{"jsonrpc":"2.0","id":20,"method":"server/discover"}"#,
                -32601,
            ),
            (
                r#"{"jsonrpc":"2.0","id":21,"method":"subscriptions/listen","params":{}}"#,
                -32601,
            ),
            (
                r#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"nope"}}"#,
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":23,"method":"resources/read","params":{"uri":"test://nope"}}"#,
                -32002,
            ),
            (
                r#"{"jsonrpc":"2.0","id":24,"method":"logging/setLevel","params":{"level":"loud"}}"#,
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":25,"method":"prompts/get","params":{"name":"hello"}}"#,
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":26,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
                -32600,
            ),
        ] {
            pipe.send(line).await;
            let reply = pipe.recv().await;
            assert_legacy_response(rev, &reply, "Result");
            assert_eq!(reply["error"]["code"], code, "{rev}: {line} -> {reply}");
        }
        pipe.send(r#"{"jsonrpc":"2.0","id":27,"method":"tools/list"}"#)
            .await;
        let list = pipe.recv().await;
        assert_legacy_response(rev, &list, "ListToolsResult");
        let names: Vec<&str> = list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["ask", "echo", "roots", "steps", "sum", "visit", "wait"]
        );
        pipe.close().await;
    }
}

#[tokio::test]
async fn progress_and_log_messages_follow_the_session_level() {
    let mut pipe = initialized("2025-11-25", json!({})).await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}"#)
        .await;
    assert_eq!(pipe.recv().await["result"], json!({}));
    pipe.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"t"}}}"#)
        .await;
    let mut frames = Vec::new();
    loop {
        let frame = pipe.recv().await;
        let last = frame.get("id").is_some();
        frames.push(frame);
        if last {
            break;
        }
    }
    let methods: Vec<&str> = frames
        .iter()
        .map(|f| f["method"].as_str().unwrap_or("response"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "notifications/message",
            "response"
        ]
    );
    assert_eq!(
        frames[0],
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "t", "progress": 1, "total": 3}})
    );
    assert_eq!(
        frames[1],
        json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": {"step": 1}}})
    );
    for frame in &frames[..6] {
        let def = if frame["method"] == "notifications/progress" {
            "ProgressNotification"
        } else {
            "LoggingMessageNotification"
        };
        assert_valid_in("2025-11-25", def, frame);
    }
    assert_legacy_response("2025-11-25", &frames[6], "CallToolResult");
    pipe.close().await;
}

#[tokio::test]
async fn an_input_required_handler_becomes_a_server_request_and_runs_again() {
    let mut pipe = initialized("2025-06-18", json!({"elicitation": {}})).await;
    pipe.send(r#"{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    let request = pipe.recv().await;
    // The request's id is 128 random bits: nobody who did not see the
    // request can answer it.
    let id = request["id"].as_str().expect("a string id").to_string();
    assert!(
        id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(
        request,
        json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        }})
    );
    assert_valid_in("2025-06-18", "ElicitRequest", &request);
    // An answer to a request the server never sent changes nothing.
    for guess in [r#"999"#, "1", r#""00000000000000000000000000000001""#] {
        pipe.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{guess},"result":{{"action":"accept","content":{{"name":"Mallory"}}}}}}"#
        ))
        .await;
    }
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"action":"accept","content":{{"name":"Ada"}}}}}}"#
    ))
    .await;
    let reply = pipe.recv().await;
    assert_legacy_response("2025-06-18", &reply, "CallToolResult");
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": "call-1", "result": {"content": [
            {"type": "text", "text": "name=Ada state=kept-in-process"}]}})
    );
    pipe.close().await;
}

#[tokio::test]
async fn client_input_failures_end_in_documented_results() {
    // No elicitation capability: an isError result, no request sent.
    let mut pipe = initialized("2025-11-25", json!({})).await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    let reply = pipe.recv().await;
    assert_legacy_response("2025-11-25", &reply, "CallToolResult");
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    pipe.close().await;

    // The client answers with an error.
    let mut pipe = initialized("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    let request = pipe.recv().await;
    assert_valid_in("2025-11-25", "ElicitRequest", &request);
    assert_eq!(request["params"]["mode"], "form");
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-1,"message":"User rejected"}}}}"#,
        request["id"]
    ))
    .await;
    let reply = pipe.recv().await;
    assert_eq!(
        reply["result"],
        json!({"content": [{"type": "text", "text": "The client answered elicitation/create with an error: User rejected"}], "isError": true})
    );

    // The client never answers: the input timeout (300 ms here) ends it.
    pipe.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    let _ignored = pipe.recv().await;
    let reply = pipe.recv().await;
    assert_eq!(reply["id"], 2);
    assert_eq!(reply["result"]["isError"], true);
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did not answer elicitation/create"),
        "{reply}"
    );
    pipe.close().await;
}

#[tokio::test]
async fn url_elicitation_exists_only_from_2025_11_25() {
    let mut pipe = initialized("2025-11-25", json!({"elicitation": {"url": {}}})).await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"visit"}}"#)
        .await;
    let request = pipe.recv().await;
    assert_valid_in("2025-11-25", "ElicitRequest", &request);
    assert_eq!(request["params"]["mode"], "url");
    assert_eq!(
        request["params"]["elicitationId"].as_str().unwrap().len(),
        32
    );
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"action":"accept"}}}}"#,
        request["id"]
    ))
    .await;
    let reply = pipe.recv().await;
    assert_eq!(
        reply["result"]["content"][0]["text"],
        r#"visited: {"action":"accept"}"#
    );
    pipe.close().await;

    let mut pipe = initialized("2025-06-18", json!({"elicitation": {}})).await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"visit"}}"#)
        .await;
    let reply = pipe.recv().await;
    assert_eq!(reply["id"], 1, "no request is sent: {reply}");
    assert_eq!(reply["result"]["isError"], true);
    pipe.close().await;
}

/// Sets its flag when dropped: the handler holding it has ended.
struct EndMark(Arc<AtomicBool>);

impl Drop for EndMark {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Waits (boundedly) until `done` says so.
async fn until(done: impl Fn() -> bool, what: &str) {
    for _ in 0..500 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what} did not happen within 5 s");
}

#[tokio::test]
async fn notifications_cancelled_stops_the_handler_and_suppresses_the_response() {
    // The handler takes no notice of the cancellation: it ticks every 10 ms
    // for a minute, unless it is stopped.
    let ticks = Arc::new(AtomicUsize::new(0));
    let ended = Arc::new(AtomicBool::new(false));
    let (counter, mark) = (ticks.clone(), ended.clone());
    let server = snodo::Server::builder("cancel", "1.0.0")
        .tool(
            from_fn("tick", move |_, _cx: Context| {
                let (ticks, end) = (counter.clone(), EndMark(mark.clone()));
                async move {
                    let _end = end;
                    for _ in 0..6000 {
                        ticks.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    Ok(ToolResult::text("ticked a minute"))
                }
            })
            .input_schema(json!({"type": "object"})),
        )
        .build()
        .unwrap();
    let mut pipe = initialized_on(server, "2025-11-25", json!({})).await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tick"}}"#)
        .await;
    until(|| ticks.load(Ordering::SeqCst) > 1, "the handler's ticking").await;
    assert!(!ended.load(Ordering::SeqCst), "the handler runs");
    pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"changed my mind"}}"#)
        .await;
    until(|| ended.load(Ordering::SeqCst), "the handler's end").await;
    let stopped_at = ticks.load(Ordering::SeqCst);
    pipe.silent(200).await;
    assert_eq!(ticks.load(Ordering::SeqCst), stopped_at, "it ticks no more");
    pipe.ping(2).await;
    pipe.close().await;
}

#[tokio::test]
async fn resource_updates_reach_subscribers_and_list_changes_everyone() {
    let server = server();
    let mut pipe = Pipe::start(server.clone());
    pipe.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#)
        .await;
    pipe.recv().await;
    server.events().resource_updated("test://watched");
    pipe.silent(100).await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched"}}"#)
        .await;
    assert_eq!(pipe.recv().await["result"], json!({}));
    server.events().resource_updated("test://watched");
    let update = pipe.recv().await;
    assert_eq!(
        update,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://watched"}})
    );
    assert_valid_in("2025-11-25", "ResourceUpdatedNotification", &update);
    assert!(server.remove_tool("wait"));
    let changed = pipe.recv().await;
    assert_eq!(
        changed,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}})
    );
    assert_valid_in("2025-11-25", "ToolListChangedNotification", &changed);
    pipe.close().await;
}

#[tokio::test]
async fn a_2026_first_request_pins_the_modern_era_and_discover_does_not() {
    let mut pipe = Pipe::start(server());
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{meta}}}}}"#
    ))
    .await;
    let discover = pipe.recv().await;
    assert_eq!(discover["result"]["resultType"], "complete");
    pipe.send(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#)
        .await;
    assert_eq!(pipe.recv().await["result"]["protocolVersion"], "2025-06-18");
    pipe.close().await;

    let mut pipe = Pipe::start(server());
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{meta}}}}}"#
    ))
    .await;
    assert_eq!(pipe.recv().await["result"]["resultType"], "complete");
    pipe.send(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#)
        .await;
    assert_eq!(pipe.recv().await["error"]["code"], -32601);
    pipe.close().await;
}

#[tokio::test]
async fn a_modern_only_server_refuses_initialize() {
    let server = snodo::Server::builder("modern", "1")
        .revisions([snodo::model::Revision::V2026_07_28])
        .build()
        .unwrap();
    let mut pipe = Pipe::start(server);
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#)
        .await;
    assert_eq!(pipe.recv().await["error"]["code"], -32601);
    pipe.close().await;
}

#[tokio::test]
async fn roots_are_asked_for_with_a_real_request() {
    let mut pipe = initialized("2025-06-18", json!({"roots": {"listChanged": true}})).await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots"}}"#)
        .await;
    let request = pipe.recv().await;
    assert_eq!(
        request,
        json!({"jsonrpc": "2.0", "id": request["id"], "method": "roots/list", "params": {}})
    );
    assert!(request["id"].is_string(), "{request}");
    assert_valid_in("2025-06-18", "ListRootsRequest", &request);
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"roots":[{{"uri":"file:///a","name":"a"}},{{"uri":"file:///b"}}]}}}}"#,
        request["id"]
    ))
    .await;
    let reply = pipe.recv().await;
    assert_eq!(reply["result"]["content"][0]["text"], "2 root(s)");
    pipe.close().await;
}

#[tokio::test]
async fn answers_are_read_even_when_every_slot_is_taken() {
    let options = StdioOptions::new().max_in_flight(1);
    let mut pipe = Pipe::start_with(server(), options);
    pipe.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}"#)
        .await;
    pipe.recv().await;
    pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    let request = pipe.recv().await;
    assert_eq!(request["method"], "elicitation/create");
    // The only slot is taken: one request is held, the next is refused.
    pipe.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"held"}}}"#)
        .await;
    pipe.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#)
        .await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "Server busy: more than 1 requests in flight"}})
    );
    // The answer still gets through, and everything finishes.
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"action":"accept","content":{{"name":"Ada"}}}}}}"#,
        request["id"]
    ))
    .await;
    let first = pipe.recv().await;
    assert_eq!(first["id"], 1);
    assert_eq!(
        first["result"]["content"][0]["text"],
        "name=Ada state=kept-in-process"
    );
    let second = pipe.recv().await;
    assert_eq!(second["result"]["content"][0]["text"], "held");
    pipe.close().await;
}

#[tokio::test]
async fn no_request_reaches_a_client_before_it_finished_initializing() {
    let mut pipe = Pipe::start(server());
    pipe.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}"#)
        .await;
    pipe.recv().await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    let reply = pipe.recv().await;
    assert_eq!(reply["id"], 1, "no elicitation/create was sent: {reply}");
    assert_eq!(reply["result"]["isError"], true);
    pipe.close().await;
}

#[tokio::test]
async fn a_request_gets_eight_rounds_of_client_input_and_fails_on_a_ninth() {
    assert_eq!(snodo::server::legacy::MAX_INPUT_ROUNDS, 8, "README's limit");
    // Asks for input `times` times, counting in its request state.
    let persistent = from_fn("persistent", |args: Arguments, cx: Context| async move {
        let times = args.i64("times")?;
        let asked: i64 = cx.request_state().map_or(0, |s| s.parse().unwrap());
        if asked == times {
            return Ok(ToolResult::text(format!("asked {asked} times")));
        }
        Ok(ToolResult::input_required(
            InputRequired::new()
                .elicit_form(
                    "again",
                    &format!("Question {}?", asked + 1),
                    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                )
                .state((asked + 1).to_string()),
        ))
    })
    .input_schema(json!({"type": "object", "properties": {"times": {"type": "integer"}}, "required": ["times"]}));
    let server = legacy_support::builder(Duration::from_secs(5))
        .tool(persistent)
        .build()
        .unwrap();
    let mut pipe = initialized_on(server, "2025-11-25", json!({"elicitation": {}})).await;
    for (id, times) in [(1, 8), (2, 9)] {
        pipe.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"persistent","arguments":{{"times":{times}}}}}}}"#
        ))
        .await;
        for question in 1..=8 {
            let request = pipe.recv().await;
            assert_eq!(request["method"], "elicitation/create", "{request}");
            assert_eq!(
                request["params"]["message"],
                format!("Question {question}?")
            );
            pipe.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"action":"accept","content":{{"ok":true}}}}}}"#,
                request["id"]
            ))
            .await;
        }
        let reply = pipe.recv().await;
        if times == 8 {
            assert_legacy_response("2025-11-25", &reply, "CallToolResult");
            assert_eq!(
                reply,
                json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [
                    {"type": "text", "text": "asked 8 times"}]}})
            );
        } else {
            assert_eq!(
                reply,
                json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603,
                    "message": "The request needed more than 8 rounds of client input"}}),
                "no ninth question is asked"
            );
        }
    }
    pipe.close().await;
}

#[tokio::test]
async fn both_eras_pass_one_admission_and_are_refused_alike() {
    let server = || {
        snodo::Server::builder("admission", "1")
            .tool(from_fn("echo", |_, _cx: Context| async {
                Ok(ToolResult::text("echoed"))
            }))
            .build()
            .unwrap()
    };
    // Each refused request as 2026-07-28 sends it and as a session does,
    // and the error both eras give.
    let refused = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/list"}"#,
            json!({"code": -32601, "message": "Method not found: prompts/list",
                   "data": {"reason": "Server does not support the prompts capability"}}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}"#,
            json!({"code": -32602, "message": "Unknown tool: nope"}),
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":[1],"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
            json!({"code": -32602, "message": "Tool arguments must be an object"}),
        ),
    ];
    let mut modern = Pipe::start(server());
    let mut legacy = initialized_on(server(), "2025-11-25", json!({})).await;
    for (new_line, old_line, error) in &refused {
        modern.send(new_line).await;
        legacy.send(old_line).await;
        let (new, old) = (modern.recv().await, legacy.recv().await);
        assert_eq!(new["error"], *error, "{new}");
        assert_eq!(old["error"], *error, "{old}");
        assert_eq!(new["id"], old["id"]);
    }
    modern.close().await;
    legacy.close().await;
}
