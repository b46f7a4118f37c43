//! The multi round-trip fixtures: tools and a prompt that ask the client for
//! input and finish on the retry.

use std::sync::Arc;

use serde_json::{Value, json};
use snodo::Error;
use snodo::prelude::*;
use snodo::prompt::PromptArguments;
use snodo::prompt::{Prompt, PromptMessage, PromptResult};
use snodo::server::StateSealer;

use crate::fixtures::simple;

fn name_form() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn confirm_form() -> Value {
    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
}

fn sampling_params(question: &str) -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": question}}], "maxTokens": 100})
}

/// The text of a sampling answer (`CreateMessageResult`), if it has one.
fn sampled_text(answer: &Value) -> Option<&str> {
    answer.get("content")?.get("text")?.as_str()
}

/// The number of roots in a `ListRootsResult`.
fn root_count(answer: &Value) -> Option<usize> {
    answer.get("roots")?.as_array().map(Vec::len)
}

/// An accepted elicitation's string field.
fn accepted(cx: &Context, key: &str, field: &str) -> Option<String> {
    let answer = cx.elicitation(key)?;
    answer.str(field).map(str::to_string)
}

/// Registers the `test_input_required_result_*` tools and prompt.
pub(crate) fn register(
    builder: snodo::ServerBuilder,
    sealer: Arc<StateSealer>,
) -> snodo::ServerBuilder {
    let s1 = sealer.clone();
    let s2 = sealer.clone();
    let s3 = sealer.clone();
    let s4 = sealer;
    builder
        .tool(simple(
            "test_input_required_result_elicitation",
            "Asks for the user's name",
            |_, cx| async move {
                Ok(match accepted(&cx, "user_name", "name") {
                    Some(name) => ToolResult::text(format!("Hello, {name}!")),
                    None => ToolResult::input_required(InputRequired::new().elicit_form(
                        "user_name",
                        "What is your name?",
                        name_form(),
                    )),
                })
            },
        ))
        .tool(simple(
            "test_input_required_result_sampling",
            "Asks the client's model a question",
            |_, cx| async move {
                Ok(
                    match cx.input_response("sample_request").and_then(sampled_text) {
                        Some(text) => ToolResult::text(format!("Sampling result: {text}")),
                        None => ToolResult::input_required(InputRequired::new().sample(
                            "sample_request",
                            sampling_params("What is the capital of France?"),
                        )),
                    },
                )
            },
        ))
        .tool(simple(
            "test_input_required_result_list_roots",
            "Asks for the client's roots",
            |_, cx| async move {
                Ok(
                    match cx.input_response("roots_request").and_then(root_count) {
                        Some(n) => ToolResult::text(format!("Found {n} root(s)")),
                        None => ToolResult::input_required(
                            InputRequired::new().list_roots("roots_request"),
                        ),
                    },
                )
            },
        ))
        .tool(simple(
            "test_input_required_result_request_state",
            "Carries sealed state across a confirmation",
            move |_, cx| {
                let sealer = s1.clone();
                async move {
                    let state = sealer.open(&cx)?;
                    let confirmed = cx.elicitation("confirm").is_some();
                    Ok(match state {
                        Some(data) if confirmed && data["step"] == "confirm" => {
                            ToolResult::text("state-ok: confirmed")
                        }
                        _ => ToolResult::input_required(
                            InputRequired::new()
                                .elicit_form("confirm", "Please confirm", confirm_form())
                                .state(sealer.seal(&cx, &json!({"step": "confirm"}))),
                        ),
                    })
                }
            },
        ))
        .tool(simple(
            "test_input_required_result_multiple_inputs",
            "Asks for a name, a greeting and the roots at once",
            move |_, cx| {
                let sealer = s2.clone();
                async move {
                    let state = sealer.open(&cx)?;
                    let name = accepted(&cx, "user_name", "name");
                    let greeting = cx
                        .input_response("greeting")
                        .and_then(sampled_text)
                        .map(str::to_string);
                    let roots = cx.input_response("client_roots").and_then(root_count);
                    Ok(match (state, name, greeting, roots) {
                        (Some(_), Some(name), Some(greeting), Some(n)) => {
                            ToolResult::text(format!("{greeting}, {name}! ({n} root(s))"))
                        }
                        _ => ToolResult::input_required(
                            InputRequired::new()
                                .elicit_form("user_name", "What is your name?", name_form())
                                .sample("greeting", sampling_params("Say hello"))
                                .list_roots("client_roots")
                                .state(sealer.seal(&cx, &json!({"step": "all"}))),
                        ),
                    })
                }
            },
        ))
        .tool(simple(
            "test_input_required_result_multi_round",
            "Asks twice before answering",
            move |_, cx| {
                let sealer = s3.clone();
                async move {
                    let round = sealer
                        .open(&cx)?
                        .and_then(|d| d["round"].as_u64())
                        .unwrap_or(0);
                    let ask = |key: &str, round: u64| {
                        ToolResult::input_required(
                            InputRequired::new()
                                .elicit_form(key, &format!("Step {round}: confirm"), confirm_form())
                                .state(sealer.seal(&cx, &json!({"round": round}))),
                        )
                    };
                    Ok(match round {
                        1 if cx.elicitation("step1").is_some() => ask("step2", 2),
                        2 if cx.elicitation("step2").is_some() => {
                            ToolResult::text("All rounds complete")
                        }
                        2 => ask("step2", 2),
                        _ => ask("step1", 1),
                    })
                }
            },
        ))
        .tool(simple(
            "test_input_required_result_tampered_state",
            "Refuses tampered state",
            move |_, cx| {
                let sealer = s4.clone();
                async move {
                    let state = sealer.open(&cx)?;
                    Ok(match state {
                        Some(_) if cx.elicitation("confirm").is_some() => {
                            ToolResult::text("state-ok")
                        }
                        _ => ToolResult::input_required(
                            InputRequired::new()
                                .elicit_form("confirm", "Please confirm", confirm_form())
                                .state(sealer.seal(&cx, &json!({"step": "confirm"}))),
                        ),
                    })
                }
            },
        ))
        .tool(simple(
            "test_input_required_result_capabilities",
            "Asks only for what the client declared",
            |_, cx| async move {
                if cx.input_responses().is_some_and(|r| !r.is_empty()) {
                    return Ok(ToolResult::text("Inputs received"));
                }
                let mut ask = InputRequired::new();
                if cx.client_supports("elicitation") {
                    ask = ask.elicit_form("user_name", "What is your name?", name_form());
                }
                if cx.client_supports("sampling") {
                    ask = ask.sample("sample_request", sampling_params("Say hello"));
                }
                if cx.client_supports("roots") {
                    ask = ask.list_roots("roots_request");
                }
                Ok(if ask.requests().is_empty() {
                    ToolResult::text("No client capabilities to ask with")
                } else {
                    ToolResult::input_required(ask)
                })
            },
        ))
        .tool(simple(
            "test_missing_capability",
            "Needs the client's sampling capability",
            |_, cx| async move {
                if !cx.client_supports("sampling") {
                    return Err(Error::missing_client_capability(json!({"sampling": {}})).into());
                }
                Ok(
                    match cx.input_response("llm_answer").and_then(sampled_text) {
                        Some(text) => ToolResult::text(format!("LLM answer: {text}")),
                        None => ToolResult::input_required(
                            InputRequired::new()
                                .sample("llm_answer", sampling_params("Answer briefly")),
                        ),
                    },
                )
            },
        ))
        .prompt(ContextPrompt)
}

/// `test_input_required_result_prompt`: asks for context, then renders it.
struct ContextPrompt;

impl Prompt for ContextPrompt {
    fn name(&self) -> &str {
        "test_input_required_result_prompt"
    }
    fn description(&self) -> Option<&str> {
        Some("Asks the user for context before rendering")
    }
    async fn get(&self, _args: PromptArguments, cx: Context) -> Result<PromptResult, HandlerError> {
        Ok(match accepted(&cx, "user_context", "context") {
            Some(context) => PromptResult::new([PromptMessage::user_text(format!("Prompt with context: {context}"))]),
            None => PromptResult::input_required(InputRequired::new().elicit_form(
                "user_context",
                "What context should the prompt use?",
                json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}),
            )),
        })
    }
}
