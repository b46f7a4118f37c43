//! Backends in process: a server with tools that echo, fail, refuse, ask,
//! log and wait, a resource and a prompt; and servers of named tools.

use serde_json::json;
use snodo::prelude::*;
use snodo::prompt::PromptArguments;
use snodo::resource::ReadRequest;

#[snodo::tool(
    description = "Returns its text",
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
)]
async fn echo(args: Arguments) -> CallResult {
    Ok(ToolResult::text(args.str("text")?))
}

#[snodo::tool(
    description = "Fails in its own way",
    input_schema = {"type": "object", "properties": {}}
)]
async fn broken(_args: Arguments) -> CallResult {
    Err("the disk is full".into())
}

#[snodo::tool(
    description = "Refuses with a JSON-RPC error that carries data",
    input_schema = {"type": "object", "properties": {}}
)]
async fn refuse(_args: Arguments) -> CallResult {
    Err(snodo::HandlerError::protocol(
        snodo::Error::new(-32042, "not on Sundays").with_data(json!({"retryAfter": "Monday"})),
    ))
}

#[snodo::tool(
    description = "Asks for a name first (a multi round-trip request)",
    input_schema = {"type": "object", "properties": {}}
)]
async fn ask(_args: Arguments, cx: Context) -> CallResult {
    if let Some(answer) = cx.elicitation("who") {
        let state = cx.request_state().unwrap_or("none").to_owned();
        return Ok(format!("Hello, {}! ({state})", answer.str("name").unwrap_or("?")).into());
    }
    let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    Ok(ToolResult::input_required(
        InputRequired::new()
            .elicit_form("who", "Your name?", form)
            .state("round-1"),
    ))
}

#[snodo::resource(uri_template = "notes://{id}", name = "note", mime_type = "text/plain")]
async fn note(req: ReadRequest) -> String {
    format!("note {}", req.vars[0].1)
}

#[snodo::prompt(name = "hello", description = "Says hello", arguments = [{"name": "who", "required": true}])]
async fn hello(args: PromptArguments) -> String {
    format!("Hello, {}!", args.get("who").unwrap_or("?"))
}

#[snodo::tool(
    description = "Logs twice, then answers",
    input_schema = {"type": "object", "properties": {}}
)]
async fn chatty(_args: Arguments, cx: Context) -> CallResult {
    cx.log(snodo::model::LogLevel::Info, "first").await;
    cx.log(snodo::model::LogLevel::Warning, json!({"second": true}))
        .await;
    Ok("said".into())
}

pub(crate) static CANCELLED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Marks the backend's `wait` as stopped when dropped.
struct Stopped;

impl Drop for Stopped {
    fn drop(&mut self) {
        CANCELLED.store(true, std::sync::atomic::Ordering::SeqCst);
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

pub(crate) fn backend(name: &str) -> Server {
    Server::builder(name, "1.0.0")
        .tool(chatty)
        .tool(wait)
        .tool(echo)
        .tool(broken)
        .tool(refuse)
        .tool(ask)
        .resource(note)
        .prompt(hello)
        .build()
        .unwrap()
}

/// A server with one tool per name, each answering "`name` of `server`".
pub(crate) fn tools_of(server: &'static str, names: &[&'static str]) -> Server {
    let mut builder = Server::builder(server, "1.0.0");
    for &name in names {
        builder = builder.tool(snodo::tool::from_fn(name, move |_a, _c| async move {
            Ok(format!("{name} of {server}").into())
        }));
    }
    builder.build().unwrap()
}
