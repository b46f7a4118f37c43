//! The client against a server in the same process (the only place where
//! our own server is the peer: the direct transport has no wire to script).

#![cfg(all(feature = "client", feature = "macros"))]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use snodo::client::{Client, ListenFilter, RequestOptions, TransportKind};
use snodo::prelude::*;

#[snodo::tool(
    description = "Asks for a name, then greets",
    input_schema = {"type": "object", "properties": {}}
)]
async fn ask_name(_args: Arguments, cx: Context) -> CallResult {
    if let Some(answer) = cx.elicitation("who") {
        let state = cx.request_state().unwrap_or("none").to_string();
        return Ok(format!("Hello, {}! ({state})", answer.str("name").unwrap_or("?")).into());
    }
    let form =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    Ok(ToolResult::input_required(
        InputRequired::new()
            .elicit_form("who", "Your name?", form)
            .state("round-1"),
    ))
}

#[snodo::tool(
    description = "Reports progress twice",
    input_schema = {"type": "object", "properties": {}}
)]
async fn steps(_args: Arguments, cx: Context) -> CallResult {
    for n in 1..=2 {
        let _ = cx.progress(n as f64, Some(2.0), None).await;
    }
    Ok("stepped".into())
}

static SAW_CANCEL: AtomicBool = AtomicBool::new(false);

/// Records that the handler stopped (it is dropped, or sees the signal).
struct Stopped;

impl Drop for Stopped {
    fn drop(&mut self) {
        SAW_CANCEL.store(true, Ordering::SeqCst);
    }
}

#[snodo::tool(
    description = "Waits until cancelled",
    input_schema = {"type": "object", "properties": {}}
)]
async fn wait(_args: Arguments, cx: Context) -> CallResult {
    let _stopped = Stopped;
    cx.cancellation().cancelled().await;
    Ok("cancelled".into())
}

/// Opened by a test once its listener is in place.
static GATE: tokio::sync::Notify = tokio::sync::Notify::const_new();

#[snodo::tool(
    description = "Waits for the test's gate, as a task",
    input_schema = {"type": "object", "properties": {}},
    task = "required"
)]
async fn gated(_args: Arguments) -> CallResult {
    GATE.notified().await;
    Ok("through".into())
}

fn server() -> Server {
    Server::builder("direct", "1.0.0")
        .tool(ask_name)
        .tool(steps)
        .tool(wait)
        .build()
        .unwrap()
}

#[tokio::test]
async fn direct_calls_answer_input_and_report_progress() {
    let server = server();
    let client = Client::builder()
        .on_elicit_form(|_req| async move {
            let mut content = serde_json::Map::new();
            content.insert("name".into(), json!("Ada"));
            Ok(snodo::handler::ElicitResponse {
                action: snodo::handler::ElicitAction::Accept,
                content,
            })
        })
        .connect(&server)
        .await
        .unwrap();
    assert_eq!(client.transport_kind(), TransportKind::Direct);
    assert_eq!(client.protocol_version(), "2026-07-28");
    assert_eq!(client.server_info().unwrap()["name"], "direct");
    assert!(client.server_capabilities().get("tools").is_some());
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(names.len(), 3);

    let result = client.call_tool("ask_name", json!({})).await.unwrap();
    assert_eq!(result.text_content(), "Hello, Ada! (round-1)");

    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = client
        .call_tool("steps", json!({}))
        .options(RequestOptions::new().on_progress(move |p| sink.lock().unwrap().push(p.progress)))
        .await
        .unwrap();
    assert_eq!(result.text_content(), "stepped");
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0]);

    let err = client.call_tool("missing", json!({})).await.unwrap_err();
    assert_eq!(err.code(), Some(-32602));
}

#[tokio::test]
async fn direct_timeouts_cancel_the_handler() {
    let client = Client::connect(server()).await.unwrap();
    let err = client
        .call_tool("wait", json!({}))
        .options(RequestOptions::new().timeout(Duration::from_millis(100)))
        .await
        .unwrap_err();
    assert!(err.is_timeout());
    for _ in 0..50 {
        if SAW_CANCEL.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the handler was not stopped");
}

#[tokio::test]
async fn direct_listen_receives_list_changes() {
    let server = server();
    let client = Client::connect(&server).await.unwrap();
    let mut sub = client.listen(ListenFilter::new().tools()).await.unwrap();
    assert_eq!(sub.acknowledged()["toolsListChanged"], true);
    assert!(server.remove_tool("steps"));
    let n = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(n.method, "notifications/tools/list_changed");
    assert_eq!(
        n.params["_meta"]["io.modelcontextprotocol/subscriptionId"],
        sub.id().unwrap().to_value()
    );
    server.events().shutdown();
    let end = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .unwrap();
    assert!(
        end.is_none(),
        "the subscription ends when the server shuts it down"
    );
}

#[tokio::test]
async fn a_client_listens_to_the_tasks_it_names() {
    let server = Server::builder("tasks", "1.0.0")
        .tool(gated)
        .build()
        .unwrap();
    let client = Client::connect(&server).await.unwrap();
    let call = client
        .call_tool_as_task("gated", json!({}), RequestOptions::new())
        .await
        .unwrap();
    let snodo::client::TaskCall::Task(task) = call else {
        panic!("a task, not {call:?}");
    };
    let mut sub = client
        .listen(ListenFilter::new().task(task.task_id.clone()))
        .await
        .unwrap();
    assert_eq!(
        sub.acknowledged()["taskIds"],
        json!([task.task_id.as_str()]),
        "the server honours the taskIds the client sent"
    );
    GATE.notify_one();
    loop {
        let n = tokio::time::timeout(Duration::from_secs(5), sub.next())
            .await
            .expect("a task notification")
            .expect("the subscription is open");
        assert_eq!(n.method, "notifications/tasks");
        assert_eq!(n.params["taskId"], task.task_id.as_str());
        if n.params["status"] == "completed" {
            assert_eq!(n.params["result"]["content"][0]["text"], "through");
            break;
        }
    }
}

#[tokio::test]
async fn a_mistyped_url_runs_nothing_and_says_why() {
    let err = snodo::Client::connect("localhost:3000/mcp")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("write http://localhost:3000/mcp"),
        "{err}"
    );
    let err = snodo::Client::http("localhost:3000/mcp").await.unwrap_err();
    assert!(
        err.to_string()
            .contains("is not an http:// or https:// URL"),
        "{err}"
    );
    let err = snodo::Client::spawn("htp://127.0.0.1:1/mcp")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("scheme `htp`"), "{err}");
    let err = snodo::Client::connect(snodo::client::Target::command("localhost:3000/mcp"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("looks like an address"), "{err}");
}

/// A string is a URL: a command line given as one is refused, not run
/// (`touch` would leave its file behind).
#[tokio::test]
async fn a_string_target_is_never_run() {
    let dir = std::env::temp_dir().join(format!("snodo-target-{}", std::process::id()));
    let marker = dir.join("ran");
    std::fs::create_dir_all(&dir).unwrap();
    let line = format!("touch {}", marker.display());
    let err = snodo::Client::connect(line.as_str()).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("is not an http:// or https:// URL"),
        "{err}"
    );
    assert!(!marker.exists(), "the command ran");
    // Named as a command, the same line runs (and fails the handshake).
    let _ = snodo::Client::connect(snodo::client::Target::command(line)).await;
    assert!(marker.exists(), "the command did not run");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct Sum {
    sum: i64,
}

/// Adds two integers, typed on both sides.
#[snodo::tool(
    input_schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
)]
async fn add(args: Arguments) -> Result<snodo::Json<Sum>, snodo::BoxError> {
    Ok(snodo::Json(Sum {
        sum: args.i64("a")? + args.i64("b")?,
    }))
}

/// Always fails the tool's way.
#[snodo::tool]
async fn refuse() -> CallResult {
    Ok(ToolResult::error("no, thanks"))
}

#[tokio::test]
async fn typed_definitions_results_and_call_tool_as() {
    let server = Server::builder("typed", "0.1.0")
        .tool(add)
        .tool(refuse)
        .tool(steps)
        .build()
        .unwrap();
    let client = Client::connect(server).await.unwrap();

    let tools = client.list_tools().await.unwrap();
    let add_def = tools.iter().find(|t| t.name == "add").unwrap();
    assert_eq!(
        add_def.description.as_deref(),
        Some("Adds two integers, typed on both sides.")
    );
    assert_eq!(
        add_def.output_schema.as_ref().unwrap()["properties"]["sum"]["type"],
        "integer"
    );

    let sum: Sum = client
        .call_tool_as("add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert_eq!(sum, Sum { sum: 42 });

    let failed = client
        .call_tool_as::<Sum>("refuse", json!({}))
        .await
        .unwrap_err();
    assert_eq!(failed.kind(), snodo::client::ClientErrorKind::ToolFailed);
    assert_eq!(failed.tool_failure(), Some("no, thanks"), "{failed:?}");
    let untyped = client
        .call_tool_as::<Sum>("steps", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        untyped.kind(),
        snodo::client::ClientErrorKind::Decode,
        "{untyped:?}"
    );
    let wrong = client
        .call_tool_as::<Vec<u8>>("add", json!({"a": 1, "b": 1}))
        .await
        .unwrap_err();
    assert!(std::error::Error::source(&wrong).is_some(), "{wrong}");

    let result = client.call_tool("refuse", json!({})).await.unwrap();
    assert!(result.is_error());
    assert_eq!(result.text_content(), "no, thanks");
}

#[test]
fn results_and_definitions_decode_from_literal_json() {
    let result: ToolResult = serde_json::from_str(
        r#"{"resultType":"complete","content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3},"_meta":{"k":1}}"#,
    )
    .unwrap();
    assert_eq!(result.structured_content(), Some(&json!({"sum": 3})));
    assert_eq!(result.meta().unwrap()["k"], 1);
    assert!(!result.is_error());
    // Member order is serde_json's map order; the members and values are what
    // a peer reads.
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        serde_json::from_str::<serde_json::Value>(
            r#"{"resultType":"complete","content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3},"_meta":{"k":1}}"#
        )
        .unwrap()
    );
    assert!(serde_json::from_str::<ToolResult>(r#"{"content":"text"}"#).is_err());

    let def: snodo::ToolDefinition = serde_json::from_str(
        r#"{"name":"add","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}"#,
    )
    .unwrap();
    assert_eq!(def.name, "add");
    assert_eq!(def.extra["execution"]["taskSupport"], "optional");
    assert!(serde_json::from_str::<snodo::ToolDefinition>(r#"{"inputSchema":{}}"#).is_err());
}

/// The project's readme.
#[snodo::resource(uri = "docs://readme", mime_type = "text/markdown")]
async fn readme() -> &'static str {
    "# Hello"
}

#[snodo::prompt(description = "Greets", arguments = [{ "name": "who", "required": true }])]
async fn greeting(args: snodo::prompt::PromptArguments) -> snodo::prompt::PromptResult {
    let who = args.get("who").unwrap_or_default();
    snodo::prompt::PromptResult::new([snodo::prompt::PromptMessage::user_text(format!(
        "Hello, {who}"
    ))])
    .with_description("A greeting")
}

/// Reads and prompts come back typed, and give back the members received.
#[tokio::test]
async fn reads_and_prompts_are_typed() {
    let server = Server::builder("typed", "1.0.0")
        .resource(readme)
        .prompt(greeting)
        .build()
        .unwrap();
    let client = Client::connect(server).await.unwrap();
    let read = client.read_resource("docs://readme").await.unwrap();
    let [contents] = read.items() else {
        panic!("{read:?}")
    };
    assert_eq!(
        (contents.uri(), contents.as_text(), contents.mime_type()),
        ("docs://readme", Some("# Hello"), Some("text/markdown"))
    );
    assert_eq!(
        serde_json::to_value(&read).unwrap()["contents"][0]["text"],
        "# Hello"
    );
    let prompt = client
        .get_prompt("greeting", json!({"who": "Ada"}))
        .await
        .unwrap();
    assert_eq!(prompt.description(), Some("A greeting"));
    assert_eq!(
        prompt.messages(),
        [snodo::prompt::PromptMessage::user_text("Hello, Ada")]
    );
    let err = client.read_resource("docs://missing").await.unwrap_err();
    assert!(err.code().is_some(), "{err:?}");
}
