//! The fixtures the initialize-era scenarios call. They are written once,
//! as multi round-trip handlers: over 2025-11-25 and 2025-06-18 the server
//! turns their input requests into real `sampling/createMessage` and
//! `elicitation/create` requests on the call's stream.

use serde_json::{Value, json};
use snodo::prelude::*;
use snodo::tool::from_fn;

fn with_string_arg(name: &str) -> Value {
    json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]})
}

fn empty() -> Value {
    json!({"type": "object", "properties": {}})
}

/// A text summary of an elicitation answer: `action=<a>, content=<json>`.
fn elicited(answer: &Value) -> String {
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let content = answer.get("content").cloned().unwrap_or(Value::Null);
    format!("action={action}, content={content}")
}

fn sep1034_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    })
}

fn sep1330_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Untitled single-select", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Titled single-select", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {"type": "string", "description": "Legacy enum with names", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Untitled multi-select", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Titled multi-select", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}
            ]}}
        },
        "required": []
    })
}

/// An elicitation tool: asks once, then reports the answer.
fn elicit_tool(
    name: &'static str,
    description: &'static str,
    message: &'static str,
    schema: fn() -> Value,
) -> impl Tool {
    from_fn(name, move |_, cx: Context| async move {
        Ok(match cx.input_response("form") {
            Some(answer) => {
                ToolResult::text(format!("Elicitation completed: {}", elicited(answer)))
            }
            None => ToolResult::input_required(InputRequired::new().elicit_form(
                "form",
                message,
                schema(),
            )),
        })
    })
    .description(description)
    .input_schema(empty())
}

/// Registers the initialize-era fixtures.
pub(crate) fn register(builder: snodo::ServerBuilder) -> snodo::ServerBuilder {
    builder
        .tool(
            from_fn("test_sampling", |args: Arguments, cx: Context| async move {
                if let Some(answer) = cx.input_response("llm") {
                    let text = answer.get("content").and_then(|c| c.get("text")).and_then(Value::as_str).unwrap_or("");
                    return Ok(ToolResult::text(format!("LLM response: {text}")));
                }
                let prompt = args.str("prompt")?;
                Ok(ToolResult::input_required(InputRequired::new().sample(
                    "llm",
                    json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 100}),
                )))
            })
            .description("Asks the client's model to answer a prompt")
            .input_schema(with_string_arg("prompt")),
        )
        .tool(
            from_fn("test_elicitation", |args: Arguments, cx: Context| async move {
                if let Some(answer) = cx.input_response("user") {
                    return Ok(ToolResult::text(format!("User response: {}", elicited(answer))));
                }
                let message = args.str("message")?;
                Ok(ToolResult::input_required(InputRequired::new().elicit_form(
                    "user",
                    message,
                    json!({"type": "object", "properties": {"response": {"type": "string", "description": "User's response"}}, "required": ["response"]}),
                )))
            })
            .description("Asks the user a question")
            .input_schema(with_string_arg("message")),
        )
        .tool(elicit_tool(
            "test_elicitation_sep1034_defaults",
            "Asks for a form whose fields have defaults",
            "Please review and update the form fields with defaults",
            sep1034_schema,
        ))
        .tool(elicit_tool(
            "test_elicitation_sep1330_enums",
            "Asks for a form with every enum shape",
            "Please select options from the enum fields",
            sep1330_schema,
        ))
        .tool(
            from_fn("test_reconnection", |_, _| async {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                Ok(ToolResult::text("Reconnection test completed"))
            })
            .description("Answers after a short pause")
            .input_schema(empty()),
        )
}
