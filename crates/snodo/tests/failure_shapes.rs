//! The two failure shapes, decided by the handler's error type: `?` with
//! context added keeps a protocol error a JSON-RPC error and a handler's own
//! failure an `isError` result (or `-32603` from a resource or a prompt).
//! Literal JSON requests in, literal responses out.

mod common;

use serde_json::{Value, json};
use snodo::error::ResultExt;
use snodo::prelude::*;
use snodo::prompt::PromptArguments;
use snodo::resource::ReadRequest;
use snodo::{Error, HandlerError};

use common::{assert_response, meta_with};

/// Looks a word up in a store that refuses some words and lost others.
fn look_up(word: &str) -> Result<String, HandlerError> {
    match word {
        "secret" => Err(Error::invalid_params("secret words are not looked up"))
            .context("checking the word")?,
        "lost" => Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no page for it",
        ))
        .context("opening the dictionary")?,
        other => Ok(format!("{other}: a word")),
    }
}

/// Defines a word
#[snodo::tool(input_schema = {
    "type": "object",
    "properties": {"word": {"type": "string"}},
    "required": ["word"]
})]
async fn define(args: Arguments) -> CallResult {
    let word = args.str("word")?;
    let text = look_up(word).with_context(|| format!("defining {word:?}"))?;
    Ok(text.into())
}

/// A page of the dictionary.
#[snodo::resource(uri_template = "dict://{word}")]
async fn page(req: ReadRequest) -> Result<String, HandlerError> {
    let word = req.var("word").unwrap_or_default();
    look_up(word).context("reading a page")
}

#[snodo::prompt(arguments = [{ "name": "word", "required": true }])]
async fn explain(args: PromptArguments) -> Result<String, HandlerError> {
    let word = args.get("word").unwrap_or_default();
    look_up(word).context("rendering the prompt")
}

fn server() -> Server {
    Server::builder("dictionary", "1.0.0")
        .tool(define)
        .resource(page)
        .prompt(explain)
        .build()
        .expect("the server builds")
}

async fn send(server: &Server, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta_with(json!({}));
    server
        .dispatch_value(json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}))
        .await
        .expect("requests are answered")
}

#[tokio::test]
async fn a_protocol_error_through_question_mark_and_context_fails_a_tool_call() {
    let response = send(
        &server(),
        "tools/call",
        json!({"name": "define", "arguments": {"word": "secret"}}),
    )
    .await;
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 7, "error": {
            "code": -32602, "message": "secret words are not looked up"
        }})
    );
}

#[tokio::test]
async fn a_failure_through_question_mark_and_context_is_an_is_error_result_with_each_context() {
    let response = send(
        &server(),
        "tools/call",
        json!({"name": "define", "arguments": {"word": "lost"}}),
    )
    .await;
    assert_response(&response, "CallToolResult");
    let result = &response["result"];
    assert_eq!(result["isError"], true, "{response}");
    assert_eq!(
        result["content"],
        json!([{"type": "text",
                "text": "defining \"lost\": opening the dictionary: no page for it"}])
    );
}

#[tokio::test]
async fn a_tool_that_succeeds_is_unchanged() {
    let response = send(
        &server(),
        "tools/call",
        json!({"name": "define", "arguments": {"word": "tea"}}),
    )
    .await;
    assert_eq!(
        response["result"]["content"],
        json!([{"type": "text", "text": "tea: a word"}])
    );
    assert!(response["result"].get("isError").is_none());
}

#[tokio::test]
async fn a_resource_keeps_a_protocol_error_and_hides_its_own_failure_behind_32603() {
    let server = server();
    let refused = send(&server, "resources/read", json!({"uri": "dict://secret"})).await;
    assert_eq!(
        refused["error"],
        json!({"code": -32602, "message": "secret words are not looked up"})
    );
    let failed = send(&server, "resources/read", json!({"uri": "dict://lost"})).await;
    assert_eq!(
        failed["error"],
        json!({"code": -32603, "message": "Resource read failed"})
    );
}

#[tokio::test]
async fn a_prompt_keeps_a_protocol_error_and_hides_its_own_failure_behind_32603() {
    let server = server();
    let get = |word: &str| json!({"name": "explain", "arguments": {"word": word}});
    let refused = send(&server, "prompts/get", get("secret")).await;
    assert_eq!(
        refused["error"],
        json!({"code": -32602, "message": "secret words are not looked up"})
    );
    let failed = send(&server, "prompts/get", get("lost")).await;
    assert_eq!(
        failed["error"],
        json!({"code": -32603, "message": "Prompt failed"})
    );
}
