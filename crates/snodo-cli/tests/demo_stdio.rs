//! The demo server as a real child process over stdio: framing, concurrency,
//! cancellation, limits and shutdown, with literal JSON on the pipes.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::time::timeout;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;

struct Demo {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Demo {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_snodo"))
            .args(["demo", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("the demo starts");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            child,
            stdin,
            lines,
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn line(&mut self) -> Value {
        let line = timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    async fn call(&mut self, id: i64, tool: &str, args: &str) -> Value {
        let msg = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{META},"name":"{tool}","arguments":{args}}}}}"#
        );
        self.send(format!("{msg}\n").as_bytes()).await;
        self.line().await
    }
}

#[tokio::test]
async fn answers_calls_with_both_failure_shapes() {
    let mut demo = Demo::start();
    let hello = demo.call(1, "greet", r#"{"name":"Ada"}"#).await;
    assert_eq!(
        hello["result"]["content"],
        json!([{"type": "text", "text": "Hello, Ada!"}])
    );
    let sum = demo.call(2, "add", r#"{"a":2,"b":40}"#).await;
    assert_eq!(sum["result"]["structuredContent"], json!({"sum": 42}));
    let unknown_word = demo.call(3, "lookup", r#"{"word":"zzz"}"#).await;
    assert_eq!(unknown_word["result"]["isError"], true);
    let missing = demo.call(4, "add", r#"{"a":1}"#).await;
    assert_eq!(
        missing["result"]["content"][0]["text"],
        "Missing required arguments: b"
    );
    let invalid = demo.call(5, "greet", r#"{"name":""}"#).await;
    assert_eq!(
        invalid["result"]["content"][0]["text"],
        "Invalid arguments at /name: minLength: must be at least 1 characters long"
    );
    let unknown_tool = demo.call(6, "nope", "{}").await;
    assert_eq!(unknown_tool["error"]["code"], -32602);
}

#[tokio::test]
async fn tolerates_bom_crlf_and_blank_lines_and_rejects_garbage() {
    let mut demo = Demo::start();
    let msg = format!(r#"{{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{{{META}}}}}"#);
    demo.send(format!("\u{feff}{msg}\r\n\n\n").as_bytes()).await;
    assert_eq!(demo.line().await["id"], "a");
    demo.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\n").await;
    assert_eq!(demo.line().await["error"]["code"], -32700);
    demo.send(b"\xff\xfe\xfd\n").await;
    assert_eq!(demo.line().await["error"]["code"], -32700);
    demo.send(format!("[{}]\n", "[".repeat(10_000)).as_bytes())
        .await;
    assert_eq!(demo.line().await["error"]["code"], -32700);
    demo.send(b"[]\n").await;
    assert_eq!(demo.line().await["error"]["code"], -32600);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{{"pad":"{}"}}}}"#,
        "x".repeat(3 * 1024 * 1024)
    );
    demo.send(format!("{big}\n").as_bytes()).await;
    let refused = demo.line().await;
    assert_eq!(refused["error"]["code"], -32600);
    assert!(
        refused.get("id").is_none(),
        "an over-long line is not decoded: {refused}"
    );
    let still = demo.call(10, "greet", r#"{"name":"still here"}"#).await;
    assert_eq!(still["result"]["content"][0]["text"], "Hello, still here!");
}

#[tokio::test]
async fn runs_requests_concurrently_and_writes_whole_frames() {
    let mut demo = Demo::start();
    let mut batch = Vec::new();
    batch.extend_from_slice(format!(r#"{{"jsonrpc":"2.0","id":1000,"method":"tools/call","params":{{{META},"name":"count","arguments":{{"to":5}}}}}}"#).as_bytes());
    batch.push(b'\n');
    for id in 0..200 {
        batch.extend_from_slice(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{META},"name":"add","arguments":{{"a":{id},"b":1}}}}}}"#).as_bytes());
        batch.push(b'\n');
    }
    demo.send(&batch).await;
    let mut seen = std::collections::HashSet::new();
    let mut count_position = None;
    for i in 0..201 {
        let response = demo.line().await;
        let id = response["id"].as_i64().unwrap();
        if id == 1000 {
            count_position = Some(i);
            assert_eq!(response["result"]["content"][0]["text"], "Counted to 5");
        } else {
            assert_eq!(response["result"]["structuredContent"]["sum"], id + 1);
        }
        assert!(seen.insert(id));
    }
    assert!(
        count_position.unwrap() > 0,
        "the slow call did not block the others"
    );
}

#[tokio::test]
async fn cancelled_requests_get_no_response() {
    let mut demo = Demo::start();
    let meta = META.replace(r#""_meta":{"#, r#""_meta":{"progressToken":"p","#);
    demo.send(format!(r#"{{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{{{meta},"name":"count","arguments":{{"to":100}}}}}}"#).as_bytes()).await;
    demo.send(b"\n").await;
    let first = demo.line().await;
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(first["params"]["progressToken"], "p");
    demo.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"slow\"}}\n").await;
    // Whatever progress was already in the pipe may still arrive; the final
    // response never does, and the next request is answered.
    let after = demo.call(7, "greet", r#"{"name":"next"}"#).await;
    let mut frame = after;
    while frame.get("method").is_some() {
        assert_eq!(frame["method"], "notifications/progress");
        frame = demo.line().await;
    }
    assert_eq!(frame["id"], 7);
    demo.stdin.shutdown().await.unwrap();
    while let Ok(Ok(Some(line))) = timeout(Duration::from_secs(5), demo.lines.next_line()).await {
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(v["id"], "slow", "a cancelled request was answered: {v}");
    }
}

#[tokio::test]
async fn elicitation_round_trip_over_stdio() {
    let mut demo = Demo::start();
    let ask = demo.call(1, "confirm_delete", r#"{"path":"/tmp/x"}"#).await;
    assert_eq!(ask["result"]["resultType"], "input_required");
    let state = ask["result"]["requestState"].as_str().unwrap().to_string();
    let retry = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{{META},"name":"confirm_delete","arguments":{{"path":"/tmp/x"}},"inputResponses":{{"confirm":{{"action":"accept","content":{{"confirm":true}}}}}},"requestState":"{state}"}}}}"#
    );
    demo.send(format!("{retry}\n").as_bytes()).await;
    let done = demo.line().await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Deleted /tmp/x (not really: this is a demo)"
    );
}

#[tokio::test]
async fn listen_streams_multiplex_on_one_pipe_and_end_on_cancel() {
    let mut demo = Demo::start();
    for id in ["l1", "l2"] {
        demo.send(format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"subscriptions/listen","params":{{{META},"notifications":{{"toolsListChanged":true}}}}}}"#).as_bytes()).await;
        demo.send(b"\n").await;
        let ack = demo.line().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            id
        );
    }
    demo.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"l1\"}}\n").await;
    let reply = demo.call(3, "greet", r#"{"name":"x"}"#).await;
    assert_eq!(reply["id"], 3);
}

#[tokio::test]
async fn exits_cleanly_at_end_of_input() {
    let mut demo = Demo::start();
    let reply = demo.call(1, "greet", r#"{"name":"bye"}"#).await;
    assert_eq!(reply["id"], 1);
    drop(demo.stdin);
    let status = timeout(Duration::from_secs(10), demo.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
}

/// Sends a call of `report` (inline: the client allows no tasks), taking
/// `seconds`, and closes stdin right after it; returns the rest of the demo.
async fn report_then_close(
    mut demo: Demo,
    seconds: u32,
) -> (Child, Lines<BufReader<ChildStdout>>, std::time::Instant) {
    let msg = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{META},"name":"report","arguments":{{"seconds":{seconds}}}}}}}"#
    );
    demo.send(format!("{msg}\n").as_bytes()).await;
    let Demo {
        child,
        stdin,
        lines,
    } = demo;
    let closed = std::time::Instant::now();
    drop(stdin);
    (child, lines, closed)
}

#[tokio::test]
async fn a_call_in_flight_at_end_of_input_is_still_answered() {
    let (mut child, mut lines, _) = report_then_close(Demo::start(), 1).await;
    let line = timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("an answer in time")
        .unwrap()
        .expect("the call in flight is answered after stdin closed");
    let reply: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["id"], 1, "{reply}");
    assert_eq!(
        reply["result"]["content"],
        json!([{"type": "text", "text": "Report ready after 1 s"}])
    );
    let status = timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the demo exits once the call is answered")
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn a_call_still_running_when_the_drain_ends_is_dropped_and_the_demo_exits() {
    let grace = snodo::transport::StdioOptions::default().shutdown_grace;
    assert_eq!(grace, Duration::from_secs(5), "README's default drain");
    // The demo serves with the default options; its call would take 60 s.
    let (mut child, mut lines, closed) = report_then_close(Demo::start(), 60).await;
    let status = timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the demo exits at the end of the drain, long before the call would end")
        .unwrap();
    assert!(status.success());
    assert!(
        closed.elapsed() >= grace,
        "the demo waited for the call during the drain ({:?})",
        closed.elapsed()
    );
    assert_eq!(
        lines.next_line().await.unwrap(),
        None,
        "a call cut off by the end of the drain is not answered"
    );
}
