//! A server for the initialize-era tests: tools that answer, ask the client
//! for input, report progress, or wait to be cancelled; a subscribable
//! resource; a prompt.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use serde_json::{Value, json};
use snodo::model::LogLevel;
use snodo::prelude::*;
use snodo::prompt::PromptArguments;
use snodo::prompt::{Prompt, PromptArgument, PromptMessage, PromptResult};
use snodo::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
use snodo::tool::from_fn;

/// A resource whose updates the tests announce.
pub struct Watched;

impl Resource for Watched {
    fn uri(&self) -> Option<&str> {
        Some("test://watched")
    }
    fn name(&self) -> &str {
        "watched"
    }
    fn description(&self) -> Option<&str> {
        Some("A resource the tests change")
    }
    fn mime_type(&self) -> Option<&str> {
        Some("text/plain")
    }
    async fn read(&self, req: ReadRequest, _cx: Context) -> Result<ReadResult, HandlerError> {
        Ok(ResourceContents::text(req.uri, "watched content").into())
    }
}

/// A prompt with one required argument.
pub struct Hello;

impl Prompt for Hello {
    fn name(&self) -> &str {
        "hello"
    }
    fn description(&self) -> Option<&str> {
        Some("Says hello")
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![PromptArgument::required("who")]
    }
    async fn get(&self, args: PromptArguments, _cx: Context) -> Result<PromptResult, HandlerError> {
        let who = args.get("who").unwrap_or_default();
        Ok(PromptResult::new([PromptMessage::user_text(format!(
            "Hello, {who}!"
        ))]))
    }
}

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

/// The test server; `input_timeout` bounds how long the shim waits for the
/// client.
pub fn server(input_timeout: Duration) -> Server {
    builder(input_timeout)
        .build()
        .expect("the test server builds")
}

/// The test server's builder, every component registered.
pub fn builder(input_timeout: Duration) -> snodo::ServerBuilder {
    Server::builder("legacy-tests", "1.0.0")
        .input_timeout(input_timeout)
        .tool(
            from_fn("echo", |args: Arguments, _| async move {
                Ok(ToolResult::text(args.str("text")?.to_string()))
            })
            .description("Echoes its text")
            .input_schema(object(json!({"text": {"type": "string"}}), &["text"])),
        )
        .tool(
            from_fn("sum", |args: Arguments, _| async move {
                let (a, b) = (args.i64("a")?, args.i64("b")?);
                Ok(ToolResult::structured(json!({"sum": a + b})))
            })
            .description("Adds")
            .input_schema(object(
                json!({"a": {"type": "integer"}, "b": {"type": "integer"}}),
                &["a", "b"],
            ))
            .output_schema(object(json!({"sum": {"type": "integer"}}), &["sum"])),
        )
        .tool(
            from_fn("ask", |_, cx: Context| async move {
                Ok(match cx.elicitation("name") {
                    Some(answer) => ToolResult::text(format!(
                        "name={} state={}",
                        answer.str("name").unwrap_or("-"),
                        cx.request_state().unwrap_or("-")
                    )),
                    None => ToolResult::input_required(
                        InputRequired::new()
                            .elicit_form(
                                "name",
                                "Your name?",
                                object(json!({"name": {"type": "string"}}), &["name"]),
                            )
                            .state("kept-in-process"),
                    ),
                })
            })
            .description("Asks the user's name")
            .input_schema(json!({"type": "object"})),
        )
        .tool(
            from_fn("visit", |_, cx: Context| async move {
                Ok(match cx.input_response("visit") {
                    Some(answer) => ToolResult::text(format!("visited: {answer}")),
                    None => ToolResult::input_required(InputRequired::new().elicit_url(
                        "visit",
                        "Please sign in",
                        "https://example.com/sign-in",
                    )),
                })
            })
            .description("Sends the user to a URL")
            .input_schema(json!({"type": "object"})),
        )
        .tool(
            from_fn("steps", |_, cx: Context| async move {
                for step in 1..=3 {
                    let _ = cx.progress(f64::from(step), Some(3.0), None).await;
                    cx.log(LogLevel::Info, json!({"step": step})).await;
                    tokio::time::sleep(Duration::from_millis(30)).await;
                }
                Ok(ToolResult::text("stepped"))
            })
            .description("Three steps with progress and log messages")
            .input_schema(json!({"type": "object"})),
        )
        .tool(
            from_fn("wait", |_, cx: Context| async move {
                cx.cancellation().cancelled().await;
                Ok(ToolResult::text("cancelled"))
            })
            .description("Waits until cancelled")
            .input_schema(json!({"type": "object"})),
        )
        .tool(
            from_fn("roots", |_, cx: Context| async move {
                Ok(match cx.input_response("roots") {
                    Some(answer) => ToolResult::text(format!(
                        "{} root(s)",
                        answer["roots"].as_array().map_or(0, Vec::len)
                    )),
                    None => ToolResult::input_required(InputRequired::new().list_roots("roots")),
                })
            })
            .description("Counts the client's roots")
            .input_schema(json!({"type": "object"})),
        )
        .resource(Watched)
        .prompt(Hello)
}
