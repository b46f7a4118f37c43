//! Constants and plain content tools of the fixture contract.

use serde_json::json;
use snodo::model::LogLevel;
use snodo::prelude::*;
use snodo::tool::{FnTool, from_fn};

/// A 1x1 red PNG.
pub(crate) const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A tiny WAV file.
pub(crate) const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

fn empty_schema() -> serde_json::Value {
    json!({"type": "object", "properties": {}})
}

/// A tool with the empty input schema the contract uses.
pub(crate) fn simple<F, Fut>(name: &str, description: &str, handler: F) -> FnTool<F>
where
    F: Fn(Arguments, Context) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = CallResult> + Send + 'static,
{
    from_fn(name, handler)
        .description(description)
        .input_schema(empty_schema())
}

/// Registers the content, logging, progress and error tools.
pub(crate) fn content_tools(builder: snodo::ServerBuilder) -> snodo::ServerBuilder {
    builder
        .tool(simple("test_simple_text", "Returns a simple text response", |_, _| async {
            Ok(ToolResult::text("This is a simple text response for testing."))
        }))
        .tool(simple("test_image_content", "Returns an image", |_, _| async {
            Ok(ToolResult::content([Content::image(PNG, "image/png")]))
        }))
        .tool(simple("test_audio_content", "Returns audio", |_, _| async {
            Ok(ToolResult::content([Content::audio(WAV, "audio/wav")]))
        }))
        .tool(simple("test_embedded_resource", "Returns an embedded resource", |_, _| async {
            Ok(ToolResult::content([Content::embedded_text(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )]))
        }))
        .tool(simple("test_multiple_content_types", "Returns text, an image and a resource", |_, _| async {
            Ok(ToolResult::content([
                Content::text("Multiple content types test:"),
                Content::image(PNG, "image/png"),
                Content::embedded_text(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                ),
            ]))
        }))
        .tool(simple("test_error_handling", "Always fails as a tool error", |_, _| async {
            Ok(ToolResult::error("This tool intentionally returns an error for testing"))
        }))
        .tool(simple("test_tool_with_logging", "Logs three messages while it runs", |_, cx| async move {
            for (i, message) in ["Tool execution started", "Tool processing data", "Tool execution completed"].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                cx.log(LogLevel::Info, message).await;
            }
            Ok(ToolResult::text("Tool with logging executed successfully"))
        }))
        .tool(simple("test_logging_tool", "Logs one message when asked to", |_, cx| async move {
            cx.log(LogLevel::Info, "test_logging_tool ran").await;
            Ok(ToolResult::text("Logging tool executed"))
        }))
        .tool(simple("test_tool_with_progress", "Reports progress in three steps", |_, cx| async move {
            for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
                let message = format!("Completed step {step} of 100");
                let _ = cx.progress(step, Some(100.0), Some(&message)).await;
            }
            let token = match cx.meta().get("progressToken") {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => "no-token".to_string(),
            };
            Ok(ToolResult::text(token))
        }))
        .tool(simple("test_streaming_elicitation", "Completes without asking anything", |_, _| async {
            Ok(ToolResult::text("Streaming elicitation test completed"))
        }))
        .tool(simple("test_trigger_tool_change", "Announces a tool list change", |_, cx| async move {
            cx.events().tools_changed();
            Ok(ToolResult::text("Tool list change announced"))
        }))
        .tool(simple("test_trigger_prompt_change", "Announces a prompt list change", |_, cx| async move {
            cx.events().prompts_changed();
            Ok(ToolResult::text("Prompt list change announced"))
        }))
        .tool(
            from_fn("test_x_mcp_header", |args, _| async move {
                Ok(ToolResult::text(format!("region={}", args.str("region").unwrap_or(""))))
            })
            .description("Mirrors its region argument into the Mcp-Param-Region header")
            .input_schema(json!({"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "level": {"type": "integer"}
            }})),
        )
        .tool(
            from_fn("json_schema_2020_12_tool", |args, _| async move {
                Ok(ToolResult::text(serde_json::Value::Object(args.into_map()).to_string()))
            })
            .description("Publishes a JSON Schema 2020-12 input schema verbatim")
            .input_schema(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            })),
        )
}
