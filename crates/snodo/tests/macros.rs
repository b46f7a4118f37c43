//! `#[snodo::tool]`: compile-pass and compile-fail cases (trybuild), and
//! macro-generated tools called directly.
//!
//! Refresh the `.stderr` snapshots with `TRYBUILD=overwrite cargo test -p snodo --test macros`,
//! then read each one: the span must sit on the offending key or value.

use serde::{Deserialize, Serialize};
use serde_json::json;
use snodo::{Args, Arguments, CallResult, Context, Json, Tool};

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}

/// Create a greeting.
///
/// The name is also sent as a header.
#[snodo::tool(
    title = "Greeter",
    annotations = { "readOnlyHint": true, "openWorldHint": false },
    icons = [{ "src": "https://example.com/greet.png", "mimeType": "image/png", "sizes": ["48x48"] }],
    meta = { "com.example/owner": "docs", "weight": -1.5 },
    input_schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": { "name": { "type": "string", "minLength": 1 } },
        "properties": {
            "name": { "type": "string", "x-mcp-header": "Name" },
            "times": { "type": "integer", "minimum": 1, "maximum": 3, "default": 1 }
        },
        "required": ["name"],
        "additionalProperties": false,
    }
)]
async fn greet(args: Arguments, cx: Context) -> CallResult {
    let times = usize::try_from(args.i64("times").unwrap_or(1)).unwrap_or(1);
    let greeting = format!("Hello, {}! ({})", args.str("name")?, cx.protocol_version());
    Ok(vec![greeting; times].join(" ").into())
}

#[derive(Deserialize)]
struct Sum {
    a: i64,
    b: i64,
}

#[derive(Serialize)]
struct Total {
    sum: i64,
}

#[snodo::tool(
    name = "math.add",
    description = "Add two integers",
    input_schema = {
        "type": "object",
        "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
        "required": ["a", "b"]
    },
    output_schema = {
        "type": "object",
        "properties": { "sum": { "type": "integer" } },
        "required": ["sum"]
    }
)]
async fn add(Args(Sum { a, b }): Args<Sum>) -> Json<Total> {
    Json(Total { sum: a + b })
}

#[snodo::tool]
async fn read_config(_args: Arguments) -> Result<String, std::io::Error> {
    Err(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        "no config file",
    ))
}

fn args(value: serde_json::Value) -> Arguments {
    Arguments::from(value)
}

#[tokio::test]
async fn a_generated_tool_runs_its_function() {
    let result = Tool::call(
        &greet,
        args(json!({"name": "Ada", "times": 2})),
        Context::detached(),
    )
    .await
    .unwrap();
    assert_eq!(
        result.to_wire(),
        json!({"content": [{"type": "text", "text": "Hello, Ada! (2026-07-28) Hello, Ada! (2026-07-28)"}]})
    );
}

#[tokio::test]
async fn a_generated_tool_passes_handler_errors_through() {
    let wrong = Tool::call(&greet, args(json!({"name": 3})), Context::detached()).await;
    assert_eq!(
        wrong.unwrap_err().to_string(),
        "Argument `name` must be a string"
    );
    let io = Tool::call(&read_config, args(json!({})), Context::detached()).await;
    assert_eq!(io.unwrap_err().to_string(), "no config file");
}

#[test]
fn the_definition_is_published_verbatim() {
    let def = snodo::tool::definition(&greet);
    assert_eq!(def.name, "greet");
    assert_eq!(def.title.as_deref(), Some("Greeter"));
    assert_eq!(
        def.description.as_deref(),
        Some("Create a greeting.\n\nThe name is also sent as a header.")
    );
    assert_eq!(
        def.input_schema,
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": { "name": { "type": "string", "minLength": 1 } },
            "properties": {
                "name": { "type": "string", "x-mcp-header": "Name" },
                "times": { "type": "integer", "minimum": 1, "maximum": 3, "default": 1 }
            },
            "required": ["name"],
            "additionalProperties": false
        })
    );
    assert_eq!(def.output_schema, None);
    assert_eq!(
        def.annotations,
        Some(json!({"readOnlyHint": true, "openWorldHint": false}))
    );
    assert_eq!(
        def.icons,
        Some(
            json!([{"src": "https://example.com/greet.png", "mimeType": "image/png", "sizes": ["48x48"]}])
        )
    );
    assert_eq!(
        def.meta,
        Some(json!({"com.example/owner": "docs", "weight": -1.5}))
    );
}

#[tokio::test]
async fn typed_arguments_are_deserialized_before_the_call() {
    let result = Tool::call(&add, args(json!({"a": 1, "b": 2})), Context::detached())
        .await
        .unwrap();
    assert_eq!(result.structured_content(), Some(&json!({"sum": 3})));
    let def = snodo::tool::definition(&add);
    assert_eq!(def.name, "math.add");
    assert_eq!(def.description.as_deref(), Some("Add two integers"));
    assert_eq!(def.output_schema.unwrap()["required"], json!(["sum"]));
}

#[tokio::test]
async fn a_typed_argument_failure_is_an_error_result_naming_the_field() {
    let result = Tool::call(
        &add,
        args(json!({"a": 1, "b": "secret"})),
        Context::detached(),
    )
    .await
    .unwrap();
    assert!(result.is_error());
    let text = result.to_wire()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(text, "Invalid arguments: `b` has the wrong type");
    assert!(!text.contains("secret"));

    let missing = Tool::call(&add, args(json!({"a": 1})), Context::detached())
        .await
        .unwrap();
    assert!(missing.is_error());
    assert!(
        missing.to_wire()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("`b`")
    );
}

#[test]
fn without_a_schema_the_input_is_any_object() {
    let def = snodo::tool::definition(&read_config);
    assert_eq!(def.name, "read_config");
    assert_eq!(def.description, None);
    assert_eq!(def.input_schema, json!({"type": "object"}));
}

#[test]
fn the_generated_type_is_a_plain_value() {
    fn assert_tool<T: Tool + Copy + Default + std::fmt::Debug>(_: T) {}
    assert_tool(greet);
    assert_tool(add);
    assert_eq!(format!("{add:?}"), "add");
}

/// Without `input_schema`, typed arguments publish the schema `schemars` derives.
#[cfg(feature = "schemars")]
mod derived_schema {
    use super::*;

    #[derive(Deserialize, schemars::JsonSchema)]
    struct Point {
        x: i64,
        y: i64,
    }

    #[snodo::tool(description = "Manhattan norm")]
    async fn norm(Args(Point { x, y }): Args<Point>) -> String {
        (x.abs() + y.abs()).to_string()
    }

    #[tokio::test]
    async fn typed_arguments_without_a_schema_use_the_derived_one() {
        let schema = snodo::tool::definition(&norm).input_schema;
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["x"]["type"], "integer");
        assert_eq!(schema["required"], json!(["x", "y"]));
        // `__private::schema_for` drops the keywords a tool schema does not need.
        assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
        let result = Tool::call(&norm, args(json!({"x": -3, "y": 4})), Context::detached())
            .await
            .unwrap();
        assert_eq!(result.to_wire()["content"][0]["text"], "7");
    }
}
